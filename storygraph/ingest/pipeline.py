"""Ingestion: bytes in, a committed document with provenance out (or nothing at all).

decode → strip Aozora markup → detect language → content hash (idempotency) → chunk →
extract every chunk (the slow, failure-prone part, all in memory; each chunk's extraction saved
to the extraction cache as soon as it is made, so no model call is ever repeated) → merge → one
write batch. The graph changes only at that last write: a cancelled or crashed ingest leaves it
as it was.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from storygraph.errors import InputError, StoryGraphError
from storygraph.humanize import plural
from storygraph.ingest.extraction_cache import ExtractionCache
from storygraph.ingest.extractor_protocol import DocumentReader, Extractor
from storygraph.ingest.merge import build_plan
from storygraph.llm.usage import UsageCounter
from storygraph.models import Chunk, ChunkExtraction, DocumentInfo, IngestReport
from storygraph.store import GraphStore
from storygraph.store.change_log import document_change
from storygraph.text.aozora import heading_titles, is_aozora, strip_aozora
from storygraph.text.chapters import Chapter, chapters
from storygraph.text.chunking import chunk_text
from storygraph.text.decode import decode_bytes
from storygraph.text.language import detect_language


@dataclass(frozen=True)
class Progress:
    """One progress event: `stage` is decode / extract / write / done.

    During extraction, `cached` and `extracted` count the chunks done so far that came from
    the extraction cache and from the model.
    """

    document: str
    stage: str
    done: int
    total: int
    message: str = ""
    cached: int = 0
    extracted: int = 0
    chapter: int = 0
    """During extraction, the chapter of the chunk being read (0: before any heading, or a text
    without chapters)."""
    chapters: int = 0
    """The text's chapters with a heading (storygraph.text.chapters); 0 for a text with none."""


ProgressFn = Callable[[Progress], None]
ReportFn = Callable[[IngestReport], None]
StopFn = Callable[[], bool]


def _no_progress(_: Progress) -> None:
    return None


def _never() -> bool:
    return False


class IngestCancelled(Exception):
    """Raised between chunks when the ingest was asked to stop; nothing was written."""


@dataclass(frozen=True)
class PreparedText:
    name: str
    text: str
    language: str
    sha256: str
    encoding: str
    aozora: bool
    chapters: tuple[Chapter, ...] = ()
    """Its chapters (storygraph.text.chapters), read before the Aozora notes were stripped."""

    @property
    def document_id(self) -> str:
        return self.sha256[:16]


def prepare(name: str, data: bytes, *, max_bytes: int) -> PreparedText:
    """Decode and clean an upload; raises InputError with a clear message when unusable."""
    if len(data) > max_bytes:
        raise InputError(
            f"{name} is {len(data) / 1_048_576:.1f} MB; the upload limit is "
            f"{max_bytes / 1_048_576:.1f} MB.",
            "Split the file, or raise STORYGRAPH_MAX_UPLOAD_MB.",
        )
    decoded = decode_bytes(data, name)
    text = decoded.text
    aozora = is_aozora(text)
    marked: tuple[str, ...] = ()
    if aozora:
        marked = heading_titles(text)  # the heading notes go with the stripping
        text = strip_aozora(text)
    text = text.strip()
    if not text:
        raise InputError(f"{name} has no story text left after cleaning.", "Upload a text file.")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return PreparedText(
        name,
        text,
        detect_language(text),
        digest,
        decoded.encoding,
        aozora,
        tuple(chapters(text, marked)),
    )


