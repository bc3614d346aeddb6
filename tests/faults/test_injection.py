"""Hostile names, relation types and labels from the model go through the real transformer
parsing, the sanitiser, the merge and the Cypher: stored verbatim as ids (never executed), found
again, no extra nodes or labels, and removed cleanly with their document."""

from __future__ import annotations

import re
from typing import Any

import pytest

from storygraph import cypher as q
from storygraph.ingest.graph_io import import_graph
from storygraph.ingest.merge import clean_name
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.services import Services
from storygraph.text.sanitize import sanitize_label, sanitize_rel_type
from tests.faults.conftest import (
    ServicesFactory,
    graph_labels,
    node_count,
    snapshot,
)
from tests.helpers.faulty_models import nasty_script
from tests.helpers.scripted_model import ScriptedChatModel

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
BASE_LABELS = {"Document", "Chunk", "__Entity__"}

NASTY_NAMES: dict[str, str] = {
    "single-quote": "Robert'); DROP GRAPH; --",
    "double-quote": 'the "quoted" ogre',
    "backtick": "back`tick` name",
    "braces": "{curly} $param {{x}}",
    "cypher-keywords": "}) DETACH DELETE n //",
    "match-return": "MATCH (n) RETURN n",
    "newline": "name with\nnewline",
    "backslash": "C:\\path\\to\\n",
    "emoji": "🍑桃太郎🍑",
    "script-tag": "<script>alert(1)</script>",
    "img-onerror": '<img src=x onerror="alert(1)">',
    "sql-or": "' OR 1=1 --",
    "unicode-math": "Ω≈ç√∫",
    "long-name": "鬼" * 3 + "x" * 120,
}

NASTY_REL_TYPES: dict[str, str] = {
    "cypher-keywords": "}) DETACH DELETE n //",
    "backtick-escape": "`]->(x) DELETE x //",
    "japanese-defeat": "退治する",
    "japanese-live": "住んでいる",
    "japanese-unmapped": "見張る",
    "spaces-punctuation": "is friend of!!",
    "structural-mentions": "MENTIONS",
    "structural-part-of": "part of",
    "emoji": "🍑",
    "digits-first": "1st enemy of",
    "quotes": 'it\'s "hers"',
}

NASTY_LABELS: dict[str, str] = {
    "document": "Document",
    "chunk": "chunk",
    "entity-base": "__Entity__",
    "injection": "Person`) DETACH DELETE n //",
    "japanese": "人物",
    "html": "<b>Ogre</b>",
    "empty": "",
}


def _expected_id(raw: str) -> str:
    """LLMGraphTransformer title-cases ids; the merge collapses inner whitespace."""
    return clean_name(raw.title())


def _ingest_triples(services: Services, triples: list[tuple[str, str, str, str, str]]) -> Any:
    model = ScriptedChatModel(script=nasty_script(triples))
    services.llm_override = model
    text = "\n".join(f"{s} と {t} の話。" for s, _, _, t, _ in triples)
    return services.ingestor().ingest_bytes("nasty.txt", text.encode())


def _assert_graph_shape(services: Services) -> None:
    stats = services.store.stats()
    assert node_count(services.store) == stats["documents"] + stats["chunks"] + stats["entities"]
    for label in graph_labels(services.store):
        assert IDENTIFIER.fullmatch(label), label
    for rel in services.store.export_graph()["relationships"]:
        assert IDENTIFIER.fullmatch(rel["type"]) and rel["type"] not in q.STRUCTURAL_TYPES


@pytest.mark.parametrize("case", sorted(NASTY_NAMES))
def test_nasty_entity_name_is_stored_verbatim_and_found(seeded: Services, case: str) -> None:
    before = snapshot(seeded.store)
    labels_before = set(graph_labels(seeded.store))
    raw = NASTY_NAMES[case]
    report = _ingest_triples(seeded, [(raw, "Character", "GOES_TO", "鬼が島", "Place")])
    assert report.status == "added", report.message
    name = _expected_id(raw)
    ids = {n["id"] for n in seeded.store.export_graph()["nodes"]}
    assert name in ids
    facts = seeded.store.retrieve("onehop", [name])
    assert [(f.start, f.type, f.end) for f in facts] == [(name, "GOES_TO", "鬼が島")]
    answer = seeded.qa().ask(f"{name} はどこへ？", QAOptions(no_llm=True))
    assert name in [e.node_id for e in answer.entities]
    assert set(graph_labels(seeded.store)) <= labels_before | {"Character", "Place"}
    _assert_graph_shape(seeded)
    seeded.store.delete_document(report.document_id)
    assert snapshot(seeded.store) == before


