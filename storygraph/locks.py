"""A file lock in the data directory that serialises graph writes between sessions and processes
on one machine (the app's sessions, the CLI). Neo4j's uniqueness constraint guards the rest.

`GraphStore` takes it around every mutation (write, delete, reset, cleanup of half-written
documents), so no caller can forget it. It is re-entrant per thread: a caller that holds it
across a read-check-write sequence (the ingest's "already stored?" check, then the write) can
call the store's mutations inside without deadlocking on its own lock.
"""

from __future__ import annotations

import fcntl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

_held = threading.local()


def _depths() -> dict[Path, int]:
    depths: dict[Path, int] | None = getattr(_held, "depths", None)
    if depths is None:
        depths = {}
        _held.depths = depths
    return depths


@contextmanager
def write_lock(lock_dir: Path | None, name: str = "ingest.lock") -> Iterator[None]:
    """Hold the data directory's write lock; no-op without a directory; re-entrant per thread."""
    if lock_dir is None:
        yield
        return
    lock_dir.mkdir(parents=True, exist_ok=True)
    path = (lock_dir / name).resolve()
    depths = _depths()
    if depths.get(path, 0) > 0:  # this thread holds it already
        depths[path] += 1
        try:
            yield
        finally:
            depths[path] -= 1
        return
    with open(path, "w", encoding="ascii") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        depths[path] = 1
        try:
            yield
        finally:
            depths[path] = 0
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextmanager
def patient_lock(
    lock_dir: Path,
    name: str,
    give_up: Callable[[], bool],
    poll_s: float = 0.25,
    on_wait: Callable[[], None] | None = None,
) -> Iterator[bool]:
    """Wait for a lock of the data directory, asking `give_up` between tries.

    Yields True while holding the lock, or False (without it) when `give_up` said yes first:
    a queued job can be cancelled while it waits for another process's job to finish.
    `on_wait` is called once, when the first try finds the lock held (not when it is free).
    """
    lock_dir.mkdir(parents=True, exist_ok=True)
    with open(lock_dir / name, "w", encoding="ascii") as fh:
        waited = False
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not waited and on_wait is not None:
                    on_wait()
                waited = True
                if give_up():
                    yield False
                    return
                time.sleep(poll_s)
        try:
            yield True
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextmanager
def exclusive_lock(path: Path, *, wait: bool) -> Iterator[bool]:
    """Hold an exclusive lock on `path`; yields False (holding nothing) when `wait` is off and
    another process holds it. The OS drops the lock when its holder dies, so a crash cannot
    wedge it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def hold_shared(path: Path) -> IO[str]:
    """Take a shared lock on `path` (waiting while someone holds it exclusively) and return the
    open file that holds it: closing it drops the lock, and so does the holder's death. A
    process using an embedded server holds one, so that the server's idle reaper (which takes
    it exclusively, without waiting) leaves the server be."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = path.open("a")
    fcntl.flock(handle, fcntl.LOCK_SH)
    return handle
