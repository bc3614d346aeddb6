"""The app's slow start-up parts, run in the background while the page is already shown.

Before, the app built everything inside one cached call behind one spinner ("Starting the graph
store and the model…", 8-13 s with no progress, docs/ISSUES.md#app-first-page). Now the app opens
the graph store (about a second) and draws the page and its tabs with the store's state at once; the
parts that take seconds run in threads and the page names each step and how long it has taken:

- the embedded model's server (`ModelStart`, an `EmbeddedStarter` for `build_services`): until
  it answers, the services are in no-LLM mode exactly as while the model is being installed
  (`Services.model_pending`; answers list the graph's facts and say so), and
  `Services.refresh_model` picks the server up once it is there;
- the question path's encoder and dictionary
(`storygraph.qa.pipeline.preload.load_question_models`):
  the multilingual sentence encoder and Sudachi, each loaded once per process, so the first
  question does not wait for them.

A model server that is already running (the previous app, a CLI command) is reused within
`ModelStart.wait_s`, and the page never shows the step.

Before any of that, `start_store_server` has the embedded graph store's server starting while
the app imports its pages (docs/ISSUES.md#store-server-kept): the server's start (redis-server
loading the FalkorDB module and replaying its file, 0.5-0.8 s at load ~7) is waited for by a process
that has nothing else to do, and the first page's imports take as long.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from storygraph.errors import StoreError
from storygraph.settings import Settings

if TYPE_CHECKING:
    from storygraph.store.falkordb_server import EmbeddedFalkorDB

log = logging.getLogger(__name__)

SERVICES_KEY = "_services"
"""Session-state key a test (or an embedding app) may fill with a ready `Services` before the
first run; app.py then uses it instead of building the process-wide cached services."""

STARTUP_KEY = "_startup"
"""Session-state key of the `AppStartup` shown beside injected services; a test puts one there
to see the start-up status."""


def start_store_server(settings: Settings) -> tuple[threading.Thread, EmbeddedFalkorDB] | None:
    """Start the embedded graph store's server in a daemon thread, now, so that it is up by the
    time the app opens the store (`storygraph.services.open_store`, which finds it running and
    uses it; Neo4j: nothing to start, None). A server this starts is stopped when the app exits,
    as one `open_store` started is; one already running is only looked at. A start that fails
    is logged here and fails again, with its message and hint, where the app opens the store.
    Returns the thread and the server's handle."""
    if settings.uses_neo4j:
        return None
    from storygraph.store.falkordb_server import EmbeddedFalkorDB

    server = EmbeddedFalkorDB(Path(settings.data_dir))

    def start() -> None:
        try:
            server.ensure_running()
        except StoreError as exc:
            log.warning("starting the graph store's server ahead failed: %s", exc)
            return
        if not server.owned:
            server.stop()  # someone else's server: let go of it, the app's store uses it

    thread = threading.Thread(target=start, name="startup: the graph store", daemon=True)
    thread.start()
    return thread, server


StepState = Literal["waiting", "running", "done", "failed"]


@dataclass
class Step:
    """One start-up part as the page shows it."""

    name: str
    state: StepState = "waiting"
    detail: str = ""
    started: float = 0.0
    ended: float = 0.0

    def seconds(self, now: float | None = None) -> float:
        if not self.started:
            return 0.0
        return (self.ended or (now if now is not None else time.monotonic())) - self.started

    def line(self, now: float | None = None) -> str:
        took = f" ({self.seconds(now):.0f} s)" if self.started else ""
        if self.state == "running":
            return f"{self.name}: {self.detail or 'loading'}…{took}"
        if self.state == "done":
            return f"{self.name}: ready{took}"
        if self.state == "failed":
            return f"{self.name}: failed{took}: {self.detail}"
        return f"{self.name}: {self.detail or 'waiting'}"


class BackgroundStep:
    """Runs `work(report)` once in a daemon thread; `report(text)` names what it is doing.
    An exception of `work` is kept and raised again by `result()` in the caller's thread."""

    def __init__(self, name: str, work: Callable[[Callable[[str], None]], Any]) -> None:
        self.step = Step(name)
        self._work = work
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._value: Any = None
        self._error: Exception | None = None

    def start(self) -> None:
        with self._lock:
            if self._thread is not None:
                return
            self.step.state, self.step.started = "running", time.monotonic()
            self._thread = threading.Thread(
                target=self._run, name=f"startup: {self.step.name}", daemon=True
            )
            self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._work(self._report)
        except Exception as exc:  # noqa: BLE001 - handed to result(), raised again there
            log.warning("start-up step %r failed: %s", self.step.name, exc)
            self._error = exc
            self.step.state, self.step.detail = "failed", str(exc).splitlines()[0][:200]
        else:
            self.step.state = "done"
        self.step.ended = time.monotonic()

    def _report(self, text: str) -> None:
        self.step.detail = text

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def result(self) -> Any:
        """The work's value once it is over (its exception raised again)."""
        if self._error is not None:
            raise self._error
        return self._value


ServerStart = Callable[[Settings, Callable[[str], None]], Any]
"""Starts (or reuses) the embedded model's server, naming its steps; returns the server."""


def start_model_server(settings: Settings, report: Callable[[str], None]) -> Any:
    """The app's `ServerStart`: the embedded model's server, reused or started
    (storygraph.services.start_embedded_server), its steps named for the page."""
    from storygraph.services import start_embedded_server

    report("starting its server")
    return start_embedded_server(settings, lambda _said: report("loading the model into memory"))


class ModelStart:
    """An `EmbeddedStarter` (storygraph.services) that starts the model's server in the
    background: `(None, "<the step, and how long it has taken>")` while it loads, then
    `(server, "")`; the start's `ModelError` is raised by the call after it failed. While the
    model is not installed it says why (`why_not`) and starts nothing."""

    def __init__(
        self, start: ServerStart, why_not: Callable[[Settings], str], *, wait_s: float = 0.5
    ) -> None:
        self._start = start
        self._why_not = why_not
        self.wait_s = wait_s
        self.background: BackgroundStep | None = None

    @property
    def step(self) -> Step | None:
        return self.background.step if self.background is not None else None

    @property
    def starting(self) -> bool:
        return self.background is not None and self.background.running

    def __call__(self, settings: Settings) -> tuple[Any, str]:
        if self.background is None:
            why = self._why_not(settings)
            if why:
                return None, why
            self.background = BackgroundStep(
                "The embedded model", lambda report: self._start(settings, report)
            )
            self.background.start()
        self.background.join(self.wait_s)  # a running server is reused within this wait
        if self.background.running:
            return None, (
                f"{self.background.step.line()} — answers list the graph's facts until it is ready"
            )
        return self.background.result(), ""


@dataclass
class AppStartup:
    """The app's start-up parts for the status under the title: the store (opened before the
    page is drawn), the model's server and the question path (both in the background)."""

    store: Step
    model: ModelStart
    question_path: BackgroundStep

    def steps(self) -> list[Step]:
        model = [self.model.step] if self.model.step is not None else []
        return [self.store, *model, self.question_path.step]

    def busy(self, model_pending: bool) -> bool:
        """Something is still loading, or the model's server is up and the services have not
        picked it up yet (`Services.refresh_model` looks every few seconds)."""
        model = self.model.step
        picked_up_later = model is not None and model.state == "done" and model_pending
        return self.model.starting or self.question_path.running or picked_up_later
