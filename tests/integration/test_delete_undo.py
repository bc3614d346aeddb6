"""Delete with undo on the real embedded FalkorDB (docs/ISSUES.md#delete-undo).

Restored means restored: the whole graph (every node and edge with every property) is the same
after delete + undo as before the delete, and the same facts are retrieved. A delete racing an
ingest waits for it (the write lock) and neither loses anything.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storygraph import cypher as q
from storygraph.errors import StoreError
from storygraph.library.identity import merge
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from storygraph.store import GraphStore
from tests.helpers.scripted_logic import Script
from tests.helpers.scripted_model import ScriptedChatModel

TRIPLES = (
    ("dragon", "Character", "LIVES_IN", "cave", "Place"),
    ("dragon", "Character", "OWNS", "gold", "Object"),
    ("knight", "Character", "MEETS", "dog", "Animal"),
    ("knight", "Character", "DEFEATS", "dragon", "Character"),
    ("bat", "Animal", "LIVES_IN", "cave", "Place"),
)
DOC_A = "The dragon lived in the cave.\nThe dragon owned the gold.\n"
DOC_B = "The knight met the dog.\nThe knight defeated the dragon.\nThe dragon lived in the cave.\n"
DOC_C = "A bat lived in the cave.\n"

# Test-only probes of the raw graph: every node and every edge with all their properties.
PROBE_NODES = "MATCH (n) RETURN labels(n) AS labels, properties(n) AS props"
PROBE_EDGES = """
MATCH (a)-[r]->(b)
RETURN coalesce(a.key, a.id) AS a, type(r) AS type, coalesce(b.key, b.id) AS b,
       properties(r) AS props
"""


def dump(store: GraphStore) -> list[str]:
    """The whole graph, canonical: one JSON line per node and per edge, sorted."""
    rows = store.runner.run(PROBE_NODES) + store.runner.run(PROBE_EDGES)
    return sorted(json.dumps(row, sort_keys=True, ensure_ascii=False) for row in rows)


def story(store: GraphStore, document_id: str) -> str:
    """One story's subgraph (as a delete saves it), canonical."""
    return json.dumps(store.document_subgraph(document_id), sort_keys=True, ensure_ascii=False)


def facts(store: GraphStore) -> list[tuple[Any, ...]]:
    """The facts retrieval gives (a fact two stories state is one, its order of citation and
    story time that of whichever story's edge came first: compared as sets)."""
    names = sorted({str(row["id"]) for row in store.entity_names()})
    found = store.retrieve("undirected2", names)
    return sorted((f.start, f.type, f.end, tuple(sorted(f.chunk_ids)), f.evidence) for f in found)


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    settings = Settings(data_dir=tmp_path / "data", chunk_size=40, chunk_overlap=0)
    built = build_services(settings, llm=ScriptedChatModel(script=Script(triples=TRIPLES)))
    yield built
    built.close()


def _ingest(services: Services, name: str, text: str) -> str:
    report = services.ingestor().ingest_bytes(name, text.encode("utf-8"))
    assert report.status == "added", report.message
    return report.document_id


def test_delete_names_what_goes_and_undo_restores_the_story_exactly(services: Services) -> None:
    store = services.store
    a = _ingest(services, "a.txt", DOC_A)
    b = _ingest(services, "b.txt", DOC_B)
    merge(store, "dragon@a.txt", "dragon@b.txt")  # a SAME_AS link across the two stories
    before, before_facts = dump(store), facts(store)
    assert any("a.txt" in line for line in before)

    preview = store.removal_preview(a)
    assert preview is not None
    assert (preview.name, preview.chunks) == ("a.txt", 2)
    assert (preview.entities, preview.relations) == (3, 2)  # dragon, cave, gold; its 2 facts

    removed = store.delete_document_undoably(a)
    assert (removed.name, removed.entities_deleted, removed.relations_deleted) == ("a.txt", 3, 2)
    assert removed.chunks == 2
    assert removed.path.name == f"deleted-{a}.json" and removed.path.is_file()
    assert [d.id for d in store.list_documents()] == [b]
    left = [line for line in dump(store) if a in line]
    assert all('"kind\\": \\"merged\\"' in line for line in left), left  # B's merge history
    assert [s.document_id for s in store.removed_stories()] == [a]

    restored = store.undo_delete(a)
    assert restored.name == "a.txt"
    assert dump(store) == before  # every node, edge and property, the SAME_AS link too
    assert facts(store) == before_facts
    assert store.removed_stories() == [] and not removed.path.exists()
    with pytest.raises(StoreError, match="can no longer be restored"):
        store.undo_delete(a)


