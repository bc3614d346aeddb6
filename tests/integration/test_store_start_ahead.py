"""The app starts the embedded store's server while it imports its pages
(storygraph.ui.startup.start_store_server, docs/ISSUES.md#store-server-kept): the store the app then
opens uses that server, which is stopped when its starter lets go of it; a server already running is
only looked at; Neo4j has nothing to start. Real FalkorDB processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from storygraph.errors import StoreError
from storygraph.processes import pid_alive
from storygraph.services import open_store
from storygraph.settings import Settings
from storygraph.store.falkordb_server import EmbeddedFalkorDB
from storygraph.ui.startup import start_store_server


def _settings(data: Path, **values: object) -> Settings:
    return Settings(_env_file=None, data_dir=data, **{"neo4j_uri": None, **values})  # type: ignore[arg-type]


def test_the_store_opens_on_the_server_started_ahead(tmp_path: Path) -> None:
    started = start_store_server(_settings(tmp_path))
    assert started is not None
    thread, ahead = started
    thread.join(60)
    assert ahead.owned and ahead.is_running()
    pid = ahead.pid()
    store = open_store(_settings(tmp_path))
    try:
        assert store.list_documents() == []
        assert not store.runner.server.owned  # type: ignore[attr-defined]
    finally:
        store.close()
    assert pid is not None and pid_alive(pid)  # still the starter's: not stopped by the store
    ahead.stop()  # what the app's exit does
    assert not pid_alive(pid)


def test_a_server_already_running_is_only_looked_at(tmp_path: Path) -> None:
    running = EmbeddedFalkorDB(tmp_path)
    running.ensure_running()
    try:
        started = start_store_server(_settings(tmp_path))
        assert started is not None
        thread, ahead = started
        thread.join(60)
        assert not ahead.owned
        assert ahead._users is None  # let go of: the server's own users decide its stop
        assert running.is_running()
    finally:
        running.stop()
    assert not running.is_running()


def test_neo4j_has_no_server_to_start(tmp_path: Path) -> None:
    settings = _settings(tmp_path, neo4j_uri="bolt://127.0.0.1:9", neo4j_password="unused")
    assert start_store_server(settings) is None
    assert not (tmp_path / "falkordb").exists()


def test_a_server_too_slow_to_answer_is_stopped_and_named(tmp_path: Path) -> None:
    """A start that does not answer within its time (a busy machine) is reported as slow, with
    the machine's load, and the half-started server is stopped, not left behind unowned; the
    next start succeeds on the same data directory."""
    slow = EmbeddedFalkorDB(tmp_path, start_timeout_s=0.0)
    with pytest.raises(StoreError) as raised:
        slow.ensure_running()
    assert "not answering" in str(raised.value) and "load average" in str(raised.value)
    assert slow.pid() is None and not slow.is_running()
    assert not slow.paths.socket.exists()
    again = EmbeddedFalkorDB(tmp_path)
    try:
        again.ensure_running()
        assert again.is_running()
    finally:
        again.stop()
