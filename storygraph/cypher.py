"""Every Cypher query StoryGraph runs, as named constants.

Rules (design §3-4):
- One dialect for embedded FalkorDB and Neo4j 5: no APOC, no dynamic labels, no procedures.
- Values travel only as parameters (`$name`).
- A label or relation type can only reach a query through a `<<label>>` / `<<rel_type>>` /
  `<<old_label>>` placeholder filled by `render()`, which accepts nothing but already-sanitised
  identifiers (`^[A-Za-z_][A-Za-z0-9_]*$`) and backticks them.
- Per-engine pieces are limited to schema DDL (the `*_FALKORDB` / `*_NEO4J` constants) and the
  FalkorDB write path that matches a relation's ends by internal node id (FALKORDB_ONLY).

`tests/integration/test_cypher_dialect.py` runs every constant through Neo4j's own parser.
"""

from __future__ import annotations

import re

STRUCTURAL_TYPES: tuple[str, ...] = ("MENTIONS", "PART_OF", "SAME_AS")
"""Relation types we create ourselves; never returned as facts. `SAME_AS` links two stories'
entities a user said are one (`storygraph.library.identity`)."""

IDENTIFIER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# --- schema --------------------------------------------------------------------------------

# No FalkorDB index on __Entity__.document_id: its index finds no node for '' (an import's
# entities of no document), measured with FalkorDB 4.x (docs/ISSUES.md#entity-keys).
SCHEMA_FALKORDB: tuple[str, ...] = (
    "CREATE INDEX FOR (n:__Entity__) ON (n.id)",
    "CREATE INDEX FOR (n:__Entity__) ON (n.key)",
    "CREATE INDEX FOR (n:__Entity__) ON (n.norm)",
    "CREATE INDEX FOR (n:__Entity__) ON (n.rkey)",
    "CREATE INDEX FOR (c:Chunk) ON (c.id)",
    "CREATE INDEX FOR (d:Document) ON (d.id)",
    "CREATE INDEX FOR (d:Document) ON (d.sha256)",
)

SCHEMA_NEO4J: tuple[str, ...] = (
    "CREATE CONSTRAINT entity_key IF NOT EXISTS FOR (e:__Entity__) REQUIRE e.key IS UNIQUE",
    "CREATE INDEX entity_name IF NOT EXISTS FOR (e:__Entity__) ON (e.id)",
    "CREATE INDEX entity_document IF NOT EXISTS FOR (e:__Entity__) ON (e.document_id)",
    "CREATE INDEX entity_norm IF NOT EXISTS FOR (e:__Entity__) ON (e.norm)",
    "CREATE INDEX entity_rkey IF NOT EXISTS FOR (e:__Entity__) ON (e.rkey)",
    "CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (c:Chunk) REQUIRE c.id IS UNIQUE",
    "CREATE CONSTRAINT document_id IF NOT EXISTS FOR (d:Document) REQUIRE d.id IS UNIQUE",
    "CREATE INDEX document_sha IF NOT EXISTS FOR (d:Document) ON (d.sha256)",
)

# Entity identity is per story (issue #28, docs/ISSUES.md#entity-keys): `id` is the name as the
# story writes it (what users and answers see), `document_id` the story (document) that mentions it
# ('' for an imported entity of no document) and `key` = document_id + ':' + id, the one property
# every write MERGEs and matches on (unique on Neo4j). Stores of the old shape (one node per name
# across stories, no key) are split once when they open (storygraph.store.entity_keys).
SCHEMA_DROP_NEO4J: tuple[str, ...] = ("DROP CONSTRAINT entity_id IF EXISTS",)
"""The old shape's unique name constraint, dropped before a store of it is split."""

# --- documents and chunks -----------------------------------------------------------------

DOCUMENT_BY_SHA = """
MATCH (d:Document {sha256: $sha256})
RETURN d.id AS id, d.name AS name, d.status AS status
"""

DOCUMENT_BEGIN = """
MERGE (d:Document {id: $id})
SET d.name = $name, d.sha256 = $sha256, d.language = $language, d.chars = $chars,
    d.uploaded_at = $now, d.status = 'pending', d.chunks = $chunks
"""

DOCUMENT_COMMIT = """
MATCH (d:Document {id: $id})
SET d.status = 'ready'
RETURN d.id AS id
"""

CHUNKS_CREATE = """
MATCH (d:Document {id: $document_id})
UNWIND $rows AS row
MERGE (c:Chunk {id: row.id})
SET c.document_id = $document_id, c.index = row.index, c.text = row.text,
    c.start = row.start, c.end = row.end, c.chapter = row.chapter,
    c.chapter_title = row.chapter_title
MERGE (c)-[:PART_OF]->(d)
"""

DOCUMENTS_LIST = """
MATCH (d:Document)
RETURN d.id AS id, d.name AS name, d.sha256 AS sha256, d.language AS language,
       d.chars AS chars, d.uploaded_at AS uploaded_at, d.status AS status, d.chunks AS chunks
ORDER BY d.uploaded_at, d.name
"""

PENDING_DOCUMENT_IDS = """
MATCH (d:Document)
WHERE d.status <> 'ready'
RETURN d.id AS id
"""

CHUNKS_BY_IDS = """
MATCH (c:Chunk)-[:PART_OF]->(d:Document)
WHERE c.id IN $ids
RETURN c.id AS id, c.text AS text, c.index AS index, d.name AS document, d.id AS document_id,
       d.language AS language, c.chapter AS chapter, c.chapter_title AS chapter_title
"""

# Sentence search (storygraph.qa.retrieval.passages): the ready documents that mention the start
# entities,
# or every ready document, then the chunks of the documents not indexed yet.
PASSAGE_DOCUMENTS_OF_ENTITIES = """
MATCH (e:__Entity__)<-[:MENTIONS]-(:Chunk)-[:PART_OF]->(d:Document)
WHERE e.key IN $keys AND d.status = 'ready'
RETURN DISTINCT d.id AS id, d.name AS name, d.sha256 AS sha256, d.chunks AS chunks,
       d.language AS language
"""

