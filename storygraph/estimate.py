"""Cost and time estimate of an ingest, before any model call (and a check against the result).

Chunk counts are exact: the files go through the same `prepare()` and `Ingestor.chunks_for()`
as the real ingest, and a file already stored costs nothing. Ingest makes one extraction call
per chunk (a failed call is retried once, which the estimate does not foresee), so

    prompt tokens     = calls x INSTRUCTION_TOKENS[lang] + chars x TOKENS_PER_CHAR[lang]
    completion tokens = calls x COMPLETION_TOKENS[lang]
    seconds           = evaluated prompt / PROMPT_TOKENS_PER_S
                        + completion / GENERATION_TOKENS_PER_S (embedded model: its
                        small-model prompt, fixed prefix cached by llama.cpp), or
                        calls x REMOTE_SECONDS_PER_CALL (remote models); but once an ingest
                        with this model finished on this data directory:
                        (prompt + completion) / the measured tokens per second
                        (storygraph.ingest.measured_rate), whatever the provider
    money             = prompt / 1000 x price_prompt_per_1k + completion / 1000 x ...per_1k

The parser path (no model call) costs no call, token or money; its seconds are chars /
PARSER_CHARS_PER_S[lang], the parser's measured speed, never the model's rate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from storygraph.errors import StoryGraphError
from storygraph.humanize import duration, human_date, plural
from storygraph.ingest.measured_rate import MeasuredRate, RateBook
from storygraph.ingest.pipeline import Ingestor, prepare
from storygraph.models import IngestReport, Usage
from storygraph.text.token_estimate import TOKENS_PER_CHAR

if TYPE_CHECKING:
    from storygraph.services import Services

# --- measured constants: the one place they live -------------------------------------------------
# Measured 2026-11-22 with `python -m benchmarks --only calibrate` (benchmarks/calibrate.py) for
# the embedded Qwen2.5-Coder-1.5B-Instruct Q4_K_M (llama.cpp), 2-core AMD EPYC, 200-char chunks:
# - TOKENS_PER_CHAR (storygraph.text.token_estimate): the model's own tokenizer over every
#   200-char chunk of shared/stories (ja 0.71, en 0.24).
# - INSTRUCTION_TOKENS: the LLMGraphTransformer prompt exactly as sent (system prompt, our
#   additional instructions, the tool schema) minus the chunk, counted with that tokenizer
#   (median ja 1,239, en 1,149); the chat template adds a few tokens per message. The server
#   log's real requests of this kind had ~1,070 prompt tokens after a 4-token cached prefix.
# - COMPLETION_TOKENS: median completion of the real requests in the llama.cpp server log
#   (127: those calls ran into the reply-length limit, so this is an upper-end figure).
# - PROMPT / GENERATION tokens per second: design §6 on an idle machine (66 / 22 tok/s); the
#   server log under shared load showed medians of 31 / 10 tok/s (best 61 / 19).
INSTRUCTION_TOKENS: dict[str, int] = {"ja": 1240, "en": 1150}
COMPLETION_TOKENS: dict[str, int] = {"ja": 127, "en": 127}
# The embedded model extracts through storygraph.ingest.triple_lines (docs/EMBEDDED_MODEL.md), a
# much shorter prompt: measured 516 (ja) / 351 (en) prompt tokens and 98 / 37 completion tokens
# per 200-char chunk (`python -m benchmarks --only extraction`, 2026-11-22), i.e. about 374 /
# 303 tokens of fixed instructions and example. That fixed prefix is identical in every call,
# so llama.cpp's prefix cache evaluates only the chunk and ~30 template tokens anew.
SMALL_INSTRUCTION_TOKENS: dict[str, int] = {"ja": 374, "en": 303}
SMALL_COMPLETION_TOKENS: dict[str, int] = {"ja": 98, "en": 37}
SMALL_UNCACHED_TOKENS_PER_CALL = 30
PROMPT_TOKENS_PER_S = 66.0
GENERATION_TOKENS_PER_S = 22.0
# Not measurable here (no remote model on this machine): an assumption for a hosted model
# answering a ~1.5k-token extraction call. Proposed as a setting (see docs/BENCHMARKS.md).
REMOTE_SECONDS_PER_CALL = 4.0
# The parser path (STORYGRAPH_EXTRACTOR=parser, and `auto` with the small embedded model or no
# model) makes no model call: its time is the parser's, per language, whatever the model's
# measured rate (that is the model's tokens per second; the rate book records no parser ingest,
# which has no tokens). Measured 2026-12-02 with the real parsers (GiNZA ja, spaCy en) through
# the whole ingest (chunking, parsing, graph writes in FalkorDB), every story of
# shared/stories/<lang> but the first (which loads the parser) in one process, on the 2-core
# machine with a load average of 3: ja 44,395 chars in 17.9 s (2,477 chars/s), en 46,433 chars
# in 3.4 s (13,646 chars/s); rounded down below. Loading a parser once per process adds ~2-3 s
# (ja), ~0.5 s (en). The one rate of 700 chars/s this replaces (from eval-e2e's 414-1,160) timed an
# ingest at ~205 s (~143k chars) that took 6.9 s.
PARSER_CHARS_PER_S: dict[str, float] = {"ja": 2400.0, "en": 13000.0}


@dataclass(frozen=True)
class FileEstimate:
    name: str
    language: str = ""
    chars: int = 0
    chunks: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cost: float = 0.0
    status: str = "new"  # new / unchanged / error
    message: str = ""


def _lang(language: str) -> str:
    return language if language in TOKENS_PER_CHAR else "en"


def _ingestor(services: Services) -> Ingestor:
    """An Ingestor chunking exactly like `services.ingestor()`, without starting a model."""
    from storygraph.services import NoModelExtractor

    settings = services.settings
    size = settings.effective_chunk_size()
    if services.llm_override is not None and not settings.chunk_size:
        size = 1200 if services.info.capable else 200
    return Ingestor(
        services.store,
        NoModelExtractor("estimating only"),
        chunk_size=size,
        chunk_overlap=min(settings.effective_chunk_overlap(), size // 2),
        max_bytes=settings.max_upload_bytes,
    )


def measured_rate(services: Services) -> MeasuredRate | None:
    """This model's speed as measured by earlier ingests on this data directory, if any."""
    return RateBook(services.settings.data_dir).get(services.info.label)


