"""Ingest jobs in the UI: live progress, rate, ETA and a cancel button above every tab.

The jobs run in the services' `JobRunner` (storygraph.ingest.jobs), not in the script run: a session
that reruns, or a browser tab that closes, does not stop them. While a job is queued or running,
`live_jobs` is a fragment that refreshes itself every `POLL_S` seconds; when a job of the list
ends it reruns the whole app, so that the documents, the graph and the reports show the result.
With nothing to follow, nothing polls (the app must not compete with the model for the CPU).
"""

from __future__ import annotations

import streamlit as st

from pages.common import md_escape
from storygraph.ingest.jobs import Job, duration, job_rate_text
from storygraph.services import Services

POLL_S = 2.0
SEEN_KEY = "jobs_seen_active"


def progress_text(job: Job) -> str:
    """One line: what the job is doing, its chunks, the rate and the ETA."""
    if job.state == "queued":
        return job.message or "queued"
    if job.stage == "extract" and job.chunks_total:
        saved = f" ({job.chunks_cached} saved before)" if job.chunks_cached else ""
        rate = job_rate_text(job) or "measuring the rate…"
        return f"chunk {job.chunks_done + 1} of {job.chunks_total}{saved} · {rate}"
    if job.stage == "write":
        return "writing to the graph"
    return job.message or job.stage


def fraction(job: Job) -> float:
    if job.stage == "extract" and job.chunks_total:
        return min(1.0, 0.05 + 0.9 * job.chunks_done / job.chunks_total)
    return 0.97 if job.stage == "write" else 0.02


def _cancel(services: Services, job_id: str) -> None:
    services.job_runner().cancel(job_id)


def _show(services: Services, job: Job) -> None:
    with st.container(border=True, key=f"job_{job.id}"):
        left, right = st.columns([6, 1], vertical_alignment="center")
        verb = "Adding" if job.state == "running" else "Queued"
        left.markdown(f":material/hourglass_top: **{verb}: {md_escape(job.name)}**")
        left.progress(fraction(job), text=progress_text(job))
        right.button(
            "Cancel",
            key=f"job_cancel_{job.id}",
            icon=":material/cancel:",
            on_click=_cancel,
            args=(services, job.id),
            help="Stops before the next chunk; nothing is written, and the chunks extracted so "
            "far are saved, so adding the story again resumes from them.",
        )


@st.fragment(run_every=POLL_S)
def live_jobs(services: Services) -> None:
    """The queued and running jobs, refreshed every POLL_S seconds."""
    active = services.job_runner().active()
    seen: set[str] = st.session_state.get(SEEN_KEY, set())
    now = {job.id for job in active}
    st.session_state[SEEN_KEY] = now
    if seen - now:  # a job ended: the documents, the graph and the reports changed
        st.rerun()
    if not active:
        return
    st.caption(
        "Stories are added in the background: you can chat, browse the graph or close this "
        "tab meanwhile. Answers use the graph as it was before; a story's facts appear when "
        f"its ingest finishes. Time left: {total_eta(active)}."
    )
    for job in active:
        _show(services, job)


def total_eta(active: list[Job]) -> str:
    """The running job's ETA ("still measuring" until the model has extracted a chunk)."""
    running = [j for j in active if j.state == "running" and j.eta_s is not None]
    if not running:
        return "still measuring"
    queued = len(active) - 1
    more = f" for the current story, then {queued} more queued" if queued else ""
    return f"{duration(running[0].eta_s or 0)}{more}"


def render_jobs(services: Services) -> None:
    """Above the tabs: live job progress while any job of the data directory is unfinished."""
    active = services.job_runner().active()
    # Always one container here, so that the tabs below keep their place in the page when
    # the job list comes and goes (else the browser briefly holds two sets of tabs).
    with st.container(key="jobs_area"):
        if active or st.session_state.get(SEEN_KEY):
            live_jobs(services)


def chat_notice(services: Services) -> None:
    """In the chat: say that a story is being added and what the answers see meanwhile."""
    active = services.job_runner().active()
    if not active:
        return
    names = ", ".join(job.name for job in active)
    st.info(
        f"A story is being added ({names}). Answers use the graph as it was before; its facts "
        "appear once the ingest finishes.",
        icon=":material/hourglass_top:",
    )
