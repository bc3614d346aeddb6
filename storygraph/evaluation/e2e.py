"""End-to-end evaluation: stories ingested by the app's own path, questions asked through the
chat's `QAEngine`, answers scored (issue 10; the scoring rule is in `answer_scoring`).

    python -m storygraph eval-e2e eval/e2e/ja.jsonl [--stories DIR] [--mode M ...] [--json]

Each story gets a fresh store in a temporary data directory (its own embedded FalkorDB), so a
question sees the graph a user who uploaded that one story would have. The story is ingested
with the configured model and extractor (`Services.ingestor()`, exactly what the app runs).

Ingests are cached: the extraction of every chunk is saved under
`<cache dir>/<key>.json`, keyed by the story's bytes, the model, the extractor (name and
version) and the chunking, together with what the live ingest measured (seconds, model calls,
tokens). A later run replays the saved extractions through the same ingest path (decoding,
chunking, merging and writing are redone: only the model calls are saved) and reports the
measured ingest figures of the run that made the entry. `--fresh` ignores the cache.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from storygraph.errors import InputError
from storygraph.evaluation.answer_scoring import evidence_found, score_lenient, score_strict
from storygraph.evaluation.harness import configured_model, read_jsonl
from storygraph.ingest.llm_extraction import Extractor
from storygraph.llm.factory import ModelInfo
from storygraph.llm.model_files import model_path
from storygraph.models import (
    CLOSEST_SHOWN,
    Answer,
    Chunk,
    ChunkExtraction,
    Citation,
    ExtractedEntity,
    ExtractedRelation,
)
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.scope.per_story import misplaced_citations
from storygraph.services import Services, build_services
from storygraph.settings import Settings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

CACHE_FORMAT = 1


@dataclass(frozen=True)
class E2EQuestion:
    id: str
    story: str
    question: str
    answers: tuple[str, ...]
    wrong: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    type: str = ""
    lang_mix: bool = False
    unanswerable: bool = False
    """The story does not give the answer (a false premise or a fact it never tells):
    `answers` is empty and only a refusal is right."""


def _strings(raw: Any, where: str, name: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise InputError(f"{where}: `{name}` must be a list of strings")
    return tuple(raw)


def no_model_settings(settings: Settings) -> Settings:
    """`settings` for a run without the model that reads the sources the configured model
    would: the story chunked for it (no model alone chunks as a capable one does)."""
    return settings.model_copy(
        update={
            "no_llm": True,
            "chunk_size": settings.effective_chunk_size(),
            "chunk_overlap": settings.effective_chunk_overlap(),
        }
    )


def load_e2e_questions(path: Path) -> list[E2EQuestion]:
    """The questions of a JSON-lines file (format: eval/e2e/README.md); bad lines fail loudly."""
    questions: list[E2EQuestion] = []
    for where, row in read_jsonl(path):
        if not isinstance(row, dict):
            raise InputError(f"{where}: expected a JSON object")
        unanswerable = row.get("unanswerable", False)
        if not isinstance(unanswerable, bool):
            raise InputError(f"{where}: `unanswerable` must be true or false")
        required = ("story", "question") if unanswerable else ("story", "question", "answers")
        missing = [k for k in required if not row.get(k)]
        if missing:
            raise InputError(f"{where}: missing {', '.join(missing)}")
        if unanswerable and row.get("answers"):
            raise InputError(f"{where}: an unanswerable question has `answers: []`")
        questions.append(
            E2EQuestion(
                id=str(row.get("id") or f"q{where.rsplit(':', 1)[1]}"),
                story=str(row["story"]),
                question=str(row["question"]).strip(),
                answers=_strings(row.get("answers"), where, "answers"),
                wrong=_strings(row.get("wrong"), where, "wrong"),
                evidence=_strings(row.get("evidence"), where, "evidence"),
                type=str(row.get("type") or ""),
                lang_mix=bool(row.get("lang_mix")),
                unanswerable=unanswerable,
            )
        )
    return questions


# --- the ingest cache ----------------------------------------------------------------------------
def first_per_story(questions: Sequence[E2EQuestion], count: int) -> list[E2EQuestion]:
    """The first `count` questions of each story, in the set's order."""
    asked: dict[str, int] = {}
    kept: list[E2EQuestion] = []
    for case in questions:
        asked[case.story] = asked.get(case.story, 0) + 1
        if asked[case.story] <= count:
            kept.append(case)
    return kept


