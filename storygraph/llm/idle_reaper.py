"""Stops a model server the CLI left warm, once nobody has used it for a while.

    python -m storygraph.llm.idle_reaper --data-dir DIR --pid PID --port PORT --idle-s S

Started detached by `EmbeddedServer.stop_if_started_here` when the process that started the
server exits with `keep_alive_s` set (STORYGRAPH_EMBEDDED_IDLE_S for the CLI). It looks every
few seconds (`embedded_server.stop_if_idle`) and exits once it stopped the server or the server
is gone or replaced; it never stops a pid that is not the server it was started for.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from storygraph.llm.embedded_server import stop_if_idle


def poll_interval(idle_s: float) -> float:
    """How often to look: often enough to stop within a quarter of the idle time (0.2-15 s)."""
    return max(0.2, min(15.0, idle_s / 4))


def watch(data_dir: Path, pid: int, port: int, idle_s: float) -> str:
    """Look until there is nothing left to watch; return the last outcome."""
    while True:
        outcome = stop_if_idle(data_dir, pid, port, idle_s)
        if outcome in ("stopped", "gone", "replaced"):
            return outcome
        time.sleep(poll_interval(idle_s))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--idle-s", type=float, required=True)
    args = parser.parse_args(argv)
    outcome = watch(args.data_dir, args.pid, args.port, args.idle_s)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    print(f"{stamp} idle reaper: model server pid {args.pid}: {outcome}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
