"""The store contract (design §4): the same graph in gives the same triples out, on every engine.

Runs on embedded FalkorDB always and on Neo4j whenever NEO4J_URI is set.
"""

from __future__ import annotations

import json
from pathlib import Path

from storygraph.ingest.graph_io import import_graph
from storygraph.services import Services
from storygraph.store import GraphStore
from storygraph.store.plan import EntityRecord, MergePlan, RelationRecord

Triple = tuple[str, str, str]


def _seed(store: GraphStore, shared: Path) -> dict:
    data = json.loads((shared / "eval" / "seed_graph.json").read_text(encoding="utf-8"))
    import_graph(store, data)
    return data


def _triples(facts) -> set[Triple]:
    return {(f.start, f.type, f.end) for f in facts}


def test_import_then_export_round_trips_the_seed_graph(store: GraphStore, shared_dir: Path) -> None:
    data = _seed(store, shared_dir)
    exported = store.export_graph()
    assert {(n["id"], n["type"]) for n in exported["nodes"]} == {
        (n["id"], n["type"]) for n in data["nodes"]
    }
    assert {(r["source"], r["type"], r["target"]) for r in exported["relationships"]} == {
        (r["source"], r["type"], r["target"]) for r in data["relationships"]
    }


def test_importing_twice_changes_nothing(store: GraphStore, shared_dir: Path) -> None:
    _seed(store, shared_dir)
    before = store.export_graph()
    counts, _ = import_graph(
        store, json.loads((shared_dir / "eval" / "seed_graph.json").read_text(encoding="utf-8"))
    )
    assert counts.entities_added == 0 and counts.relations_added == 0
    assert store.export_graph() == before


def test_onehop_returns_both_directions_with_the_real_direction(
    store: GraphStore, shared_dir: Path
) -> None:
    data = _seed(store, shared_dir)
    got = _triples(store.retrieve("onehop", ["桃太郎"]))
    touching = {
        (r["source"], r["type"], r["target"])
        for r in data["relationships"]
        if "桃太郎" in (r["source"], r["target"])
    }
    assert got == touching
    assert ("鬼", "DEFEATS", "桃太郎") in got  # incoming edge, kept as it points
    assert ("鬼", "SURRENDERS_TO", "桃太郎") not in got  # never reversed


def test_historical_modes_reproduce_the_memo(store: GraphStore, shared_dir: Path) -> None:
    _seed(store, shared_dir)
    modes = json.loads((shared_dir / "eval" / "seed_modes.json").read_text(encoding="utf-8"))
    start = [modes["start"]]
    undirected = _triples(store.retrieve("undirected2", start))
    directed = _triples(store.retrieve("directed2", start))
    onehop = _triples(store.retrieve("onehop", start))
    assert {tuple(t) for t in modes["undirected_2hop_must_include"]} <= undirected
    assert {tuple(t) for t in modes["directed_2hop_must_include"]} <= directed
    assert not {tuple(t) for t in modes["directed_2hop_must_exclude"]} & directed
    assert {tuple(t) for t in modes["onehop_both_must_include"]} <= onehop
    assert not {tuple(t) for t in modes["onehop_both_must_exclude"]} & onehop
    for never in modes["never"]:
        assert tuple(never) not in undirected | directed | onehop


def test_structural_edges_never_come_back_as_facts(
    engine_services: Services, shared_dir: Path
) -> None:
    data = (shared_dir / "stories" / "ja" / "momotaro_kusuyama.txt").read_bytes()
    report = engine_services.ingestor().ingest_bytes("momotaro.txt", data)
    assert report.status == "added", report.message
    for mode in ("onehop", "directed2", "undirected2"):
        types = {f.type for f in engine_services.store.retrieve(mode, ["桃太郎"])}
        assert types and not types & {"MENTIONS", "PART_OF"}


def test_names_with_quotes_and_backticks_are_stored_verbatim(store: GraphStore) -> None:
    nasty = '鬼 "the `ogre`" {x}\'; MATCH (n) DETACH DELETE n //'
    import_graph(
        store,
        {
            "nodes": [{"id": nasty, "type": "Character"}, {"id": "桃太郎", "type": "Character"}],
            "relationships": [
                {"source": nasty, "type": "fights with`) DELETE", "target": "桃太郎"}
            ],
        },
    )
    facts = store.retrieve("onehop", [nasty])
    assert [(f.start, f.end) for f in facts] == [(nasty, "桃太郎")]
    assert all(c.isalnum() or c == "_" for c in facts[0].type)
    assert store.stats()["entities"] == 2


def _relation_plan(chunk_ids: list[str], evidence: list[str], *, existing: bool) -> MergePlan:
    entities = [
        EntityRecord(id=name, label="Character", norm=name, rkey=None, kana=False,
                     chunk_ids=["import:0"], type_votes=["Character"], existing=existing)
        for name in ("桃太郎", "犬")
    ]  # fmt: skip
    relation = RelationRecord("桃太郎", "MEETS", "犬", chunk_ids=chunk_ids, evidence=evidence)
    return MergePlan(entities=entities, relations=[relation])


def test_a_relation_written_again_gains_only_the_sources_it_lacks(store: GraphStore) -> None:
    """RELATION_UPSERT (one statement for new and existing edges): an edge is kept once, a
    second write adds the chunk ids it lacks with their own evidence, in order, and a third
    identical write changes nothing."""
    first = store.write_plan(_relation_plan(["a:1"], ["一つ目。"], existing=False))
    assert (first.relations_added, first.relations_merged) == (1, 0)
    sources = ["a:1", "b:2", "c:3"]
    again = _relation_plan(sources, ["別の文。", "二つ目。", "三つ目。"], existing=True)
    second = store.write_plan(again)
    assert (second.relations_added, second.relations_merged) == (0, 1)
    store.write_plan(again)
    rels = store.export_graph()["relationships"]
    assert len(rels) == 1
    assert rels[0]["chunk_ids"] == ["a:1", "b:2", "c:3"]
    assert rels[0]["evidence"] == ["一つ目。", "二つ目。", "三つ目。"]
    assert rels[0]["weight"] == 3


def test_a_retrieved_fact_keeps_every_chunk_s_sentence_aligned_with_its_chunks(
    store: GraphStore,
) -> None:
    """A relation stated in three chunks comes back with its first sentence as `evidence` and
    all three as `sentences`, in its chunks' order (the question's nearest one is chosen from
    them: storygraph.qa.retrieval.fact_sentences); the reader's position drops the unread
    chunk's sentence with its chunk."""
    store.write_plan(_relation_plan(["a:1"], ["一つ目。"], existing=False))
    store.write_plan(
        _relation_plan(["a:1", "a:2", "a:3"], ["一つ目。", "二つ目。", "三つ目。"], existing=True)
    )
    (fact,) = store.retrieve("onehop", ["桃太郎"])
    assert fact.chunk_ids == ["a:1", "a:2", "a:3"]
    assert fact.sentences == ["一つ目。", "二つ目。", "三つ目。"]
    assert fact.evidence == "一つ目。"
    (read,) = store.retrieve("onehop", ["桃太郎"], (), ["a:1", "a:3"])
    assert read.chunk_ids == ["a:1", "a:3"]
    assert read.sentences == ["一つ目。", "三つ目。"]
