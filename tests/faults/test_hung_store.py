"""A graph server that stops answering (stuck on a lock: seen once under load) is replaced and
the query retried, instead of the app hanging; the data written before is still there."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from storygraph.store import falkordb_runner
from storygraph.store.falkordb_runner import FalkorDBRunner
from storygraph.store.falkordb_server import EmbeddedFalkorDB


def test_a_server_that_stops_answering_is_replaced_and_nothing_is_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(falkordb_runner, "QUERY_TIMEOUT_S", 2.0)
    server = EmbeddedFalkorDB(tmp_path / "data")
    runner = FalkorDBRunner(server, "storygraph")
    try:
        runner.run("MERGE (n:__Entity__ {id: $id})", {"id": "桃太郎"})
        hung = server.pid()
        assert hung is not None
        os.kill(hung, signal.SIGSTOP)  # alive, holding its socket, answering nothing
        rows = runner.run("MATCH (n:__Entity__) RETURN n.id AS id")
        assert rows == [{"id": "桃太郎"}]  # the AOF replayed the acknowledged write
        assert server.pid() not in (None, hung)
    finally:
        runner.close()