PASSAGE_DOCUMENTS_ALL = """
MATCH (d:Document)
WHERE d.status = 'ready' AND (size($documents) = 0 OR d.id IN $documents)
RETURN d.id AS id, d.name AS name, d.sha256 AS sha256, d.chunks AS chunks,
       d.language AS language
"""

CHUNKS_OF_DOCUMENTS = """
MATCH (c:Chunk)-[:PART_OF]->(d:Document)
WHERE d.id IN $ids
RETURN c.id AS id, c.text AS text, c.index AS index, d.name AS document, d.id AS document_id,
       c.chapter AS chapter, c.chapter_title AS chapter_title
ORDER BY document_id, index
"""

# Reading position (docs/ISSUES.md#chapters): the chunks of the ready documents (of $documents;
# every one when empty) from chapter $since up to chapter $until (NULL: the last), read once a
# question; a chunk of a story stored before chapters were read has none (chapter NULL) and is
# named by the caller.
CHUNKS_UNTIL_CHAPTER = """
MATCH (c:Chunk)-[:PART_OF]->(d:Document)
WHERE d.status = 'ready' AND (size($documents) = 0 OR d.id IN $documents)
  AND (c.chapter IS NULL OR (c.chapter >= $since AND ($until IS NULL OR c.chapter <= $until)))
RETURN c.id AS id, c.chapter AS chapter, d.id AS document_id
"""

# The chunks each entity of $documents (every one when empty) is mentioned in, for the reading
# position's entities read (storygraph.store.reading): a name first written past it is not
# found.
ENTITY_CHUNKS = """
MATCH (e:__Entity__)
WHERE size($documents) = 0 OR e.document_id IN $documents
RETURN e.key AS key, e.chunk_ids AS chunk_ids
"""

# A story's chapters (number and heading), for the chat's "I have read up to" picker.
DOCUMENT_CHAPTERS = """
MATCH (c:Chunk)
WHERE c.document_id = $document_id AND c.chapter IS NOT NULL
RETURN DISTINCT c.chapter AS chapter, c.chapter_title AS title
ORDER BY chapter
"""

# Deleting a document (in this order): relations only it supported, its provenance on the
# remaining relations, entities only it supported (and left without relations), its provenance
# on the remaining entities, then its chunks and the document node.
RELATIONS_DELETE_ONLY_SUPPORTED_BY = """
MATCH (:__Entity__)-[r]->(:__Entity__)
WHERE size(coalesce(r.chunk_ids, [])) > 0 AND all(x IN r.chunk_ids WHERE x STARTS WITH $prefix)
DELETE r
RETURN count(*) AS deleted
"""

RELATIONS_STRIP_PROVENANCE = """
MATCH (:__Entity__)-[r]->(:__Entity__)
WHERE any(x IN coalesce(r.chunk_ids, []) WHERE x STARTS WITH $prefix)
WITH r, [i IN range(0, size(r.chunk_ids) - 1) WHERE NOT r.chunk_ids[i] STARTS WITH $prefix] AS keep
SET r.evidence = [i IN keep | coalesce(r.evidence, [])[i]],
    r.chunk_ids = [i IN keep | r.chunk_ids[i]],
    r.weight = size(keep)
RETURN count(r) AS touched
"""

ENTITIES_DELETE_ONLY_SUPPORTED_BY = """
MATCH (e:__Entity__)
WHERE size(coalesce(e.chunk_ids, [])) > 0 AND all(x IN e.chunk_ids WHERE x STARTS WITH $prefix)
OPTIONAL MATCH (e)-[x]-(:__Entity__)
WHERE NOT type(x) IN $structural
WITH e, count(x) AS remaining
WHERE remaining = 0
DETACH DELETE e
RETURN count(*) AS deleted
"""

ENTITIES_STRIP_PROVENANCE = """
MATCH (e:__Entity__)
WHERE any(x IN coalesce(e.chunk_ids, []) WHERE x STARTS WITH $prefix)
WITH e, [i IN range(0, size(e.chunk_ids) - 1) WHERE NOT e.chunk_ids[i] STARTS WITH $prefix] AS keep
SET e.type_votes = [i IN keep | coalesce(e.type_votes, [])[i]],
    e.chunk_ids = [i IN keep | e.chunk_ids[i]]
RETURN e.key AS key
"""

CHUNKS_AND_DOCUMENT_DELETE = """
MATCH (d:Document {id: $document_id})
OPTIONAL MATCH (c:Chunk)-[:PART_OF]->(d)
DETACH DELETE c, d
RETURN count(*) AS deleted
"""

# What deleting a document will remove, counted before it is asked (the confirmation names it):
# the relations only it supports, and the entities only it supports that keep no relation once
# those are gone (the same conditions as the deletes above).
DOCUMENT_REMOVAL_COUNTS = """
MATCH (d:Document {id: $document_id})
OPTIONAL MATCH (c:Chunk)-[:PART_OF]->(d)
WITH d, count(c) AS chunks
OPTIONAL MATCH (:__Entity__)-[r]->(:__Entity__)
WHERE size(coalesce(r.chunk_ids, [])) > 0 AND all(x IN r.chunk_ids WHERE x STARTS WITH $prefix)
WITH d, chunks, count(r) AS relations
OPTIONAL MATCH (e:__Entity__)
WHERE size(coalesce(e.chunk_ids, [])) > 0 AND all(x IN e.chunk_ids WHERE x STARTS WITH $prefix)
OPTIONAL MATCH (e)-[k]-(:__Entity__)
WHERE NOT type(k) IN $structural
  AND NOT (size(coalesce(k.chunk_ids, [])) > 0
           AND all(x IN k.chunk_ids WHERE x STARTS WITH $prefix))
WITH d, chunks, relations, e, count(k) AS kept
RETURN d.name AS name, chunks, relations,
       sum(CASE WHEN e IS NOT NULL AND kept = 0 THEN 1 ELSE 0 END) AS entities
"""