def _extraction_to_json(extraction: ChunkExtraction) -> dict[str, Any]:
    return {
        "index": extraction.chunk.index,
        "text_sha": hashlib.sha256(extraction.chunk.text.encode()).hexdigest(),
        "entities": [asdict(e) for e in extraction.entities],
        "relations": [asdict(r) for r in extraction.relations],
    }


class RecordingExtractor:
    """Passes every chunk to the real extractor and keeps what it returned."""

    def __init__(self, inner: Extractor) -> None:
        self.inner = inner
        self.name = inner.name
        self.records: list[dict[str, Any]] = []

    def extract(self, chunk: Chunk, language: str, callbacks: list[Any]) -> ChunkExtraction:
        extraction = self.inner.extract(chunk, language, callbacks)
        self.records.append(_extraction_to_json(extraction))
        return extraction


class ReplayExtractor:
    """Returns the saved extraction of each chunk; a chunk that changed is an error."""

    def __init__(self, name: str, records: Sequence[dict[str, Any]]) -> None:
        self.name = name
        self.by_index = {int(r["index"]): r for r in records}

    def extract(self, chunk: Chunk, language: str, callbacks: list[Any]) -> ChunkExtraction:
        record = self.by_index.get(chunk.index)
        digest = hashlib.sha256(chunk.text.encode()).hexdigest()
        if record is None or record["text_sha"] != digest:
            raise InputError(f"the ingest cache has no extraction for chunk {chunk.index}")
        return ChunkExtraction(
            chunk=chunk,
            entities=[
                ExtractedEntity(**{**e, "chunk_id": chunk.id}) for e in record["entities"]
            ],
            relations=[
                ExtractedRelation(**{**r, "chunk_id": chunk.id}) for r in record["relations"]
            ],
        )


def cache_key(data: bytes, info: ModelInfo, extractor: Extractor, chunking: str) -> str:
    version = getattr(extractor, "version", "1")
    parts = [
        hashlib.sha256(data).hexdigest(),
        info.provider,
        info.model,
        extractor.name,
        str(version),
        chunking,
        str(CACHE_FORMAT),
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


# --- results -------------------------------------------------------------------------------------
@dataclass
class StoryIngest:
    story: str
    chars: int
    chunks: int
    seconds: float
    llm_calls: int
    tokens: int | None
    """None when the model server did not report them (see `Usage.unreported`)."""
    entities: int
    relations: int
    extractor: str
    cached: bool
    status: str
    message: str = ""

    @property
    def chars_per_second(self) -> float | None:
        return round(self.chars / self.seconds, 1) if self.seconds > 0 else None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["seconds"] = round(self.seconds, 2)
        data["chars_per_second"] = self.chars_per_second
        return data


@dataclass
class E2EResult:
    id: str
    story: str
    mode: str
    question: str
    answer: str
    correct: bool
    rule: str
    evidence_found: bool | None
    """The gold evidence (or an accepted answer) in a source the answer read."""
    seconds: float
    first_token_seconds: float
    llm_calls: int
    tokens: int | None
    """None when the model server did not report them (see `Usage.unreported`)."""
    entities: list[str]
    kept: int
    type: str = ""
    lang_mix: bool = False
    warnings: list[str] = field(default_factory=list)
    method: str = ""
    """How the answer was written (the trace's answer step: llm, facts, nothing found, …)."""
    evidence_cited: bool | None = None
    """The same in any of the answer's citations, read or not: cited but not read, the
    evidence was lost to the small model's source budget; not cited, to retrieval."""
    before_answer_seconds: float = 0.0
    """Seconds of the trace's steps before the answer step (names, retrieval, scoring,
    sentence search): the part of the first token's wait that is not the model's."""
    strict_correct: bool = False
    """Right by the strict rule (`answer_scoring.score_strict`: the answer itself only);
    `correct` is the lenient rule's verdict, kept so the history stays comparable."""
    strict_rule: str = ""
    declined: bool = False
    """The answer itself says the story does not tell (`answer_scoring.declines`)."""
    unanswerable: bool = False
    supported: bool | None = None
    """The support check's verdict on the answer (`Answer.support`); None where the engine
    has no support check."""
    model_answer: str | None = None
    """What the model wrote when the support check replaced it (the trace's support step), so
    a saved run can be checked again without the model (`benchmarks.support_check --answers`);
    None when the answer shown is the model's own."""
    answer_in_sources_language: str | None = None
    """What the model wrote in the stories' language for a question asked in another, before
    it was shown in the question's (storygraph.qa.generation.answer_crosslang); None on other
    paths."""
    verifier: dict[str, Any] | None = None
    """The verifier's verdict on the model's written answer: its confidence, signals and the
    answer it judged (storygraph.qa.verify); None when none was judged."""
    other_stories: list[str] = field(default_factory=list)
    """Stories other than the question's that the answer cites (`--library`: one store holds
    every story; always empty when each story has its own store)."""
    cites_own_story: bool = False
    """The answer cites the question's own story (with `other_stories`, what a library's scope
    chose: only its story, only others, both, or none; eval/e2e/library_scope.py)."""
    misplaced_stories: list[str] = field(default_factory=list)
    """Of `other_stories`, those cited where the reader does not see the citation under that
    story's name (qa/per_story.misplaced_citations): outside a per-story answer's part for it,
    or in an answer about one story. An answer written per story cites the other stories that
    fit the question, each in its own part: in `other_stories`, not here."""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["seconds"] = round(self.seconds, 3)
        data["before_answer_seconds"] = round(self.before_answer_seconds, 3)
        data["first_token_seconds"] = round(self.first_token_seconds, 3)
        return data


def _percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return round(ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo), 3)


