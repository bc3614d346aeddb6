"""Ingest tab: upload stories, watch each file's progress, read its report, manage documents."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import streamlit as st

import storygraph
from pages.common import flash, guarded, md_escape, show_error, show_flashes, split_hint
from storygraph.estimate import compare, estimate_texts
from storygraph.ingest import Progress
from storygraph.models import IngestReport
from storygraph.services import Services

SAMPLE_FILE = Path(storygraph.__file__).parent / "samples" / "momotaro_kusuyama.txt"
SAMPLE_LABEL = "桃太郎 (楠山正雄, Aozora Bunko)"
REPORTS_KEY = "ingest_reports"
ESTIMATE_KEY = "ingest_estimate"
UPLOADER_KEY = "ingest_uploader_generation"

Upload = tuple[str, bytes]


def progress_fraction(event: Progress) -> float:
    """Where a file's progress bar stands: decode 2%, extraction 5-90% by chunk, write 92%."""
    if event.stage == "decode":
        return 0.02
    if event.stage == "extract":
        return 0.05 + 0.85 * (event.done / event.total if event.total else 1.0)
    if event.stage == "write":
        return 0.92
    return 1.0


def _progress_text(event: Progress) -> str:
    if event.stage == "extract" and event.total:
        if event.done >= event.total:
            return f"extracted {event.total} chunks"
        return f"extracting entities and relations: chunk {event.done + 1} of {event.total}"
    return event.message or event.stage


def ingest_one(services: Services, name: str, data: bytes) -> IngestReport:
    """Ingest one file inside an st.status with a live progress bar; returns its report."""
    with st.status(f"Ingesting {name}", expanded=True) as status:
        bar = st.progress(0.0, text="starting")

        def on_progress(event: Progress) -> None:
            bar.progress(progress_fraction(event), text=_progress_text(event))

        report = services.ingestor().ingest_bytes(name, data, on_progress)
        state = "error" if report.status == "failed" else "complete"
        verb = {"added": "Added", "unchanged": "Already stored", "failed": "Failed"}[report.status]
        status.update(
            label=f"{verb}: {name} ({report.seconds:.1f} s)",
            state=state,
            expanded=report.status == "failed",
        )
    return report


def ingest_files(services: Services, uploads: Sequence[Upload]) -> list[IngestReport]:
    """Ingest files one after the other (each with its own status); the reports, in order."""
    reports: list[IngestReport] = []
    for name, data in uploads:
        with guarded(f"Ingesting {name}"):
            reports.append(ingest_one(services, name, data))
    return reports


def show_report(report: IngestReport, index: int) -> None:
    with st.container(border=True, key=f"ingest_report_{index}"):
        icon = {
            "added": ":material/check_circle:",
            "unchanged": ":material/published_with_changes:",
            "failed": ":material/error:",
        }[report.status]
        st.markdown(f"{icon} **{md_escape(report.document)}** — {report.status}")
        if report.status == "failed":
            message, hint = split_hint(report.message)
            show_error(message, hint)
            return
        if report.status == "unchanged":
            st.caption(report.message)
            return
        cols = st.columns(6)
        cols[0].metric("Chunks", report.chunks)
        cols[1].metric(
            "Entities added / merged", f"{report.entities_added} / {report.entities_merged}"
        )
        cols[2].metric(
            "Relations added / merged", f"{report.relations_added} / {report.relations_merged}"
        )
        cols[3].metric("LLM calls", report.usage.calls)
        cols[4].metric("Tokens", f"{report.usage.total_tokens:,}")
        cols[5].metric("Time", f"{report.seconds:.1f} s")
        if report.chunks_failed:
            st.warning(f"{report.chunks_failed} of {report.chunks} chunks could not be extracted.")
        for warning in report.warnings[:10]:
            st.warning(warning)


def show_estimate(services: Services, uploads: Sequence[Upload]) -> None:
    """The cost / time estimate."""
    with guarded("Estimating the ingest"):
        estimate = estimate_texts(services, list(uploads))
        st.info(str(estimate.get("summary", "")), icon=":material/calculate:")


def _estimate(services: Services, uploads: Sequence[Upload]) -> dict[str, object] | None:
    """The estimate made just before an ingest, to compare with what it cost."""
    try:
        return estimate_texts(services, list(uploads))
    except Exception:  # noqa: BLE001 - the comparison is a bonus; the ingest goes on
        return None