class Ingestor:
    """Ingests documents into a GraphStore with an Extractor."""

    def __init__(
        self,
        store: GraphStore,
        extractor: Extractor,
        *,
        chunk_size: int,
        chunk_overlap: int,
        max_bytes: int,
        secrets: Sequence[str] = (),
        on_report: ReportFn | None = None,
        cache: ExtractionCache | None = None,
    ) -> None:
        """`on_report` sees every finished report (Services records the measured speed)."""
        self.store = store
        self.on_report = on_report
        self.secrets = [s for s in secrets if len(s) >= 4]
        self.extractor = extractor
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.max_bytes = max_bytes
        self.cache = cache

    def chunks_for(self, prepared: PreparedText) -> list[Chunk]:
        return chunk_text(
            prepared.text,
            prepared.document_id,
            self.chunk_size,
            self.chunk_overlap,
            prepared.chapters,
        )

    def redact(self, text: str) -> str:
        """`text` with every configured secret (API keys, passwords) masked."""
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text

    def ingest_bytes(
        self,
        name: str,
        data: bytes,
        progress: ProgressFn = _no_progress,
        *,
        should_stop: StopFn = _never,
    ) -> IngestReport:
        """Ingest one file. Never raises for bad input or model faults: the report says why.

        `should_stop` is asked before each chunk; when it says yes the ingest ends as
        "cancelled" with nothing written (the chunks extracted so far stay in the cache).
        """
        started = time.perf_counter()
        report = IngestReport(document=name, extractor=self.extractor.name)
        counter = UsageCounter()
        try:
            progress(Progress(name, "decode", 0, 1, "decoding"))
            prepared = prepare(name, data, max_bytes=self.max_bytes)
            report.document_id = prepared.document_id
            existing = self.store.find_document_by_sha(prepared.sha256)
            if existing and existing.get("status") == "ready":
                report.status = "unchanged"
                report.message = f"already stored as {existing.get('name')}; nothing changed"
                progress(Progress(name, "done", 1, 1, report.message))
                return report
            chunks = self.chunks_for(prepared)
            report.chunks = len(chunks)
            if isinstance(self.extractor, DocumentReader):
                self.extractor.begin_document(prepared.text, prepared.language)
            extractions = self._extract_all(
                name, prepared, chunks, counter, progress, should_stop, report
            )
            report.untyped_dropped = sum(e.untyped for e in extractions)
            progress(Progress(name, "write", 0, 1, "merging and writing"))
            self._write(prepared, chunks, extractions, report)
            if report.entities_added + report.entities_merged == 0:
                report.warnings.append(
                    "The model extracted nothing from this text: run `python -m storygraph "
                    "doctor` to see why."
                )
            progress(Progress(name, "done", 1, 1, "stored"))
        except IngestCancelled:
            report.status = "cancelled"
            report.message = (
                f"cancelled after {report.chunks_cached + report.chunks_extracted} of "
                f"{report.chunks} chunks; nothing was written. The extracted chunks are saved: "
                "adding the story again resumes from them."
            )
            progress(Progress(name, "done", 1, 1, report.message))
        except StoryGraphError as exc:
            report.status = "failed"
            # A model server may echo the key it was sent: never pass it on to the user.
            report.message = self.redact(str(exc))
            progress(Progress(name, "done", 1, 1, report.message))
        finally:
            report.warnings = [self.redact(w) for w in report.warnings]
            report.usage = counter.snapshot()
            report.seconds = time.perf_counter() - started
        if self.on_report is not None:
            try:
                self.on_report(report)
            except OSError as exc:  # the data directory is not writable: say so, keep the report
                report.warnings.append(f"the measured model speed was not saved: {exc}")
        return report

    def _extract_all(
        self,
        name: str,
        prepared: PreparedText,
        chunks: list[Chunk],
        counter: UsageCounter,
        progress: ProgressFn,
        should_stop: StopFn,
        report: IngestReport,
    ) -> list[ChunkExtraction]:
        """Every chunk's extraction: from the cache when saved, else from the model (and saved)."""
        results: list[ChunkExtraction] = []
        total = len(chunks)
        headed = sum(1 for c in prepared.chapters if c.index > 0)
        for i, chunk in enumerate(chunks):
            if should_stop():
                raise IngestCancelled
            where = f", chapter {chunk.chapter} of {headed}" if headed and chunk.chapter else ""
            progress(
                Progress(
                    name,
                    "extract",
                    i,
                    total,
                    f"chunk {i + 1} of {total}{where}",
                    report.chunks_cached,
                    report.chunks_extracted,
                    chunk.chapter,
                    headed,
                )
            )
            saved = self.cache.get(chunk, prepared.language) if self.cache else None
            if saved is not None:
                results.append(saved)
                report.chunks_cached += 1
                continue
            extraction = self.extractor.extract(chunk, prepared.language, [counter])
            if self.cache is not None:
                self.cache.put(chunk, prepared.language, extraction)
            results.append(extraction)
            report.chunks_extracted += 1
        progress(
            Progress(
                name,
                "extract",
                total,
                total,
                "extracted",
                report.chunks_cached,
                report.chunks_extracted,
                headed,
                headed,
            )
        )
        return results

    def _write(
        self,
        prepared: PreparedText,
        chunks: list[Chunk],
        extractions: list[ChunkExtraction],
        report: IngestReport,
    ) -> None:
        doc = DocumentInfo(
            id=prepared.document_id,
            name=prepared.name,
            sha256=prepared.sha256,
            language=prepared.language,
            chars=len(prepared.text),
        )
        # the "stored meanwhile?" check and the write, as one, changing this document's names
        with self.store.writing(document_change(prepared.document_id)):
            existing = self.store.find_document_by_sha(prepared.sha256)
            if existing and existing.get("status") == "ready":
                report.status = "unchanged"
                report.message = "stored meanwhile by another session; nothing changed"
                return
            if existing:  # a pending leftover of a crashed ingest of the same text
                self.store.delete_document(prepared.document_id)
            plan = build_plan(extractions, self.store.entity_candidates)
            report.warnings.extend(plan.dropped[:20])
            report.entities_unlinked = len(plan.unlinked)
            try:
                counts = self.store.write_document(doc, chunks, plan)
            except Exception:
                # Leave the graph as it was: remove whatever part of the batch landed.
                # If the store is down, cleanup_pending() removes the rest on the next start.
                with contextlib.suppress(StoryGraphError):
                    self.store.delete_document(doc.id)
                raise
        report.entities_added = counts.entities_added
        report.entities_merged = counts.entities_merged
        report.relations_added = counts.relations_added
        report.relations_merged = counts.relations_merged
        saved = report.chunks_cached
        resumed = f" ({saved} from saved extractions)" if saved else ""
        unlinked = report.entities_unlinked
        left_out = f"; {plural(unlinked, 'name')} in no fact left out" if unlinked else ""
        report.message = (
            f"{plural(report.chunks, 'chunk')}{resumed}, "
            f"{plural(counts.entities_added, 'entity')} added, {counts.entities_merged} merged, "
            f"{plural(counts.relations_added, 'relation')} added, {counts.relations_merged} merged"
            f"{left_out}"
        )
