"""Doctor tab: is the model usable, and why would the graph be empty? (`storygraph doctor`)."""

from __future__ import annotations

import streamlit as st

from pages.common import guarded, md_escape
from storygraph.doctor import DoctorReport, run_doctor
from storygraph.services import Services

REPORT_KEY = "doctor_report"
ICONS = {
    "ok": ":material/check_circle:",
    "warn": ":material/warning:",
    "fail": ":material/error:",
    "skip": ":material/remove_circle_outline:",
}


def _run(services: Services) -> DoctorReport:
    return run_doctor(services.settings, llm=services.llm(), info=services.info)


def render(services: Services) -> None:
    st.subheader("Doctor")
    st.caption(
        "Checks the graph store and the model: reachable, tool calling, context size, no "
        "thinking mode, and a trial extraction on one paragraph that says why a graph would "
        "come out empty. The same as `python -m storygraph doctor`."
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
        line = (
            f"{ICONS.get(check.status, '')} **{md_escape(check.name)}**: {md_escape(check.detail)}"
        )
        st.markdown(line)
        if check.fix and check.status in ("warn", "fail"):
            st.caption(f"What to do: {check.fix}")
