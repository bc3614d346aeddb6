"""Stops a model server once nobody uses it and it has been idle for a while.

    python -m storygraph.llm.idle_reaper --data-dir DIR --pid PID --port PORT --idle-s S

Started detached by `EmbeddedServer` as soon as the server it launched is ready, with the
launching process's `keep_alive_s` (STORYGRAPH_EMBEDDED_IDLE_S for the CLI, 0 for the app and
evaluation runs). While any process holds the users lock it only looks; once none does (the
last user exited, or was killed and could not stop the server itself) and the server has been
idle for `idle_s`, it stops it. A server whose state file or data dir disappeared (no process
can find it again) is stopped by pid once nobody uses it. It looks every few seconds
(`embedded_server.stop_if_idle`), writes each outcome unlike the last to the server's log ("in
use", "idle too short", "stopped") and exits once it stopped the server or the server is gone or
replaced; it never stops a pid that is not the server it was started for.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from storygraph.llm.embedded_server import stop_if_idle
from storygraph.processes import reaper_log_line, watch_until_done


def watch(data_dir: Path, pid: int, port: int, idle_s: float, say: Callable[[str], None]) -> str:
    """Look until there is nothing left to watch, each new outcome to `say`; the last one."""
    return watch_until_done(lambda: stop_if_idle(data_dir, pid, port, idle_s), idle_s, say)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--idle-s", type=float, required=True)
    args = parser.parse_args(argv)
    say = reaper_log_line("model server", args.pid)
    watch(args.data_dir, args.pid, args.port, args.idle_s, say)
    return 0


if __name__ == "__main__":
    sys.exit(main())