# A document's subgraph, read just before it is deleted so that the delete can be undone
# (storygraph.store.removals): the document, its chunks and their mentions, every entity and
# relation carrying its provenance, story time or history (all their properties), and the
# SAME_AS links of those entities.
DOCUMENT_PROPERTIES = """
MATCH (d:Document {id: $document_id})
RETURN properties(d) AS props
"""

DOCUMENT_CHUNKS_PROPERTIES = """
MATCH (c:Chunk)-[:PART_OF]->(:Document {id: $document_id})
RETURN properties(c) AS props
ORDER BY c.index
"""

DOCUMENT_MENTIONS = """
MATCH (c:Chunk)-[:PART_OF]->(:Document {id: $document_id})
MATCH (c)-[:MENTIONS]->(e:__Entity__)
RETURN c.id AS chunk_id, e.key AS entity_key
ORDER BY chunk_id, entity_key
"""

DOCUMENT_ENTITIES_PROPERTIES = """
MATCH (e:__Entity__)
WHERE any(x IN coalesce(e.chunk_ids, []) WHERE x STARTS WITH $prefix)
   OR any(h IN coalesce(e.history, []) WHERE h STARTS WITH $prefix)
RETURN e.key AS key, labels(e) AS labels, properties(e) AS props
ORDER BY key
"""

DOCUMENT_RELATIONS_PROPERTIES = """
MATCH (a:__Entity__)-[r]->(b:__Entity__)
WHERE NOT type(r) IN $structural
  AND (any(x IN coalesce(r.chunk_ids, []) WHERE x STARTS WITH $prefix)
       OR any(p IN coalesce(r.positions, []) WHERE p STARTS WITH $prefix))
RETURN a.key AS source_key, type(r) AS type, b.key AS target_key, properties(r) AS props
ORDER BY source_key, type, target_key
"""

SAME_AS_OF_ENTITIES = """
MATCH (a:__Entity__)-[r:SAME_AS]->(b:__Entity__)
WHERE a.key IN $keys OR b.key IN $keys
RETURN a.key AS a, b.key AS b, properties(r) AS props
ORDER BY a, b
"""

# A document being deleted with undo is marked first: retrieval ignores it like a pending one,
# a delete cut short is finished by the next start's cleanup, and undo tells it from a story
# added again (which is `ready`).
DOCUMENT_MARK_DELETING = """
MATCH (d:Document {id: $document_id})
SET d.status = $status
"""

# Undoing a delete: the document comes back `pending` (committed last, like an ingest), its
# chunks by CHUNKS_CREATE, its mentions by MENTIONS_CREATE. An entity that is gone comes back
# with all its properties; one still there (kept by another story or an import) gets the
# document's chunk ids (with their type votes) and history entries back as a set union; the
# same for relations, with evidence and story-time positions. Every statement is idempotent
# (the embedded runner may retry one).
DOCUMENT_RESTORE = """
MERGE (d:Document {id: $document_id})
SET d += $props, d.status = 'pending'
"""

ENTITIES_RESTORE_MISSING = """
UNWIND $rows AS row
OPTIONAL MATCH (x:__Entity__ {key: row.key})
WITH row, x
WHERE x IS NULL
CREATE (e:__Entity__:<<label>>)
SET e += row.props
"""

ENTITIES_RESTORE_PROVENANCE = """
UNWIND $rows AS row
MATCH (e:__Entity__ {key: row.key})
WITH e, row, coalesce(e.chunk_ids, []) AS old_ids, coalesce(e.type_votes, []) AS old_votes
WITH e, row, old_ids, old_votes,
     [i IN range(0, size(row.chunk_ids) - 1) WHERE NOT row.chunk_ids[i] IN old_ids] AS fresh
SET e.chunk_ids = old_ids + [i IN fresh | row.chunk_ids[i]],
    e.type_votes = old_votes + [i IN fresh | row.type_votes[i]],
    e.history = [h IN coalesce(e.history, []) WHERE NOT h STARTS WITH $prefix] + row.history
"""

RELATIONS_RESTORE = """
UNWIND $rows AS row
MATCH (a:__Entity__ {key: row.source_key})
MATCH (b:__Entity__ {key: row.target_key})
MERGE (a)-[r:<<rel_type>>]->(b)
ON CREATE SET r += row.props
WITH r, row, coalesce(r.chunk_ids, []) AS old_ids, coalesce(r.evidence, []) AS old_evidence,
     coalesce(r.positions, []) AS old_positions
WITH r, row, old_ids, old_evidence, old_positions,
     [i IN range(0, size(row.chunk_ids) - 1) WHERE NOT row.chunk_ids[i] IN old_ids] AS fresh
SET r.chunk_ids = old_ids + [i IN fresh | row.chunk_ids[i]],
    r.evidence = old_evidence + [i IN fresh | row.evidence[i]],
    r.weight = size(old_ids) + size(fresh),
    r.positions = CASE WHEN size(row.positions) = 0 THEN r.positions
                       ELSE old_positions + [p IN row.positions WHERE NOT p IN old_positions] END
"""

SAME_AS_RESTORE = """
UNWIND $rows AS row
MATCH (a:__Entity__ {key: row.a})
MATCH (b:__Entity__ {key: row.b})
MERGE (a)-[r:SAME_AS]->(b)
ON CREATE SET r += row.props
"""

# --- entities -------------------------------------------------------------------------------

ENTITY_CANDIDATES = """
MATCH (e:__Entity__)
WHERE e.document_id = $document_id AND (e.norm IN $norms OR e.rkey IN $rkeys)
RETURN e.id AS id, e.type AS type, e.norm AS norm, e.rkey AS rkey, e.kana AS kana,
       e.type_votes AS type_votes
"""

