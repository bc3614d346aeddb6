"""The composition root: builds the store and the model once and hands them to the rest.

Nothing else constructs clients. The Streamlit app caches one `Services` per process
(`st.cache_resource`); the CLI builds one per command; tests build them with a scripted model.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from storygraph.errors import (
    ConfigError,
    ModelError,
    ModelServerCrashed,
    StoreError,
    StoryGraphError,
)
from storygraph.llm.factory import ModelInfo, build_chat_model, model_info
from storygraph.models import Chunk, ChunkExtraction, DocumentInfo, IngestReport
from storygraph.settings import Settings
from storygraph.store import GraphStore
from storygraph.store.entity_keys import split_legacy_entities
from storygraph.store.removals import removed_dir

# The parts are imported where they are built, not here: a command that only reads the store
# (`stats`, `docs`) imports no parser, no LangChain transformer and no question path
# (docs/ISSUES.md#startup-imports; tests/integration/test_startup_imports.py).
if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from storygraph.ingest.extractor_protocol import Extractor
    from storygraph.ingest.frames import ProposedFact
    from storygraph.ingest.jobs import JobRunner
    from storygraph.ingest.pipeline import Ingestor
    from storygraph.qa.pipeline.engine import QAEngine
    from storygraph.qa.question.question_structure import QuestionStructure

log = logging.getLogger(__name__)

EmbeddedStarter = Callable[[Settings], tuple[Any, str]]
"""Starts (or reuses) the embedded model server: `(server, "")`, or `(None, why not)` while the
model is not installed. `build_services` keeps calling it until the model is there."""


class NoModelExtractor:
    """Stands in when no model is configured: ingest explains what to do instead."""

    name = "none"
    version = "0"

    def __init__(self, why: str) -> None:
        self.why = why

    def extract(self, chunk: Chunk, language: str, callbacks: list[Any]) -> ChunkExtraction:
        raise ModelError(
            f"Ingest needs a language model, and none is available: {self.why}",
            "Run `make model` for the embedded model, or set OPENAI_API_KEY / OPENAI_BASE_URL "
            "(see .env.example). Graph import (`python -m storygraph graph import`) works "
            "without one.",
        )


def read_ahead_languages(documents: list[DocumentInfo]) -> list[str]:
    """The answer prompts to read ahead, in order: first the language most stored stories are
    in (Japanese, the app's first language, when there are none or as many of each), the
    likelier first question; then the other, which the model server keeps aside
    (storygraph.llm.prefix_states) for a question in that language."""
    english = sum(d.language == "en" for d in documents)
    return ["en", "ja"] if english * 2 > len(documents) else ["ja", "en"]


def secret_values(settings: Settings) -> list[str]:
    """The configured secrets, so that messages can mask them."""
    found = [settings.neo4j_password, settings.openai_api_key, settings.azure_openai_api_key]
    return [s.get_secret_value() for s in found if s is not None and s.get_secret_value()]


def _graph_label(settings: Settings) -> str:
    """The graph's name in the data directory's per-graph folders (deleted stories)."""
    return f"neo4j-{settings.neo4j_database}" if settings.uses_neo4j else settings.graph_name


def open_store(settings: Settings, *, keep_store_s: float = 0.0) -> GraphStore:
    """The configured graph store, schema ensured and crashed ingests cleaned up. An embedded
    store's server started here outlives the process for `keep_store_s` seconds without use
    (the CLI's STORYGRAPH_STORE_IDLE_S; storygraph.store.falkordb_server); 0 stops it at close.

    Cleanup runs under the data directory's write lock (inside `cleanup_pending`), so opening a
    store while another process is writing a document never deletes that document."""
    if settings.uses_neo4j:
        from storygraph.store.neo4j_runner import Neo4jRunner

        runner: Any = Neo4jRunner(
            settings.neo4j_uri or "",
            settings.neo4j_username,
            settings.neo4j_password.get_secret_value(),
            settings.neo4j_database,
        )
    else:
        from storygraph.store.falkordb_runner import FalkorDBRunner
        from storygraph.store.falkordb_server import EmbeddedFalkorDB

        server = EmbeddedFalkorDB(Path(settings.data_dir), keep_alive_s=keep_store_s)
        runner = FalkorDBRunner(server, settings.graph_name)
    store = GraphStore(
        runner,
        lock_dir=Path(settings.data_dir),
        removed_dir=removed_dir(Path(settings.data_dir), _graph_label(settings)),
    )
    store.ensure_schema()
    split_legacy_entities(store)  # once: a store of the old shape gets per-story entities
    cleaned = store.cleanup_pending()
    if cleaned:
        log.warning(
            "removed %d half-written document(s) left by an interrupted ingest", len(cleaned)
        )
    return store


@dataclass
class Services:
    """Everything the app and the CLI need, built once."""

    settings: Settings
    store: GraphStore
    info: ModelInfo
    model_status: str = ""
    llm_override: BaseChatModel | None = None
    extractor_override: Extractor | None = None
    _llm: BaseChatModel | None = None
    _llm_url: str | None = None
    _embedded: Any = None
    info_given: bool = True
    """False when `info` was made up for an injected model (see `model_identity`)."""
    _identity_of: tuple[Any, str] = (None, "")
    _jobs: JobRunner | None = None
    _jobs_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    warnings: list[str] = field(default_factory=list)
    _embedded_pending: EmbeddedStarter | None = None
    model_check_interval_s: float = 2.0
    _next_model_check: float = 0.0
    _model_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _warm_wanted: bool = False
    warm_thread: threading.Thread | None = None
    """The last read-ahead of the answer prompt (`keep_answers_warm`), for tests to join."""

    # --- the model ---------------------------------------------------------------------------
    @property
    def model_pending(self) -> bool:
        """The embedded model is configured but not installed yet: no-LLM mode until it is."""
        return self._embedded_pending is not None

    def refresh_model(self) -> bool:
        """Pick the embedded model up once its install has finished: start its server and leave
        no-LLM mode, without a restart. True when that happened in this call. Looks at most
        every `model_check_interval_s` (a few stats each time)."""
        if self._embedded_pending is None or time.monotonic() < self._next_model_check:
            return False
        with self._model_lock:
            starter = self._embedded_pending
            if starter is None:
                return False
            self._next_model_check = time.monotonic() + self.model_check_interval_s
            try:
                server, why = starter(self.settings)
            except (ConfigError, ModelError) as exc:  # installed but cannot start: say so once
                self._embedded_pending = None
                self._set_model_status(str(exc))
                return False
            if server is None:
                self._set_model_status(why)
                return False
            self._embedded, self._embedded_pending = server, None
            self.info = model_info(self.settings)
            self._set_model_status("")
            log.info("the embedded model is installed now: using it from here on")
        if self._warm_wanted:
            self._start_warming()
        return True

    def keep_answers_warm(self) -> None:
        """Have the embedded model read the answer prompt's fixed part (instructions, worked
        examples) for each language in the background, now if its server is up, else once it
        is: the first question then waits ~4 s instead of ~12 s (docs/ISSUES.md#prompt-prefix), and
        the first in the other language restores its part instead of reading it (same entry). The
        app asks for it; the CLI answers one question and would gain nothing."""
        self._warm_wanted = True
        if self._embedded is not None and self.llm_override is None:
            self._start_warming()

    def _start_warming(self) -> None:
        self.warm_thread = threading.Thread(
            target=self._warm, name="answer-read-ahead", daemon=True
        )
        self.warm_thread.start()

    def _warm(self) -> None:
        from storygraph.ingest.llm_extraction import MODEL_CALL_ERRORS
        from storygraph.llm.model_queue import reading_ahead
        from storygraph.qa.pipeline.parts import QAOptions

        try:
            languages = read_ahead_languages(self.store.list_documents())
        except StoreError as exc:  # the graph store is down: the app says so elsewhere
            log.warning(
                "could not list the stories (%s); reading the Japanese prompt ahead first", exc
            )
            languages = read_ahead_languages([])
        options = QAOptions.from_settings(self.settings)
        for language in languages:
            started = time.perf_counter()
            try:
                with reading_ahead():  # not counted to a question waiting behind it
                    warmed = self.qa().warm(language, options)
            except MODEL_CALL_ERRORS as exc:
                log.warning(
                    "reading the answer prompt ahead failed (%s: %s); the first question reads it",
                    type(exc).__name__,
                    exc,
                )
                return
            if not warmed:
                return
            log.info(
                "answer prompt (%s) read ahead in %.1f s", language, time.perf_counter() - started
            )

    def _set_model_status(self, status: str) -> None:
        old = self.model_status
        self.warnings = [w for w in self.warnings if w != old] + ([status] if status else [])
        self.model_status = status

    def llm(self) -> BaseChatModel | None:
        """The chat model, (re)starting the embedded server if it died. None in no-LLM mode."""
        if self.llm_override is not None:
            return self.llm_override
        self.refresh_model()
        if self.info.provider == "embedded":
            if self._embedded is None:
                return None
            try:
                url = self._embedded.ensure_running()
            except ModelServerCrashed as exc:  # crashed twice in a row: the facts, said why
                self._set_model_status(str(exc))
                return None
            self._set_model_status(self._embedded.crash_notice)
            if url != self._llm_url:
                self._llm = build_chat_model(
                    self.settings, embedded_base_url=url, embedded_server=self._embedded
                )
                self._llm_url = url
        return self._llm

    def extractor(self) -> Extractor:
        """Who reads stories into facts (STORYGRAPH_EXTRACTOR; docs/EMBEDDED_MODEL.md):
        a capable model → LLMGraphTransformer; the small embedded model or no model → the
        parser (`auto`); `model` forces the model path, `parser` the parser."""
        from storygraph.ingest.frames.extractor import ParserExtractor

        if self.extractor_override is not None:
            return self.extractor_override
        choice = self.settings.extractor
        if choice == "parser":
            return ParserExtractor()
        llm = self.llm() if choice == "model" or self.info.capable else None
        if choice == "auto" and not self.info.capable:
            # The 1.5B model read facts at 15-20 characters a second with recall 0.2; the
            # parser reads them in seconds with recall 0.6 (docs/EMBEDDED_MODEL.md).
            return ParserExtractor()
        if llm is None:
            return NoModelExtractor(self.model_status or "no-LLM mode is on")
        if self.info.provider == "embedded":
            from storygraph.ingest.triple_lines import SmallModelExtractor

            # LLMGraphTransformer's schema gets garbage out of the small embedded model;
            # triple lines get its main relations (docs/EMBEDDED_MODEL.md).
            return SmallModelExtractor(llm)
        from storygraph.ingest.llm_extraction import TransformerExtractor

        return TransformerExtractor(llm)

    def model_identity(self) -> str:
        """What the extraction cache calls the model: provider, name and temperature.

        An injected model (tests, benchmarks) built without a ModelInfo of its own is known only
        as that object: its saved extractions are never served to another model object (a test
        that swaps scripts must not get the previous script's triples).
        """
        override = self.llm_override
        if override is not None and not self.info_given:
            if override is not self._identity_of[0]:
                self._identity_of = (override, uuid.uuid4().hex[:12])
            return f"injected:{type(override).__name__}#{self._identity_of[1]}"
        return f"{self.info.provider}:{self.info.model}@t={self.settings.llm_temperature:g}"

    # --- workflows ---------------------------------------------------------------------------
    def ingestor(self) -> Ingestor:
        from storygraph.ingest.extraction_cache import ExtractionCache
        from storygraph.ingest.pipeline import Ingestor

        size = self.settings.effective_chunk_size()
        if self.llm_override is not None and not self.settings.chunk_size:
            size = 1200 if self.info.capable else 200
        extractor = self.extractor()
        return Ingestor(
            self.store,
            extractor,
            chunk_size=size,
            chunk_overlap=min(self.settings.effective_chunk_overlap(), size // 2),
            max_bytes=self.settings.max_upload_bytes,
            secrets=secret_values(self.settings),
            on_report=self._record_rate,
            cache=ExtractionCache.in_data_dir(
                Path(self.settings.data_dir),
                model=self.model_identity(),
                extractor=f"{extractor.name}@{extractor.version}",
            ),
        )

    def _record_rate(self, report: IngestReport) -> None:
        """Keep the model's measured speed for the next estimate (ingest/measured_rate.py)."""
        from storygraph.ingest.measured_rate import RateBook

        if self.info.provider != "none":
            RateBook(self.settings.data_dir).record(self.info.label, report)

    def job_runner(self, *, resume: bool = True) -> JobRunner:
        """The data directory's ingest job runner, started on first use.

        With `resume` (the app), the first call also queues again the jobs a dead process left
        unfinished; the CLI passes False and runs only what it submits.
        """
        from storygraph.ingest.jobs import JobRunner

        with self._jobs_lock:
            if self._jobs is None:
                self._jobs = JobRunner(Path(self.settings.data_dir), self.ingestor, resume=resume)
            return self._jobs

    def qa(self) -> QAEngine:
        from storygraph.qa.pipeline.factory import build_engine

        return build_engine(
            self.store,
            self.llm(),
            self.info,
            frames=sentence_frames,
            questions=question_structure,
        )

    def close(self) -> None:
        if self._jobs is not None:
            self._jobs.close()
        self.store.close()


def embedded_unavailable(settings: Settings) -> str:
    """Why the embedded model cannot start yet and what to do; "" once it is installed."""
    from storygraph.llm import install, install_status
    from storygraph.llm.model_files import model_path

    if install.embedded_ready(settings):
        return ""
    if install_status.install_running(settings):
        return (
            "the embedded model is being installed in the background; until it is ready, "
            "answers list the graph's facts without a model"
        )
    if not install.llama_server_installed():
        return "the embedded model is not installed (run `make model`)"
    path = model_path(settings)
    return f"the embedded model file is missing or unverified at {path} (run `make model`)"


def start_embedded_server(
    settings: Settings,
    on_loading: Callable[[str], None] | None = None,
    *,
    keep_alive_s: float = 0.0,
) -> Any:
    """Start (or reuse) the installed embedded model's server; `ModelError` if it fails."""
    from storygraph.llm.embedded_server import EmbeddedServer

    server = EmbeddedServer(settings, keep_alive_s=keep_alive_s, on_loading=on_loading)
    server.start()
    return server


def _start_embedded(
    settings: Settings,
    *,
    keep_alive_s: float = 0.0,
    on_loading: Callable[[str], None] | None = None,
) -> tuple[Any, str]:
    """Start the embedded model server if it is installed; else say why not and what to do."""
    why = embedded_unavailable(settings)
    if why:
        return None, why
    return start_embedded_server(settings, on_loading, keep_alive_s=keep_alive_s), ""


def embedded_starter(
    *, keep_alive_s: float = 0.0, on_loading: Callable[[str], None] | None = None
) -> EmbeddedStarter:
    """The CLI's starter: keeps a server it started warm for `keep_alive_s` idle seconds after
    it exits, and says on `on_loading` when it has to load the model."""
    return functools.partial(_start_embedded, keep_alive_s=keep_alive_s, on_loading=on_loading)


def build_services(
    settings: Settings,
    *,
    llm: BaseChatModel | None = None,
    extractor: Extractor | None = None,
    info: ModelInfo | None = None,
    embedded: EmbeddedStarter = _start_embedded,
    keep_store_s: float = 0.0,
) -> Services:
    """Build the services. `llm` / `extractor` inject a model (tests, benchmarks); `embedded`
    starts the embedded model's server, now or, while it is being installed, once it is ready;
    `keep_store_s` keeps an embedded store's server started here running after `close()` until
    it has been idle that long (`open_store`)."""
    store = open_store(settings, keep_store_s=keep_store_s)
    resolved = info or (
        ModelInfo("scripted", type(llm).__name__, capable=True)
        if llm is not None
        else model_info(settings)
    )
    services = Services(
        settings=settings,
        store=store,
        info=resolved,
        llm_override=llm,
        extractor_override=extractor,
        info_given=info is not None or llm is None,
    )
    if llm is not None or resolved.provider == "none":
        services.model_status = "" if llm is not None else "no-LLM mode is on"
        return services
    try:
        if resolved.provider == "embedded":
            services._embedded, services.model_status = embedded(settings)
            if services._embedded is None:
                services.info = ModelInfo("none", "", capable=False)
                services.warnings.append(services.model_status)
                services._embedded_pending = embedded
                services._next_model_check = time.monotonic() + services.model_check_interval_s
        else:
            services._llm = build_chat_model(settings)
    except (ConfigError, ModelError) as exc:
        services.info = ModelInfo("none", "", capable=False)
        services.model_status = str(exc)
        services.warnings.append(str(exc))
    except StoryGraphError:
        store.close()
        raise
    return services


def question_structure(question: str, language: str) -> QuestionStructure | None:
    """A Japanese question's structure read off GiNZA's parse, for the answer's support check
    (storygraph.qa.question.question_structure); None for another language (its words are read as
    they
    are). The parser is loaded when the first answer is checked, as for `sentence_frames`."""
    if language != "ja":
        return None
    from storygraph.ingest.frames.ja import parse
    from storygraph.qa.question.question_structure import read_structure

    return read_structure(parse(question))


def sentence_frames(text: str, language: str) -> list[ProposedFact]:
    """The parser's frames of one source sentence, for the answer's premise check
    (storygraph.qa.verify.premise; qa reaches the parser only through this). The reader is imported
    when the first answer is checked, not at start-up."""
    from storygraph.ingest.frames.extractor import reader_for

    return reader_for(language)(text)
