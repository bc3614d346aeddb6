"""StoryGraph app: `streamlit run app.py`.

Thin on purpose (design §2, §7): page config, the services built once per process, and one hidden
`st.navigation` page whose tabs call `pages.<tab>.render(services)`. The selected tab is kept in
`st.session_state["tab"]` and in the URL (`?tab=Chat`), so a reload shows the same tab; the Chat
tab pins its input under the page only while it is the tab shown. Only the open tab is drawn (and
its module imported): opening another reruns the page.

Services come from `st.session_state["_services"]` when something put a ready `Services` there
before the first run (the AppTest tests do: they build services on a temporary data directory with
a scripted model); otherwise from `build_services(get_settings())`, cached for the process. Only
the graph store is opened before the page is drawn (its server started first, while the pages
are imported); the model's server and the question path's
encoder load in the background behind a status naming each step (storygraph.ui.startup,
pages/startup.py), so the tabs are usable at once (docs/ISSUES.md#app-first-page). A test may put an
`AppStartup` in `st.session_state["_startup"]` beside its services to see that status.
"""

from __future__ import annotations

import importlib
import logging
import time
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from storygraph.settings import get_settings
from storygraph.ui.startup import SERVICES_KEY, start_store_server


@st.cache_resource(show_spinner=False)
def store_server_starting() -> None:
    """Once per process: the embedded store's server starts while the imports below run
    (storygraph.ui.startup.start_store_server; docs/ISSUES.md#store-server-kept)."""
    start_store_server(get_settings())


if SERVICES_KEY not in st.session_state:  # injected services (tests) bring their own store
    store_server_starting()

from pages import model_install, startup  # noqa: E402 - after the store's server is starting
from pages.common import STARTUP_KEY, TAB_KEY, guarded, show_error  # noqa: E402
from pages.jobs import render_jobs  # noqa: E402
from storygraph.errors import StoryGraphError  # noqa: E402
from storygraph.qa.pipeline.preload import load_question_models  # noqa: E402
from storygraph.services import Services, build_services, embedded_unavailable  # noqa: E402
from storygraph.ui.startup import (  # noqa: E402
    AppStartup,
    BackgroundStep,
    ModelStart,
    Step,
    start_model_server,
)

log = logging.getLogger("storygraph.app")
# A local file: an emoji or a Material icon would make the browser fetch a font or an image from
# outside, and the app makes no outside request.
PAGE_ICON = Path(__file__).resolve().parent / "assets" / "storygraph-icon.png"


@st.cache_resource(show_spinner="Opening the graph store…")
def get_services() -> tuple[Services, AppStartup]:
    """The process-wide services and their start-up steps. Failures are not cached: the next
    run tries again. Only the store is opened here; the model's server starts in the background
    (then reads the answer prompt's fixed part ahead, so the first question does not wait for
    it) and the question path's encoder and dictionary load meanwhile."""
    store = Step("The graph store", state="running", started=time.monotonic())
    model = ModelStart(start_model_server, embedded_unavailable)
    services = build_services(get_settings(), embedded=model)
    store.state, store.ended = "done", time.monotonic()
    services.keep_answers_warm()
    data_dir = Path(services.settings.data_dir)
    question_path = BackgroundStep(
        "The sentence encoder and dictionary",
        lambda report: load_question_path(data_dir, report),
    )
    question_path.start()
    return services, AppStartup(store, model, question_path)


def load_question_path(data_dir: Path, report: Callable[[str], None]) -> None:
    """The Chat tab's modules (the question path, ~0.3 s of imports that opening the tab waited
    for, docs/ISSUES.md#app-first-page), then the encoder and the dictionary."""
    report("importing the question path")
    importlib.import_module("pages.chat")
    load_question_models(data_dir, report)


def current_services() -> tuple[Services | None, AppStartup | None]:
    injected = st.session_state.get(SERVICES_KEY)
    if injected is not None:
        return injected, st.session_state.get(STARTUP_KEY)
    try:
        return get_services()
    except StoryGraphError as exc:
        log.error("services could not start: %s", exc)
        show_error(f"StoryGraph could not start: {exc.message}", exc.hint)
        if st.button("Retry", icon=":material/refresh:", key="services_retry"):
            st.rerun()
        return None, None


# Every tab and its module. A tab whose module fails to import shows that error in its place
# (`guarded`); it never disappears silently. (A comment: Streamlit would draw a bare string.)
TABS: tuple[tuple[str, str], ...] = (
    ("Ingest", "pages.ingest"),
    ("Chat", "pages.chat"),
    ("Graph", "pages.graph"),
    ("Entities", "pages.entities"),
    ("Retrieval lab", "pages.lab"),
    ("Doctor", "pages.doctor"),
)


def main_page() -> None:
    st.title("StoryGraph")
    st.caption("Upload stories, ask questions, and see which relations of the graph answered.")
    services, starting = current_services()
    if services is None:
        return
    services.refresh_model()  # a model server that answered (or failed) since the last run
    if starting is not None:
        startup.render(services, starting)  # the model's server and the encoder, loading
    if starting is None or not starting.model.starting:
        model_install.render(services)  # the embedded model's install, while it runs
    for warning in services.warnings:
        if not (services.model_pending and warning == services.model_status):  # shown above
            st.warning(warning)
    with guarded("Showing the ingest jobs"):
        render_jobs(services)  # above the tabs: every tab shows the running ingests
    labels = [t[0] for t in TABS]
    containers = st.tabs(labels, key=TAB_KEY, bind="query-params")
    for container, (label, module) in zip(containers, TABS, strict=True):
        if container.open is False:
            # A hidden tab is drawn when it is opened (the tabs are bound to the URL, so a click
            # reruns the page): the first page shows its tab without running the other five.
            continue
        with container, guarded(f"The {label} tab"):
            importlib.import_module(module).render(services)


st.set_page_config(page_title="StoryGraph", page_icon=str(PAGE_ICON), layout="wide")
st.navigation([st.Page(main_page, title="StoryGraph", default=True)], position="hidden").run()