# Every write is idempotent: the embedded runner retries a statement whose reply was lost (the
# server died after applying it), so applying one twice must change nothing. Chunk ids are added
# as a set union, each with its aligned type vote / evidence sentence (`fresh` = the indexes of
# the row's chunk ids the node or edge does not carry yet).
ENTITY_UPSERT = """
UNWIND $rows AS row
MERGE (e:__Entity__ {key: row.key})
ON CREATE SET e.created_at = $now, e.id = row.id, e.document_id = row.document_id
WITH e, row, coalesce(e.chunk_ids, []) AS old_ids, coalesce(e.type_votes, []) AS old_votes,
     coalesce(e.aliases, []) AS old_aliases
WITH e, row, old_ids, old_votes, old_aliases,
     [i IN range(0, size(row.chunk_ids) - 1) WHERE NOT row.chunk_ids[i] IN old_ids] AS fresh
SET e:<<label>>,
    e.type = row.type, e.norm = row.norm, e.rkey = row.rkey, e.kana = row.kana,
    e.chunk_ids = old_ids + [i IN fresh | row.chunk_ids[i]],
    e.type_votes = old_votes + [i IN fresh | row.type_votes[i]],
    e.aliases = old_aliases + [x IN row.aliases WHERE NOT x IN old_aliases],
    e.updated_at = $now
"""

# New entities (the merge plan found no node for them). MERGE on id with both labels, so a
# retried statement finds the nodes it made instead of making them twice. MERGE on the id alone
# followed by SET label on every row made imports grow super-linearly (25 s for 33k nodes vs
# 1.5 s for a plain CREATE); this form costs about twice a CREATE (docs/BENCHMARKS.md).
ENTITY_CREATE = """
UNWIND $rows AS row
MERGE (e:__Entity__:<<label>> {key: row.key})
ON CREATE SET e.id = row.id, e.document_id = row.document_id, e.type = row.type,
    e.norm = row.norm, e.rkey = row.rkey, e.kana = row.kana,
    e.chunk_ids = row.chunk_ids, e.type_votes = row.type_votes, e.aliases = row.aliases,
    e.created_at = $now, e.updated_at = $now
"""

ENTITY_REMOVE_LABEL = """
UNWIND $keys AS key
MATCH (e:__Entity__ {key: key})
REMOVE e:<<old_label>>
"""

MENTIONS_CREATE = """
UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk_id})
MATCH (e:__Entity__ {key: row.entity_key})
MERGE (c)-[:MENTIONS]->(e)
"""

# One row per entity (a name two stories share comes twice, with its own key and document);
# `twins`: the keys a user linked it to (SAME_AS).
ENTITY_NAMES = """
MATCH (e:__Entity__)
OPTIONAL MATCH (e)-[:SAME_AS]-(t:__Entity__)
RETURN e.id AS id, e.norm AS norm, e.type AS type, e.key AS key, e.document_id AS document_id,
       collect(t.key) AS twins
"""

# The rows of ENTITY_NAMES of one story, read again after another session wrote it
# (storygraph.store.change_log). A scan of the label: FalkorDB has no index on document_id.
ENTITY_NAMES_OF_DOCUMENT = """
MATCH (e:__Entity__)
WHERE e.document_id = $document_id
OPTIONAL MATCH (e)-[:SAME_AS]-(t:__Entity__)
RETURN e.id AS id, e.norm AS norm, e.type AS type, e.key AS key, e.document_id AS document_id,
       collect(t.key) AS twins
"""

# --- relations ------------------------------------------------------------------------------

# One statement for new and existing edges: MERGE keeps an edge once (and a retried statement
# finds the edge it made), a new edge gets its properties in one SET, and an existing one gains
# the chunk ids it lacks with their evidence, in order. The ON MATCH items read r.chunk_ids only
# before its own item changes it, so they mean the same whether an engine applies SET items one
# by one or all at once. The former form (a WITH pipeline computing the union for every row)
# made a new edge pay for the union too: the one-statement form wrote the same 100k edges in
# 10-14 % less time (docs/ISSUES.md#import-1m-edges). Rows: source_key, target_key, chunk_ids,
# evidence.
_RELATION_MERGE = """MERGE (a)-[r:<<rel_type>>]->(b)
ON CREATE SET r.created_at = $now, r.chunk_ids = row.chunk_ids, r.evidence = row.evidence,
    r.weight = size(row.chunk_ids), r.updated_at = $now
ON MATCH SET
    r.evidence = coalesce(r.evidence, []) + [i IN range(0, size(row.chunk_ids) - 1)
        WHERE NOT row.chunk_ids[i] IN coalesce(r.chunk_ids, []) | row.evidence[i]],
    r.weight = size(coalesce(r.chunk_ids, []) + [c IN row.chunk_ids
        WHERE NOT c IN coalesce(r.chunk_ids, [])]),
    r.chunk_ids = coalesce(r.chunk_ids, []) + [c IN row.chunk_ids
        WHERE NOT c IN coalesce(r.chunk_ids, [])],
    r.updated_at = $now
"""
"""The MERGE of an edge between `a` and `b` with its provenance (RELATION_UPSERT and, on FalkorDB,
RELATION_UPSERT_BY_NODE_ID: the same sets whichever way the ends were found)."""

RELATION_UPSERT = (
    """
UNWIND $rows AS row
MATCH (a:__Entity__ {key: row.source_key})
MATCH (b:__Entity__ {key: row.target_key})
"""
    + _RELATION_MERGE
)

