"""The app when the graph store's server crashes twice in a row (storygraph.crashes, helper
"store"): the real redis-server is sent SIGSEGV, restarted once, sent it again; the Chat tab
shows the error saying so with the doctor as the next step, the Doctor tab fails its
"store crashes" check with the crash report's head, and once the crashes are let go the server
starts again with the stories there and the chat answers."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from storygraph.crashes import CrashLedger
from storygraph.ingest.graph_io import import_graph, load_graph_file
from storygraph.processes import pid_alive
from storygraph.services import Services
from storygraph.store.falkordb_server import EmbeddedFalkorDB
from tests.app.test_app import _app, _ask, _open_tab, _texts, services  # noqa: F401 - fixture

pytestmark = pytest.mark.timeout(300)


def _segfault(server: EmbeddedFalkorDB) -> None:
    pid = server.pid()
    assert pid is not None
    os.kill(pid, signal.SIGSEGV)
    deadline = time.monotonic() + 60
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(pid)


def test_the_chat_and_the_doctor_tab_say_the_store_crashed_twice(
    services: Services,  # noqa: F811 - the fixture
    shared_dir: Path,
) -> None:
    import_graph(services.store, load_graph_file(shared_dir / "eval" / "seed_graph.json"))
    documents = services.store.list_documents()
    server: EmbeddedFalkorDB = services.store.runner.server  # type: ignore[attr-defined]
    at = _app(services)
    _segfault(server)
    server.ensure_running()  # noticed and restarted once
    _segfault(server)  # crashed again before it answered anything

    _open_tab(at, "Chat")  # the tab reads the stories to offer: the store's error, shown
    errors = " ".join(str(e.value) for e in at.error)
    assert "The graph store's server stopped with a segmentation fault (SIGSEGV)" in errors
    assert "twice in a row, so it is not restarted again" in errors
    assert any("python -m storygraph doctor" in str(i.value) for i in at.info)

    _open_tab(at, "Doctor")
    at.button(key="doctor_run").click().run()
    assert not at.exception, at.exception
    assert ":material/error: **store crashes**: the graph store's server stopped with" in (
        _texts(at)
    )
    assert any("crashed by signal: 11" in c.value for c in at.code)  # the report's head
    at.button(key="doctor_clear_crashes").click().run()
    assert CrashLedger(services.settings.data_dir, "store").in_a_row() == []
    assert any("the graph store's server" in str(s.value) for s in at.success)

    _ask(at, "桃太郎の仲間は誰？")  # started again: the stories are all there
    assert [m.name for m in at.chat_message][-2:] == ["user", "assistant"]
    assert services.store.list_documents() == documents
