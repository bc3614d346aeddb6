"""The CLI in a process of its own, as a user runs it: an environment without the developer's
model, store or StoryGraph settings, the data dir and the given settings set, the repo on
PYTHONPATH. Shared by the tests that need the CLI's own exit (atexit, reapers, crashes)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOREIGN = ("STORYGRAPH_", "OPENAI_", "AZURE_OPENAI_", "NEO4J_")


def run_cli(
    data: Path,
    command: Sequence[str],
    *args: str,
    timeout: float,
    **settings: str,
) -> subprocess.CompletedProcess[str]:
    """Run `command + args` (e.g. `[sys.executable, "-m", "storygraph"]`) in `data`'s parent
    with STORYGRAPH_DATA_DIR=`data` and `settings` (STORYGRAPH_… names) as its only settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(FOREIGN)}
    env.update(STORYGRAPH_DATA_DIR=str(data), **settings)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [*command, *args],
        cwd=data.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


STORYGRAPH = (sys.executable, "-m", "storygraph")