# --- FalkorDB only: a write's relations find their ends by the nodes' internal ids ----------
# The entity writes of the same write return each node's id (FalkorDB keeps a node's id while
# the node lives, and the write lock keeps every other writer out until the write is over), so
# the relation statement seeks both ends by id instead of by the key index: at 300k edges on
# 2 shared cores 4.5-5.1 s against 6.4-8.4 s (docs/ISSUES.md#import-1m-edges). The ids are projected
# to plain variables first: FalkorDB 4.16 seeks by id (NodeByIdSeek) for `id(n) = variable`, but
# `id(n) = row.a` scans every node for every row. Never sent to Neo4j, whose internal ids may be
# reused and whose `id()` is deprecated: there the same write matches ends by key (RELATION_UPSERT
# above). Kept out of the Neo4j lint by FALKORDB_ONLY below; the set semantics are
# RELATION_UPSERT's, held equal by tests/integration/test_relation_ends.py.
_NODE_IDS_RETURN = "RETURN e.key AS key, id(e) AS node_id\n"

ENTITY_UPSERT_RETURNING_IDS = ENTITY_UPSERT + _NODE_IDS_RETURN

ENTITY_CREATE_RETURNING_IDS = ENTITY_CREATE + _NODE_IDS_RETURN

ENTITY_NODE_IDS = """
UNWIND $keys AS key
MATCH (e:__Entity__ {key: key})
RETURN e.key AS key, id(e) AS node_id
"""

RELATION_UPSERT_BY_NODE_ID = (
    """
UNWIND $rows AS row
WITH row, row.a AS a_id, row.b AS b_id
MATCH (a) WHERE id(a) = a_id
MATCH (b) WHERE id(b) = b_id
"""
    + _RELATION_MERGE
)

FALKORDB_ONLY: frozenset[str] = frozenset(
    {
        "ENTITY_UPSERT_RETURNING_IDS",
        "ENTITY_CREATE_RETURNING_IDS",
        "ENTITY_NODE_IDS",
        "RELATION_UPSERT_BY_NODE_ID",
    }
)
"""Queries only the FalkorDB runner is given (internal node ids); not Neo4j Cypher we lint."""

RELATIONS_EXISTING = """
UNWIND $rows AS row
MATCH (:__Entity__ {key: row.source_key})-[r:<<rel_type>>]->
      (:__Entity__ {key: row.target_key})
RETURN row.source AS source, row.target AS target
"""

ENTITY_TYPE_SET = """
UNWIND $rows AS row
MATCH (e:__Entity__ {key: row.key})
SET e:<<label>>, e.type = row.type
"""

ENTITY_VOTES = """
MATCH (e:__Entity__)
WHERE e.key IN $keys
RETURN e.key AS key, e.type AS type, e.type_votes AS type_votes
"""


# A fact the user hid as wrong ("this is wrong", storygraph.library.wrong_facts) is neither
# retrieved for answers nor drawn: every query that reads facts for those filters with this one
# condition (`$show_hidden` false), on each relation it walks.
def _fact_shown(rel: str) -> str:
    return f"($show_hidden OR NOT coalesce({rel}.hidden, false))"


FACT_SHOWN = _fact_shown("r")
"""The condition on a relation `r`: shown unless the user hid it (param `$show_hidden`)."""
CONDITIONS: frozenset[str] = frozenset({"FACT_SHOWN"})
"""Named pieces of WHERE clauses, not queries of their own (linted inside the queries)."""
_BOTH_SHOWN = _fact_shown("r1") + " AND " + FACT_SHOWN
"""FACT_SHOWN on both relations of a two-hop walk (a hidden first hop leads nowhere)."""

# Retrieval (design §5). Each returns rows of (start, type, end, chunk_ids, evidence) with the
# edge's real direction.


def _read_so_far(rel: str) -> str:
    """The reading position's one condition (docs/ISSUES.md#chapters): a relation some chunk
    up to the reader's chapter states; `$readable` is those chunks' ids
    (storygraph.store.reading,
    read once a question), NULL when the reader has read everything. The store keeps of each
    fact only those chunks (`GraphStore._facts`)."""
    return f"($readable IS NULL OR any(x IN coalesce({rel}.chunk_ids, []) WHERE x IN $readable))"


_READ_R = _read_so_far("r")
_READ_R1 = _read_so_far("r1")
_USABLE = FACT_SHOWN + " AND " + _READ_R
"""A fact an answer may use: not hidden as wrong, and stated in what the reader has read."""
_BOTH_USABLE = _BOTH_SHOWN + " AND " + _READ_R1 + " AND " + _READ_R
"""`_USABLE` on both relations of a two-hop walk."""
RETRIEVE_ONEHOP = (
    """
MATCH (s:__Entity__)-[r]-(:__Entity__)
WHERE s.id IN $ids AND (size($keys) = 0 OR s.key IN $keys)
  AND NOT type(r) IN $structural AND """
    + _USABLE
    + """
WITH DISTINCT r
WITH r, startNode(r) AS a, endNode(r) AS b
RETURN a.id AS start, type(r) AS type, b.id AS end, r.chunk_ids AS chunk_ids,
       r.evidence AS evidence, r.story_order AS story_order,
       r.story_order_last AS story_order_last, r.invalid_at AS invalid_at
"""
)

RETRIEVE_DIRECTED_2HOP = (
    """
MATCH (s:__Entity__)-[r]->(b:__Entity__)
WHERE s.id IN $ids AND (size($keys) = 0 OR s.key IN $keys)
  AND NOT type(r) IN $structural AND """
    + _USABLE
    + """
RETURN s.id AS start, type(r) AS type, b.id AS end, r.chunk_ids AS chunk_ids,
       r.evidence AS evidence, r.story_order AS story_order,
       r.story_order_last AS story_order_last, r.invalid_at AS invalid_at
UNION
MATCH (s:__Entity__)-[r1]->(m:__Entity__)-[r]->(b:__Entity__)
WHERE s.id IN $ids AND (size($keys) = 0 OR s.key IN $keys)
  AND NOT type(r1) IN $structural AND NOT type(r) IN $structural AND """
    + _BOTH_USABLE
    + """
RETURN m.id AS start, type(r) AS type, b.id AS end, r.chunk_ids AS chunk_ids,
       r.evidence AS evidence, r.story_order AS story_order,
       r.story_order_last AS story_order_last, r.invalid_at AS invalid_at
"""
)