def show_estimate_vs_actual(
    estimate: dict[str, object] | None, reports: list[IngestReport]
) -> None:
    if not estimate or not any(r.status == "added" for r in reports):
        return
    rows = [
        {
            "": key.replace("_", " "),
            "estimated": v["estimated"],
            "actual": v["actual"],
            "actual / estimated": v["ratio"],
        }
        for key, v in compare(estimate, reports).items()
    ]
    with st.expander("Estimated before the ingest vs actual"):
        st.dataframe(rows, hide_index=True)


def _delete(services: Services, document_id: str, name: str) -> None:
    try:
        result = services.store.delete_document(document_id)
    except Exception as exc:  # noqa: BLE001 - shown to the user on the next run
        message, hint = split_hint(str(exc))
        flash("error", f"Could not delete {name}: {message}", hint)
        return
    flash(
        "success",
        f"Deleted {name} ({result['entities_deleted']} entities and "
        f"{result['relations_deleted']} relations no other story supports).",
    )


def show_documents(services: Services) -> None:
    st.subheader("Stored stories")
    with guarded("Listing the stored stories"):
        documents = services.store.list_documents()
        stats = services.store.stats()
        if not documents:
            st.info("No stories yet: upload a file above, or load the sample story.")
            return
        st.caption(
            f"{stats['documents']} documents · {stats['chunks']} chunks · "
            f"{stats['entities']} entities · {stats['relations']} relations"
        )
        for doc in documents:
            with st.container(border=True, key=f"doc_{doc.id}"):
                left, right = st.columns([5, 1], vertical_alignment="center")
                left.markdown(f"**{md_escape(doc.name)}**")
                left.caption(
                    f"{doc.language} · {doc.chars:,} characters · {doc.chunks} chunks · "
                    f"added {doc.uploaded_at} · id {doc.id}"
                    + ("" if doc.status == "ready" else f" · {doc.status}")
                )
                right.button(
                    "Delete",
                    key=f"delete_{doc.id}",
                    icon=":material/delete:",
                    on_click=_delete,
                    args=(services, doc.id, doc.name),
                )


def render(services: Services) -> None:
    st.subheader("Add stories")
    st.caption(
        "Plain-text stories (.txt, .md) in UTF-8 or Shift_JIS; Aozora Bunko files are cleaned "
        "of ruby and notes. Each file is split into chunks and the model extracts characters, "
        "places, things and how they relate. "
        f"Up to {services.settings.max_upload_mb:g} MB per file (STORYGRAPH_MAX_UPLOAD_MB)."
    )
    show_flashes()
    generation = st.session_state.setdefault(UPLOADER_KEY, 0)
    files = st.file_uploader(
        "Story files",
        type=["txt", "md"],
        accept_multiple_files=True,
        key=f"ingest_files_{generation}",
        # The browser then refuses too-big files itself and shows the app's real limit
        # (not Streamlit's 200 MB default); ingest still checks the exact byte limit.
        max_upload_size=max(1, math.ceil(services.settings.max_upload_mb)),
    )
    uploads: list[Upload] = [(f.name, f.getvalue()) for f in files or []]
    if uploads:
        show_estimate(services, uploads)
    if services.info.provider == "none":
        st.warning(
            "No language model is configured, so new stories cannot be extracted. Set "
            "OPENAI_API_KEY or OPENAI_BASE_URL (see .env.example), or run `make model`."
        )
    with st.container(horizontal=True, gap="small"):
        add = st.button(
            f"Add {len(uploads)} file{'s' if len(uploads) != 1 else ''} to the graph",
            type="primary",
            disabled=not uploads,
            key="ingest_add",
            icon=":material/upload:",
        )
        sample = st.button(
            f"Load the sample story: {SAMPLE_LABEL}",
            key="ingest_sample",
            icon=":material/menu_book:",
        )
    batch: list[Upload] = []
    if add:
        batch = uploads
    elif sample:
        batch = [(SAMPLE_FILE.name, SAMPLE_FILE.read_bytes())]
    if batch:
        st.session_state[ESTIMATE_KEY] = _estimate(services, batch)
        st.session_state[REPORTS_KEY] = ingest_files(services, batch)
        if add:  # a fresh, empty uploader: the files are in the graph now (reports stay)
            st.session_state[UPLOADER_KEY] = generation + 1
            st.rerun()
    reports: list[IngestReport] = st.session_state.get(REPORTS_KEY, [])
    if reports:
        st.subheader("Last ingest")
        for index, report in enumerate(reports):
            show_report(report, index)
        show_estimate_vs_actual(st.session_state.get(ESTIMATE_KEY), reports)
    show_documents(services)
