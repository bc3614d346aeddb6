"""One first-come, first-served queue of requests to the embedded model, across processes.

The embedded llama.cpp server reads one prompt at a time; every session of the app, every CLI
ingest and every benchmark on one data directory sends it requests. Each request to the chat
endpoint takes a numbered ticket in `<data_dir>/llm-queue/` (the number drawn under a file lock,
so two processes never draw the same one), waits until no live ticket with a lower number is
left, is sent, and gives its ticket back when its response has been read or closed.

So a request is sent only when it is its turn: the client's timeout (STORYGRAPH_LLM_TIMEOUT_S)
counts the model's work, not the wait behind other sessions (with eight people asking, the last
one waits for seven answers), the order is the order of arrival whatever the process, and a
waiting caller knows how many requests are ahead of it: `waiting_for_the_model(on_wait)`
around a call makes the queue report that count to `on_wait`, in the caller's own thread (the
chat shows "waiting for the model: N ahead").

A ticket whose process is gone (killed with a request in flight) is removed by the next
process that looks, with a warning in the log: it holds no one up.

The app's own read-ahead of the answer prompt (`Services.keep_answers_warm`) is made inside
`reading_ahead()`: its ticket is marked so (`Ticket.read_ahead`, a `-ahead` suffix on the
file). It waits its turn and holds others up like any request, but the count a waiting caller
hears leaves it out: "1 request ahead of yours" with one user was the app's warm-up, which
reads the very instructions the question's prompt begins with (docs/ISSUES.md#status-phases).

A request that can wait is made inside `deferred()`: the self-check of an answer already
written (storygraph.qa.verify.self_check). Its ticket (`Ticket.deferred`, a `-later` suffix) lets
up to `DEFER_LIMIT` requests drawn after it go first, so another user's answer does not wait
for it while its first token is what the user is waiting for; past that it is served in turn,
so a check is never starved (docs/ISSUES.md#one-model-many-sessions). The order is a ticket's
`place`: its number, a deferred one's plus `DEFER_LIMIT`. A ticket whose turn has come is
marked served (`-serving`) under the queue's lock before its request is sent, and a served
ticket is ahead of every other, so a request drawn later with an earlier place never overtakes
one already at the model.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import time
import weakref
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import httpx2

from storygraph.processes import pid_alive

log = logging.getLogger(__name__)

QUEUE_DIR = "llm-queue"
COUNTER_FILE = "next"
LOCK_FILE = ".lock"
POLL_S = 0.05

T = TypeVar("T")

WaitFn = Callable[[int], None]
"""Called with the number of requests ahead of the caller's (0: its turn has come)."""

_ON_WAIT: ContextVar[WaitFn | None] = ContextVar("storygraph_model_queue_on_wait", default=None)
_READ_AHEAD: ContextVar[bool] = ContextVar("storygraph_model_queue_read_ahead", default=False)
_DEFERRED: ContextVar[bool] = ContextVar("storygraph_model_queue_deferred", default=False)
READ_AHEAD_SUFFIX = "-ahead"
DEFERRED_SUFFIX = "-later"
SERVING_SUFFIX = "-serving"
DEFER_LIMIT = 8
"""How many requests drawn after a deferred one may go before it (module doc)."""


@dataclass(frozen=True, order=True)
class Ticket:
    number: int
    pid: int
    read_ahead: bool = field(default=False, compare=False)
    """The app's own read-ahead of a prompt (module doc): not counted to those waiting."""
    deferred: bool = field(default=False, compare=False)
    """A request that can wait: lets up to `DEFER_LIMIT` later ones go first (module doc)."""
    serving: bool = field(default=False, compare=False)
    """Its turn has come: ahead of every other ticket until it leaves."""

    @property
    def name(self) -> str:
        return (
            f"{self.number:012d}-{self.pid}"
            + (READ_AHEAD_SUFFIX if self.read_ahead else "")
            + (DEFERRED_SUFFIX if self.deferred else "")
            + (SERVING_SUFFIX if self.serving else "")
        )

    @property
    def place(self) -> tuple[int, int]:
        """Its place in the order of service (module doc)."""
        return (self.number + DEFER_LIMIT, 1) if self.deferred else (self.number, 0)

    def before(self, other: Ticket) -> bool:
        """Whether this ticket is served before `other` (a served one before all)."""
        if self.serving or other.serving:
            return self.serving and not other.serving
        return self.place < other.place

    @classmethod
    def parse(cls, name: str) -> Ticket | None:
        serving = name.endswith(SERVING_SUFFIX)
        name = name.removesuffix(SERVING_SUFFIX)
        deferred = name.endswith(DEFERRED_SUFFIX)
        name = name.removesuffix(DEFERRED_SUFFIX)
        read_ahead = name.endswith(READ_AHEAD_SUFFIX)
        number, _, pid = name.removesuffix(READ_AHEAD_SUFFIX).partition("-")
        if not (number.isdigit() and pid.isdigit()):
            return None
        return cls(int(number), int(pid), read_ahead, deferred, serving)


