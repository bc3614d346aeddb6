"""Python's cyclic garbage collector paused while the store builds and sends a large write.

A write of 1M edges builds ~1.3M row dicts and lists next to the plan's ~1.3M records; each
full collection the allocations trigger walks all of them again, so the collector's time grew
faster than the write: in one side run at 300k edges on the loaded machine, 22.9 s of a 50.8 s
import was spent outside the queries, 1.6 s of 19.0 s with the collector paused
(docs/ISSUES.md#import-1m-edges). The rows hold no cycles, so
nothing is lost by collecting after the write instead of during it. Process-wide and counted:
the collector comes back when the last paused write ends, and only if it was on before.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_paused = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector for the block (nested and concurrent blocks count)."""
    global _paused, _was_enabled
    with _lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _lock:
            _paused -= 1
            if _paused == 0 and _was_enabled:
                gc.enable()
