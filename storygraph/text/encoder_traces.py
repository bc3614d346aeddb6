"""The traces the sentence encoder's helper (storygraph.text.encoder_server) leaves, and what they
say about how one of its processes ended.

Its pid file, `<data dir>/cache/encoder.pid`, is written when the helper starts and removed when
it stops by itself (idle) or is told to (SIGTERM, `storygraph reset`): one left naming a process
that is gone means that process was killed, by a signal of its own making (a crash) or another's.
Its log, `<data dir>/logs/encoder-server.log`, is shared by every helper of the data directory:
each writes "<stamp> encoder helper pid <pid>: started" first, and Python's faulthandler (on in
the helper) writes "Fatal Python error: Segmentation fault" and the stack before a fatal signal
kills it.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path

from storygraph.crashes import LOG_TAIL_LINES
from storygraph.processes import pid_alive

MODULE = "storygraph.text.encoder_server"
READ_BYTES = 256 * 1024
"""How much of the log's end is read."""
_STARTED = re.compile(r"^\S+ \S+ encoder helper pid \d+: started", re.MULTILINE)


def pid_path(data_dir: Path) -> Path:
    return Path(data_dir).resolve() / "cache" / "encoder.pid"


def log_path(data_dir: Path) -> Path:
    return Path(data_dir) / "logs" / "encoder-server.log"


def started_line(pid: int) -> str:
    return f"encoder helper pid {pid}: started"


def write_pid(data_dir: Path) -> None:
    """The helper says it runs (first thing at its start)."""
    path = pid_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(str(os.getpid()), encoding="ascii")
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    print(f"{stamp} {started_line(os.getpid())}", flush=True)


def recorded(data_dir: Path) -> tuple[int, float] | None:
    """(pid, when it started) of the helper recorded as running, or None."""
    path = pid_path(data_dir)
    try:
        return int(path.read_text(encoding="ascii").strip()), path.stat().st_mtime
    except (OSError, ValueError):
        return None


def forget(data_dir: Path, pid: int) -> None:
    """Remove the pid file if it still names `pid`: the helper stops by itself or was told to
    (a newer helper's file is left), or its death is recorded."""
    found = recorded(data_dir)
    if found is not None and found[0] == pid:
        with contextlib.suppress(OSError):
            pid_path(data_dir).unlink()


def is_helper(pid: int) -> bool:
    """`pid` is a live encoder helper (not a process that took a dead helper's pid)."""
    if not pid_alive(pid):
        return False
    try:
        return MODULE.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # cannot tell: take it for the helper, which is never signalled here


def since_start(data_dir: Path, pid: int) -> str:
    """The log of helper `pid`: from its 'started' line to the next helper's; empty when the
    log's end holds none."""
    try:
        with log_path(data_dir).open("rb") as fh:
            fh.seek(max(0, log_path(data_dir).stat().st_size - READ_BYTES))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    at = text.rfind(started_line(pid))
    if at < 0:
        return ""
    at = text.rfind("\n", 0, at) + 1
    line_end = text.find("\n", at)
    later = _STARTED.search(text, line_end) if line_end >= 0 else None
    return text[at : later.start() if later else len(text)]


def tail(section: str, lines: int = LOG_TAIL_LINES) -> str:
    return "\n".join(section.splitlines()[-lines:])