def seconds_for(
    services: Services,
    calls: int,
    prompt: int,
    completion: int,
    rate: MeasuredRate | None = None,
    *,
    total_tokens: int = 0,
) -> float:
    """Expected seconds: from the measured rate when there is one, else the constants above."""
    if rate is not None and rate.tokens_per_s > 0:
        return (total_tokens or prompt + completion) / rate.tokens_per_s
    if services.info.provider == "embedded":
        return prompt / PROMPT_TOKENS_PER_S + completion / GENERATION_TOKENS_PER_S
    return calls * REMOTE_SECONDS_PER_CALL


def parser_seconds(chars: int, language: str) -> float:
    """Expected seconds for the parser to read `chars` characters of `language` (constants
    above; a language without its own figure is timed as English)."""
    return chars / PARSER_CHARS_PER_S[_lang(language)]


def _small_path(services: Services) -> bool:
    """The embedded model extracts with the small-model path (Services.extractor())."""
    return services.info.provider == "embedded"


def _estimate_one(
    services: Services,
    ingestor: Ingestor,
    name: str,
    data: bytes,
    rate: MeasuredRate | None = None,
) -> FileEstimate:
    try:
        prepared = prepare(name, data, max_bytes=ingestor.max_bytes)
    except StoryGraphError as exc:
        return FileEstimate(name, status="error", message=str(exc))
    existing = services.store.find_document_by_sha(prepared.sha256)
    chunks = ingestor.chunks_for(prepared)
    chars = sum(len(c.text) for c in chunks)
    if existing and existing.get("status") == "ready":
        return FileEstimate(
            name,
            prepared.language,
            len(prepared.text),
            len(chunks),
            status="unchanged",
            message=f"already stored as {existing.get('name')}; ingest costs nothing",
        )
    if services.extractor().name.startswith("parser"):
        return FileEstimate(
            name,
            prepared.language,
            len(prepared.text),
            len(chunks),
            seconds=parser_seconds(len(prepared.text), prepared.language),
            message="read by the parser: no model call",
        )
    lang = _lang(prepared.language)
    calls = len(chunks)
    text_tokens = chars * TOKENS_PER_CHAR[lang]
    if _small_path(services):
        prompt = round(calls * SMALL_INSTRUCTION_TOKENS[lang] + text_tokens)
        completion = calls * SMALL_COMPLETION_TOKENS[lang]
        evaluated = round(calls * SMALL_UNCACHED_TOKENS_PER_CALL + text_tokens)
    else:
        prompt = round(calls * INSTRUCTION_TOKENS[lang] + text_tokens)
        completion = calls * COMPLETION_TOKENS[lang]
        evaluated = prompt
    settings = services.settings
    cost = (
        prompt / 1000 * settings.price_prompt_per_1k
        + completion / 1000 * settings.price_completion_per_1k
    )
    return FileEstimate(
        name,
        prepared.language,
        len(prepared.text),
        calls,
        calls,
        prompt,
        completion,
        seconds_for(services, calls, evaluated, completion, rate, total_tokens=prompt + completion),
        cost,
    )


def estimate_texts(
    services: Services,
    files: Sequence[tuple[str, bytes]],
    rate: MeasuredRate | None = None,
) -> dict[str, Any]:
    """Expected calls, tokens, money and time to ingest `files` (name, bytes) with `services`;
    time from `rate` (see `measured_rate`) when given, else from the constants above."""
    ingestor = _ingestor(services)
    per_file = [_estimate_one(services, ingestor, name, data, rate) for name, data in files]
    new = [f for f in per_file if f.status == "new"]
    total = {
        key: sum(getattr(f, key) for f in new)
        for key in ("chunks", "calls", "prompt_tokens", "completion_tokens", "seconds", "cost")
    }
    result: dict[str, Any] = {
        "model": services.info.label,
        "provider": services.info.provider,
        "chunk_size": ingestor.chunk_size,
        "files": [asdict(f) for f in per_file],
        **total,
        "seconds": round(total["seconds"], 1),
        "cost": round(total["cost"], 6),
        "price_prompt_per_1k": services.settings.price_prompt_per_1k,
        "price_completion_per_1k": services.settings.price_completion_per_1k,
        "basis": _basis(services, rate),
        "measured": rate is not None,
    }
    result["summary"] = summary(result)
    return result


