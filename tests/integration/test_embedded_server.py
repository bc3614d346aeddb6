"""Lifecycle of the embedded model server, with a fake OpenAI-compatible server, no model."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from storygraph.errors import ModelError
from storygraph.llm import embedded_server as es
from storygraph.llm.embedded_server import EmbeddedServer, Launch
from storygraph.settings import Settings

FAKE = Path(__file__).resolve().parents[1] / "helpers" / "fake_openai_server.py"

pytestmark = pytest.mark.timeout(60)


class FakeCommand:
    """A command factory launching the fake server; counts launches."""

    def __init__(self, *extra: str) -> None:
        self.extra = list(extra)
        self.launches: list[Launch] = []

    def __call__(self, launch: Launch) -> list[str]:
        self.launches.append(launch)
        return [sys.executable, str(FAKE), "--port", str(launch.port), *self.extra]


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
    tmp_path: Path,
    model: Path,
    servers: list[EmbeddedServer],
    command: FakeCommand,
    port: int = 0,
    **kwargs: float,
) -> EmbeddedServer:
    settings = Settings(data_dir=tmp_path / "data", embedded_port=port)
    server = EmbeddedServer(settings, model=model, command=command, **kwargs)
    servers.append(server)
    return server


def test_start_waits_for_health_and_writes_state(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    command = FakeCommand("--startup-delay", "0.6")
    server = _server(tmp_path, model, servers, command)
    url = server.start()
    assert url == f"http://127.0.0.1:{server.port}/v1"
    assert server.is_healthy()
    state = json.loads(server.state_path.read_text())
    assert state["pid"] == server.pid and state["port"] == server.port
    assert state["model"] == str(model) and state["started_at"] > 0
    assert "fake-server: ready" in server.log_path.read_text()
    assert command.launches[0].threads == 2 and command.launches[0].ctx == 4096
    assert server.start() == url and len(command.launches) == 1  # idempotent


def test_second_instance_reuses_running_server_via_state_file(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    first = _server(tmp_path, model, servers, FakeCommand())
    url = first.start()
    command = FakeCommand()
    second = _server(tmp_path, model, servers, command)
    assert second.start() == url
    assert second.pid == first.pid
    assert command.launches == []


def test_stale_state_file_is_ignored(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    stale = {"pid": 999_999_99, "port": es.free_port(), "model": str(model), "started_at": 1.0}
    (data / es.STATE_FILE).write_text(json.dumps(stale))
    command = FakeCommand()
    server = _server(tmp_path, model, servers, command)
    server.start()
    assert len(command.launches) == 1
    assert json.loads(server.state_path.read_text())["pid"] == server.pid


def test_ensure_running_restarts_after_kill(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    command = FakeCommand()
    server = _server(tmp_path, model, servers, command)
    server.start()
    old_pid = server.pid
    assert old_pid is not None
    os.kill(old_pid, signal.SIGKILL)
    time.sleep(0.2)
    assert not server.is_healthy()
    url = server.ensure_running()
    assert server.pid != old_pid and server.is_healthy()
    assert url.endswith(f":{server.port}/v1")
    assert len(command.launches) == 2


def test_busy_server_is_not_restarted(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    """`/v1/models` stalls while llama.cpp generates; that is not a dead server."""
    command = FakeCommand("--busy-after-first")
    server = _server(tmp_path, model, servers, command)
    server.start()
    pid = server.pid
    asked = server.log_path.read_text().count("fake-server: /v1/models asked")
    assert asked >= 1  # the start waited for the first answer
    assert server.is_healthy()
    server.ensure_running()
    other = _server(tmp_path, model, servers, FakeCommand())
    other.start()  # reuse through the state file, also without waiting for /v1/models
    # the server says each /v1/models as it arrives: none of them asked it again
    assert server.log_path.read_text().count("fake-server: /v1/models asked") == asked
    assert server.pid == pid == other.pid and len(command.launches) == 1


def test_state_file_pointing_at_another_program_is_not_reused(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    with socket.socket() as blocker:  # this test process listens, not a model server
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        data = tmp_path / "data"
        data.mkdir()
        state = {"pid": os.getpid(), "port": port, "model": str(model), "started_at": 1.0}
        (data / es.STATE_FILE).write_text(json.dumps(state))
        command = FakeCommand()
        server = _server(tmp_path, model, servers, command)
        server.start()
        assert server.pid != os.getpid() and len(command.launches) == 1


def test_taken_port_is_replaced_and_reported(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        taken = blocker.getsockname()[1]
        server = _server(tmp_path, model, servers, FakeCommand(), port=taken)
        server.start()
        assert server.port != taken
        assert str(taken) in server.notice and "taken" in server.notice


def test_configured_free_port_is_used(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    port = es.free_port()
    server = _server(tmp_path, model, servers, FakeCommand(), port=port)
    server.start()
    assert server.port == port and server.notice == ""


def test_stop_terminates_and_removes_state(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    server = _server(tmp_path, model, servers, FakeCommand())
    server.start()
    pid, port = server.pid, server.port
    assert pid is not None and port is not None
    server.stop()
    assert not es.pid_alive(pid)
    assert not es.models_answer(port, timeout_s=0.5)
    assert not server.state_path.exists()
    server.stop()  # stopping twice is harmless


def test_stop_escalates_to_sigkill(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    server = _server(tmp_path, model, servers, FakeCommand("--ignore-sigterm"), stop_timeout_s=1)
    server.start()
    pid, child = server.pid, server._proc
    assert pid is not None and child is not None and child.pid == pid
    server.stop()
    assert not es.pid_alive(pid)
    assert child.returncode == -signal.SIGKILL  # SIGTERM did not end it: it was killed


class IgnoresSigterm:
    """A child process as `_stop_child` sees it, one that outlives any wait until killed."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def poll(self) -> int | None:
        return None

    def terminate(self) -> None:
        self.calls.append("SIGTERM")

    def kill(self) -> None:
        self.calls.append("SIGKILL")

    def wait(self, timeout: float | None = None) -> int:
        self.calls.append(f"wait {timeout}")
        if "SIGKILL" not in self.calls:
            raise subprocess.TimeoutExpired("fake", timeout or 0)
        return -signal.SIGKILL


