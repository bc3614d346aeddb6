"""A file lock in the data directory that serialises graph writes between sessions and processes
on one machine (the app's sessions, the CLI). Neo4j's uniqueness constraint guards the rest."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def write_lock(lock_dir: Path | None, name: str = "ingest.lock") -> Iterator[None]:
    """Hold the data directory's write lock; no-op without a directory."""
    if lock_dir is None:
        yield
        return
    lock_dir.mkdir(parents=True, exist_ok=True)
    with open(lock_dir / name, "w", encoding="ascii") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
