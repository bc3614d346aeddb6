"""StoryGraph app: `streamlit run app.py`.

Thin on purpose (design §2, §7): page config, the services built once per process, and one hidden
`st.navigation` page whose tabs call `pages.<tab>.render(services)`. The selected tab is kept in
`st.session_state["tab"]` and in the URL (`?tab=Chat`), so a reload shows the same tab; the Chat
tab pins its input under the page only while it is the tab shown.

Services come from `st.session_state["_services"]` when something put a ready `Services` there
before the first run (the AppTest tests do: they build services on a temporary data directory with
a scripted model); otherwise from `build_services(get_settings())`, cached for the process.
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path

import streamlit as st

from pages import model_install
from pages.common import SERVICES_KEY, TAB_KEY, guarded, show_error
from pages.jobs import render_jobs
from storygraph.errors import StoryGraphError
from storygraph.services import Services, build_services
from storygraph.settings import get_settings

log = logging.getLogger("storygraph.app")
# A local file: an emoji or a Material icon would make the browser fetch a font or an image from
# outside, and the app makes no outside request.
PAGE_ICON = Path(__file__).resolve().parent / "assets" / "storygraph-icon.png"


@st.cache_resource(show_spinner="Starting the graph store and the model…")
def get_services() -> Services:
    """The process-wide services. Failures are not cached: the next run tries again. The
    embedded model reads the answer prompt's fixed part in the background meanwhile, so the
    first question does not wait for it."""
    services = build_services(get_settings())
    services.keep_answers_warm()
    return services


def current_services() -> Services | None:
    injected = st.session_state.get(SERVICES_KEY)
    if injected is not None:
        return injected
    try:
        return get_services()
    except StoryGraphError as exc:
        log.error("services could not start: %s", exc)
        show_error(f"StoryGraph could not start: {exc.message}", exc.hint)
        if st.button("Retry", icon=":material/refresh:", key="services_retry"):
            st.rerun()
        return None


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
    services = current_services()
    if services is None:
        return
    model_install.render(services)  # the embedded model's install, while it runs
    for warning in services.warnings:
        if not (services.model_pending and warning == services.model_status):  # shown above
            st.warning(warning)
    with guarded("Showing the ingest jobs"):
        render_jobs(services)  # above the tabs: every tab shows the running ingests
    labels = [t[0] for t in TABS]
    containers = st.tabs(labels, key=TAB_KEY, bind="query-params")
    for container, (label, module) in zip(containers, TABS, strict=True):
        with container, guarded(f"The {label} tab"):
            importlib.import_module(module).render(services)


st.set_page_config(page_title="StoryGraph", page_icon=str(PAGE_ICON), layout="wide")
st.navigation([st.Page(main_page, title="StoryGraph", default=True)], position="hidden").run()
