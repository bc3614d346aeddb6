"""Every Cypher query of StoryGraph through Neo4j's own parser and semantic analysis.

No Neo4j server runs here, so `tools/cypher-lint/lint.mjs` feeds the queries of
`storygraph.cypher.all_queries()` to `lintCypherQuery` of `@neo4j-cypher/language-support`
(Neo4j's ANTLR grammar plus Neo4j's semantic analysis compiled to JavaScript), with a
Neo4j 5 schema that has the built-in procedures/functions and NO APOC (nor GDS).

A real query must come back without errors AND without warnings: the schema lists every label,
relationship type and property key of our data model, so a warning means a typo, a deprecated
feature or a schema element the lint schema (tools/cypher-lint/lint.mjs) does not know yet.

Known-bad controls prove the lint can fail. The node script runs once for the whole module.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from storygraph.cypher import all_queries

ROOT = Path(__file__).resolve().parents[2]
LINT_DIR = ROOT / "tools" / "cypher-lint"
LINT_SCRIPT = LINT_DIR / "lint.mjs"
PACKAGE_JSON = LINT_DIR / "node_modules" / "@neo4j-cypher" / "language-support" / "package.json"
INSTALL_HINT = "run `make deps` (or `npm ci --prefix tools/cypher-lint --no-audit --no-fund`)"

ERROR, WARNING = 1, 2
CONTROL_PREFIX = "__control__:"

# name -> (query, substring expected in one error message; None = must have no diagnostics)
CONTROLS: dict[str, tuple[str, str | None]] = {
    "apoc_procedure": (
        "MATCH (n:__Entity__) CALL apoc.create.addLabels(n, ['X']) YIELD node RETURN node",
        "apoc.create.addLabels",
    ),
    "apoc_function": ("RETURN apoc.coll.sum([1, 2]) AS s", "apoc.coll.sum"),
    "syntax_error": ("MATCH (n RETURN n", "Invalid input"),
    "semantic_error": ("MATCH (n:Chunk) RETURN m", "Variable `m` not defined"),
    "dynamic_label": ("MATCH (n:__Entity__) SET n:$($label)", "dynamic label"),
    "two_statements": (
        "MATCH (n:Chunk) RETURN n.id; MATCH (d:Document) RETURN d.id",
        "one statement",
    ),
    "builtin_procedure": ("CALL db.labels()", None),
}

QUERIES: dict[str, str] = all_queries()


def _skip(reason: str) -> None:
    print(f"SKIPPED test_cypher_dialect: {reason}", file=sys.stderr)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def lint_results() -> dict[str, list[dict[str, Any]]]:
    node = shutil.which("node")
    if node is None:
        _skip(f"`node` is not on PATH; install Node.js 20+ and {INSTALL_HINT}")
    if not PACKAGE_JSON.is_file():
        _skip(f"{LINT_DIR.relative_to(ROOT)}/node_modules is missing; {INSTALL_HINT}")
    payload = dict(QUERIES)
    payload.update({CONTROL_PREFIX + name: query for name, (query, _) in CONTROLS.items()})
    proc = subprocess.run(
        [node, str(LINT_SCRIPT)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=LINT_DIR,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, f"lint.mjs exited {proc.returncode}:\n{proc.stderr}"
    results = json.loads(proc.stdout)
    assert set(results) == set(payload), "lint.mjs did not answer for every query"
    return results


def _describe(query: str, diagnostics: list[dict[str, Any]]) -> str:
    lines = []
    for d in diagnostics:
        start, end = d["offsets"]["start"], d["offsets"]["end"]
        kind = {ERROR: "error", WARNING: "warning"}.get(d["severity"], f"severity {d['severity']}")
        lines.append(f"  {kind} at {start}-{end} {query[start:end]!r}: {d['message']}")
    return "\n".join(lines) + f"\nquery:\n{query}"


def test_queries_found() -> None:
    assert len(QUERIES) >= 20, sorted(QUERIES)
    assert not any(name.startswith(CONTROL_PREFIX) for name in QUERIES)


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_query_is_valid_neo4j5_cypher_without_apoc(
    name: str, lint_results: dict[str, list[dict[str, Any]]]
) -> None:
    query = QUERIES[name]
    problems = [d for d in lint_results[name] if d["severity"] in (ERROR, WARNING)]
    if problems:
        pytest.fail(f"{name}: Neo4j 5 lint reported\n{_describe(query, problems)}", pytrace=False)


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_lint_control(name: str, lint_results: dict[str, list[dict[str, Any]]]) -> None:
    query, expected = CONTROLS[name]
    diagnostics = lint_results[CONTROL_PREFIX + name]
    if expected is None:
        if diagnostics:
            pytest.fail(
                f"control {name} must pass:\n{_describe(query, diagnostics)}", pytrace=False
            )
        return
    errors = [d for d in diagnostics if d["severity"] == ERROR]
    if not any(expected in d["message"] for d in errors):
        pytest.fail(
            f"control {name} must fail with an error mentioning {expected!r}; got:\n"
            f"{_describe(query, diagnostics) if diagnostics else '  nothing'}",
            pytrace=False,
        )