def _mean_known(values: Sequence[int | None]) -> float | None:
    """The mean, or None when any value is unknown (tokens a server did not report): a mean
    over the rest would stand for questions it did not count."""
    if not values or any(v is None for v in values):
        return None
    return round(sum(v for v in values if v is not None) / len(values), 1)


def _closest_shown(result: E2EResult) -> bool:
    """The model found no answer and the app showed the closest sentence instead."""
    return CLOSEST_SHOWN in result.method


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def strict_figures(results: Sequence[E2EResult]) -> dict[str, Any]:
    """The strict rule's figures (docs/EVALUATION.md, "Scoring"): accuracy over every question
    and over the answerable ones, supported precision and coverage (None until the engine has
    a support check), and the share of unanswerable questions the app declined."""
    answerable = [r for r in results if not r.unanswerable]
    unanswerable = [r for r in results if r.unanswerable]
    judged = [r for r in results if r.supported is not None]
    shown_supported = [r for r in judged if r.supported]
    return {
        "strict_correct": sum(r.strict_correct for r in results),
        "strict_accuracy": _share(sum(r.strict_correct for r in results), len(results)),
        "answerable": len(answerable),
        "strict_accuracy_answerable": _share(
            sum(r.strict_correct for r in answerable), len(answerable)
        ),
        "accuracy_answerable": _share(sum(r.correct for r in answerable), len(answerable)),
        "supported_precision": (
            _share(sum(r.strict_correct for r in shown_supported), len(shown_supported))
            if judged
            else None
        ),
        "coverage": _share(len(shown_supported), len(results)) if judged else None,
        "unanswerable": len(unanswerable),
        "unanswerable_declined": _share(sum(r.declined for r in unanswerable), len(unanswerable)),
    }


