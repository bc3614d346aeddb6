"""The app's first render (AppTest, real app.py and pages/, real store): the page and its tabs are
drawn with the store's state while the model's server is still starting, under a status that
names the step; once the server answers, the page uses the model without a reload. The model
server is the stand-in process of tests/helpers/model_install.py, held until the test lets it
start."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from pages.common import SERVICES_KEY, STARTUP_KEY, TAB_KEY
from storygraph.errors import ModelError
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from storygraph.ui.startup import AppStartup, BackgroundStep, ModelStart, Step
from tests.helpers.model_install import InstallingThenReady, embedded_services

ROOT = Path(__file__).resolve().parents[2]


class HeldStart:
    """A `ServerStart` that says it is loading, then waits for `release` before it starts the
    stand-in server (or raises `error`)."""

    def __init__(self, starter: InstallingThenReady) -> None:
        self.starter = starter
        self.release = threading.Event()
        self.error: ModelError | None = None

    def __call__(self, settings: Settings, report: Callable[[str], None]) -> Any:
        report("loading the stand-in model")
        assert self.release.wait(60)
        if self.error is not None:
            raise self.error
        self.starter.ready = True
        server, _ = self.starter(settings)
        return server


def _texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [w.value for w in at.warning] + [e.value for e in at.error]
    return "\n".join(str(p) for p in parts)


@pytest.fixture
def held(tmp_path: Path) -> Iterator[HeldStart]:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF stand-in")
    made = HeldStart(InstallingThenReady(model))
    yield made
    made.release.set()
    if made.starter.server is not None:
        made.starter.server.stop()


@pytest.fixture
def started(tmp_path: Path, held: HeldStart) -> Iterator[tuple[Services, AppStartup]]:
    """Services whose model's start is held, and the app's start-up steps."""
    store = Step("The graph store", state="running", started=time.monotonic())
    model = ModelStart(held, lambda _settings: "", wait_s=0.1)
    services = embedded_services(tmp_path, model)
    store.state, store.ended = "done", time.monotonic()
    question_path = BackgroundStep("The sentence encoder and dictionary", lambda report: None)
    question_path.start()
    question_path.join(10)
    yield services, AppStartup(store, model, question_path)
    services.close()


def _app(services: Services, startup: AppStartup, tab: str = "Chat") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state[SERVICES_KEY] = services
    at.session_state[STARTUP_KEY] = startup
    at.session_state[TAB_KEY] = tab
    at.run()
    assert not at.exception, at.exception
    return at


def _let_it_start(held: HeldStart, startup: AppStartup, at: AppTest) -> str:
    """Release the held start, wait for it, draw the page again; its texts."""
    held.release.set()
    assert startup.model.background is not None
    startup.model.background.join(60)
    at.run()
    assert not at.exception, at.exception
    return _texts(at)


def test_the_tabs_and_the_stores_state_come_first_the_model_behind_a_named_step(
    started: tuple[Services, AppStartup], held: HeldStart
) -> None:
    services, startup = started
    at = _app(services, startup)
    assert [t.label for t in at.tabs][:3] == ["Ingest", "Chat", "Graph"]
    text = _texts(at)
    assert "The graph store: ready" in text
    assert "The embedded model: loading the stand-in model…" in text
    assert "The sentence encoder and dictionary: ready" in text
    assert "Model: none" in text  # no-LLM meanwhile, and said so
    assert "answers list the graph's facts" in text
    assert at.chat_input  # the Chat tab's input is there while the model loads
    assert services.model_pending

    text = _let_it_start(held, startup, at)
    assert "The embedded model:" not in text
    assert "Model: none" not in text and "(embedded)" in text
    assert services.info.provider == "embedded"


def test_a_model_that_fails_to_start_is_a_warning_and_the_page_stays(
    started: tuple[Services, AppStartup], held: HeldStart
) -> None:
    services, startup = started
    at = _app(services, startup)
    held.error = ModelError("The embedded model server exited with code 1 while starting")
    text = _let_it_start(held, startup, at)
    assert "exited with code 1 while starting" in text
    assert "The embedded model: loading" not in text
    assert not services.model_pending
    assert [t.label for t in at.tabs][:3] == ["Ingest", "Chat", "Graph"]


def test_a_server_already_running_is_used_at_once(tmp_path: Path, held: HeldStart) -> None:
    """A running server answers within `wait_s`: the services start with the model and the
    page shows no start-up step."""
    held.release.set()
    model = ModelStart(held, lambda _settings: "", wait_s=30)
    services = embedded_services(tmp_path, model)
    try:
        assert not services.model_pending and services.info.provider == "embedded"
        store = Step("The graph store", state="done")
        question_path = BackgroundStep("The sentence encoder and dictionary", lambda report: None)
        question_path.start()
        question_path.join(10)
        at = _app(services, AppStartup(store, model, question_path))
        assert "Starting:" not in _texts(at)
    finally:
        services.close()


def test_a_question_path_that_fails_to_load_is_a_warning(tmp_path: Path) -> None:
    services = build_services(Settings(data_dir=tmp_path / "data", llm_provider="none"))

    def broken(report: Callable[[str], None]) -> None:
        report("loading the sentence encoder")
        raise OSError("weights.npz: no such file")

    question_path = BackgroundStep("The sentence encoder and dictionary", broken)
    question_path.start()
    question_path.join(10)
    model = ModelStart(lambda _s, _r: pytest.fail("no model is configured"), lambda _s: "")
    startup = AppStartup(Step("The graph store", state="done"), model, question_path)
    try:
        at = _app(services, startup, tab="Ingest")
        warnings = [str(w.value) for w in at.warning]
        assert any(
            w.startswith("The sentence encoder and dictionary: failed")
            and "weights.npz: no such file" in w
            for w in warnings
        ), warnings
        assert "Starting:" not in _texts(at)
    finally:
        services.close()
