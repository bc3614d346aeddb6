"""The graph's names are read once and kept until the graph changes (issue 30): another
session's write on the same data directory shows up at the next question, with no wait, and
an unchanged graph is not read again. The relation-type count is kept the same way, and a
story's entity types are read by key (issue 28: a library's speed)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

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


def _watch(services: Services, *queries: str) -> list[list[Row]]:
    """The rows of every run of these queries (every query when none) on this session's store."""
    seen: list[list[Row]] = []
    original = services.store.runner.run

    def watching(text: str, params: dict[str, object] | None = None) -> list[Row]:
        rows = original(text, params)
        if not queries or text in queries:
            seen.append(rows)
        return rows

    services.store.runner.run = watching  # type: ignore[method-assign]
    return seen


def test_names_are_kept_until_another_session_writes(sessions: tuple[Services, Services]) -> None:
    reader, writer = sessions
    first = reader.store.entity_names()
    reads = _watch(reader, q.ENTITY_NAMES, q.ENTITY_NAMES_OF_DOCUMENT)
    assert reader.store.entity_names() is first  # unchanged graph: the same list
    assert reads == []
    assert writer.ingestor().ingest_bytes("en.txt", SEED_EN.encode()).status == "added"
    after = reader.store.entity_names()  # at once: no expiry to wait for
    assert len(reads) == 1  # the new document's names only (test below)
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
    after = dict(reader.store.relation_types())  # at once: the record of writes moved
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


def _settings(data_dir: Path) -> Settings:
    return Settings(  # type: ignore[call-arg]
        _env_file=None, data_dir=data_dir, llm_provider="none", neo4j_uri=None, chunk_size=200,
        chunk_overlap=0,
    )  # fmt: skip


READY_DOCUMENTS = "MATCH (d:Document) WHERE d.status = 'ready' RETURN d.id AS id"


def test_names_read_after_a_commit_hold_it_before_its_writer_is_done(tmp_path: Path) -> None:
    """The bug of docs/ISSUES.md#names-cache: a question asked between a document's commit and the
    end of its writer's write read the new sentences with the old names (the stamp came after
    the commit), and a writer that died there left the old names in every session."""
    reader = build_services(_settings(tmp_path), llm=ScriptedChatModel())
    writer = build_services(_settings(tmp_path), llm=ScriptedChatModel())
    committed, release = threading.Event(), threading.Event()
    original = writer.store.runner.run_batch

    def pausing(statements: Sequence[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
        rows = original(statements)
        if statements and statements[-1][0] == q.DOCUMENT_COMMIT:
            committed.set()  # the document is ready in the graph; its writer is not done yet
            assert release.wait(120)
        return rows

    try:
        assert writer.ingestor().ingest_bytes("ja.txt", SEED_JA.encode()).status == "added"
        before = {r["document_id"] for r in reader.store.entity_names()}
        writer.store.runner.run_batch = pausing  # type: ignore[method-assign]
        reports: list[Any] = []
        thread = threading.Thread(
            target=lambda: reports.append(
                writer.ingestor().ingest_bytes("en.txt", SEED_EN.encode())
            )
        )
        thread.start()
        try:
            assert committed.wait(120), "the second document was never committed"
            ready = {r["id"] for r in reader.store.runner.run(READY_DOCUMENTS)}
            new = ready - before
            assert len(new) == 1
            names = reader.store.entity_names()
            assert new <= {r["document_id"] for r in names}, "names older than a seen commit"
            assert sorted(map(str, names)) == sorted(
                map(str, reader.store.runner.run(q.ENTITY_NAMES))
            )
        finally:
            release.set()
            thread.join(120)
        assert reports and reports[0].status == "added"
    finally:
        reader.close()
        writer.close()
        stop_server(tmp_path)


def test_another_sessions_document_reads_only_its_names(tmp_path: Path) -> None:
    """After another session wrote a document, only that document's names are read again
    (not all of them: 20 s at 333,333 names, docs/ISSUES.md#names-cache), and the list equals a
    whole read; a removal reads them whole again."""
    reader = build_services(_settings(tmp_path), llm=ScriptedChatModel())
    writer = build_services(_settings(tmp_path), llm=ScriptedChatModel())
    try:
        assert writer.ingestor().ingest_bytes("ja.txt", SEED_JA.encode()).status == "added"
        reader.store.entity_names()
        reads: list[str] = []
        original = reader.store.runner.run

        def counting(query: str, params: dict[str, object] | None = None) -> list[dict]:
            if query in (q.ENTITY_NAMES, q.ENTITY_NAMES_OF_DOCUMENT):
                reads.append("all" if query == q.ENTITY_NAMES else "document")
            return original(query, params)

        reader.store.runner.run = counting  # type: ignore[method-assign]
        added = writer.ingestor().ingest_bytes("en.txt", SEED_EN.encode())
        assert added.status == "added"
        after = reader.store.entity_names()
        assert reads == ["document"]
        assert sorted(map(str, after)) == sorted(map(str, original(q.ENTITY_NAMES)))
        assert added.document_id in {r["document_id"] for r in after}
        assert reader.store.entity_names() is after  # settled: kept, nothing read
        assert reads == ["document"]
        writer.store.delete_document(added.document_id)
        gone = reader.store.entity_names()
        assert reads == ["document", "all"]
        assert added.document_id not in {r["document_id"] for r in gone}
        assert sorted(map(str, gone)) == sorted(map(str, original(q.ENTITY_NAMES)))
    finally:
        reader.close()
        writer.close()
        stop_server(tmp_path)