def test_undo_is_refused_after_the_next_ingest(services: Services) -> None:
    store = services.store
    a = _ingest(services, "a.txt", DOC_A)
    store.delete_document_undoably(a)
    _ingest(services, "c.txt", DOC_C)
    assert store.removed_stories() == []
    with pytest.raises(StoreError, match="only until the next ingest"):
        store.undo_delete(a)


def test_undo_is_refused_when_the_story_was_added_again(services: Services) -> None:
    """An ingest elsewhere (Neo4j, another machine) leaves the copy here: undo checks."""
    store = services.store
    a = _ingest(services, "a.txt", DOC_A)
    store.delete_document_undoably(a)
    saved = store.removed_stories()[0].path.read_bytes()
    _ingest(services, "a-again.txt", DOC_A)
    assert store.removed_stories() == []  # put the copy back, as an ingest elsewhere leaves it
    assert store.removed is not None
    store.removed.path(a).write_bytes(saved)
    again = dump(store)
    with pytest.raises(StoreError, match="added again"):
        store.undo_delete(a)
    assert dump(store) == again


def test_a_delete_failing_half_way_is_rolled_back(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = services.store
    a = _ingest(services, "a.txt", DOC_A)
    _ingest(services, "b.txt", DOC_B)
    before = dump(store)
    real = store.runner.run

    def failing(query: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        if query == q.ENTITIES_DELETE_ONLY_SUPPORTED_BY:  # after its relations were deleted
            raise StoreError("the graph database went away")
        return real(query, params)

    monkeypatch.setattr(store.runner, "run", failing)
    with pytest.raises(StoreError, match="went away"):
        store.delete_document_undoably(a)
    monkeypatch.undo()
    assert dump(store) == before
    assert store.removed_stories() == []


def test_a_delete_racing_an_ingest_waits_for_it_and_loses_nothing(services: Services) -> None:
    store = services.store
    a = _ingest(services, "a.txt", DOC_A)
    a_story = story(store, a)
    writing, release = threading.Event(), threading.Event()

    def ingest_holding_the_lock() -> None:
        # an ingest between DOCUMENT_BEGIN and DOCUMENT_COMMIT holds the write lock
        with store.writing():
            writing.set()
            release.wait(30)
            _ingest(services, "b.txt", DOC_B)

    ingest = threading.Thread(target=ingest_holding_the_lock)
    ingest.start()
    assert writing.wait(30)
    deleted: list[str] = []
    delete = threading.Thread(target=lambda: deleted.append(store.delete_document_undoably(a).name))
    delete.start()
    time.sleep(1.0)
    assert deleted == [] and delete.is_alive()  # the delete waits for the ingest's commit
    release.set()
    ingest.join(60)
    delete.join(60)
    assert deleted == ["a.txt"]
    b = store.list_documents()
    assert [d.name for d in b] == ["b.txt"] and b[0].status == "ready"
    b_subgraph = store.document_subgraph(b[0].id)
    assert b_subgraph is not None and len(b_subgraph["relations"]) == 3  # B complete
    b_story = story(store, b[0].id)
    # the delete came after the ingest: its copy is kept, and undo brings A back whole
    store.undo_delete(a)
    assert story(store, a) == a_story
    assert story(store, b[0].id) == b_story


def test_a_delete_and_an_ingest_started_together_lose_nothing(services: Services) -> None:
    """No lock held by the test: whichever gets the write lock first, both end whole."""
    store = services.store
    a = _ingest(services, "a.txt", DOC_A)
    a_story = story(store, a)
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def run(work: Any) -> None:
        try:
            start.wait(30)
            work()
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [
        threading.Thread(target=run, args=(lambda: _ingest(services, "b.txt", DOC_B),)),
        threading.Thread(target=run, args=(lambda: store.delete_document_undoably(a),)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    documents = store.list_documents()
    assert [(d.name, d.status) for d in documents] == [("b.txt", "ready")]
    assert not any(a in line for line in dump(store) if '"kind' not in line)
    b_subgraph = store.document_subgraph(documents[0].id)
    assert b_subgraph is not None and len(b_subgraph["relations"]) == 3
    if store.removed_stories():  # the delete ran after the ingest's commit: undo is offered
        store.undo_delete(a)
        assert story(store, a) == a_story
    else:  # the ingest committed after the delete: the copy went with it
        with pytest.raises(StoreError, match="only until the next ingest"):
            store.undo_delete(a)
