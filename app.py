"""StoryGraph app: `streamlit run app.py`.

Thin on purpose (design §2, §7): page config, the services built once per process, and one hidden
`st.navigation` page whose tabs call `pages.<tab>.render(services)`.

Services come from `st.session_state["_services"]` when something put a ready `Services` there
before the first run (the AppTest tests do: they build services on a temporary data directory with
a scripted model); otherwise from `build_services(get_settings())`, cached for the process.
"""

from __future__ import annotations

import importlib
import logging

import streamlit as st

from pages.common import SERVICES_KEY, guarded, show_error
from storygraph.errors import StoryGraphError
from storygraph.services import Services, build_services
from storygraph.settings import get_settings

log = logging.getLogger("storygraph.app")


@st.cache_resource(show_spinner="Starting the graph store and the model…")
def get_services() -> Services:
    """The process-wide services. Failures are not cached: the next run tries again."""
    return build_services(get_settings())


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
    ("Retrieval lab", "pages.lab"),
    ("Doctor", "pages.doctor"),
)


def main_page() -> None:
    st.title("StoryGraph")
    st.caption("Upload stories, ask questions, and see which relations of the graph answered.")
    services = current_services()
    if services is None:
        return
    for warning in services.warnings:
        st.warning(warning)
    for container, (label, module) in zip(st.tabs([t[0] for t in TABS]), TABS, strict=True):
        with container, guarded(f"The {label} tab"):
            importlib.import_module(module).render(services)


st.set_page_config(page_title="StoryGraph", page_icon=":material/hub:", layout="wide")
st.navigation([st.Page(main_page, title="StoryGraph", default=True)], position="hidden").run()