def summarize_e2e(results: Sequence[E2EResult], ingests: Sequence[StoryIngest]) -> dict[str, Any]:
    """The figures of one mode: strict and lenient accuracy, evidence recall, seconds, calls,
    ingest speed."""
    n = len(results)
    with_evidence = [r for r in results if r.evidence_found is not None]
    seconds = [r.seconds for r in results]
    first = [r.first_token_seconds for r in results]
    live = [i for i in ingests if i.status == "added"]
    chars = sum(i.chars for i in live)
    ingest_seconds = sum(i.seconds for i in live)
    return {
        "questions": n,
        **strict_figures(results),
        "correct": sum(r.correct for r in results),
        "accuracy": round(sum(r.correct for r in results) / n, 4) if n else None,
        "evidence_recall": (
            round(sum(bool(r.evidence_found) for r in with_evidence) / len(with_evidence), 4)
            if with_evidence
            else None
        ),
        "evidence_cited": (
            round(sum(bool(r.evidence_cited) for r in with_evidence) / len(with_evidence), 4)
            if with_evidence
            else None
        ),
        "seconds_p50": _percentile(seconds, 0.5),
        "seconds_p90": _percentile(seconds, 0.9),
        "seconds_max": round(max(seconds), 3) if seconds else None,
        "first_token_p50": _percentile(first, 0.5),
        "first_token_p90": _percentile(first, 0.9),
        "before_answer_p50": _percentile([r.before_answer_seconds for r in results], 0.5),
        "llm_calls_per_question": round(sum(r.llm_calls for r in results) / n, 2) if n else None,
        "tokens_per_question": _mean_known([r.tokens for r in results]),
        "answer_chars_p50": _percentile([float(len(r.answer)) for r in results], 0.5),
        "closest_sentence_shown": sum(_closest_shown(r) for r in results),
        # Right by the answer's own words: a "the sentences do not say" reply counts as
        # correct when the closest sentence shown beside it holds the answer (the score reads
        # what the user reads); this leaves those out, so a change that only makes the model
        # refuse more cannot look like a gain.
        "answered_correct": sum(r.correct and not _closest_shown(r) for r in results),
        "unsupported_name_answers": sum(
            any("do not:" in w for w in r.warnings) for r in results
        ),
        "ingest_chars_per_second": round(chars / ingest_seconds, 1) if ingest_seconds else None,
        "ingest_seconds": round(ingest_seconds, 1),
        "citing_other_stories": sum(bool(r.other_stories) for r in results),
        "citing_other_stories_misplaced": sum(bool(r.misplaced_stories) for r in results),
    }


@dataclass
class E2EReport:
    model: str
    extractor: str
    overall: dict[str, dict[str, Any]]
    ingests: list[StoryIngest]
    results: list[E2EResult]
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "extractor": self.extractor,
            "seconds": round(self.seconds, 1),
            "overall": self.overall,
            "ingests": [i.to_json() for i in self.ingests],
            "questions": [r.to_json() for r in self.results],
        }


# --- the run -------------------------------------------------------------------------------------
@contextmanager
def story_services(
    settings: Settings,
    *,
    llm: BaseChatModel | None = None,
    extractor: Extractor | None = None,
    info: ModelInfo | None = None,
) -> Iterator[Services]:
    """Services over a fresh store in a temporary data directory; the model file stays where
    the configured settings keep it (one joined model shared by every run). The store's
    server is stopped at the end, and by its idle reaper if this process dies first
    (`watch_store`)."""
    with tempfile.TemporaryDirectory(prefix="storygraph-e2e-") as tmp:
        local = settings.model_copy(
            update={
                "data_dir": Path(tmp),
                "neo4j_uri": None,
                "model_dir": model_path(settings).parent,
            }
        )
        services = build_services(local, llm=llm, extractor=extractor, info=info)
        try:
            watch_store(services, Path(tmp))
            yield services
        finally:
            services.close()


REAPER_IDLE_S = 4.0
"""Seconds a temporary store's server may stand unused, once no process holds it, before its
idle reaper stops it (looked at every second)."""


def watch_store(services: Services, data_dir: Path) -> int | None:
    """Start the idle reaper (`storygraph.store.idle_reaper`, docs/ISSUES.md#store-server-kept)
    on the temporary store's server: a run killed before it could stop the server (SIGKILL, a
    closed terminal) left it running with its /tmp/storygraph-e2e-* directory. While this
    process uses the server the reaper only looks; a run that ends stops the server itself and
    the reaper exits ("gone").
    The server's pid, or None when no server of its own runs there."""
    from storygraph.processes import start_detached_module
    from storygraph.store.falkordb_server import EmbeddedFalkorDB, ServerPaths

    services.store.stats()  # the server starts with the store's first query
    pid = EmbeddedFalkorDB(data_dir).pid()
    if pid is None:
        return None
    args = ["--data-dir", str(data_dir), "--pid", str(pid), "--idle-s", str(REAPER_IDLE_S)]
    start_detached_module(
        "storygraph.store.idle_reaper", args, ServerPaths.for_data_dir(data_dir).reaper_log
    )
    return pid