@pytest.mark.parametrize("case", sorted(NASTY_REL_TYPES))
def test_nasty_relation_type_is_sanitised(seeded: Services, case: str) -> None:
    before = snapshot(seeded.store)
    raw = NASTY_REL_TYPES[case]
    report = _ingest_triples(seeded, [("桃太郎", "Character", raw, "鬼", "Creature")])
    assert report.status == "added", report.message
    expected = sanitize_rel_type(raw.replace(" ", "_").upper())
    assert IDENTIFIER.fullmatch(expected)
    facts = seeded.store.retrieve("onehop", ["鬼"])
    assert [(f.start, f.type, f.end) for f in facts] == [("桃太郎", expected, "鬼")]
    if case.startswith("japanese-") and case != "japanese-unmapped":
        assert expected in ("DEFEATS", "LIVES_IN")
    _assert_graph_shape(seeded)
    seeded.store.delete_document(report.document_id)
    assert snapshot(seeded.store) == before


@pytest.mark.parametrize("case", sorted(NASTY_LABELS))
def test_nasty_label_is_sanitised(seeded: Services, case: str) -> None:
    before = snapshot(seeded.store)
    labels_before = set(graph_labels(seeded.store))
    raw = NASTY_LABELS[case]
    report = _ingest_triples(seeded, [("鬼", raw, "LIVES_IN", "鬼が島", "Place")])
    assert report.status == "added", report.message
    types = {n["id"]: n["type"] for n in seeded.store.export_graph()["nodes"]}
    expected = sanitize_label(raw.capitalize() if raw else "Node")
    assert types["鬼"] == expected
    assert expected not in BASE_LABELS
    new_labels = set(graph_labels(seeded.store)) - labels_before
    assert new_labels <= {expected, "Place"}
    _assert_graph_shape(seeded)
    seeded.store.delete_document(report.document_id)
    assert snapshot(seeded.store) == before


def test_all_nasty_names_in_one_document(seeded: Services) -> None:
    before = snapshot(seeded.store)
    names = list(NASTY_NAMES.values())
    triples = [
        (names[i], "Character", rel, names[(i + 1) % len(names)], "Character")
        for i, rel in zip(range(len(names)), [*NASTY_REL_TYPES.values()] * 2, strict=False)
    ]
    report = _ingest_triples(seeded, triples)
    assert report.status == "added", report.message
    ids = {n["id"] for n in seeded.store.export_graph()["nodes"]}
    assert {_expected_id(n) for n in names} <= ids
    _assert_graph_shape(seeded)
    seeded.store.delete_document(report.document_id)
    assert snapshot(seeded.store) == before


def test_graph_import_keeps_nasty_ids_verbatim(make_services: ServicesFactory) -> None:
    """The import path has no transformer: ids are stored exactly as given (whitespace aside)."""
    services = make_services()
    names = [clean_name(n) for n in NASTY_NAMES.values()]
    data = {
        "nodes": [{"id": n, "type": "Person`) DETACH DELETE n //"} for n in names],
        "relationships": [
            {
                "source": names[i],
                "type": list(NASTY_REL_TYPES.values())[i % 11],
                "target": names[i + 1],
            }
            for i in range(len(names) - 1)
        ],
    }
    counts, dropped = import_graph(services.store, data)
    assert dropped == [] and counts.entities_added == len(names)
    exported = services.store.export_graph()
    assert {n["id"] for n in exported["nodes"]} == set(names)
    assert len(exported["relationships"]) == len(names) - 1
    _assert_graph_shape(services)
    first = snapshot(services.store)
    import_graph(services.store, exported)  # re-import of our own export: nothing new
    assert snapshot(services.store)["stats"] == first["stats"]


@pytest.mark.parametrize(
    "identifier", ["X` DETACH DELETE n //", "Bad Label", "", "1abc", "ラベル", "a-b"]
)
def test_cypher_render_rejects_unsanitised_identifiers(identifier: str) -> None:
    with pytest.raises(ValueError, match="unsafe identifier"):
        q.render(q.ENTITY_UPSERT, label=identifier)
