"""A saved `eval-e2e --json` run read back, plain (`RUN.json`) or gzip-compressed
(`RUN.json.gz`: the committed pool of runs, eval/pool/)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any


def read_run(path: Path) -> dict[str, Any]:
    """The run saved at `path` (compressed when its name ends in `.gz`)."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    run = json.loads(raw.decode("utf-8"))
    if not isinstance(run, dict) or "questions" not in run:
        raise ValueError(f"{path} is not a saved eval-e2e run (no 'questions')")
    return run
