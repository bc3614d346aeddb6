"""On FalkorDB a write's relations find their ends by the internal ids its entity statements
return (RELATION_UPSERT_BY_NODE_ID, docs/ISSUES.md#import-1m-edges); Neo4j matches them by key
(RELATION_UPSERT). Both paths on the real embedded FalkorDB, fed the same writes, must leave the
same graph: the same nodes, edges and provenance, and report the same counts."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from storygraph import cypher as q
from storygraph.models import Chunk, DocumentInfo
from storygraph.store.falkordb_runner import FalkorDBRunner
from storygraph.store.falkordb_server import EmbeddedFalkorDB
from storygraph.store.graph_store import GraphStore, WriteCounts
from storygraph.store.plan import EntityRecord, MergePlan, RelationRecord
from storygraph.store.runner import Row, Statement

TIMESTAMPS = {"created_at", "updated_at", "uploaded_at"}
AT = re.compile(r'"at": "[^"]*"')

NODES = "MATCH (n) RETURN labels(n) AS labels, properties(n) AS props"
EDGES = """
MATCH (a)-[r]->(b)
RETURN coalesce(a.key, a.id) AS a, type(r) AS type, coalesce(b.key, b.id) AS b,
       properties(r) AS props
"""


class Recording:
    """A runner that remembers every query it was given."""

    def __init__(self, inner: FalkorDBRunner) -> None:
        self.inner = inner
        self.engine = inner.engine
        self.schema = inner.schema
        self.schema_drops = inner.schema_drops
        self.queries: list[str] = []

    def run(self, query: str, params: dict[str, Any] | None = None) -> list[Row]:
        self.queries.append(query)
        return self.inner.run(query, params)

    def run_batch(self, statements: Sequence[Statement]) -> list[Row]:
        self.queries.extend(query for query, _ in statements)
        return self.inner.run_batch(statements)

    def run_each(self, statements: Sequence[Statement]) -> Iterator[list[Row]]:
        self.queries.extend(query for query, _ in statements)
        return self.inner.run_each(statements)

    def describe(self) -> str:
        return self.inner.describe()

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[GraphStore, GraphStore]]:
    """(by node id, by key): two graphs of one embedded server."""
    server = EmbeddedFalkorDB(tmp_path / "data")
    by_id = GraphStore(Recording(FalkorDBRunner(server, "by_id")), ends_by_node_id=True)
    by_key = GraphStore(Recording(FalkorDBRunner(server, "by_key")), ends_by_node_id=False)
    for store in (by_id, by_key):
        store.ensure_schema()
    yield by_id, by_key
    by_id.close()
    by_key.close()
    server.stop()


def _entity(name: str, label: str, document_id: str = "", *, existing: bool = False) -> Any:
    chunk = f"{document_id or 'import'}:0"
    return EntityRecord(id=name, label=label, norm=name, rkey=None, kana=False,
                        chunk_ids=[chunk], type_votes=[label], existing=existing,
                        existing_label=label if existing else None,
                        document_id=document_id)  # fmt: skip


def _relation(a: str, rel_type: str, b: str, chunks: list[str], document_id: str = "") -> Any:
    return RelationRecord(a, rel_type, b, chunk_ids=chunks,
                          evidence=[f"{a}と{b}、{c}。" for c in chunks],
                          document_id=document_id)  # fmt: skip


def _import() -> MergePlan:
    """New entities; a relation twice in one batch (its second row meets the edge the first
    made) and a relation to a name with no node."""
    return MergePlan(
        entities=[
            _entity("桃太郎", "Character"),
            _entity("犬", "Animal"),
            _entity("猿", "Animal"),
            _entity("雉", "Animal"),
        ],
        relations=[
            _relation("桃太郎", "MEETS", "犬", ["a:1"]),
            _relation("犬", "FOLLOWS", "桃太郎", ["a:1"]),
            _relation("猿", "MEETS", "雉", ["a:2", "a:3"]),
            _relation("桃太郎", "MEETS", "犬", ["a:2", "a:1"]),
            _relation("桃太郎", "MEETS", "鬼", ["a:4"]),
        ],
    )


def _import_again() -> MergePlan:
    """Existing entities (one relabelled), an existing edge with one known and one new source,
    a new end, and an end the plan leaves out but the graph has (猿)."""
    dog = _entity("犬", "Character", existing=True)
    dog.existing_label = "Animal"
    return MergePlan(
        entities=[_entity("桃太郎", "Character", existing=True), dog, _entity("鬼", "Character")],
        relations=[
            _relation("桃太郎", "MEETS", "犬", ["a:2", "b:3"]),
            _relation("桃太郎", "DEFEATS", "鬼", ["b:1"]),
            _relation("猿", "FOLLOWS", "桃太郎", ["b:2"]),
            _relation("雉", "MEETS", "猿", ["b:4"]),
        ],
    )


def _document() -> tuple[DocumentInfo, list[Chunk], MergePlan]:
    """A story's own entities (the same names as the import's, other nodes) with story time."""
    text = "桃太郎は犬に会いました。犬は桃太郎についていきました。"
    chunk = Chunk("d1:0000", "d1", 0, text, 0, len(text))
    meets = _relation("桃太郎", "MEETS", "犬", [chunk.id], "d1")
    meets.positions = ["000000.0000"]
    follows = _relation("犬", "FOLLOWS", "桃太郎", [chunk.id], "d1")
    follows.positions = ["000000.0001"]
    plan = MergePlan(
        entities=[_entity("桃太郎", "Character", "d1"), _entity("犬", "Animal", "d1")],
        relations=[meets, follows],
    )
    return DocumentInfo("d1", "d1.txt", "d1", "ja", len(text)), [chunk], plan


def _graph(store: GraphStore) -> tuple[list[Any], list[Any]]:
    def clean(props: dict[str, Any]) -> dict[str, Any]:
        kept = {k: v for k, v in props.items() if k not in TIMESTAMPS}
        if "history" in kept:  # each entry says when it was written
            kept["history"] = [AT.sub('"at": ""', entry) for entry in kept["history"]]
        return kept

    nodes = sorted(
        (sorted(row["labels"]), sorted(clean(row["props"]).items(), key=str))
        for row in store.runner.run(NODES)
    )
    edges = sorted(
        (row["a"], row["type"], row["b"], sorted(clean(row["props"]).items(), key=str))
        for row in store.runner.run(EDGES)
    )
    return nodes, edges


def _write_all(store: GraphStore) -> list[WriteCounts]:
    doc, chunks, plan = _document()
    return [
        store.write_plan(_import()),
        store.write_plan(_import_again()),
        store.write_plan(_import_again()),  # changes nothing
        store.write_document(doc, chunks, plan),
    ]


def test_relations_by_node_id_write_what_relations_by_key_write(
    stores: tuple[GraphStore, GraphStore],
) -> None:
    by_id, by_key = stores
    assert _write_all(by_id) == _write_all(by_key)
    assert _graph(by_id) == _graph(by_key)
    id_queries: list[str] = by_id.runner.queries  # type: ignore[attr-defined]
    key_queries: list[str] = by_key.runner.queries  # type: ignore[attr-defined]
    by_id_upsert = q.RELATION_UPSERT_BY_NODE_ID.split("<<", 1)[0]
    by_key_upsert = q.RELATION_UPSERT.split("<<", 1)[0]
    assert any(query.startswith(by_id_upsert) for query in id_queries)
    assert not any(query.startswith(by_key_upsert) for query in id_queries)
    assert any(query.startswith(by_key_upsert) for query in key_queries)
    assert q.ENTITY_NODE_IDS in id_queries  # 猿, an end the second plan leaves out

    # what both wrote, so that the comparison cannot pass on two equally wrong graphs
    edges = {(r["source"], r["type"], r["target"], r["document_id"]): r
             for r in by_id.export_graph()["relationships"]}  # fmt: skip
    meets = edges[("桃太郎", "MEETS", "犬", "")]
    assert meets["chunk_ids"] == ["a:1", "a:2", "b:3"]
    assert meets["evidence"] == ["桃太郎と犬、a:1。", "桃太郎と犬、a:2。", "桃太郎と犬、b:3。"]
    assert meets["weight"] == 3
    assert edges[("猿", "FOLLOWS", "桃太郎", "")]["chunk_ids"] == ["b:2"]
    assert edges[("桃太郎", "DEFEATS", "鬼", "")]["chunk_ids"] == ["b:1"]
    assert edges[("桃太郎", "MEETS", "犬", "d1")]["positions"] == ["000000.0000"]
    assert len(edges) == 8  # 鬼 had no node in the first write: no edge to it then
    assert by_id.stats() == {"documents": 1, "chunks": 1, "entities": 7, "relations": 8}
