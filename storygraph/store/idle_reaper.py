"""Stops the embedded graph store's server once nobody uses it and it has been idle for a while.

    python -m storygraph.store.idle_reaper --data-dir DIR --pid PID --idle-s S

Started detached by `EmbeddedFalkorDB` when a process that keeps its server (the CLI,
STORYGRAPH_STORE_IDLE_S) has started one. While any process holds the server's users lock it only
looks; once none does and the last one let go of the server `idle_s` seconds ago (the
`falkordb.last_used` stamp), it stops the server (SIGTERM: the server writes its append-only file
out) and exits. It also exits when the server is gone or another one replaced it, and stops a
server whose data directory was deleted (no process can find it again) at once. Each outcome
unlike the last goes to its log (`reaper.log`). It only ever signals a redis-server that serves
this data directory's socket (`serves_socket`).
"""

from __future__ import annotations

import argparse
import fcntl
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from storygraph.locks import exclusive_lock
from storygraph.processes import reaper_log_line, watch_until_done
from storygraph.store.falkordb_server import (
    EmbeddedFalkorDB,
    ServerPaths,
    idle_since,
    serves_socket,
)

IdleOutcome = Literal["stopped", "orphan stopped", "idle too short", "in use", "gone", "replaced"]


def stop_if_idle(
    data_dir: Path, pid: int, idle_s: float, *, now: float | None = None
) -> IdleOutcome:
    """One look at the server `pid` of `data_dir` (module doc); "gone", "replaced", "stopped"
    and "orphan stopped" leave nothing to watch."""
    paths = ServerPaths.for_data_dir(data_dir)
    if not paths.root.is_dir():  # the data directory was deleted: nobody can find it again
        if not serves_socket(pid, paths.socket):
            return "gone"
        EmbeddedFalkorDB._terminate(pid)
        return "orphan stopped"
    with open(paths.lockfile, "a", encoding="ascii") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # no process starts or reuses it while we look
        try:
            if not serves_socket(pid, paths.socket):
                return "gone"
            if EmbeddedFalkorDB(data_dir).pid() != pid:
                return "replaced"
            if (now if now is not None else time.time()) - idle_since(paths) < idle_s:
                return "idle too short"
            with exclusive_lock(paths.users, wait=False) as free:
                if not free:
                    return "in use"
                EmbeddedFalkorDB._terminate(pid)
                paths.pidfile.unlink(missing_ok=True)
                paths.socket.unlink(missing_ok=True)
                return "stopped"
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def watch(data_dir: Path, pid: int, idle_s: float, say: Callable[[str], None]) -> str:
    """Look until there is nothing left to watch, each new outcome to `say`; the last one."""
    return watch_until_done(lambda: stop_if_idle(data_dir, pid, idle_s), idle_s, say)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--idle-s", type=float, required=True)
    args = parser.parse_args(argv)
    watch(args.data_dir, args.pid, args.idle_s, reaper_log_line("graph store server", args.pid))
    return 0


if __name__ == "__main__":
    sys.exit(main())
