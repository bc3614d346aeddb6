"""Ingest tab: upload stories, watch each file's progress, read its report, manage documents."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import streamlit as st

import storygraph
from pages.common import flash, guarded, md_escape, show_error, show_flashes, split_hint
from storygraph.estimate import compare, estimate_texts, file_line, measured_rate
from storygraph.humanize import duration, human_date, plural, tokens_text
from storygraph.ingest.jobs import Job
from storygraph.models import DocumentInfo, IngestReport
from storygraph.services import Services
from storygraph.ui.app_state import IngestRecord, load_last_ingest, save_last_ingest

SAMPLE_FILE = Path(storygraph.__file__).parent / "samples" / "momotaro_kusuyama.txt"
SAMPLE_LABEL = "桃太郎 (楠山正雄, Aozora Bunko)"
FAILED_KEY = "ingest_failed_reports"
JOBS_KEY = "ingest_jobs"
ESTIMATE_KEY = "ingest_estimate"
SAVED_KEY = "ingest_saved_jobs"
UPLOADER_KEY = "ingest_uploader_generation"
CONFIRM_DELETE_KEY = "ingest_confirm_delete"
"""The id of the story whose delete is being confirmed."""

Upload = tuple[str, bytes]


def submit_files(services: Services, uploads: Sequence[Upload]) -> list[str]:
    """Queue the files as ingest jobs and return their ids at once (the runner does the work)."""
    runner = services.job_runner()
    return [runner.submit(name, data).id for name, data in uploads]


def session_jobs(services: Services) -> list[Job]:
    """The jobs this session submitted last, in order (those still on record)."""
    runner = services.job_runner()
    found = [runner.load(job_id) for job_id in st.session_state.get(JOBS_KEY, [])]
    return [job for job in found if job is not None]


def job_report(job: Job) -> IngestReport:
    """The job's ingest report; a job that ended before the ingest started gets one saying why."""
    report = job.ingest_report()
    if report is None:
        status = "cancelled" if job.state == "cancelled" else "failed"
        report = IngestReport(document=job.name, status=status, message=job.message)
    return report


def show_report(report: IngestReport, index: int) -> None:
    with st.container(border=True, key=f"ingest_report_{index}"):
        icon = {
            "added": ":material/check_circle:",
            "unchanged": ":material/published_with_changes:",
            "failed": ":material/error:",
            "cancelled": ":material/cancel:",
        }[report.status]
        st.markdown(f"{icon} **{md_escape(report.document)}** — {report.status}")
        if report.status == "cancelled":
            st.caption(report.message)
            return
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
        cols[4].metric("Tokens", tokens_text(report.usage))
        cols[5].metric("Time", duration(report.seconds))
        if report.chunks_cached:
            st.caption(
                f"{report.chunks_cached} of {report.chunks} chunks came from saved extractions "
                f"(no model call); {report.chunks_extracted} were extracted now."
            )
        for warning in report.warnings[:10]:
            st.warning(warning)


def estimate(services: Services, uploads: Sequence[Upload]) -> dict[str, object] | None:
    """The estimate of ingesting `uploads`, timed with this model's measured rate if known."""
    with guarded("Estimating the ingest"):
        return estimate_texts(services, list(uploads), measured_rate(services))
    return None


def valid_uploads(uploads: Sequence[Upload], estimated: dict[str, object] | None) -> list[Upload]:
    """The uploads that can be ingested; each refused one gets its error shown."""
    if estimated is None:
        return list(uploads)
    files: list[dict[str, object]] = estimated["files"]  # type: ignore[assignment]
    refused = {str(f["name"]): str(f["message"]) for f in files if f["status"] == "error"}
    for name, message in refused.items():
        text, hint = split_hint(message)
        show_error(f"{name} cannot be added: {text}", hint)
    return [(name, data) for name, data in uploads if name not in refused]


def show_estimate(estimated: dict[str, object] | None) -> None:
    """With model calls, the whole summary (a line per file, the total, the basis); without
    (the parser, or nothing new), a caption per file that can be added (the refused ones have
    their error above)."""
    if estimated and estimated.get("calls"):
        st.info(str(estimated.get("summary", "")), icon=":material/calculate:")
    elif estimated:
        files: list[dict[str, object]] = estimated["files"]  # type: ignore[assignment]
        for f in files:
            if f["status"] != "error":
                st.caption(file_line(f))


def show_estimate_vs_actual(
    estimate: dict[str, object] | None, reports: list[IngestReport]
) -> None:
    if not estimate or not any(r.status == "added" for r in reports):
        return

    def shown(key: str, value: object) -> str:
        if value is None:
            return "–"
        if key == "seconds":
            return duration(float(value))  # type: ignore[arg-type]
        return f"{value:,}" if isinstance(value, int | float) else str(value)

    rows = [
        {
            "": key.replace("_", " "),
            "estimated": shown(key, v["estimated"]),
            "actual": shown(key, v["actual"]),
            "actual / estimated": shown("ratio", v["ratio"]),
        }
        for key, v in compare(estimate, reports).items()
    ]
    with st.expander("Estimated before the ingest vs actual"):
        st.dataframe(rows, hide_index=True)


