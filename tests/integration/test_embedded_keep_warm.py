"""The model server stays warm after the CLI exits and an idle reaper stops it later, with a
fake OpenAI-compatible server as the stand-in process (no model)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from storygraph.llm import embedded_server as es
from storygraph.llm.embedded_server import EmbeddedServer, Launch
from storygraph.settings import Settings

FAKE = Path(__file__).resolve().parents[1] / "helpers" / "fake_openai_server.py"
GENEROUS_S = 60.0  # a bound for what happens in another process, never a speed assertion

pytestmark = pytest.mark.timeout(120)


def fake_command(launch: Launch) -> list[str]:
    return [sys.executable, str(FAKE), "--port", str(launch.port)]


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF fake")
    return path


@pytest.fixture
def servers() -> Iterator[list[EmbeddedServer]]:
    made: list[EmbeddedServer] = []
    yield made
    for server in made:
        server.stop()


def _server(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer], **kwargs: object
) -> EmbeddedServer:
    server = EmbeddedServer(
        Settings(data_dir=tmp_path / "data"), model=model, command=fake_command, **kwargs
    )  # type: ignore[arg-type]
    servers.append(server)
    return server


def _wait_stopped(pid: int, state: Path) -> bool:
    """The reaper stopped `pid` and removed the state file (within the generous bound)."""
    deadline = time.monotonic() + GENEROUS_S
    while (es.pid_alive(pid) or state.exists()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not es.pid_alive(pid) and not state.exists()


def _wait_logged(log: Path, text: str) -> str:
    """The log once it holds `text` (the reaper writes a line for each outcome unlike the last
    one, "stopped" just after the stop), or as it is when the generous bound runs out."""
    deadline = time.monotonic() + GENEROUS_S
    while text not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    return log.read_text()


def _reaper_said(log: Path, pid: int, outcome: str) -> bool:
    """The reaper of the server `pid` wrote `outcome` in the log (within the generous bound)."""
    said = f"idle reaper: model server pid {pid}: {outcome}"
    return said in _wait_logged(log, said)


def test_each_use_stamps_last_used(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    server = _server(tmp_path, model, servers)
    server.start()
    first = es.read_state(server.state_path)
    assert first is not None and first.last_used >= first.started_at
    time.sleep(0.05)
    server.ensure_running()
    second = es.read_state(server.state_path)
    assert second is not None and second.last_used > first.last_used
    assert (second.pid, second.port, second.started_at) == (first.pid, first.port, first.started_at)


def test_loading_is_announced_when_the_server_starts_and_not_when_it_is_reused(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    said: list[str] = []
    _server(tmp_path, model, servers, on_loading=said.append).start()
    assert len(said) == 1 and "Loading the embedded model" in said[0]
    _server(tmp_path, model, servers, on_loading=said.append).start()  # reuses it
    assert len(said) == 1


def test_a_server_the_cli_started_stays_up_after_exit_until_idle(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    owner = _server(tmp_path, model, servers, keep_alive_s=1.0)
    owner.start()
    pid, port = owner.pid, owner.port
    assert pid is not None and port is not None
    visitor = _server(tmp_path, model, servers)  # another process using it meanwhile
    visitor.start()
    owner.stop_if_started_here()  # what atexit runs when the CLI exits: hand it to the reaper
    assert es.pid_alive(pid) and es.read_state(owner.state_path) is not None
    # the visitor holds the users lock: a look now leaves the server be, and the reaper, once
    # it found the server idle long enough, said so
    assert es.stop_if_idle(tmp_path / "data", pid, port, 0) == "in use"
    assert _reaper_said(owner.log_path, pid, "in use"), "the reaper never found it in use"
    assert es.pid_alive(pid), "the reaper stopped a server that a process was still using"
    visitor.stop_if_started_here()  # the visitor exits (it did not start the server)
    assert _wait_stopped(pid, owner.state_path), "the idle reaper did not stop the server"
    assert _reaper_said(owner.log_path, pid, "stopped")


def test_without_keep_alive_the_server_stops_at_exit(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    owner = _server(tmp_path, model, servers)
    owner.start()
    pid = owner.pid
    assert pid is not None
    owner.stop_if_started_here()
    assert not es.pid_alive(pid)


def test_without_keep_alive_a_server_another_process_uses_outlives_its_starter(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    owner = _server(tmp_path, model, servers)  # e.g. an evaluation run, no keep-alive
    owner.start()
    pid = owner.pid
    assert pid is not None
    visitor = _server(tmp_path, model, servers)  # a second run on the same data dir
    visitor.start()
    owner.stop_if_started_here()  # the first run exits while the second is still asking
    assert es.pid_alive(pid), "the server was stopped under a process still using it"
    assert visitor.ensure_running() and visitor.pid == pid
    visitor.stop_if_started_here()  # the last user leaves: the reaper stops it at once
    assert _wait_stopped(pid, owner.state_path), "the server outlived its last user"


def test_the_reaper_only_stops_the_server_it_was_started_for(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    data = tmp_path / "data"
    server = _server(tmp_path, model, servers)
    server.start()
    pid, port = server.pid, server.port
    assert pid is not None and port is not None
    later = time.time() + 3600
    # another pid or port in the state file: the server was replaced, nothing to stop
    assert es.stop_if_idle(data, pid + 1, port, 0, now=later) == "replaced"
    assert es.stop_if_idle(data, pid, port + 1, 0, now=later) == "replaced"
    # used recently, or a process attached to it: not stopped
    assert es.stop_if_idle(data, pid, port, 3600) == "idle too short"
    assert es.stop_if_idle(data, pid, port, 0, now=later) == "in use"  # `server` is attached
    assert es.pid_alive(pid)


def test_the_reaper_never_kills_a_process_that_is_not_our_server(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        port = es.free_port()  # the state file's pid does not serve its port
        state = es.ServerState(bystander.pid, port, "m.gguf", started_at=1.0, last_used=1.0)
        es.write_state(data / es.STATE_FILE, state)
        assert es.stop_if_idle(data, bystander.pid, port, 0) == "gone"
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


def test_the_reaper_started_with_the_server_stops_it_once_unused_and_idle(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    server = _server(tmp_path, model, servers, keep_alive_s=0.5)
    server.start()
    pid = server.pid
    assert pid is not None
    # unused for longer than 0.5 s, but held by `server` from the start: the reaper only looks
    assert _reaper_said(server.log_path, pid, "in use"), "the reaper never found it in use"
    assert es.pid_alive(pid), "the reaper stopped a server a process was holding"
    server._detach()  # as if its process had gone without a word
    assert _wait_stopped(pid, server.state_path), "the reaper did not stop the server"
    assert _reaper_said(server.log_path, pid, "stopped")


def test_an_eval_run_holds_a_server_it_reuses_until_it_is_done(
    tmp_path: Path, servers: list[EmbeddedServer]
) -> None:
    """The eval reuses another process's server through `configured_model`: that process
    exiting meanwhile must not stop it (it did: the reusing side dropped its EmbeddedServer,
    and with it the users lock, as soon as it had the model's URL)."""
    from storygraph.evaluation.harness import configured_model
    from storygraph.llm.model_files import model_path

    settings = Settings(data_dir=tmp_path / "data", model_dir=tmp_path / "models")
    path = model_path(settings)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"GGUF fake")
    owner = EmbeddedServer(settings, model=path, command=fake_command)
    servers.append(owner)
    owner.start()
    pid, port = owner.pid, owner.port
    assert pid is not None and port is not None
    with configured_model(settings) as (llm, info):
        assert info.provider == "embedded" and llm is not None
        gc.collect()  # nothing but the model is kept by the caller
        owner.stop_if_started_here()  # the process that started the server exits
        # the reaper's look (idle time 0) from now on: the run still holds the server
        assert es.stop_if_idle(settings.data_dir, pid, port, 0) == "in use", "stopped under it"
        assert _reaper_said(owner.log_path, pid, "in use"), "the reaper never found it in use"
        assert es.pid_alive(pid), "the server was stopped under a run still using it"
    assert _wait_stopped(pid, owner.state_path), "let go, the idle reaper did not stop it"
    assert _reaper_said(owner.log_path, pid, "stopped")