def estimate_files(
    services: Services, paths: Sequence[Path], rate: MeasuredRate | None = None
) -> dict[str, Any]:
    """`estimate_texts` over files on disk; an unreadable file is listed with its error."""
    files: list[tuple[str, bytes]] = []
    unreadable: list[dict[str, Any]] = []
    for path in paths:
        try:
            files.append((path.name, path.read_bytes()))
        except OSError as exc:
            unreadable.append(
                asdict(FileEstimate(path.name, status="error", message=f"cannot read: {exc}"))
            )
    result = estimate_texts(services, files, rate)
    if unreadable:
        result["files"].extend(unreadable)
        result["summary"] = summary(result)
    return result


def _basis(services: Services, rate: MeasuredRate | None = None) -> str:
    if services.extractor().name.startswith("parser"):
        return (
            "the parser reads the story with no model call (about "
            f"{PARSER_CHARS_PER_S['ja']:,.0f} characters a second in Japanese, "
            f"{PARSER_CHARS_PER_S['en']:,.0f} in English, on a 2-core machine)"
        )
    if rate is not None and rate.tokens_per_s > 0:
        return (
            f"measured on this machine: {rate.tokens_per_s:.1f} tokens/s, "
            f"{duration(rate.seconds_per_chunk)} per chunk over the last "
            f"{plural(rate.ingests, 'ingest')} (latest {human_date(rate.updated_at)})"
        )
    if services.info.provider == "none":
        return (
            "no language model is available, so ingest cannot run yet (`make model`, or set "
            f"OPENAI_API_KEY); figures assume a remote model at {REMOTE_SECONDS_PER_CALL:.0f} s "
            "per call"
        )
    if services.info.provider == "embedded":
        return (
            f"embedded model speed {PROMPT_TOKENS_PER_S:.0f} tok/s prompt, "
            f"{GENERATION_TOKENS_PER_S:.0f} tok/s generation (measured on a 2-core machine)"
        )
    return f"{REMOTE_SECONDS_PER_CALL:.0f} s per call assumed for a remote model"


def file_line(f: dict[str, Any]) -> str:
    """One file's line of the estimate (`result["files"]` item): its chunks, calls, tokens and
    time, or its status and why."""
    if f["status"] == "new":
        return (
            f"{f['name']}: {plural(f['chunks'], 'chunk')} → "
            f"{plural(f['calls'], 'LLM call')}, "
            f"~{f['prompt_tokens'] + f['completion_tokens']:,} tokens, "
            f"~{duration(f['seconds'])}"
        )
    return f"{f['name']}: {f['status']}: {f['message']}"


def summary(result: dict[str, Any]) -> str:
    """Human-readable lines for the CLI and the ingest tab: one per file, the total, the basis."""
    lines = [file_line(f) for f in result["files"]]
    money = (
        f", ~{result['cost']:.4f} at the configured prices"
        if result["price_prompt_per_1k"] or result["price_completion_per_1k"]
        else " (no price configured: STORYGRAPH_PRICE_PROMPT_PER_1K / _COMPLETION_PER_1K)"
    )
    lines.append(
        f"Total with {result['model']}: {plural(result['calls'], 'LLM call')}, "
        f"~{result['prompt_tokens']:,} prompt + ~{result['completion_tokens']:,} completion "
        f"tokens, ~{duration(result['seconds'])}{money}."
    )
    lines.append(f"Basis: {result['basis']}.")
    return "\n".join(lines)


def _actual(reports: IngestReport | Sequence[IngestReport]) -> tuple[Usage, float, int]:
    items = [reports] if isinstance(reports, IngestReport) else list(reports)
    usage = Usage()
    for report in items:
        usage.add(report.usage)
    return usage, sum(r.seconds for r in items), sum(r.chunks for r in items)


def compare(
    estimate: dict[str, Any], report: IngestReport | Sequence[IngestReport]
) -> dict[str, Any]:
    """Estimated vs actual calls, tokens and seconds after an ingest; ratio = actual/estimate."""
    usage, seconds, chunks = _actual(report)
    pairs = {
        "chunks": (estimate["chunks"], chunks),
        "calls": (estimate["calls"], usage.calls),
        "prompt_tokens": (estimate["prompt_tokens"], usage.prompt_tokens),
        "completion_tokens": (estimate["completion_tokens"], usage.completion_tokens),
        "seconds": (estimate["seconds"], round(seconds, 1)),
    }
    return {
        key: {
            "estimated": est,
            "actual": act,
            "ratio": round(act / est, 2) if est else None,
        }
        for key, (est, act) in pairs.items()
    }