def _ask_delete(document_id: str) -> None:
    st.session_state[CONFIRM_DELETE_KEY] = document_id


def _cancel_delete() -> None:
    st.session_state.pop(CONFIRM_DELETE_KEY, None)


def _delete(services: Services, document_id: str, name: str) -> None:
    st.session_state.pop(CONFIRM_DELETE_KEY, None)
    try:
        services.store.delete_document_undoably(document_id)
    except Exception as exc:  # noqa: BLE001 - shown to the user on the next run
        message, hint = split_hint(str(exc))
        flash("error", f"Could not delete {name}: {message}", hint)


def _undo_delete(services: Services, document_id: str, name: str) -> None:
    try:
        story = services.store.undo_delete(document_id)
    except Exception as exc:  # noqa: BLE001 - shown to the user on the next run
        message, hint = split_hint(str(exc))
        flash("error", f"Could not restore {name}: {message}", hint)
        return
    flash(
        "success",
        f"Restored {story.name}: its {plural(story.chunks, 'chunk')}, entities, relations and "
        "sources are back, and questions can use them again.",
    )


def removal_text(chunks: int, entities: int, relations: int) -> str:
    """What a delete removes, in words ("3 chunks, 4 entities and 2 relations")."""
    return (
        f"{plural(chunks, 'chunk')}, {plural(entities, 'entity')} and "
        f"{plural(relations, 'relation')}"
    )


def show_confirm_delete(services: Services, doc: DocumentInfo) -> None:
    """The confirmation of a delete: the story's name and what will go with it."""
    preview = services.store.removal_preview(doc.id)
    if preview is None:
        _cancel_delete()
        st.info(f"{md_escape(doc.name)} is already deleted.")
        return
    what = removal_text(preview.chunks, preview.entities, preview.relations)
    st.warning(
        f"Delete **{md_escape(preview.name)}**? This removes its {what} that no other story "
        "supports. You can undo it until the next story is added.",
        icon=":material/delete:",
    )
    with st.container(horizontal=True, gap="small"):
        st.button(
            f"Delete {preview.name}",
            key=f"delete_confirm_{doc.id}",
            type="primary",
            icon=":material/delete_forever:",
            on_click=_delete,
            args=(services, doc.id, preview.name),
        )
        st.button("Cancel", key=f"delete_cancel_{doc.id}", on_click=_cancel_delete)


def show_removed(services: Services) -> None:
    """Deleted stories that can be restored: what each delete removed, with its undo."""
    for story in services.store.removed_stories():
        with st.container(border=True, key=f"removed_{story.document_id}"):
            what = removal_text(story.chunks, story.entities_deleted, story.relations_deleted)
            st.success(
                f"Deleted **{md_escape(story.name)}** {human_date(story.deleted_at)}: removed "
                f"its {what} that no other story supported.",
                icon=":material/delete:",
            )
            left, right = st.columns([5, 1], vertical_alignment="center")
            left.caption("It can be restored until the next story is added.")
            right.button(
                "Undo",
                key=f"undo_delete_{story.document_id}",
                icon=":material/undo:",
                on_click=_undo_delete,
                args=(services, story.document_id, story.name),
            )


def show_documents(services: Services) -> None:
    st.subheader("Stored stories")
    with guarded("Listing the deleted stories"):  # a broken copy must not hide the list
        show_removed(services)
    with guarded("Listing the stored stories"):
        documents = services.store.list_documents()
        stats = services.store.stats()
        if not documents:
            st.info("No stories yet: upload a file above, or load the sample story.")
            return
        st.caption(
            f"{plural(stats['documents'], 'document')} · {plural(stats['chunks'], 'chunk')} · "
            f"{plural(stats['entities'], 'entity')} · {plural(stats['relations'], 'relation')}"
        )
        confirming = st.session_state.get(CONFIRM_DELETE_KEY)
        for doc in documents:
            with st.container(border=True, key=f"doc_{doc.id}"):
                left, right = st.columns([5, 1], vertical_alignment="center")
                left.markdown(f"**{md_escape(doc.name)}**")
                left.caption(
                    f"{doc.language} · {plural(doc.chars, 'character')} · "
                    f"{plural(doc.chunks, 'chunk')} · added {human_date(doc.uploaded_at)}"
                    + ("" if doc.status == "ready" else f" · {doc.status}")
                )
                right.button(
                    "Delete",
                    key=f"delete_{doc.id}",
                    icon=":material/delete:",
                    on_click=_ask_delete,
                    args=(doc.id,),
                    disabled=confirming == doc.id,
                )
                if confirming == doc.id:
                    show_confirm_delete(services, doc)


def _last_ingest(services: Services) -> IngestRecord | None:
    record, warning = load_last_ingest(services.settings.data_dir)
    if warning:
        st.warning(f"The last ingest report could not be read: {warning}")
    return record