def ingest_story(
    services: Services, path: Path, cache_dir: Path | None, *, fresh: bool = False
) -> StoryIngest:
    """Ingest one story into the services' store, through the cache when there is one."""
    data = path.read_bytes()
    ingestor = services.ingestor()
    chunking = f"{ingestor.chunk_size}/{ingestor.chunk_overlap}"
    key = cache_key(data, services.info, ingestor.extractor, chunking)
    entry = cache_dir / f"{key}.json" if cache_dir else None
    if entry is not None and entry.exists() and not fresh:
        saved = json.loads(entry.read_text(encoding="utf-8"))
        ingestor.extractor = ReplayExtractor(saved["extractor"], saved["chunks"])
        report = ingestor.ingest_bytes(path.name, data)
        live = saved["ingest"]
        return StoryIngest(
            **{**live, "story": str(path.name), "cached": True, "status": report.status}
        )
    recorder = RecordingExtractor(ingestor.extractor)
    ingestor.extractor = recorder
    report = ingestor.ingest_bytes(path.name, data)
    stats = services.store.stats()
    result = StoryIngest(
        story=path.name,
        chars=len(data.decode("utf-8", errors="replace")),
        chunks=report.chunks,
        seconds=report.seconds,
        llm_calls=report.usage.calls,
        tokens=report.usage.known_tokens,
        entities=int(stats.get("entities", 0)),
        relations=int(stats.get("relations", 0)),
        extractor=recorder.name,
        cached=False,
        status=report.status,
        message=report.message,
    )
    if entry is not None and report.status == "added":
        entry.parent.mkdir(parents=True, exist_ok=True)
        live = {k: v for k, v in asdict(result).items() if k not in ("story", "cached", "status")}
        payload = {"extractor": recorder.name, "ingest": live, "chunks": recorder.records}
        tmp = entry.with_suffix(".tmp")
        tmp.write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
        tmp.replace(entry)
    return result


class Stopwatch:
    """Seconds from its making to the first streamed piece of an answer (pass `on_token` to
    the answerer) and to now; the first token is the whole answer's time when none streamed."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.first: float | None = None

    def on_token(self, _piece: str) -> None:
        if self.first is None:
            self.first = time.perf_counter() - self.started

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def first_token(self, total: float) -> float:
        return total if self.first is None else self.first


def verdicts(text: str, case: E2EQuestion) -> dict[str, Any]:
    """Both rules' verdicts on an answer, as `E2EResult` fields."""
    lenient = score_lenient(text, case.answers, case.wrong, unanswerable=case.unanswerable)
    strict = score_strict(text, case.answers, case.wrong, unanswerable=case.unanswerable)
    return {
        "correct": lenient.correct,
        "rule": lenient.rule,
        "strict_correct": strict.correct,
        "strict_rule": strict.rule,
        "declined": strict.declined,
        "unanswerable": case.unanswerable,
    }