_STARTER = """
import sys, time
from pathlib import Path
from storygraph.llm.embedded_server import EmbeddedServer
from storygraph.settings import Settings

data, model, fake = (Path(a) for a in sys.argv[1:4])
server = EmbeddedServer(
    Settings(data_dir=data),
    model=model,
    command=lambda launch: [sys.executable, str(fake), "--port", str(launch.port)],
)
server.start()
print(server.pid, flush=True)
time.sleep(600)
"""


def test_a_server_whose_starter_is_killed_is_stopped_by_its_reaper(
    tmp_path: Path, model: Path
) -> None:
    """SIGKILL runs no atexit: the starter cannot stop its server, and before the reaper was
    started with the server, the next run found that server and reused it
    (docs/ISSUES.md#model-server-lifecycle). The reaper leaves it while its starter lives, and
    stops it once the starter is gone."""
    data = tmp_path / "data"
    env = {**os.environ, "PYTHONPATH": str(es.PROJECT_ROOT)}
    starter = subprocess.Popen(
        [sys.executable, "-c", _STARTER, str(data), str(model), str(FAKE)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    pid = 0
    try:
        assert starter.stdout is not None
        pid = int(starter.stdout.readline())
        # the reaper (idle time 0) looked while the starter, alive until killed below, held it
        assert _reaper_said(data / es.LOG_FILE, pid, "in use"), "the reaper never looked"
        assert es.pid_alive(pid), "the reaper stopped a server its starter was still holding"
        starter.kill()
        starter.wait()
        assert _wait_stopped(pid, data / es.STATE_FILE), "the killed starter's server lives on"
        assert _reaper_said(data / es.LOG_FILE, pid, "stopped")
    finally:
        starter.kill()
        if pid and es.pid_alive(pid):
            es.terminate_pid(pid, 5)