def _remember(
    services: Services, reports: list[IngestReport], estimated: dict[str, object] | None
) -> None:
    """Keep the batch as the last ingest (on disk) unless every file failed: then the failures
    are shown this once and the last successful report stays."""
    try:
        saved = save_last_ingest(services.settings.data_dir, reports, estimated)
    except OSError as exc:
        flash("warning", f"The ingest report could not be saved: {exc}")
        saved = False
    st.session_state[FAILED_KEY] = [] if saved else [r for r in reports if r.status == "failed"]


def _sample_estimate(services: Services) -> dict[str, object] | None:
    return estimate(services, [(SAMPLE_FILE.name, SAMPLE_FILE.read_bytes())])


def _show_sample_estimate(estimated: dict[str, object] | None) -> None:
    if not estimated:
        return
    first = str(estimated.get("summary", "")).splitlines()[0]
    what = first.split(": ", 1)[1] if ": " in first else first
    st.caption(f"The sample story: {what}.")


def cannot_extract(services: Services) -> bool:
    """New stories cannot be read into facts: the model is asked for (STORYGRAPH_EXTRACTOR=
    model) and there is none. With `auto` (the default) a story without a capable model is read
    by the parser, and an embedded model still installing or starting is picked up when it is
    ready (the page's status above says so): the warning then was untrue
    (docs/ISSUES.md#status-phases)."""
    no_model = services.info.provider == "none" and not services.model_pending
    return no_model and services.settings.extractor == "model"


def render(services: Services) -> None:
    st.subheader("Add stories")
    st.caption(
        "Plain-text stories (.txt, .md) in UTF-8, UTF-16, Shift_JIS or EUC-JP; Aozora Bunko "
        "files are cleaned of ruby and notes. Each file is split into chunks and the model "
        "extracts characters, places, things and how they relate. "
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
    upload_estimate = estimate(services, uploads) if uploads else None
    ready = valid_uploads(uploads, upload_estimate)
    if ready:
        show_estimate(upload_estimate)
    if cannot_extract(services):
        st.warning(
            "STORYGRAPH_EXTRACTOR=model asks a language model to read new stories, and none "
            "is configured, so they cannot be extracted. Set OPENAI_API_KEY or OPENAI_BASE_URL "
            "(see .env.example), run `make model`, or set STORYGRAPH_EXTRACTOR=auto to read them "
            "with the parser."
        )
    with st.container(horizontal=True, gap="small"):
        add = st.button(
            f"Add {plural(len(ready), 'file')} to the graph",
            type="primary",
            disabled=not ready,
            key="ingest_add",
            icon=":material/upload:",
        )
        sample = st.button(
            f"Load the sample story: {SAMPLE_LABEL}",
            key="ingest_sample",
            icon=":material/menu_book:",
        )
    sample_estimate = _sample_estimate(services)
    _show_sample_estimate(sample_estimate)
    batch: list[Upload] = []
    batch_estimate: dict[str, object] | None = None
    if add:
        batch, batch_estimate = ready, upload_estimate
    elif sample:
        batch = [(SAMPLE_FILE.name, SAMPLE_FILE.read_bytes())]
        batch_estimate = sample_estimate
    if batch:
        with guarded("Queueing the ingest"):
            st.session_state[ESTIMATE_KEY] = batch_estimate
            st.session_state[JOBS_KEY] = submit_files(services, batch)
            flash(
                "info",
                f"Queued {plural(len(batch), 'file')}: the ingest runs in the background "
                "(progress above). You can chat and browse meanwhile.",
            )
            if add:  # a fresh, empty uploader: the files are queued now
                st.session_state[UPLOADER_KEY] = generation + 1
            st.rerun()  # the job list above the tabs follows the new jobs
    show_last_ingest(services)
    show_documents(services)


def show_last_ingest(services: Services) -> None:
    """This session's jobs while they run; once they all ended, their reports become the last
    ingest on disk (unless every file failed: then the failures show this once and the last
    successful report stays), which is what is shown after a reload or a restart."""
    jobs = session_jobs(services)
    running = [job for job in jobs if job.active]
    for job in running:
        st.caption(f"{md_escape(job.name)}: {job.state}, see the progress above.")
    ids = [job.id for job in jobs]
    if jobs and not running and st.session_state.get(SAVED_KEY) != ids:
        _remember(services, [job_report(job) for job in jobs], st.session_state.get(ESTIMATE_KEY))
        st.session_state[SAVED_KEY] = ids
    failed: list[IngestReport] = st.session_state.get(FAILED_KEY, [])
    if failed:
        st.subheader("This upload failed")
        for index, report in enumerate(failed):
            show_report(report, 100 + index)
    record = _last_ingest(services)
    if record is not None and record.reports:
        st.subheader("Last ingest")
        st.caption(f"Finished {human_date(record.finished_at)}.")
        for index, report in enumerate(record.reports):
            show_report(report, index)
        show_estimate_vs_actual(record.estimate, record.reports)
