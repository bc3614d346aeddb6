"""Store faults: the embedded FalkorDB killed mid-ingest, the app dying mid-write, two sessions at
once, a store that refuses a query, Neo4j unreachable. Each compares the graph with a clean run
or with its state before the fault."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from storygraph.errors import StoreError
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.services import Services, build_services, open_store
from storygraph.store.falkordb_server import EmbeddedFalkorDB
from tests.faults.conftest import (
    SEED_EN,
    SEED_JA,
    STORY,
    ServicesFactory,
    make_settings,
    snapshot,
)
from tests.helpers.scripted_model import ScriptedChatModel

# A second story whose only facts are about 鬼 / 宝物 (not in the seed): its pending facts must
# stay invisible while it is half-written.
ONI_STORY = ("鬼は宝物を持っていました。鬼は鬼が島に住んでいました。" * 4).encode()


class Crash(BaseException):
    """The process dies here (not an Exception: nothing in the app may catch it)."""


def _server(services: Services) -> EmbeddedFalkorDB:
    return services.store.runner.server  # type: ignore[attr-defined, no-any-return]


def _on_write(services: Services, at: int, action: Callable[[], None]) -> list[str]:
    """Run `action` just before the `at`-th write statement of the next document."""
    runner = services.store.runner
    original = runner.run
    seen: list[str] = []

    def run(query: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        if any(word in query for word in ("MERGE", "SET", "DELETE")):
            seen.append(query)
            if len(seen) == at:
                action()
        return original(query, params)

    runner.run = run  # type: ignore[method-assign]
    return seen


def _seeded(make_services: ServicesFactory, data_dir: Path, **kw: Any) -> Services:
    services = make_services(data_dir=data_dir, **kw)
    assert services.ingestor().ingest_bytes("seed.txt", SEED_JA.encode()).status == "added"
    return services


def test_falkordb_killed_during_extraction_restarts_and_stores_all(
    make_services: ServicesFactory, own_data_dir: Path, clean_graph: dict[str, Any]
) -> None:
    model = ScriptedChatModel()
    services = _seeded(make_services, own_data_dir, llm=model)
    server = _server(services)
    killed: list[int | None] = []

    def kill_once(kind: str) -> None:
        if kind == "extract" and not killed:
            killed.append(server.pid())
            server.kill_for_test()

    model.on_call = kill_once
    report = services.ingestor().ingest_bytes("story.txt", STORY)
    assert killed and report.status == "added", report.message
    assert server.pid() != killed[0]  # a new server process
    after = snapshot(services.store)
    assert after["graph"] == clean_graph["graph"]
    assert after["stats"] == clean_graph["stats"]


@pytest.mark.parametrize("at", [1, 3, 6])
def test_falkordb_killed_during_the_write(
    make_services: ServicesFactory, own_data_dir: Path, clean_graph: dict[str, Any], at: int
) -> None:
    services = _seeded(make_services, own_data_dir)
    server = _server(services)
    seen = _on_write(services, at, server.kill_for_test)
    report = services.ingestor().ingest_bytes("story.txt", STORY)
    assert len(seen) >= at
    assert report.status == "added", report.message
    after = snapshot(services.store)
    assert after["graph"] == clean_graph["graph"]
    assert after["stats"] == clean_graph["stats"]
    assert services.store.pending_document_ids() == []


def test_falkordb_killed_while_idle_keeps_committed_data(
    make_services: ServicesFactory, own_data_dir: Path
) -> None:
    services = _seeded(make_services, own_data_dir)
    before = snapshot(services.store)
    _server(services).kill_for_test()
    assert snapshot(services.store) == before  # the next query restarts it from its log


def test_falkordb_killed_and_stale_files_left(
    make_services: ServicesFactory, own_data_dir: Path
) -> None:
    """A crash leaves a pid file and a socket behind; a new session clears them."""
    services = _seeded(make_services, own_data_dir)
    before = snapshot(services.store)
    server = _server(services)
    server.kill_for_test()
    assert server.paths.pidfile.exists()
    again = make_services(data_dir=own_data_dir, graph_name=services.settings.graph_name)
    assert snapshot(again.store) == before


@pytest.mark.parametrize("at", [1, 2, 4, 7])
def test_app_dies_mid_write_pending_is_invisible_then_cleaned(
    make_services: ServicesFactory, own_data_dir: Path, at: int
) -> None:
    services = _seeded(make_services, own_data_dir)
    graph_name = services.settings.graph_name
    before = snapshot(services.store)

    def crash() -> None:
        raise Crash

    _on_write(services, at + 1, crash)  # +1: DOCUMENT_BEGIN is the first write
    with pytest.raises(Crash):
        services.ingestor().ingest_bytes("oni.txt", ONI_STORY)
    pending = services.store.pending_document_ids()
    assert len(pending) == 1
    # Never visible to questions meanwhile.
    answer = services.qa().ask("鬼は何を持っていましたか？", QAOptions(no_llm=True))
    assert all(not c.startswith(pending[0]) for f in answer.facts for c in f.chunk_ids)
    assert not [f for f in answer.facts if f.type == "OWNS"]
    assert services.store.retrieve("onehop", ["宝物"]) == []
    seed_facts = services.store.retrieve("onehop", ["桃太郎"])
    assert seed_facts and all(
        c.startswith(before["documents"][0]["id"]) for f in seed_facts for c in f.chunk_ids
    )
    services.close()
    # The app starts again: the half-written document is removed, the seed is intact.
    restarted = make_services(data_dir=own_data_dir, graph_name=graph_name)
    assert snapshot(restarted.store) == before
    report = restarted.ingestor().ingest_bytes("oni.txt", ONI_STORY)
    assert report.status == "added", report.message


def test_pending_leftover_of_the_same_upload_is_replaced(
    make_services: ServicesFactory, own_data_dir: Path, clean_graph: dict[str, Any]
) -> None:
    services = _seeded(make_services, own_data_dir)

    def crash() -> None:
        raise Crash

    original = services.store.runner.run
    _on_write(services, 5, crash)
    with pytest.raises(Crash):
        services.ingestor().ingest_bytes("story.txt", STORY)
    services.store.runner.run = original  # type: ignore[method-assign]
    assert services.store.pending_document_ids()
    report = services.ingestor().ingest_bytes("story.txt", STORY)  # same session, no restart
    assert report.status == "added", report.message
    after = snapshot(services.store)
    assert after["graph"] == clean_graph["graph"]
    assert after["stats"] == clean_graph["stats"]


@pytest.mark.parametrize("at", [2, 5])
def test_store_refuses_a_write_leaves_graph_as_before(
    make_services: ServicesFactory, own_data_dir: Path, at: int
) -> None:
    services = _seeded(make_services, own_data_dir)
    before = snapshot(services.store)
    seen = _on_write(services, at, _refuse)
    report = services.ingestor().ingest_bytes("story.txt", STORY)
    assert len(seen) >= at
    assert report.status == "failed"
    assert "refused" in report.message and " — " in report.message
    assert snapshot(services.store) == before


def _refuse() -> None:
    raise StoreError("The graph database refused a query: scripted", "Try again later.")


def test_two_sessions_ingest_the_same_file_at_once(
    own_data_dir: Path, clean_graph: dict[str, Any]
) -> None:
    settings = make_settings(own_data_dir)
    sessions = [build_services(settings, llm=ScriptedChatModel()) for _ in range(2)]
    try:
        sessions[0].ingestor().ingest_bytes("seed.txt", SEED_JA.encode())
        barrier = threading.Barrier(2)
        reports: list[Any] = [None, None]

        def run(i: int) -> None:
            barrier.wait()
            reports[i] = sessions[i].ingestor().ingest_bytes(f"story-{i}.txt", STORY)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads), "a session never finished its ingest"
        assert sorted(r.status for r in reports) == ["added", "unchanged"]
        after = snapshot(sessions[1].store)
        assert after["stats"]["documents"] == 2
        assert after["graph"] == clean_graph["graph"]
        for node in after["graph"]["nodes"]:
            assert len(node["chunk_ids"]) == len(set(node["chunk_ids"]))
        for rel in after["graph"]["relationships"]:
            assert len(rel["chunk_ids"]) == len(set(rel["chunk_ids"]))
            assert rel["weight"] == len(rel["chunk_ids"])
    finally:
        for services in sessions:
            services.close()


def test_two_sessions_ingest_different_files_at_once(
    make_services: ServicesFactory, own_data_dir: Path
) -> None:
    sequential = make_services(data_dir=own_data_dir)
    for name, data in (("ja.txt", STORY), ("en.txt", SEED_EN.encode())):
        sequential.ingestor().ingest_bytes(name, data)
    graph_name = make_settings(own_data_dir).graph_name
    sessions = [make_services(data_dir=own_data_dir, graph_name=graph_name) for _ in range(2)]
    barrier = threading.Barrier(2)
    files = [("ja.txt", STORY), ("en.txt", SEED_EN.encode())]
    reports: list[Any] = [None, None]

    def run(i: int) -> None:
        barrier.wait()
        reports[i] = sessions[i].ingestor().ingest_bytes(*files[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "a session never finished its ingest"
    assert [r.status for r in reports] == ["added", "added"], reports
    assert snapshot(sessions[0].store)["graph"] == snapshot(sequential.store)["graph"]


@pytest.mark.timeout(30)
def test_neo4j_unreachable_at_start_is_a_clear_store_error(tmp_path: Path) -> None:
    settings = make_settings(
        tmp_path, neo4j_uri="bolt://127.0.0.1:1", neo4j_password="pw-NEO4J-SECRET-42"
    )
    with pytest.raises(StoreError) as info:
        open_store(settings)
    message = str(info.value)
    assert "bolt://127.0.0.1:1" in message and "not reachable" in message
    assert "NEO4J_URI" in info.value.hint
    assert "pw-NEO4J-SECRET-42" not in message + repr(info.value)


@pytest.mark.timeout(30)
def test_neo4j_uri_with_credentials_is_not_echoed(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, neo4j_uri="bolt://neo4j:uri-SECRET-pw@127.0.0.1:1")
    with pytest.raises(StoreError) as info:
        build_services(settings, llm=ScriptedChatModel())
    assert "uri-SECRET-pw" not in str(info.value)
    assert "127.0.0.1:1" in str(info.value)