def ask_and_score(services: Services, case: E2EQuestion, options: QAOptions) -> E2EResult:
    qa = services.qa()
    watch = Stopwatch()
    answer = qa.ask(case.question, options, on_token=watch.on_token)
    seconds = watch.elapsed()
    # The evidence the answer was written from: the sources it read (the small model reads
    # the first few citations only; see the answer step's `sources_read`).
    step = next((s for s in answer.steps if s.name == "answer"), None)
    names = [s.name for s in answer.steps]
    before = answer.steps[: names.index("answer")] if "answer" in names else answer.steps
    sentences = [c.text for c in read_citations(answer)]
    own = Path(case.story).name
    cited = {c.document_name for c in answer.citations if c.document_name}
    return E2EResult(
        id=case.id,
        story=case.story,
        mode=answer.mode,
        question=case.question,
        answer=answer.answer,
        evidence_found=evidence_found(sentences, case.evidence, case.answers),
        evidence_cited=evidence_found(
            [c.text for c in answer.citations], case.evidence, case.answers
        ),
        seconds=seconds,
        first_token_seconds=watch.first_token(seconds),
        llm_calls=answer.usage.calls,
        tokens=answer.usage.known_tokens,
        entities=[e.node_id for e in answer.entities],
        kept=len(answer.kept_facts),
        type=case.type,
        lang_mix=case.lang_mix,
        warnings=list(answer.warnings),
        method=str(step.detail.get("method", "")) if step else "",
        before_answer_seconds=sum(s.seconds for s in before),
        supported=support_verdict(answer),
        model_answer=_model_answer(answer.steps),
        answer_in_sources_language=_support_detail(answer.steps, "answer_in_sources_language"),
        verifier=_verifier_detail(answer.steps),
        **verdicts(answer.answer, case),
        other_stories=sorted(cited - {own}),
        cites_own_story=own in cited,
        misplaced_stories=sorted(
            {c.document_name for c in misplaced_citations(answer.answer, answer.citations, own)}
        ),
    )


def read_citations(answer: Answer) -> list[Citation]:
    """The citations the answer step read: the first `sources_read` of each answer step's
    (a per-story answer has one step per story, its citations numbered on;
    qa/scope/per_story.py)."""
    read: list[Citation] = []
    offset = 0
    steps = [s for s in answer.steps if s.name == "answer"]
    for step in steps:
        count = int(step.detail.get("citations", len(answer.citations)))
        took = int(step.detail.get("sources_read", count))
        read.extend(answer.citations[offset : offset + min(took, count)])
        offset += count
    return read


def _model_answer(steps: Sequence[Any]) -> str | None:
    """The model's own words when the support step replaced them (else None)."""
    return _support_detail(steps, "model_answer")


def _verifier_detail(steps: Sequence[Any]) -> dict[str, Any] | None:
    """The verifier's verdict the trace's support step holds (None: no answer was judged)."""
    step = next((s for s in steps if s.name == "support"), None)
    held = step.detail.get("verifier") if step else None
    return dict(held) if isinstance(held, dict) else None


def _support_detail(steps: Sequence[Any], key: str) -> str | None:
    """A text the trace's support step holds under `key` (None: it holds none)."""
    step = next((s for s in steps if s.name == "support"), None)
    written = step.detail.get(key) if step else None
    return str(written) if written else None


def support_verdict(answer: object) -> bool | None:
    """The support check's verdict on an answer: `answer.support` when the engine sets it (a
    bool, or an object whose `supported` is one); None when it has no such check."""
    support = getattr(answer, "support", None)
    if support is None or isinstance(support, bool):
        return support
    verdict = getattr(support, "supported", None)
    if isinstance(verdict, bool):
        return verdict
    raise TypeError(f"Answer.support has no yes / no verdict: {support!r}")


Progress = Callable[[str], None]


