"""Process helpers shared by the two embedded servers (FalkorDB and llama.cpp)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


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
