"""A store of the old shape (one entity per name across stories, no key) opens split per story,
every relation and citation kept (storygraph.store.entity_keys, docs/ISSUES.md#entity-keys)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from storygraph.services import build_services
from storygraph.settings import Settings
from storygraph.store import GraphStore
from storygraph.store.entity_keys import split_legacy_entities

M, K = "aaaa000000000001", "bbbb000000000002"

# Today's write path before issue #28, as raw Cypher: entities MERGEd on their name alone.
OLD_SHAPE = [
    (
        "UNWIND $docs AS d CREATE (:Document {id: d.id, name: d.name, sha256: d.id, "
        "language: 'ja', chars: 10, uploaded_at: d.at, status: 'ready', chunks: d.chunks})",
        {
            "docs": [
                {"id": M, "name": "momotaro.txt", "at": "2026-01-01", "chunks": 2},
                {"id": K, "name": "kobutori.txt", "at": "2026-01-02", "chunks": 1},
            ]
        },
    ),
    (
        "UNWIND $rows AS row MATCH (d:Document {id: row.doc}) "
        "CREATE (c:Chunk {id: row.id, document_id: row.doc, index: row.index, text: row.text, "
        "start: 0, end: 5})-[:PART_OF]->(d)",
        {
            "rows": [
                {"id": f"{M}:0000", "doc": M, "index": 0, "text": "おじいさんは山へ芝刈りに"},
                {"id": f"{M}:0001", "doc": M, "index": 1, "text": "おじいさんは桃太郎を育てた"},
                {"id": f"{K}:0000", "doc": K, "index": 0, "text": "おじいさんは山へ木を切りに"},
            ]
        },
    ),
    (
        "UNWIND $rows AS row CREATE (e:__Entity__:Character {id: row.id, type: 'Character', "
        "norm: row.id, chunk_ids: row.chunks, type_votes: row.votes, aliases: [], "
        "history: row.history, summary: row.summary})",
        {
            "rows": [
                {
                    "id": "おじいさん",
                    "chunks": [f"{M}:0000", f"{M}:0001", f"{K}:0000"],
                    "votes": ["Character"] * 3,
                    "history": [f'{M}:{{"kind": "created"}}', f'{K}:{{"kind": "updated"}}'],
                    "summary": "おじいさん: 桃太郎を育て、瘤をとられた",
                },
                {
                    "id": "桃太郎",
                    "chunks": [f"{M}:0001"],
                    "votes": ["Character"],
                    "history": [],
                    "summary": None,
                },
                {
                    "id": "山",
                    "chunks": [f"{M}:0000", f"{K}:0000"],
                    "votes": ["Character", "Character"],
                    "history": [],
                    "summary": None,
                },
            ]
        },
    ),
    (
        "UNWIND $rows AS row MATCH (c:Chunk {id: row.chunk}) "
        "MATCH (e:__Entity__ {id: row.entity}) MERGE (c)-[:MENTIONS]->(e)",
        {
            "rows": [
                {"chunk": f"{M}:0000", "entity": "おじいさん"},
                {"chunk": f"{M}:0001", "entity": "おじいさん"},
                {"chunk": f"{K}:0000", "entity": "おじいさん"},
                {"chunk": f"{M}:0001", "entity": "桃太郎"},
                {"chunk": f"{M}:0000", "entity": "山"},
                {"chunk": f"{K}:0000", "entity": "山"},
            ]
        },
    ),
    (
        "MATCH (a:__Entity__ {id: 'おじいさん'}), (b:__Entity__ {id: '山'}) "
        "CREATE (a)-[:GOES_TO {chunk_ids: $chunks, evidence: $evidence, weight: 2, "
        "positions: $positions}]->(b)",
        {
            "chunks": [f"{M}:0000", f"{K}:0000"],
            "evidence": ["おじいさんは山へ芝刈りに", "おじいさんは山へ木を切りに"],
            "positions": [f"{M}:00000000:0000", f"{K}:00000000:0000"],
        },
    ),
    (
        "MATCH (a:__Entity__ {id: 'おじいさん'}), (b:__Entity__ {id: '桃太郎'}) "
        "CREATE (a)-[:RAISES {chunk_ids: $chunks, evidence: ['育てた'], weight: 1}]->(b)",
        {"chunks": [f"{M}:0001"]},
    ),
]


def _citations(store: GraphStore) -> list[tuple[str, str, str, str]]:
    """(start, type, end, chunk id) of every relation, one row per citing chunk."""
    rows = store.export_graph()["relationships"]
    return sorted(
        (r["source"], r["type"], r["target"], c) for r in rows for c in r.get("chunk_ids", [])
    )


def test_an_old_store_with_a_shared_name_opens_as_one_entity_per_story(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    services = build_services(settings, llm=None)
    services.store.reset()
    services.store.runner.run_batch(OLD_SHAPE)
    before = _citations(services.store)
    assert len(before) == 3
    services.close()

    with caplog.at_level(logging.WARNING, logger="storygraph.store.entity_keys"):
        services = build_services(settings, llm=None)  # opening the store splits it
    assert "2 split into 2 more per-story nodes" in caplog.text  # logged
    try:
        store = services.store
        names = store.entity_names()
        grandpas = {r["document_id"]: r["key"] for r in names if r["id"] == "おじいさん"}
        assert grandpas == {M: f"{M}:おじいさん", K: f"{K}:おじいさん"}
        assert sorted(r["document_id"] for r in names if r["id"] == "山") == [M, K]
        assert [r["document_id"] for r in names if r["id"] == "桃太郎"] == [M]
        assert _citations(store) == before  # every relation and citation kept

        # each story's node has only its own relations, chunk ids, history and mentions
        facts = store.retrieve("onehop", ["おじいさん"], keys=[grandpas[K]])
        assert [(f.start, f.type, f.end, f.chunk_ids) for f in facts] == [
            ("おじいさん", "GOES_TO", "山", [f"{K}:0000"])
        ]
        facts = store.retrieve("onehop", ["おじいさん"], keys=[grandpas[M]])
        assert {(f.type, tuple(f.chunk_ids)) for f in facts} == {
            ("GOES_TO", (f"{M}:0000",)),
            ("RAISES", (f"{M}:0001",)),
        }
        kobutori = store.entity_page_node(grandpas[K])
        assert kobutori is not None and kobutori["chunk_ids"] == [f"{K}:0000"]
        assert [json.loads(h.partition(":")[2])["kind"] for h in kobutori["history"]] == ["updated"]
        assert kobutori["summary_stale"] is True  # the summary mixed both stories
        mentions = store.runner.run(
            "MATCH (c:Chunk)-[:MENTIONS]->(e:__Entity__ {id: 'おじいさん'}) "
            "RETURN c.document_id AS chunk_doc, e.document_id AS entity_doc"
        )
        assert len(mentions) == 3 and all(m["chunk_doc"] == m["entity_doc"] for m in mentions)
        rel = next(
            r
            for r in store.export_graph()["relationships"]
            if r["type"] == "GOES_TO" and r["document_id"] == K
        )
        assert rel["positions"] == [f"{K}:00000000:0000"] and rel["weight"] == 1
        assert rel["story_order"] == f"{K}:00000000:0000"

        # once: nothing is left without a key, so the next open does nothing
        assert split_legacy_entities(store).entities_keyed == 0
        stats = store.stats()
        nodes = store.runner.run("MATCH (n) RETURN count(n) AS n")[0]["n"]
        assert nodes == stats["documents"] + stats["chunks"] + stats["entities"] == 2 + 3 + 5
    finally:
        services.close()


def test_a_deleted_story_takes_only_its_own_split_entities(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    services = build_services(settings, llm=None)
    services.store.reset()
    services.store.runner.run_batch(OLD_SHAPE)
    services.close()
    services = build_services(settings, llm=None)
    try:
        services.store.delete_document(K)
        names = services.store.entity_names()
        assert sorted((r["id"], r["document_id"]) for r in names) == [
            ("おじいさん", M),
            ("山", M),
            ("桃太郎", M),
        ]
        assert len(_citations(services.store)) == 2
    finally:
        services.close()
