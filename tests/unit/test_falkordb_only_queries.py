"""Queries that find nodes by FalkorDB's internal ids never reach Neo4j's lint or Neo4j
(storygraph.cypher.FALKORDB_ONLY, docs/ISSUES.md#import-1m-edges)."""

from __future__ import annotations

import re

from storygraph import cypher as q

INTERNAL_ID = re.compile(r"\bid\(")


def test_every_falkordb_only_name_is_a_query_of_the_module() -> None:
    for name in q.FALKORDB_ONLY:
        assert isinstance(getattr(q, name), str), name
        assert INTERNAL_ID.search(getattr(q, name)), f"{name} uses no internal id"


def test_no_query_linted_for_neo4j_uses_an_internal_id() -> None:
    queries = q.all_queries()
    assert not set(queries) & q.FALKORDB_ONLY
    assert [name for name, text in queries.items() if INTERNAL_ID.search(text)] == []