RETRIEVE_UNDIRECTED_2HOP = (
    """
MATCH (s:__Entity__)-[r]-(:__Entity__)
WHERE s.id IN $ids AND (size($keys) = 0 OR s.key IN $keys)
  AND NOT type(r) IN $structural AND """
    + _USABLE
    + """
WITH DISTINCT r
WITH r, startNode(r) AS a, endNode(r) AS b
RETURN a.id AS start, type(r) AS type, b.id AS end, r.chunk_ids AS chunk_ids,
       r.evidence AS evidence, r.story_order AS story_order,
       r.story_order_last AS story_order_last, r.invalid_at AS invalid_at
UNION
MATCH (s:__Entity__)-[r1]-(m:__Entity__)-[r]-(:__Entity__)
WHERE s.id IN $ids AND (size($keys) = 0 OR s.key IN $keys)
  AND NOT type(r1) IN $structural AND NOT type(r) IN $structural AND """
    + _BOTH_USABLE
    + """
WITH DISTINCT r
WITH r, startNode(r) AS a, endNode(r) AS b
RETURN a.id AS start, type(r) AS type, b.id AS end, r.chunk_ids AS chunk_ids,
       r.evidence AS evidence, r.story_order AS story_order,
       r.story_order_last AS story_order_last, r.invalid_at AS invalid_at
"""
)

# Co-members: other nodes with an edge of the same type into the same node as a start node
# (おじいさん -[LIVES_IN]-> 村 <-[LIVES_IN]- おばあさん). Used by question-type expansion.
RETRIEVE_CO_MEMBERS = (
    """
MATCH (s:__Entity__)-[r1]->(m:__Entity__)<-[r]-(o:__Entity__)
WHERE s.id IN $ids AND (size($keys) = 0 OR s.key IN $keys)
  AND type(r1) = type(r) AND type(r) IN $types AND o <> s AND """
    + _BOTH_USABLE
    + """
RETURN o.id AS start, type(r) AS type, m.id AS end, r.chunk_ids AS chunk_ids,
       r.evidence AS evidence, r.story_order AS story_order,
       r.story_order_last AS story_order_last, r.invalid_at AS invalid_at
"""
)

RELATION_TYPES = """
MATCH (:__Entity__)-[r]->(:__Entity__)
WHERE NOT type(r) IN $structural
RETURN type(r) AS type, count(*) AS count
ORDER BY count DESC
"""

# --- whole graph: export, view, stats, reset --------------------------------------------------

EXPORT_NODES = """
MATCH (e:__Entity__)
RETURN e.id AS id, e.document_id AS document_id, e.type AS type, e.aliases AS aliases,
       e.chunk_ids AS chunk_ids,
       e.summary AS summary, e.summary_method AS summary_method,
       e.summary_updated_at AS summary_updated_at, e.summary_sources AS summary_sources
ORDER BY e.id, e.document_id
"""

EXPORT_RELATIONSHIPS = """
MATCH (a:__Entity__)-[r]->(b:__Entity__)
WHERE NOT type(r) IN $structural
RETURN a.id AS source, type(r) AS type, b.id AS target, a.document_id AS document_id,
       r.chunk_ids AS chunk_ids, r.evidence AS evidence, r.weight AS weight,
       r.positions AS positions, r.story_order AS story_order,
       r.story_order_last AS story_order_last, r.invalid_at AS invalid_at
ORDER BY source, type, target, document_id
"""

GRAPH_VIEW = (
    """
MATCH (a:__Entity__)-[r]->(b:__Entity__)
WHERE NOT type(r) IN $structural AND """
    + FACT_SHOWN
    + """
  AND ($prefix = '' OR any(x IN coalesce(r.chunk_ids, []) WHERE x STARTS WITH $prefix))
  AND """ + _READ_R + """
  AND (size($types) = 0 OR a.type IN $types OR b.type IN $types)
  AND ($search = '' OR a.norm CONTAINS $search OR b.norm CONTAINS $search)
RETURN a.id AS start, a.type AS start_type, type(r) AS type, b.id AS end, b.type AS end_type,
       r.chunk_ids AS chunk_ids, r.evidence AS evidence, a.key AS start_key, b.key AS end_key,
       a.document_id AS document_id, b.document_id AS end_document_id
LIMIT $limit
"""
)

ENTITY_TYPES_OF = """
MATCH (e:__Entity__)
WHERE e.id IN $ids AND (size($keys) = 0 OR e.key IN $keys)
RETURN e.id AS id, e.type AS type
"""

ENTITY_TYPES_BY_KEYS = """
MATCH (e:__Entity__)
WHERE e.key IN $keys
RETURN e.id AS id, e.type AS type
"""

STATS = """
OPTIONAL MATCH (d:Document)
WITH count(d) AS documents
OPTIONAL MATCH (c:Chunk)
WITH documents, count(c) AS chunks
OPTIONAL MATCH (e:__Entity__)
WITH documents, chunks, count(e) AS entities
OPTIONAL MATCH (:__Entity__)-[r]->(:__Entity__)
WHERE NOT type(r) IN $structural
RETURN documents, chunks, entities, count(r) AS relations
"""

RESET = """
MATCH (n)
DETACH DELETE n
"""


# --- story time and entity pages (store/story_time.py, library/entity_pages.py) ---------------

# Positions are a set: a statement already recorded is not added twice.
RELATION_POSITIONS_ADD = """
UNWIND $rows AS row
MATCH (:__Entity__ {key: row.source})-[r:<<rel_type>>]->(:__Entity__ {key: row.target})
WITH r, row, coalesce(r.positions, []) AS old
SET r.positions = old + [p IN row.positions WHERE NOT p IN old]
"""