def test_stop_asks_first_and_kills_only_after_the_stop_timeout(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    server = _server(tmp_path, model, servers, FakeCommand(), stop_timeout_s=7)
    child = IgnoresSigterm()
    server._stop_child(child)  # type: ignore[arg-type]
    assert child.calls == ["SIGTERM", "wait 7", "SIGKILL", "wait 7"]


def test_stop_from_another_instance_stops_reused_server(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    first = _server(tmp_path, model, servers, FakeCommand())
    first.start()
    pid = first.pid
    assert pid is not None
    other = _server(tmp_path, model, servers, FakeCommand())
    other.stop()
    time.sleep(0.3)
    assert not es.pid_alive(pid)


def test_crash_at_start_raises_with_log_tail(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    server = _server(tmp_path, model, servers, FakeCommand("--fail-at-start"))
    with pytest.raises(ModelError) as err:
        server.start()
    assert "exited with code 3" in str(err.value)
    assert "could not load model (on purpose)" in str(err.value)
    assert "llm-server.log" in str(err.value)
    assert not server.state_path.exists()


def test_health_timeout_raises_and_kills(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    command = FakeCommand("--startup-delay", "30")
    server = _server(tmp_path, model, servers, command, startup_timeout_s=1.0)
    with pytest.raises(ModelError, match="did not answer within 1 s"):
        server.start()
    assert server.pid is None and not server.state_path.exists()


def test_missing_model_file(tmp_path: Path, servers: list[EmbeddedServer]) -> None:
    server = _server(tmp_path, tmp_path / "nope.gguf", servers, FakeCommand())
    with pytest.raises(ModelError, match="missing") as err:
        server.start()
    assert "make model" in err.value.hint


def test_llama_command_line() -> None:
    cmd = es.llama_command(Launch(model=Path("/m.gguf"), port=8123, threads=2, ctx=4096))
    assert cmd[:3] == [sys.executable, "-m", "storygraph.llm.llama_server"]
    args = dict(zip(cmd[3::2], cmd[4::2], strict=True))
    assert args["--logits_all"] == "False" and args["--interrupt_requests"] == "False"
    assert args["--model"] == "/m.gguf"
    assert args["--host"] == "127.0.0.1" and args["--port"] == "8123"
    assert args["--n_threads"] == "2" and args["--n_ctx"] == "4096"
    assert args["--chat_format"] == "chatml-function-calling"
    assert args["--model_alias"] == es.MODEL_ALIAS


def test_the_apps_port_and_keys_do_not_leak_into_the_model_servers_settings() -> None:
    env = es.server_environment(
        {
            "PORT": "8599",
            "HOST": "0.0.0.0",
            "API_KEY": "x",
            "n_ctx": "1",
            "PATH": "/bin",
            "STORYGRAPH_EMBEDDED_PORT": "0",
        }
    )
    assert env == {"PATH": "/bin", "STORYGRAPH_EMBEDDED_PORT": "0", "PYTHONUNBUFFERED": "1"}


def test_a_server_started_here_is_stopped_at_exit_and_a_reused_one_is_not(
    tmp_path: Path, model: Path, servers: list[EmbeddedServer]
) -> None:
    owner = _server(tmp_path, model, servers, FakeCommand())
    owner.start()
    pid = owner.pid
    assert pid is not None
    visitor = _server(tmp_path, model, servers, FakeCommand())
    visitor.start()  # reuses the running server through the state file
    visitor.stop_if_started_here()  # what atexit runs in the visiting process
    assert es.pid_alive(pid)
    owner.stop_if_started_here()  # what atexit runs in the process that started it
    deadline = time.monotonic() + 10
    while es.pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not es.pid_alive(pid)