class ModelQueue:
    """The tickets of one data directory's model requests (module doc)."""

    def __init__(self, directory: Path, poll_s: float = POLL_S) -> None:
        self.directory = Path(directory)
        self.poll_s = poll_s

    @classmethod
    def for_data_dir(cls, data_dir: Path) -> ModelQueue:
        return cls(Path(data_dir) / QUEUE_DIR)

    def join(self) -> Ticket:
        """Draw the next number and hold a ticket with it."""
        with self._locked():
            counter = self.directory / COUNTER_FILE
            try:
                number = int(counter.read_text(encoding="ascii").strip() or 0) + 1
            except (FileNotFoundError, ValueError):
                number = max((t.number for t in self.tickets()), default=0) + 1
            ticket = Ticket(number, os.getpid(), _READ_AHEAD.get(), _DEFERRED.get())
            (self.directory / ticket.name).touch()
            counter.write_text(str(number), encoding="ascii")
        return ticket

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / LOCK_FILE, "a", encoding="ascii") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def leave(self, ticket: Ticket) -> None:
        waiting = replace(ticket, serving=False)
        for held in (waiting, replace(waiting, serving=True)):
            (self.directory / held.name).unlink(missing_ok=True)

    def tickets(self) -> list[Ticket]:
        """Every ticket held now, oldest first (a dead process's tickets are removed)."""
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return []
        held: list[Ticket] = []
        alive: dict[int, bool] = {}
        for name in names:
            ticket = Ticket.parse(name)
            if ticket is None:
                continue
            if ticket.pid not in alive:
                alive[ticket.pid] = pid_alive(ticket.pid)
            if not alive[ticket.pid]:
                log.warning(
                    "removed model queue ticket %s: its process %d is gone", name, ticket.pid
                )
                (self.directory / name).unlink(missing_ok=True)
                continue
            held.append(ticket)
        return sorted(held)

    def ahead(self, ticket: Ticket) -> int:
        """How many live requests are served before `ticket` (the one being served among
        them)."""
        return len(self._ahead_of(ticket))

    def others_ahead(self, ticket: Ticket) -> int:
        """How many live requests are served before `ticket`, the app's read-aheads left out."""
        return sum(1 for t in self._ahead_of(ticket) if not t.read_ahead)

    def _ahead_of(self, ticket: Ticket) -> list[Ticket]:
        return [t for t in self.tickets() if t != ticket and t.before(ticket)]

    def _serve_if_first(self, ticket: Ticket) -> bool:
        """Mark `ticket` served if no ticket is ahead of it, under the lock, so no two are
        marked at once (module doc)."""
        with self._locked():
            if self._ahead_of(ticket):
                return False
            served = replace(ticket, serving=True)
            with contextlib.suppress(FileNotFoundError):  # left meanwhile: nothing to mark
                os.rename(self.directory / ticket.name, self.directory / served.name)
            return True

    def wait_turn(self, ticket: Ticket, on_wait: WaitFn | None = None) -> float:
        """Block until no earlier ticket is left; `on_wait` hears the count of others'
        requests ahead (read-aheads left out, module doc) each time it changes, and 0 at the
        end when it heard more. Returns the seconds waited."""
        started = time.monotonic()
        last: int | None = None
        while True:
            held = self._ahead_of(ticket)
            count = sum(1 for t in held if not t.read_ahead)
            if count != last and on_wait is not None and (count > 0 or last is not None):
                on_wait(count)
            if not held and self._serve_if_first(ticket):
                return time.monotonic() - started
            last = count if (count > 0 or last is not None) else None
            time.sleep(self.poll_s)

    @contextlib.contextmanager
    def turn(self, on_wait: WaitFn | None = None) -> Iterator[Ticket]:
        """Hold a ticket from the wait for its turn to the end of the block."""
        ticket = self.join()
        try:
            self.wait_turn(ticket, on_wait)
            yield ticket
        finally:
            self.leave(ticket)


@contextlib.contextmanager
def _holding(var: ContextVar[T], value: T) -> Iterator[None]:
    """`var` set to `value` for the block (the requests made in it), reset after."""
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)


def waiting_for_the_model(on_wait: WaitFn) -> contextlib.AbstractContextManager[None]:
    """Model requests made in this context report their place in the queue to `on_wait`."""
    return _holding(_ON_WAIT, on_wait)


def reading_ahead() -> contextlib.AbstractContextManager[None]:
    """Model requests made in this context are the app's own read-ahead (module doc)."""
    return _holding(_READ_AHEAD, True)


def deferred() -> contextlib.AbstractContextManager[None]:
    """Model requests made in this context can wait for later ones (module doc)."""
    return _holding(_DEFERRED, True)


def current_on_wait() -> WaitFn | None:
    """Who hears the queue's count for a request made now (`waiting_for_the_model`)."""
    return _ON_WAIT.get()


def _is_chat_request(request: httpx2.Request) -> bool:
    return request.url.path.endswith("/chat/completions")


class _GivesTicketBack(httpx2.SyncByteStream):
    """A response body that gives the request's ticket back once read or closed (or, for a
    body nobody closed, when it is garbage-collected)."""

    def __init__(self, inner: Any, release: Callable[[], None]) -> None:
        self.inner = inner
        self._release = weakref.finalize(self, release)

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self.inner
        finally:
            self._release()

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self._release()


class QueuedTransport(httpx2.BaseTransport):
    """An HTTP transport whose chat requests wait for their turn in a `ModelQueue`."""

    def __init__(self, queue: ModelQueue, inner: httpx2.BaseTransport) -> None:
        self.queue = queue
        self.inner = inner

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        if not _is_chat_request(request):
            return self.inner.handle_request(request)
        ticket = self.queue.join()
        try:
            self.queue.wait_turn(ticket, current_on_wait())
            response = self.inner.handle_request(request)
        except BaseException:
            self.queue.leave(ticket)
            raise
        response.stream = _GivesTicketBack(response.stream, lambda: self.queue.leave(ticket))
        return response

    def close(self) -> None:
        self.inner.close()
