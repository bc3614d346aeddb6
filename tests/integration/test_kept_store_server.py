"""A CLI command keeps the embedded store's server it started running (STORYGRAPH_STORE_IDLE_S,
docs/ISSUES.md#store-server-kept): the next command finds it again instead of starting one, its idle
reaper stops it once nobody has used it for the idle time (never while a process uses it), `reset`
stops it, and a server whose data directory was deleted is stopped at once. Real FalkorDB
servers and real reaper processes; the commands run in this process (`storygraph.cli.main`)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from storygraph.cli import main
from storygraph.processes import pid_alive
from storygraph.store.falkordb_server import EmbeddedFalkorDB, ServerPaths, serves_socket
from storygraph.store.idle_reaper import stop_if_idle

pytestmark = pytest.mark.timeout(180)


def _server_pid(data: Path) -> int | None:
    pid = EmbeddedFalkorDB(data).pid()
    return (
        pid
        if pid is not None and serves_socket(pid, ServerPaths.for_data_dir(data).socket)
        else None
    )


def _reapers(pid: int) -> list[int]:
    """The pids of running store reapers watching the server `pid`."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ours = b"storygraph.store.idle_reaper" in argv and str(pid).encode() in argv
        if ours and pid_alive(int(proc.name)):
            found.append(int(proc.name))
    return found


def _wait(condition, timeout_s: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


@pytest.fixture
def seeded(cli_env: Path, shared_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The seed graph imported by a command that keeps the server 120 s."""
    monkeypatch.setenv("STORYGRAPH_STORE_IDLE_S", "120")
    assert main(["graph", "import", str(shared_dir / "eval" / "seed_graph.json")]) == 0
    yield cli_env
    if (pid := _server_pid(cli_env)) is not None:  # a failed test leaves nothing running
        EmbeddedFalkorDB._terminate(pid)


def test_the_next_command_finds_the_kept_server_and_reset_stops_it(
    seeded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pid = _server_pid(seeded)
    assert pid is not None, "the command stopped the server it started"
    reapers = _reapers(pid)
    assert len(reapers) == 1
    capsys.readouterr()

    assert main(["stats"]) == 0
    assert "entities: 9" in capsys.readouterr().out
    assert _server_pid(seeded) == pid  # found again, not started anew
    assert _reapers(pid) == reapers  # and no second reaper

    assert main(["reset", "--yes"]) == 0
    out = capsys.readouterr().out
    assert f"stopped the graph store's server of this data directory (pid {pid})" in out
    assert not pid_alive(pid)
    assert _wait(lambda: not _reapers(pid), 30), "the reaper outlived its server"
    said = f"graph store server pid {pid}: gone"
    assert said in ServerPaths.for_data_dir(seeded).reaper_log.read_text()


def test_the_reaper_stops_an_idle_server_and_never_one_in_use(
    seeded: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _server_pid(seeded)
    assert first is not None
    EmbeddedFalkorDB._terminate(first)  # start again with a 1 s idle time
    assert _wait(lambda: not _reapers(first), 30)
    monkeypatch.setenv("STORYGRAPH_STORE_IDLE_S", "1")
    from storygraph.settings import get_settings

    get_settings.cache_clear()
    user = EmbeddedFalkorDB(seeded)  # a process using the server, as the app does
    assert main(["stats"]) == 0
    pid = _server_pid(seeded)
    assert pid is not None and pid != first
    user.ensure_running()  # reuses it and holds the users lock
    paths = ServerPaths.for_data_dir(seeded)
    # a look now leaves the held server be, and the reaper, idle time past, said so in its log
    assert stop_if_idle(seeded, pid, 0) == "in use", "a look stopped a server in use"
    in_use = f"graph store server pid {pid}: in use"
    assert _wait(lambda: in_use in paths.reaper_log.read_text(), 60), "never found in use"
    assert _server_pid(seeded) == pid, "the reaper stopped a server in use"
    user.stop()  # not its server: lets go of it only
    assert _wait(lambda: not pid_alive(pid), 30), "the idle server was not stopped"
    assert not paths.pidfile.exists()
    said = f"graph store server pid {pid}: stopped"
    assert _wait(lambda: said in paths.reaper_log.read_text(), 10)  # written as it exits
    capsys.readouterr()
    assert main(["stats"]) == 0  # the next command starts a server, and the graph is all there
    assert "entities: 9" in capsys.readouterr().out


def test_a_server_whose_data_directory_was_deleted_is_stopped(seeded: Path) -> None:
    pid = _server_pid(seeded)
    assert pid is not None
    assert stop_if_idle(seeded, pid, 120) == "idle too short"
    shutil.rmtree(seeded)
    assert stop_if_idle(seeded, pid, 120) == "orphan stopped"
    assert not pid_alive(pid)
    assert stop_if_idle(seeded, pid, 120) == "gone"
