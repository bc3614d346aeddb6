"""The graph's names are read once and kept until the graph changes (issue 30): another
session's write on the same data directory shows up at the next question, with no wait, and
an unchanged graph is not read again. The relation-type count is kept the same way, and a
story's entity types are read by key (issue 28: a library's speed)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from storygraph import cypher as q
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from storygraph.store.graph_store import NAMES_CACHE_SECONDS
from storygraph.store.runner import Row
from tests.faults.conftest import SEED_EN, SEED_JA, stop_server
from tests.helpers.scripted_model import ScriptedChatModel

SAMPLE = Path(__file__).resolve().parents[2] / "storygraph" / "samples" / "momotaro_kusuyama.txt"


@pytest.fixture
def sessions(tmp_path: Path) -> Iterator[tuple[Services, Services]]:
    """A reader and a writer: two sessions on one data directory, the writer's Japanese seed
    story ingested."""
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, data_dir=tmp_path, llm_provider="none", neo4j_uri=None, chunk_size=200,
        chunk_overlap=0,
    )  # fmt: skip
    reader = build_services(settings, llm=ScriptedChatModel())
    writer = build_services(settings, llm=ScriptedChatModel())
    try:
        assert writer.ingestor().ingest_bytes("ja.txt", SEED_JA.encode()).status == "added"
        yield reader, writer
    finally:
        reader.close()
        writer.close()
        stop_server(tmp_path)


def _watch(services: Services, query: str | None = None) -> list[list[Row]]:
    """The rows of every run of `query` (every query when None) on this session's store."""
    seen: list[list[Row]] = []
    original = services.store.runner.run

    def watching(text: str, params: dict[str, object] | None = None) -> list[Row]:
        rows = original(text, params)
        if query is None or text == query:
            seen.append(rows)
        return rows

    services.store.runner.run = watching  # type: ignore[method-assign]
    return seen


def test_names_are_kept_until_another_session_writes(sessions: tuple[Services, Services]) -> None:
    reader, writer = sessions
    first = reader.store.entity_names()
    reads = _watch(reader, q.ENTITY_NAMES)
    assert reader.store.entity_names() is first  # unchanged graph: the same list
    assert reads == []
    assert writer.ingestor().ingest_bytes("en.txt", SEED_EN.encode()).status == "added"
    after = reader.store.entity_names()  # at once: no expiry to wait for
    assert len(reads) == 1
    assert {r["id"] for r in after} > {r["id"] for r in first}
    assert {r["id"] for r in after} == {r["id"] for r in writer.store.entity_names()}
    assert reader.store.entity_names() is after


def test_relation_types_are_kept_until_another_session_writes(
    sessions: tuple[Services, Services],
) -> None:
    reader, writer = sessions
    first = dict(reader.store.relation_types())
    reads = _watch(reader, q.RELATION_TYPES)
    time.sleep(NAMES_CACHE_SECONDS + 0.5)  # past the old expiry: still not read again
    assert dict(reader.store.relation_types()) == first and reads == []
    assert writer.ingestor().ingest_bytes("en.txt", SEED_EN.encode()).status == "added"
    after = dict(reader.store.relation_types())  # at once: the stamp moved
    assert len(reads) == 1
    assert after == dict(writer.store.relation_types()) and after != first


def test_the_types_of_a_storys_entities_are_read_by_key(tmp_path: Path) -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, data_dir=tmp_path, llm_provider="none", neo4j_uri=None,
    )  # fmt: skip
    services = build_services(settings, llm=ScriptedChatModel())
    try:
        ingest = services.ingestor()
        sample = SAMPLE.read_bytes()
        one = ingest.ingest_bytes("a.txt", sample).document_id
        two = ingest.ingest_bytes("b.txt", sample + "\nめでたし。\n".encode()).document_id
        names = ["おじいさん", "山", "桃太郎"]
        assert services.store.entity_types_in(names, [one]) == services.store.entity_types(names)
        assert set(services.store.entity_types_in(names, [one])) == set(names)
        runs = _watch(services)
        services.store.entity_types_in(names, [two])
        assert [len(rows) for rows in runs] == [len(names)]  # one story's, not every story's
    finally:
        services.close()
        stop_server(tmp_path)
