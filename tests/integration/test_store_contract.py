"""The store contract (design §4): the same graph in gives the same triples out, on every engine.

Runs on embedded FalkorDB always and on Neo4j whenever NEO4J_URI is set.
"""

from __future__ import annotations

import json
from pathlib import Path

from storygraph.ingest.graph_io import import_graph
from storygraph.services import Services
from storygraph.store import GraphStore

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