def run_e2e(
    settings: Settings,
    questions: Sequence[E2EQuestion],
    stories_dir: Path,
    *,
    modes: Sequence[str],
    options: QAOptions,
    cache_dir: Path | None,
    fresh: bool = False,
    llm: BaseChatModel | None = None,
    extractor: Extractor | None = None,
    info: ModelInfo | None = None,
    progress: Progress | None = None,
    library: bool = False,
    shelf: Sequence[str] = (),
) -> E2EReport:
    """Ingest each story the questions name into its own fresh store, then ask its questions.

    `library`: ingest every story into ONE fresh store first, then ask every question with the
    scope "all stories" (issue #28); answers citing another story are counted. `shelf`: more
    stories the library holds besides the questions' (the sets' stories when `--only` picked a
    few questions: the library asked is the whole one, not the picked questions' stories)."""
    started = time.perf_counter()
    say = progress or (lambda _: None)
    by_story: dict[str, list[E2EQuestion]] = {}
    for case in questions:
        by_story.setdefault(case.story, []).append(case)
    stocked = list(dict.fromkeys([*by_story, *shelf])) if library else list(by_story)
    for story in stocked:
        if not (stories_dir / story).is_file():
            raise InputError(f"story {story} not found under {stories_dir}")
    ingests: list[StoryIngest] = []
    results: list[E2EResult] = []
    model_label = extractor_name = ""
    with ExitStack() as stack:
        if llm is None and not options.no_llm and not settings.no_llm:
            # One model for every story's temporary store; its embedded server is held until
            # the last question (configured_model).
            llm, info = stack.enter_context(configured_model(settings))

        def ingest(services: Services, story: str) -> None:
            say(f"{story}: ingesting")
            done = ingest_story(services, stories_dir / story, cache_dir, fresh=fresh)
            ingests.append(done)
            how = "cached" if done.cached else f"{done.seconds:.0f} s"
            say(f"{story}: {done.status} ({how}, {done.relations} relations)")

        def ask(services: Services, cases: Sequence[E2EQuestion]) -> None:
            for mode in modes:
                for case in cases:
                    result = ask_and_score(services, case, replace(options, mode=mode))
                    results.append(result)
                    # ok: strict; no*: right by the lenient rule only; no: neither
                    lenient_only = result.correct and not result.strict_correct
                    mark = "ok " if result.strict_correct else "no*" if lenient_only else "no "
                    cited = ", ".join(result.other_stories)
                    other = f" (cites {cited})" if cited else ""
                    text = result.answer[:70]
                    say(f"  {mark} {result.seconds:5.1f} s  {case.id}: {text!r}{other}")

        if library:
            with story_services(settings, llm=llm, extractor=extractor, info=info) as services:
                model_label = services.info.label
                for story in stocked:
                    ingest(services, story)
                for cases in by_story.values():
                    ask(services, cases)
        for story, cases in by_story.items() if not library else ():
            with story_services(settings, llm=llm, extractor=extractor, info=info) as services:
                model_label = services.info.label
                ingest(services, story)
                ask(services, cases)
        extractor_name = ingests[-1].extractor if ingests else ""
    overall = {
        mode: summarize_e2e([r for r in results if r.mode == mode], ingests)
        for mode in dict.fromkeys(r.mode for r in results)
    }
    return E2EReport(
        model=model_label,
        extractor=extractor_name,
        overall=overall,
        ingests=ingests,
        results=results,
        seconds=time.perf_counter() - started,
    )


# --- re-scoring a saved run ----------------------------------------------------------------------
def rescore_report(
    runs: Sequence[dict[str, Any]], questions: Sequence[E2EQuestion]
) -> E2EReport:
    """Saved runs (`eval-e2e --json`) scored again by today's rules against today's sets: the
    same answers, the verdicts the scorer gives now. Only the questions a run asked and the
    sets still hold are kept (matched by id; a question two runs asked, from the first)."""
    by_id = {case.id: case for case in questions}
    names = {f.name for f in fields(E2EResult)}
    results: list[E2EResult] = []
    rows = [row for saved in runs for row in saved.get("questions", [])]
    for row in rows:
        if any(r.id == row.get("id") and r.mode == row.get("mode") for r in results):
            continue
        case = by_id.get(str(row.get("id")))
        if case is None:
            continue
        old = E2EResult(**{k: v for k, v in row.items() if k in names})
        results.append(replace(old, **verdicts(old.answer, case)))
    ingest_names = {f.name for f in fields(StoryIngest)}
    ingests: list[StoryIngest] = []
    for row in (row for saved in runs for row in saved.get("ingests", [])):
        if row.get("story") not in {i.story for i in ingests}:
            ingests.append(StoryIngest(**{k: v for k, v in row.items() if k in ingest_names}))
    overall = {
        mode: summarize_e2e([r for r in results if r.mode == mode], ingests)
        for mode in dict.fromkeys(r.mode for r in results)
    }
    return E2EReport(
        model=" + ".join(dict.fromkeys(str(saved.get("model", "")) for saved in runs)),
        extractor=" + ".join(dict.fromkeys(str(saved.get("extractor", "")) for saved in runs)),
        overall=overall,
        ingests=ingests,
        results=results,
        seconds=sum(float(saved.get("seconds", 0.0)) for saved in runs),
    )