# Every relation touching the given entities that has story time (an empty list included, so a
# relation whose last position was deleted gets its derived properties cleared).
RELATIONS_TIME_CONTEXT = """
MATCH (a:__Entity__)-[r]->(b:__Entity__)
WHERE (a.key IN $keys OR b.key IN $keys) AND r.positions IS NOT NULL
RETURN a.key AS source, type(r) AS type, b.key AS target, r.positions AS positions
"""

RELATION_TIME_SET = """
UNWIND $rows AS row
MATCH (:__Entity__ {key: row.source})-[r:<<rel_type>>]->(:__Entity__ {key: row.target})
SET r.story_order = row.story_order, r.story_order_last = row.story_order_last,
    r.invalid_at = row.invalid_at
"""

RELATIONS_ENDS_WITH_POSITIONS = """
MATCH (a:__Entity__)-[r]->(b:__Entity__)
WHERE any(p IN coalesce(r.positions, []) WHERE p STARTS WITH $prefix)
RETURN DISTINCT a.key AS source, b.key AS target
"""

RELATIONS_STRIP_POSITIONS = """
MATCH (:__Entity__)-[r]->(:__Entity__)
WHERE any(p IN coalesce(r.positions, []) WHERE p STARTS WITH $prefix)
SET r.positions = [p IN r.positions WHERE NOT p STARTS WITH $prefix]
RETURN count(r) AS touched
"""

ENTITY_STATE = """
MATCH (e:__Entity__)
WHERE e.key IN $keys
RETURN e.id AS id, e.type AS type, e.aliases AS aliases
"""

# Entity history: one entry per document in `e.history`, a JSON string prefixed with
# "<document id>:" (like chunk ids), saying whether the document created, updated or only
# referenced the entity and what changed. Writing replaces the document's entry (idempotent);
# deleting a document strips its entries by prefix.
ENTITY_HISTORY_WRITE = """
UNWIND $rows AS row
MATCH (e:__Entity__ {key: row.key})
SET e.history = [h IN coalesce(e.history, []) WHERE NOT h STARTS WITH $prefix] + [row.entry]
"""

ENTITY_HISTORY_STRIP = """
MATCH (e:__Entity__)
WHERE any(h IN coalesce(e.history, []) WHERE h STARTS WITH $prefix)
SET e.history = [h IN e.history WHERE NOT h STARTS WITH $prefix]
RETURN count(e) AS touched
"""

ENTITIES_MARK_STALE = """
UNWIND $keys AS key
MATCH (e:__Entity__ {key: key})
SET e.summary_stale = true
"""

ENTITY_PAGE_NODE = """
MATCH (e:__Entity__ {key: $key})
OPTIONAL MATCH (d:Document {id: e.document_id})
OPTIONAL MATCH (e)-[:SAME_AS]-(t:__Entity__)
RETURN e.id AS id, e.key AS key, e.document_id AS document_id, d.name AS document,
       collect(t.key) AS twins, e.type AS type, e.aliases AS aliases, e.chunk_ids AS chunk_ids,
       e.summary AS summary, e.summary_method AS summary_method,
       e.summary_updated_at AS summary_updated_at, e.summary_sources AS summary_sources,
       e.summary_stale AS summary_stale, e.history AS history
"""

# Both directions, each edge once, real direction kept.
ENTITY_RELATIONS = (
    """
MATCH (e:__Entity__)-[r]-(:__Entity__)
WHERE e.key IN $keys AND NOT type(r) IN $structural AND """
    + FACT_SHOWN
    + """
WITH DISTINCT r
WITH r, startNode(r) AS a, endNode(r) AS b
RETURN a.id AS start, type(r) AS type, b.id AS end, a.key AS start_key, b.key AS end_key,
       r.chunk_ids AS chunk_ids, r.evidence AS evidence, r.positions AS positions,
       r.story_order AS story_order, r.story_order_last AS story_order_last,
       r.invalid_at AS invalid_at
"""
)

ENTITY_SUMMARY_SET = """
UNWIND $rows AS row
MATCH (e:__Entity__ {key: row.key})
SET e.summary = row.summary, e.summary_method = row.method,
    e.summary_updated_at = row.updated_at, e.summary_sources = row.sources,
    e.summary_stale = false
"""

# An imported summary lands only on an entity that has none yet.
ENTITY_SUMMARY_IMPORT = """
UNWIND $rows AS row
MATCH (e:__Entity__ {key: row.key})
WHERE e.summary IS NULL
SET e.summary = row.summary, e.summary_method = row.method,
    e.summary_updated_at = row.updated_at, e.summary_sources = row.sources,
    e.summary_stale = false
"""

# Entities for the list of the Entities tab: best connected first.
ENTITY_LIST = """
MATCH (e:__Entity__)
WHERE ($search = '' OR e.norm CONTAINS $search
   OR any(a IN coalesce(e.aliases, []) WHERE a CONTAINS $raw))
  AND (size($documents) = 0 OR e.document_id IN $documents)
OPTIONAL MATCH (e)-[r]-(:__Entity__)
WHERE NOT type(r) IN $structural
WITH e, count(r) AS degree
OPTIONAL MATCH (d:Document {id: e.document_id})
RETURN e.id AS id, e.key AS key, e.document_id AS document_id, d.name AS document,
       e.type AS type, e.aliases AS aliases, e.summary AS summary,
       e.summary_stale AS summary_stale, degree
ORDER BY degree DESC, id
LIMIT $limit
"""


# --- facts the user hid as wrong (storygraph.library.wrong_facts) -----------------------------

