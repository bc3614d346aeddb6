"""`eval-e2e`'s temporary stores do not outlive a stopped run (issue #28,
docs/ISSUES.md#store-server-kept): a run killed outright (SIGKILL) leaves its store's server to the
idle reaper of the kept store server, which stops it once no process holds it; a run stopped with
SIGTERM stops it on the way out and removes its /tmp/storygraph-e2e-* directory. The run is a real
child process with a real embedded FalkorDB."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storygraph.processes import pid_alive

GENEROUS_S = 60.0  # a bound for what happens in other processes, never a speed assertion
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(240)

CHILD = """
import sys, time
from pathlib import Path
from storygraph.evaluation.cli import exit_on_terminate
from storygraph.evaluation.e2e import story_services
from storygraph.settings import Settings

with exit_on_terminate(), story_services(Settings(data_dir=Path(sys.argv[1]))) as services:
    server = services.store.runner.server
    print(server.pid(), services.settings.data_dir, flush=True)
    time.sleep(600)
"""


def _run_until_serving(tmp_path: Path) -> tuple[subprocess.Popen[str], int, Path]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path / "data")],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    line = child.stdout.readline().split()
    assert len(line) == 2, child.stderr.read() if child.stderr else ""
    return child, int(line[0]), Path(line[1])


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + GENEROUS_S
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    return not pid_alive(pid)


def test_a_killed_run_leaves_its_store_server_to_the_idle_reaper(tmp_path: Path) -> None:
    child, server, data_dir = _run_until_serving(tmp_path)
    try:
        assert data_dir.name.startswith("storygraph-e2e-") and pid_alive(server)
        os.kill(child.pid, signal.SIGKILL)  # no finally step runs
        child.wait(timeout=GENEROUS_S)
        assert _gone(server), f"the store's server {server} outlived its killed run"
    finally:
        if pid_alive(server):
            os.kill(server, signal.SIGKILL)
        shutil.rmtree(data_dir, ignore_errors=True)  # what the killed run could not remove


def test_a_terminated_run_stops_its_store_server_and_removes_its_directory(
    tmp_path: Path,
) -> None:
    child, server, data_dir = _run_until_serving(tmp_path)
    try:
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=GENEROUS_S) == 128 + signal.SIGTERM
        assert _gone(server)
        assert not data_dir.exists()
    finally:
        if pid_alive(server):
            os.kill(server, signal.SIGKILL)
