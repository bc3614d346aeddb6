#!/usr/bin/env node
// Lints Cypher queries with Neo4j's own parser and semantic analysis
// (@neo4j-cypher/language-support: the ANTLR grammar of Neo4j plus Neo4j's Java semantic
// analysis compiled to JavaScript), against a Neo4j 5 database schema WITHOUT APOC.
//
// stdin : JSON object {name: query}
// stdout: JSON object {name: [{severity, message, offsets: {start, end}, range}]}
//         severity 1 = error, 2 = warning (LSP DiagnosticSeverity).
// exit  : 0 when every query linted (whatever the diagnostics), 2 on bad input.
//         Deciding what fails is the caller's job (tests/integration/test_cypher_dialect.py).
//
// Usage: node tools/cypher-lint/lint.mjs < queries.json

import {
  getDebugTree,
  isNotParamError,
  lintCypherQuery,
  parseStatementsStrs,
  testData,
} from '@neo4j-cypher/language-support';

const CYPHER_VERSION = 'CYPHER 5';

// StoryGraph's data model: every label, relationship type and property key a
// query may read. `Sample_Type` is what `storygraph.cypher.all_queries()` renders the
// `<<label>>` / `<<rel_type>>` / `<<old_label>>` placeholders with.
const LABELS = ['__Entity__', 'Chunk', 'Document', 'Sample_Type'];
const RELATIONSHIP_TYPES = ['MENTIONS', 'PART_OF', 'SAME_AS', 'Sample_Type'];
const PROPERTY_KEYS = [
  // Document
  'id', 'name', 'sha256', 'language', 'chars', 'uploaded_at', 'status', 'chunks',
  // Chunk
  'document_id', 'index', 'text', 'start', 'end', 'chapter', 'chapter_title',
  // __Entity__
  'type', 'norm', 'rkey', 'kana', 'aliases', 'type_votes', 'chunk_ids', 'created_at',
  'updated_at',
  // relationships
  'evidence', 'weight',
  // story time (relationships) and entity pages (__Entity__)
  'positions', 'story_order', 'story_order_last', 'invalid_at',
  'summary', 'summary_method', 'summary_updated_at', 'summary_sources', 'summary_stale',
  'history',
  // per-story entity identity (__Entity__)
  'key',
  // facts a user hid as wrong (relationships)
  'hidden', 'hidden_at',
];

// Plugins present in the package's mock schema (a real Neo4j 5 export) that a plain Neo4j 5
// server does not have. Everything else there (db.*, dbms.*, tx.*, cdc.*, built-in functions)
// is Neo4j's own.
const PLUGIN_PREFIXES = ['apoc.', 'gds.'];

function isPlugin(name) {
  return PLUGIN_PREFIXES.some((prefix) => name.toLowerCase().startsWith(prefix));
}

function withoutPlugins(registry) {
  return Object.fromEntries(Object.entries(registry ?? {}).filter(([name]) => !isPlugin(name)));
}

function buildSchema() {
  const mock = testData.mockSchema;
  const functions = withoutPlugins(mock.functions?.[CYPHER_VERSION]);
  const procedures = withoutPlugins(mock.procedures?.[CYPHER_VERSION]);
  if (Object.keys(functions).length < 50 || !procedures['db.labels']) {
    throw new Error(
      'built-in function/procedure signatures not found in testData.mockSchema; ' +
        'the package layout changed',
    );
  }
  return {
    defaultLanguage: CYPHER_VERSION,
    labels: LABELS,
    relationshipTypes: RELATIONSHIP_TYPES,
    propertyKeys: PROPERTY_KEYS,
    functions: { [CYPHER_VERSION]: functions },
    procedures: { [CYPHER_VERSION]: procedures },
  };
}

function diagnostic(severity, message, start, end) {
  return { severity, message, offsets: { start, end } };
}