# Hide (`$hidden` true) or show again one relation, found by its ends' keys and its type; the
# ends come back for the history entries. Idempotent: the same SET twice changes nothing.
RELATION_SET_HIDDEN = """
MATCH (a:__Entity__ {key: $source_key})-[r:<<rel_type>>]->(b:__Entity__ {key: $target_key})
SET r.hidden = $hidden, r.hidden_at = $at
RETURN a.id AS start, b.id AS end, a.key AS start_key, b.key AS end_key,
       r.evidence AS evidence
"""

HIDDEN_RELATIONS = """
MATCH (a:__Entity__)-[r]->(b:__Entity__)
WHERE coalesce(r.hidden, false) AND (size($keys) = 0 OR a.key IN $keys OR b.key IN $keys)
RETURN a.id AS start, type(r) AS type, b.id AS end, a.key AS start_key, b.key AS end_key,
       r.evidence AS evidence, r.chunk_ids AS chunk_ids, r.hidden_at AS hidden_at
ORDER BY hidden_at DESC
"""


# --- one story's entity, another story's entity: the same (storygraph.library.identity) -------

ENTITY_BY_KEY = """
MATCH (e:__Entity__ {key: $key})
RETURN e.id AS id, e.key AS key, e.document_id AS document_id
"""

ENTITY_LINK = """
MATCH (a:__Entity__ {key: $a})
MATCH (b:__Entity__ {key: $b})
MERGE (a)-[r:SAME_AS]->(b)
ON CREATE SET r.created_at = $now
RETURN count(r) AS linked
"""

ENTITY_UNLINK = """
MATCH (:__Entity__ {key: $a})-[r:SAME_AS]-(:__Entity__ {key: $b})
DELETE r
RETURN count(*) AS unlinked
"""

ENTITY_HISTORY_APPEND = """
MATCH (e:__Entity__ {key: $key})
SET e.history = coalesce(e.history, []) + [$entry]
"""

# --- the split of a store of the old shape (storygraph.store.entity_keys) ----------------------

LEGACY_ENTITY_ANY = """
MATCH (e:__Entity__)
WHERE e.key IS NULL
RETURN e.id AS id
LIMIT 1
"""

LEGACY_ENTITIES = """
MATCH (e:__Entity__)
WHERE e.key IS NULL
RETURN e.id AS id, e.type AS type, properties(e) AS props
"""

LEGACY_RELATIONS = """
MATCH (a:__Entity__)-[r]->(b:__Entity__)
WHERE (a.key IS NULL OR b.key IS NULL) AND NOT type(r) IN $structural
RETURN a.id AS source, type(r) AS type, b.id AS target, properties(r) AS props
"""

LEGACY_KEYS_SET = """
UNWIND $rows AS row
MATCH (e:__Entity__ {id: row.id})
WHERE e.key IS NULL
SET e.key = row.key, e.document_id = row.document_id, e.chunk_ids = row.chunk_ids,
    e.type_votes = row.type_votes, e.history = row.history, e.summary_stale = row.stale
"""

ENTITY_COPY_CREATE = """
UNWIND $rows AS row
MERGE (e:__Entity__:<<label>> {key: row.key})
SET e += row.props
"""

RELATIONS_DELETE_BY_KEYS = """
UNWIND $rows AS row
MATCH (:__Entity__ {key: row.source_key})-[r:<<rel_type>>]->(:__Entity__ {key: row.target_key})
DELETE r
"""

RELATIONS_CREATE_WITH_PROPS = """
UNWIND $rows AS row
MATCH (a:__Entity__ {key: row.source_key})
MATCH (b:__Entity__ {key: row.target_key})
MERGE (a)-[r:<<rel_type>>]->(b)
SET r += row.props
"""

MENTIONS_COPY = """
UNWIND $rows AS row
MATCH (c:Chunk)-[:MENTIONS]->(:__Entity__ {key: row.from_key})
WHERE c.document_id = row.document_id
MATCH (x:__Entity__ {key: row.to_key})
MERGE (c)-[:MENTIONS]->(x)
"""

MENTIONS_DROP = """
UNWIND $rows AS row
MATCH (c:Chunk)-[m:MENTIONS]->(:__Entity__ {key: row.from_key})
WHERE c.document_id = row.document_id
DELETE m
"""


_PLACEHOLDER_RE = re.compile(r"<<([a-z_]+)>>")


def placeholders(template: str) -> set[str]:
    """Names of the `<<identifier>>` placeholders of a query template."""
    return set(_PLACEHOLDER_RE.findall(template))


def render(template: str, **identifiers: str) -> str:
    """Fill a template's identifier placeholders with backticked, validated identifiers.

    Raises ValueError when an identifier is not already sanitised or a placeholder is unfilled,
    so an unsanitised LLM string can never reach a query.
    """
    needed = placeholders(template)
    if needed != set(identifiers):
        raise ValueError(f"placeholders {sorted(needed)} need values, got {sorted(identifiers)}")
    for name, value in identifiers.items():
        if not IDENTIFIER_RE.fullmatch(value):
            raise ValueError(f"unsafe identifier for <<{name}>>: {value!r}")
    return _PLACEHOLDER_RE.sub(lambda m: f"`{identifiers[m.group(1)]}`", template)


def all_queries() -> dict[str, str]:
    """Every query constant of this module sent to Neo4j too (all but FALKORDB_ONLY), templates
    rendered with a sample identifier."""
    found: dict[str, str] = {}
    for name, value in globals().items():
        if not name.isupper() or name.startswith("_") or name in FALKORDB_ONLY | CONDITIONS:
            continue
        if isinstance(value, str) and name not in {"IDENTIFIER_RE"}:
            sample = {p: "Sample_Type" for p in placeholders(value)}
            found[name] = render(value, **sample) if sample else value
        elif isinstance(value, tuple) and value and all(isinstance(v, str) for v in value):
            if name == "STRUCTURAL_TYPES":
                continue
            for i, query in enumerate(value):
                found[f"{name}[{i}]"] = query
    return found
