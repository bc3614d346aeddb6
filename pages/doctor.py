"""Doctor tab: is the model usable, and why would the graph be empty? (`storygraph doctor`)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from pages.common import guarded, md_escape
from storygraph.crashes import HELPER_NAMES, clear_all
from storygraph.doctor import LOG_TAIL_MARK, DoctorReport, run_doctor
from storygraph.ingest.extraction_cache import cache_stats, clear_cache
from storygraph.services import Services

REPORT_KEY = "doctor_report"
CLEARED_KEY = "doctor_cache_cleared"
ICONS = {
    "ok": ":material/check_circle:",
    "warn": ":material/warning:",
    "fail": ":material/error:",
    "skip": ":material/remove_circle_outline:",
}


def _run(services: Services) -> DoctorReport:
    return run_doctor(services.settings, llm=services.llm(), info=services.info)


def _clear_cache(services: Services) -> None:
    removed = clear_cache(Path(services.settings.data_dir))
    st.session_state[CLEARED_KEY] = (
        f"Cleared {removed.entries} saved chunk extractions: the next ingest asks the model for "
        "every chunk again."
    )


def show_cache(services: Services) -> None:
    """The saved chunk extractions, and a button that clears them (`storygraph cache clear`)."""
    st.subheader("Saved extractions")
    cleared = st.session_state.pop(CLEARED_KEY, None)
    if cleared:
        st.success(cleared, icon=":material/delete_sweep:")
    stats = cache_stats(Path(services.settings.data_dir))
    st.caption(
        f"{stats.entries} chunk extractions saved ({stats.bytes / 1024:.0f} KiB). Each chunk the "
        "model extracts is saved at once, keyed by its text, the model and the extractor, so an "
        "interrupted ingest resumes without asking the model again and a story added again "
        "costs no model call. Clear them after changing how the model is served (same name, "
        "different weights), or to measure a fresh ingest. The same as "
        "`python -m storygraph cache clear`."
    )
    st.button(
        "Clear the saved extractions",
        key="doctor_cache_clear",
        icon=":material/delete_sweep:",
        disabled=stats.entries == 0,
        on_click=_clear_cache,
        args=(services,),
    )


def render(services: Services) -> None:
    show_checks(services)
    with guarded("Reading the saved extractions"):
        show_cache(services)


def show_checks(services: Services) -> None:
    st.subheader("Doctor")
    st.caption(
        "Checks the Japanese readings, the sentence embeddings (without them questions match "
        "names by spelling and sentences by words only), the graph store and the model: "
        "reachable, tool calling, context size, no thinking mode, and a trial extraction on one "
        "paragraph that says why a graph would come out empty. The same as "
        "`python -m storygraph doctor`."
    )
    if st.button("Run the checks", key="doctor_run", icon=":material/stethoscope:"):
        with guarded("The doctor"), st.spinner("Checking… (a trial extraction can take a minute)"):
            st.session_state[REPORT_KEY] = _run(services)
    report: DoctorReport | None = st.session_state.get(REPORT_KEY)
    if report is None:
        return
    warnings = [c.name for c in report.checks if c.status == "warn"]
    if report.healthy and warnings:
        st.warning(
            f"Works, with warnings ({', '.join(warnings)}): {report.model}",
            icon=":material/warning:",
        )
    elif report.healthy:
        st.success(f"Healthy: {report.model}", icon=":material/check_circle:")
    else:
        st.error(f"Not healthy: {report.model}", icon=":material/error:")
    for check in report.checks:
        detail, _, log_tail = check.detail.partition(LOG_TAIL_MARK)
        line = f"{ICONS.get(check.status, '')} **{md_escape(check.name)}**: {md_escape(detail)}"
        st.markdown(line)
        if log_tail:
            st.code(log_tail, language=None)
        if check.fix and check.status in ("warn", "fail"):
            st.caption(f"What to do: {check.fix}")
    if any(check.name.endswith(" crashes") for check in report.checks):
        st.button(
            "Let the crashed helpers start again",
            key="doctor_clear_crashes",
            icon=":material/restart_alt:",
            help="After the fix: the same as `python -m storygraph doctor --clear-crashes`.",
            on_click=_clear_crashes,
            args=(services,),
        )


def _clear_crashes(services: Services) -> None:
    cleared = clear_all(services.settings.data_dir)
    st.session_state.pop(REPORT_KEY, None)
    names = ", ".join(HELPER_NAMES[h] for h in cleared) or "none"
    st.session_state[CLEARED_KEY] = f"Crashes forgotten ({names}): the next use starts them again."
