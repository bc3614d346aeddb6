"""A fact hidden as wrong: not retrieved, not drawn, recorded in history, undoable (real
embedded FalkorDB, scripted extraction; docs/ISSUES.md#wrong-facts)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from storygraph.errors import InputError
from storygraph.library.entity_pages import EntityPages
from storygraph.library.wrong_facts import HIDDEN, SHOWN, FactRef, hide, show_again
from storygraph.llm.factory import ModelInfo
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from tests.helpers.scripted_logic import Script
from tests.helpers.scripted_model import ScriptedChatModel

TRIPLES = (
    ("knight", "Character", "MEETS", "dog", "Animal"),
    ("knight", "Character", "DEFEATS", "dragon", "Character"),
    ("dragon", "Character", "LIVES_IN", "cave", "Place"),
    ("dog", "Animal", "LIVES_IN", "cave", "Place"),
)
STORY = (
    "The knight met the dog.\nThe knight defeated the dragon.\nThe dragon lived in the cave.\n"
    "The dog lived in the cave.\n"
)


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    settings = Settings(data_dir=tmp_path / "data", chunk_size=40, chunk_overlap=0)
    built = build_services(settings, llm=ScriptedChatModel(script=Script(triples=TRIPLES)))
    yield built
    built.close()


def _types(facts: list[object]) -> set[tuple[str, str, str]]:
    return {(f.start, f.type, f.end) for f in facts}  # type: ignore[attr-defined]


def test_a_hidden_fact_is_neither_retrieved_nor_drawn_and_comes_back(services: Services) -> None:
    store = services.store
    report = services.ingestor().ingest_bytes("k.txt", STORY.encode())
    doc = report.document_id
    knight, dragon = f"{doc}:Knight", f"{doc}:Dragon"
    wrong = ("Knight", "DEFEATS", "Dragon")
    assert wrong in _types(store.retrieve("onehop", ["Knight"]))
    lives = ("Dog", "LIVES_IN", "Cave")
    assert lives in _types(store.co_members(["Dragon"], ["LIVES_IN"]))

    line = hide(store, FactRef(knight, "DEFEATS", dragon))
    assert line == "Knight → defeats → Dragon"
    for mode in ("onehop", "directed2", "undirected2"):
        assert wrong not in _types(store.retrieve(mode, ["Knight", "Dragon"])), mode
    assert ("Knight", "MEETS", "Dog") in _types(store.retrieve("onehop", ["Knight"]))
    drawn = {(r["start"], r["type"], r["end"]) for r in store.graph_view()}
    assert wrong not in drawn and ("Knight", "MEETS", "Dog") in drawn
    listed = store.entity_relations([knight])
    assert wrong not in {(r["start"], r["type"], r["end"]) for r in listed}
    hidden = [(r["start"], r["end"], r["start_key"]) for r in store.hidden_facts([dragon])]
    assert hidden == [("Knight", "Dragon", knight)]
    # a hidden second hop leads nowhere: Dragon's cave is not reached through the wrong fact
    two_hops = _types(store.retrieve("directed2", ["Knight"]))
    assert ("Dragon", "LIVES_IN", "Cave") not in two_hops
    hide(store, FactRef(f"{doc}:Dog", "LIVES_IN", f"{doc}:Cave"))
    assert lives not in _types(store.co_members(["Dragon"], ["LIVES_IN"]))

    # the answer no longer uses it
    answer = services.qa().ask("Who defeated the dragon?", QAOptions(no_llm=True))
    assert wrong not in _types(answer.facts)

    # the history of both ends says so, in the story's words
    pages = EntityPages(store, None, ModelInfo("scripted", "scripted", capable=False))
    for key in (knight, dragon):
        kinds = [(h.kind, h.changes) for h in pages.page(key).history]
        assert (HIDDEN, ["Knight → defeats → Dragon"]) in kinds, kinds

    assert show_again(store, FactRef(knight, "DEFEATS", dragon)) == line
    assert wrong in _types(store.retrieve("onehop", ["Knight"]))
    assert store.hidden_facts([dragon]) == []
    kinds = [h.kind for h in pages.page(dragon).history]
    assert kinds.count(HIDDEN) == 1 and kinds.count(SHOWN) == 1

    with pytest.raises(InputError, match="no relation"):
        hide(store, FactRef(knight, "OWNS", dragon))


def test_a_hidden_fact_stays_hidden_through_delete_and_undo(services: Services) -> None:
    store = services.store
    doc = services.ingestor().ingest_bytes("k.txt", STORY.encode()).document_id
    hide(store, FactRef(f"{doc}:Knight", "DEFEATS", f"{doc}:Dragon"))
    store.delete_document_undoably(doc)
    store.undo_delete(doc)
    assert [(r["start"], r["type"], r["end"]) for r in store.hidden_facts()] == [
        ("Knight", "DEFEATS", "Dragon")
    ]
    assert ("Knight", "DEFEATS", "Dragon") not in _types(store.retrieve("onehop", ["Knight"]))
