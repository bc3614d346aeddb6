"""UI helpers shared by the tabs: error display, messages across reruns, the model badge."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

import streamlit as st

from storygraph.errors import StoryGraphError
from storygraph.services import Services
from storygraph.ui.startup import SERVICES_KEY as SERVICES_KEY  # defined with the start-up
from storygraph.ui.startup import STARTUP_KEY as STARTUP_KEY

log = logging.getLogger("storygraph.app")


TAB_KEY = "tab"
"""Session-state key of the selected tab (app.py binds it to the URL's `?tab=`, so a reload keeps
the tab). A test selects a tab with `at.session_state[TAB_KEY] = "Chat"`."""

_FLASH_KEY = "_flash"
FlashKind = Literal["success", "info", "warning", "error"]
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$])")


def md_escape(text: str) -> str:
    """Text shown literally by st.markdown (no emphasis, links or lists from story text)."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def split_hint(message: str) -> tuple[str, str]:
    """`str(StoryGraphError)` joins message and hint with " — "; split them again."""
    head, sep, tail = message.partition(" — ")
    return (head, tail) if sep else (message, "")


def show_error(message: str, hint: str = "") -> None:
    st.error(message, icon=":material/error:")
    if hint:
        st.info(hint, icon=":material/lightbulb:")


@contextmanager
def guarded(action: str) -> Iterator[None]:
    """Run a UI action; any failure becomes an st.error (+ hint) instead of a traceback."""
    try:
        yield
    except StoryGraphError as exc:
        log.warning("%s failed: %s", action, exc)
        show_error(exc.message, exc.hint)
    except Exception as exc:  # the app must keep working after any fault
        log.exception("%s failed", action)
        show_error(
            f"{action} failed: {type(exc).__name__}: {exc}",
            "The app keeps running; try again. The server log has the details.",
        )


def flash(kind: FlashKind, text: str, hint: str = "") -> None:
    """Queue a message for the next run (callbacks run before the page is drawn)."""
    st.session_state.setdefault(_FLASH_KEY, []).append((kind, text, hint))


def show_flashes() -> None:
    for kind, text, hint in st.session_state.pop(_FLASH_KEY, []):
        if kind == "error":
            show_error(text, hint)
        else:
            getattr(st, kind)(text)


_SCROLL_JS = """<script>
(() => {{
  // Bring the element of key {key!r} into view; its answer may still be laying out, so a few
  // tries. Streamlit scrolls inside its main element; scrollIntoView finds it.
  const show = () => {{
    const el = document.querySelector('.st-key-{key}');
    if (!el) {{ return; }}
    el.style.scrollMarginTop = '4rem';
    el.scrollIntoView({{block: '{block}', behavior: 'instant'}});
  }};
  [50, 250, 600].forEach((ms) => setTimeout(show, ms));
}})();
</script><!-- {nonce} -->"""


def scroll_into_view(key: str, nonce: str, block: Literal["start", "end"] = "start") -> None:
    """Scroll the page to the container of `key` (a fixed, app-made key, never user text).
    `nonce` makes the script new, so the browser runs it again when the call repeats."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", key):
        raise ValueError(f"not a container key: {key!r}")
    body = _SCROLL_JS.format(key=key, block=block, nonce=re.sub(r"[^A-Za-z0-9_]", "_", nonce))
    st.html(body, unsafe_allow_javascript=True, width="content")


def tab_is_open(label: str, default: str = "Ingest") -> bool:
    """True when the tab `label` is the one the user sees."""
    return (st.session_state.get(TAB_KEY) or default) == label


_PATH_IN_LABEL = re.compile(r",\s*/[^)]*")


def short_store_label(description: str) -> str:
    """The store's description without a file-system path (the badge is no place for one)."""
    return _PATH_IN_LABEL.sub("", description)


def model_badge(services: Services) -> None:
    """Which graph store and which model are answering, and how to get a better model."""
    info = services.info
    with st.container(horizontal=True, gap="small"):
        st.badge(
            f"Graph: {short_store_label(services.store.describe())}",
            icon=":material/hub:",
            color="gray",
        )
        if info.provider == "none":
            st.badge("Model: none", icon=":material/block:", color="orange")
        else:
            st.badge(f"Model: {info.label}", icon=":material/smart_toy:", color="blue")
    if info.provider == "none":
        reason = f" ({services.model_status})" if services.model_status else ""
        st.caption(
            f"No language model is configured{reason}: answers list the top facts from the "
            "graph, ranked by a lexical score. Set OPENAI_API_KEY, or OPENAI_BASE_URL for any "
            "OpenAI-compatible server, to get written answers and LLM reranking."
        )
        return
    if info.provider == "embedded":
        st.caption(
            "The embedded model is small and runs on this machine; it finds fewer relations "
            "than a large model. For better answers set OPENAI_API_KEY (OpenAI), or "
            "OPENAI_BASE_URL for vLLM / Ollama / LM Studio (see .env.example), and restart."
        )
