"""Process helpers shared by the two embedded servers (FalkorDB and llama.cpp)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
"""The folder holding the `storygraph` package (the idle reapers run as `python -m` from there)."""


def pid_alive(pid: int) -> bool:
    """True for a live process. A zombie counts as dead: on machines whose pid 1 does not reap
    orphans, `kill(pid, 0)` still succeeds on a crashed server that serves nothing."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("State:"):
                return "Z" not in line.split()[1]
    return True


def start_detached_module(module: str, args: Sequence[str], log_path: Path) -> int:
    """Start `python -m <module> <args>` in its own session, its output appended to `log_path`;
    it outlives the caller (an idle reaper). Its pid."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            cwd=PROJECT_ROOT,  # `-m storygraph…` must import whatever the caller's cwd is
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return process.pid


def poll_interval(idle_s: float) -> float:
    """How often an idle reaper looks: often enough to stop its server within a quarter of the
    idle time (1-15 s). A look takes the server's start lock, and a reaper looks for as long as
    the app runs."""
    return max(1.0, min(15.0, idle_s / 4))


REAPER_DONE = frozenset({"stopped", "orphan stopped", "gone", "replaced"})
"""An idle reaper's outcomes that leave it nothing to watch."""


def reaper_log_line(server: str, pid: int) -> Callable[[str], None]:
    """An idle reaper's `say`: prints "<time> idle reaper: <server> pid <pid>: <outcome>" to its
    output (its log)."""

    def say(outcome: str) -> None:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        print(f"{stamp} idle reaper: {server} pid {pid}: {outcome}", flush=True)

    return say


def watch_until_done(
    look: Callable[[], str], idle_s: float, say: Callable[[str], None] = lambda _: None
) -> str:
    """An idle reaper's loop: `look()` every `poll_interval(idle_s)` until it says the server
    was stopped or is gone or replaced (`REAPER_DONE`); that last outcome. Each outcome that
    differs from the one before goes to `say` (the reaper's log): a line when the reaper starts
    finding the server idle too short or in use, and its last, not a line a look."""
    said = None
    while True:
        outcome = look()
        if outcome != said:
            say(outcome)
            said = outcome
        if outcome in REAPER_DONE:
            return outcome
        time.sleep(poll_interval(idle_s))


MAX_SOCKET_PATH = 100
"""Linux limits a unix socket's path to 107 bytes."""


def short_socket_path(wanted: Path, tag: str = "") -> Path:
    """`wanted`, or, when its path is too long for a unix socket (a deep data directory), a
    short alias in the temporary directory named after its folder (and `tag`)."""
    if len(str(wanted)) <= MAX_SOCKET_PATH:
        return wanted
    digest = hashlib.sha256(str(wanted.parent).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"storygraph-{digest}{tag}.sock"
