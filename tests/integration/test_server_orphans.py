"""A model server nobody can find again is stopped: `storygraph reset` stops its data dir's
server, and the idle reaper started with a server stops it by pid once its state file or its
whole data dir is gone (docs/ISSUES.md#model-server-lifecycle). The server is the stand-in process
(the fake OpenAI-compatible server); the reaper is the real detached one."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from storygraph.cli import main
from storygraph.llm import embedded_server as es
from storygraph.llm.embedded_server import EmbeddedServer, Launch
from storygraph.settings import Settings

FAKE = Path(__file__).resolve().parents[1] / "helpers" / "fake_openai_server.py"
GENEROUS_S = 60.0  # a bound for what happens in another process, never a speed assertion
KEEP_ALIVE_S = 4.0  # the reaper looks every second; idle alone never stops a held server

pytestmark = pytest.mark.timeout(180)


def fake_command(launch: Launch) -> list[str]:
    return [sys.executable, str(FAKE), "--port", str(launch.port)]


def _wait_dead(pid: int) -> bool:
    deadline = time.monotonic() + GENEROUS_S
    while es.pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not es.pid_alive(pid)


def _reaper_said(server: EmbeddedServer, *outcomes: str) -> str | None:
    """The first of `outcomes` the reaper of `server` wrote in its log (it writes each outcome
    unlike the last one), waited for within the generous bound; None if it wrote none."""
    said = [f"idle reaper: model server pid {server.pid}: {o}\n" for o in outcomes]
    deadline = time.monotonic() + GENEROUS_S
    while True:
        log = server.log_path.read_text()
        found = [o for o, line in zip(outcomes, said, strict=True) if line in log]
        if found or time.monotonic() > deadline:
            return found[0] if found else None
        time.sleep(0.1)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[EmbeddedServer]:
    """A server started as the app starts it (with its reaper), held by this process."""
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF fake")
    made = EmbeddedServer(
        Settings(data_dir=tmp_path / "data"),  # type: ignore[call-arg]
        model=model,
        command=fake_command,
        keep_alive_s=KEEP_ALIVE_S,
    )
    made.start()
    yield made
    pid = made.pid
    made._detach()
    if pid and es.pid_alive(pid):
        es.terminate_pid(pid, 5)


def test_reset_stops_the_model_server_of_its_data_directory(
    cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    port = es.free_port()
    proc = subprocess.Popen([sys.executable, str(FAKE), "--port", str(port)])
    try:
        deadline = time.monotonic() + GENEROUS_S
        while not es.models_answer(port) and time.monotonic() < deadline:
            time.sleep(0.1)
        state = es.ServerState(proc.pid, port, "model.gguf", started_at=time.time())
        es.write_state(cli_env / es.STATE_FILE, state)  # as a running app leaves it
        assert main(["reset", "--yes"]) == 0
        out = capsys.readouterr().out
        assert f"stopped the model server of this data directory (pid {proc.pid})" in out
        proc.wait(timeout=GENEROUS_S)  # reaped here: it was this test's child
        assert not (cli_env / es.STATE_FILE).exists()
        assert main(["reset", "--yes"]) == 0  # nothing running: nothing said, no error
        assert "stopped the model server" not in capsys.readouterr().out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_reaper_stops_a_server_whose_data_directory_was_deleted(
    server: EmbeddedServer, tmp_path: Path
) -> None:
    pid = server.pid
    assert pid is not None
    # the reaper has looked (held by this process, used just now) and left the server be
    assert _reaper_said(server, "idle too short", "in use"), "the reaper never looked"
    assert es.pid_alive(pid)
    shutil.rmtree(tmp_path / "data")  # `rm -rf data` while the server runs
    assert _wait_dead(pid), "a server whose data dir is gone was left running"
    assert not (tmp_path / "data").exists(), "the reaper made the deleted data dir again"


def test_the_reaper_stops_a_server_whose_state_file_is_gone_once_unused(
    server: EmbeddedServer,
) -> None:
    pid, port = server.pid, server.port
    assert pid is not None and port is not None
    server.state_path.unlink()  # no later process can find this server any more
    # a process still holds it: a look now leaves it be, and the reaper said so
    assert es.stop_if_idle(server.state_path.parent, pid, port, KEEP_ALIVE_S) == "in use"
    assert _reaper_said(server, "in use"), "the reaper never found it in use"
    assert es.pid_alive(pid), "the reaper stopped a server a process was still holding"
    server._detach()  # its last user goes
    assert _wait_dead(pid), "a server no state file names was left running"
    assert _reaper_said(server, "orphan stopped")
