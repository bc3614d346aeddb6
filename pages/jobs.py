"""Ingest jobs in the UI: live progress, rate, ETA and a cancel button above every tab.

The jobs run in the services' `JobRunner` (storygraph.ingest.jobs), not in the script run: a session
that reruns, or a browser tab that closes, does not stop them. While a job is queued or running,
`live_jobs` is a fragment that refreshes itself every `POLL_S` seconds; when a job of the list
ends it reruns the whole app, so that the documents, the graph and the reports show the result.
With nothing to follow, nothing polls (the app must not compete with the model for the CPU).

Streamlit runs a fragment's timer only between the session's script runs: while the chat's run
answers a question (seconds to a minute with a small model), the timer waits. That run therefore
redraws the banner itself (`refresh_banner`, every `POLL_S`) into the slots `live_jobs` left in
`BannerSlots`: the chunk count, rate and ETA move on, and a job that ends is cleared from the
banner at once (the full rerun that shows its result follows when the answer is done).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from pages.common import md_escape
from storygraph.ingest.jobs import WAITING_FOR_LOCK, Job, duration, job_rate_text
from storygraph.services import Services

POLL_S = 2.0
SEEN_KEY = "jobs_seen_active"
SLOTS_KEY = "_jobs_banner_slots"


def progress_text(job: Job) -> str:
    """One line: what the job is doing, its chunks (and chapter, in a text with headings), the
    rate and the ETA."""
    if job.state == "queued":
        return job.message if job.message == WAITING_FOR_LOCK else "starting"
    if job.stage == "extract" and job.chunks_total:
        saved = f" ({job.chunks_cached} saved before)" if job.chunks_cached else ""
        rate = job_rate_text(job) or "measuring the rate…"
        headed = job.chapters and job.chapter
        where = f" · chapter {job.chapter} of {job.chapters}" if headed else ""
        return f"chunk {job.chunks_done + 1} of {job.chunks_total}{saved}{where} · {rate}"
    if job.stage == "write":
        return "writing to the graph"
    return job.message or job.stage


def fraction(job: Job) -> float:
    if job.stage == "extract" and job.chunks_total:
        return min(1.0, 0.05 + 0.9 * job.chunks_done / job.chunks_total)
    return 0.97 if job.stage == "write" else 0.02


def verb(job: Job, ahead: int) -> str:
    """ "Adding" a running job; "Queued" only behind another job (`ahead` of it in this list,
    or another process's, which holds the data directory's lock); else "Starting"."""
    if job.state == "running":
        return "Adding"
    return "Queued" if ahead or job.message == WAITING_FOR_LOCK else "Starting"


def headline(job: Job, ahead: int) -> str:
    return f":material/hourglass_top: **{verb(job, ahead)}: {md_escape(job.name)}**"


@dataclass
class BannerSlots:
    """The places of this run's banner that a long run of the page may redraw."""

    caption: DeltaGenerator
    boxes: dict[str, DeltaGenerator] = field(default_factory=dict)
    """Per job id: the whole job (cleared when the job ends)."""
    lines: dict[str, tuple[DeltaGenerator, DeltaGenerator]] = field(default_factory=dict)
    """Per job id: its headline and its progress bar."""


def _cancel(services: Services, job_id: str) -> None:
    services.job_runner().cancel(job_id)


def _show(services: Services, job: Job, ahead: int, slots: BannerSlots) -> None:
    box = st.empty()
    with box.container(border=True, key=f"job_{job.id}"):
        left, right = st.columns([6, 1], vertical_alignment="center")
        title, bar = left.empty(), left.empty()
        title.markdown(headline(job, ahead))
        bar.progress(fraction(job), text=progress_text(job))
        right.button(
            "Cancel",
            key=f"job_cancel_{job.id}",
            icon=":material/cancel:",
            on_click=_cancel,
            args=(services, job.id),
            help="Stops before the next chunk; nothing is written, and the chunks extracted so "
            "far are saved, so adding the story again resumes from them.",
        )
    slots.boxes[job.id] = box
    slots.lines[job.id] = (title, bar)


def _caption_text(active: list[Job]) -> str:
    return (
        "Stories are added in the background: you can chat, browse the graph or close this "
        "tab meanwhile. Answers use the graph as it was before; a story's facts appear when "
        f"its ingest finishes. Time left: {total_eta(active)}."
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
    slots = BannerSlots(caption=st.empty())
    slots.caption.caption(_caption_text(active))
    for ahead, job in enumerate(active):
        _show(services, job, ahead, slots)
    st.session_state[SLOTS_KEY] = slots


def refresh_banner(services: Services) -> None:
    """Redraw this run's banner from where the jobs are now: called by a long run of the page
    (the chat answering), during which Streamlit holds the fragment's timer back. A job that
    ended is cleared; the Cancel buttons stay as drawn (a widget is drawn once per run)."""
    slots: BannerSlots | None = st.session_state.get(SLOTS_KEY)
    if slots is None or not slots.boxes:
        return
    jobs = {job.id: job for job in services.job_runner().active()}
    shown = [jobs[i] for i in slots.boxes if i in jobs]
    for job_id, box in list(slots.boxes.items()):
        job = jobs.get(job_id)
        if job is None:
            box.empty()
            del slots.boxes[job_id]
            continue
        title, bar = slots.lines[job_id]
        title.markdown(headline(job, shown.index(job)))
        bar.progress(fraction(job), text=progress_text(job))
    if shown:
        slots.caption.caption(_caption_text(shown))
    else:
        slots.caption.empty()


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
    st.session_state.pop(SLOTS_KEY, None)  # slots of an earlier run are no place to draw
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