// StoryGraph design rule (not Neo4j's): labels and relationship types are never dynamic.
// Neo4j 5.26 accepts `SET n:$(expr)`, `(n:$any(expr))`, `[r:$(expr)]`, `n IS $(expr)` in
// CYPHER 5, but FalkorDB does not, and identifiers must come through `render()`.
const DYNAMIC_LABEL_RULES = new Set([
  'dynamicLabelType',
  'dynamicExpression',
  'dynamicAnyAllExpression',
]);

function usesDynamicLabel(query) {
  let found = false;
  (function walk(node) {
    if (found) return;
    if (DYNAMIC_LABEL_RULES.has(node.name)) found = true;
    else node.children.forEach(walk);
  })(getDebugTree(query));
  return found;
}

const PROPERTY_WARNING_SUFFIX = ' is not present in the database.';

// The package attributes every property key inside a node/relationship pattern to the
// pattern's variable, so in `MATCH (c:Chunk {id: row.chunk_id})` it warns that `chunk_id`
// is not a property of the database although it is a key of the map `row`. Drop a property
// warning when the key is read through `<variable>.` and that variable is not a node or a
// relationship according to Neo4j's own symbol table.
function isMapKeyFalsePositive(d, query, symbolTables) {
  if (d.severity !== 2) return false;
  const key = query.slice(d.offsets.start, d.offsets.end);
  if (!d.message.startsWith(key + PROPERTY_WARNING_SUFFIX)) return false;
  const access = /([A-Za-z_][A-Za-z0-9_]*)\s*\.\s*$/.exec(query.slice(0, d.offsets.start));
  if (!access) return false;
  const symbols = symbolTables.flat().filter((s) => s.variable === access[1]);
  const isGraphElement = (s) =>
    s.types.length > 0 && s.types.every((t) => t === 'Node' || t === 'Relationship');
  return symbols.length > 0 && !symbols.some(isGraphElement);
}

function lintOne(query, schema) {
  const { diagnostics, symbolTables } = lintCypherQuery(query, schema, {
    consoleCommandsEnabled: false,
  });
  const out = diagnostics
    // `$name` parameters are supplied by the driver at run time.
    .filter((d) => isNotParamError(d))
    .filter((d) => !isMapKeyFalsePositive(d, query, symbolTables))
    .map((d) => ({
      severity: d.severity,
      message: d.message,
      offsets: d.offsets,
      range: d.range,
    }));
  // A driver runs exactly one statement per call; the linter would accept `A; B`.
  const statements = parseStatementsStrs(query).filter((s) => s.trim().replace(/;$/, '').trim());
  if (statements.length !== 1) {
    out.push(
      diagnostic(1, `expected exactly one statement, found ${statements.length}`, 0, query.length),
    );
  }
  if (usesDynamicLabel(query)) {
    const at = Math.max(0, query.search(/\$\s*(?:any|all)?\s*\(/i));
    out.push(
      diagnostic(
        1,
        'StoryGraph rule: dynamic label or relationship type ($(...), $any(...), $all(...)) ' +
          'is forbidden; use a <<label>> placeholder filled by storygraph.cypher.render()',
        at,
        query.length,
      ),
    );
  }
  return out;
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

async function main() {
  let queries;
  try {
    queries = JSON.parse(await readStdin());
  } catch (err) {
    process.stderr.write(`lint.mjs: stdin is not JSON: ${err.message}\n`);
    process.exit(2);
  }
  if (!queries || typeof queries !== 'object' || Array.isArray(queries)) {
    process.stderr.write('lint.mjs: stdin must be a JSON object {name: query}\n');
    process.exit(2);
  }
  const schema = buildSchema();
  const result = {};
  for (const [name, query] of Object.entries(queries)) {
    if (typeof query !== 'string') {
      result[name] = [diagnostic(1, 'query is not a string', 0, 0)];
      continue;
    }
    try {
      result[name] = lintOne(query, schema);
    } catch (err) {
      result[name] = [diagnostic(1, `lint crashed: ${err?.stack ?? err}`, 0, query.length)];
    }
  }
  process.stdout.write(JSON.stringify(result, null, 1) + '\n');
}

main();
