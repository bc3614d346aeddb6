"""The store's large writes pause Python's cyclic collector and give it back as it was
(storygraph.store.gc_pause)."""

from __future__ import annotations

import gc
import threading

import pytest

from storygraph.store.gc_pause import collector_paused


def test_paused_inside_and_back_after_also_nested_and_on_error() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with pytest.raises(RuntimeError), collector_paused():
            raise RuntimeError("a failed write")
        assert not gc.isenabled()  # the outer write is still going
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_it_comes_back_when_the_last_of_two_threads_is_done() -> None:
    inside, release = threading.Event(), threading.Event()

    def other_write() -> None:
        with collector_paused():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other_write)
    with collector_paused():
        thread.start()
        assert inside.wait(10)
    assert not gc.isenabled()  # the other thread's write goes on
    release.set()
    thread.join(10)
    assert gc.isenabled()
