"""Extraction quality and cost: the small embedded model's path vs the parser's, per language.

Scores the relations of each extractor against the gold triples of EVERY `eval/gold/
*_extraction.json` (their passages of `../shared/stories/`; the matching rule is in those files),
each passage chunked as the app chunks for the embedded model (200 characters, 25 overlap), and
prints recall, precision, seconds per chunk, characters per second and model calls per language:

- `small`: `SmallModelExtractor` with the REAL embedded model (llama.cpp server,
  Qwen2.5-Coder-1.5B), the embedded default before issue 12;
- `parser`: `ParserExtractor()` as ingest uses it with `STORYGRAPH_EXTRACTOR=auto` (verb types:
  a fact whose verb the verb table lacks is kept under a type named after the verb);
- `parser-typed`: `ParserExtractor(verb_types=False)`, the verb table's types only;
- `transformer` (by flag only, slow): `LLMGraphTransformer` with the embedded model.

The parser reads the whole passage once (`begin_document`, as the Ingestor calls it) and then
each chunk; that parse is inside the timing, the parser's one-off model load is not.

With the `parser` extractor, two more tables audit the entities it stores (junk and type
agreement, `benchmarks/extraction_entities.py`): on the gold passages, and on every whole story
of `../shared/stories` (the fresh ones of eval/e2e/*_fresh.jsonl marked apart).

    python -m benchmarks --only extraction            # small, parser, parser-typed
    python -m benchmarks.extraction_bench --extractor small --extractor transformer --threads 1 2
    python -m benchmarks.extraction_bench --extractor parser --model-gold original

Needs the installed model for `small` / `transformer` (`python -m storygraph.llm.install`);
without it those rows say so and the parser rows still run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import REPO, SHARED, STORIES, BenchResult, Table, machine_info
from benchmarks.extraction_entities import (
    EntityAudit,
    audit,
    entity_table,
    fresh_stories,
    story_files,
)
from storygraph.errors import StoryGraphError
from storygraph.ingest.frames.extractor import ParserExtractor, reader_for
from storygraph.ingest.llm_extraction import DocumentReader, Extractor, TransformerExtractor
from storygraph.ingest.triple_lines import SmallModelExtractor
from storygraph.llm.factory import build_chat_model
from storygraph.llm.usage import UsageCounter
from storygraph.models import ChunkExtraction, ExtractedRelation
from storygraph.settings import Settings
from storygraph.text.chunking import chunk_text
from storygraph.text.normalize import normalize_name
from storygraph.text.sanitize import sanitize_rel_type
from storygraph.text.vocabulary import SAYS_TYPE, relation_types

GOLD_DIR = REPO / "eval" / "gold"
# the two passages the model-path table was first measured on (docs/EMBEDDED_MODEL.md)
ORIGINAL_GOLD = ("momotaro_ja_extraction.json", "lion_mouse_en_extraction.json")
DEFAULT_MODEL_DIR = REPO / "data" / "models"
MODEL_EXTRACTORS: dict[str, Callable[[Any], Extractor]] = {
    "transformer": TransformerExtractor,
    "small": SmallModelExtractor,
}
PARSER_EXTRACTORS: dict[str, Callable[[], ParserExtractor]] = {
    "parser": ParserExtractor,
    "parser-typed": lambda: ParserExtractor(verb_types=False),
}
EXTRACTORS = (*MODEL_EXTRACTORS, *PARSER_EXTRACTORS)
DEFAULT_EXTRACTORS = ("small", "parser", "parser-typed")
TRANSFORMER_MAX_TOKENS = 768
_INFLECTION = re.compile(r"(ED|ES|S)$")
_ARTICLE = re.compile(r"^(the|a|an)\s+", re.IGNORECASE)


def gold_files() -> list[str]:
    """Every gold file of `eval/gold/`, by name."""
    return sorted(p.name for p in GOLD_DIR.glob("*_extraction.json"))


# --- gold and matching ---------------------------------------------------------------------
@dataclass(frozen=True)
class GoldTriple:
    sources: frozenset[str]
    types: frozenset[str]
    targets: frozenset[str]
    undirected: bool = False

    def matches(self, source: str, rel_type: str, target: str) -> bool:
        if rel_type not in self.types:
            return False
        forward = source in self.sources and target in self.targets
        backward = source in self.targets and target in self.sources
        return forward or (self.undirected and backward)


@dataclass(frozen=True)
class GoldSet:
    name: str
    language: str
    text: str
    triples: list[GoldTriple]
    story: str = ""
    """The story's path under ../shared/stories (ja/momotaro_kusuyama.txt)."""


def entity_key(name: str) -> str:
    return normalize_name(_ARTICLE.sub("", name.strip()))


def type_key(rel_type: str) -> str:
    """The sanitised type with each word's inflection cut (CATCHED, CATCHES -> CATCH)."""
    words = sanitize_rel_type(rel_type).split("_")
    return "_".join(_INFLECTION.sub("", w) if len(w) > 4 else w for w in words)


def passages(text: str, spans: Iterable[dict[str, str]]) -> str:
    """The passages of `text` from each span's `from` to its `to`, joined by blank lines."""
    parts = []
    for span in spans:
        start = text.index(span["from"])
        end = text.index(span["to"], start) + len(span["to"])
        parts.append(text[start:end])
    return "\n\n".join(parts)


def load_gold(path: Path) -> GoldSet:
    raw = json.loads(path.read_text(encoding="utf-8"))
    story = (SHARED / raw["story"]).read_text(encoding="utf-8")
    triples = [
        GoldTriple(
            frozenset(entity_key(s) for s in item["source"]),
            frozenset(type_key(t) for t in item["types"]),
            frozenset(entity_key(t) for t in item["target"]),
            bool(item.get("undirected", False)),
        )
        for item in raw["triples"]
    ]
    text = passages(story, raw["passages"])
    return GoldSet(path.stem, raw["language"], text, triples, raw["story"].removeprefix("stories/"))


@dataclass
class Score:
    gold: int
    gold_matched: int
    predicted: int
    correct: int

    @property
    def recall(self) -> float:
        return self.gold_matched / self.gold if self.gold else 0.0

    @property
    def precision(self) -> float:
        return self.correct / self.predicted if self.predicted else 0.0

    def __add__(self, other: Score) -> Score:
        return Score(
            self.gold + other.gold,
            self.gold_matched + other.gold_matched,
            self.predicted + other.predicted,
            self.correct + other.correct,
        )


def total(scores: Iterable[Score]) -> Score:
    """The micro sum of several passages' scores (recall and precision over all their items)."""
    result = Score(0, 0, 0, 0)
    for item in scores:
        result = result + item
    return result


def relation_key(relation: ExtractedRelation) -> tuple[str, str, str]:
    """What scoring compares: (source, type, target) through `entity_key` / `type_key`; a line
    of speech (SAYS, storygraph.text.speech) is the gold's TALKS_TO: the gold files have no
    type of their own for it, and a line said to someone is talking to them."""
    rel_type = "TALKS_TO" if relation.type == SAYS_TYPE else relation.type
    return entity_key(relation.source), type_key(rel_type), entity_key(relation.target)


def score(gold: list[GoldTriple], relations: Iterable[ExtractedRelation]) -> Score:
    """Recall over the gold triples and precision over the distinct predicted keys."""
    predicted = {relation_key(r) for r in relations}
    matched = [g for g in gold if any(g.matches(*p) for p in predicted)]
    correct = [p for p in predicted if any(g.matches(*p) for g in gold)]
    return Score(len(gold), len(matched), len(predicted), len(correct))


def verb_named(gold: list[GoldTriple], relations: Iterable[ExtractedRelation]) -> tuple[int, int]:
    """(distinct predicted keys whose type the verb table lacks, how many of them match gold).

    Such types are named after the fact's own verb (`ParserExtractor(verb_types=True)`); they
    match a gold triple only when that triple lists the very type.
    """
    table = {type_key(t) for t in relation_types()}
    keys = {relation_key(r) for r in relations}
    named = [k for k in keys if k[1] not in table]
    return len(named), sum(1 for k in named if any(g.matches(*k) for g in gold))


# --- running ---------------------------------------------------------------------------------
class RssWatcher:
    """Samples a process's resident memory every second; `.peak_mib` is the highest seen."""

    def __init__(self, pid: int | None) -> None:
        self.pid = pid
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> RssWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.peak_kib = max(self.peak_kib, rss_kib(self.pid))
            self._stop.wait(1.0)

    @property
    def peak_mib(self) -> int:
        return self.peak_kib // 1024


def rss_kib(pid: int | None) -> int:
    if pid is None:
        return 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return 0
    return 0


@dataclass
class Run:
    story: str
    extractor: str
    threads: int
    language: str = ""
    chars: int = 0
    chunks: int = 0
    failures: int = 0
    seconds: float = 0.0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    rss_mib: int = 0
    score: Score | None = None
    verb_named: int = 0
    verb_named_correct: int = 0
    relations: list[tuple[str, str, str]] = field(default_factory=list)
    extractions: list[ChunkExtraction] = field(default_factory=list, repr=False)
    """Every chunk's extraction (for the entity audit; not saved with --json)."""


def embedded_chunking() -> tuple[int, int]:
    """(chunk size, overlap) the app uses with the embedded model (200, 25)."""
    settings = Settings(_env_file=None, llm_provider="embedded")  # type: ignore[call-arg]
    return settings.effective_chunk_size(), settings.effective_chunk_overlap()


def run_extractor(
    extractor: Extractor, gold: GoldSet, chunk_size: int, overlap: int, label: str = ""
) -> Run:
    """One extractor over one gold passage, chunked; a document reader reads the passage first."""
    run = Run(gold.name, label or extractor.name, 0, gold.language, len(gold.text))
    chunks = chunk_text(gold.text, gold.name, chunk_size, overlap)
    relations: list[ExtractedRelation] = []
    counter = UsageCounter()
    started = time.perf_counter()
    if isinstance(extractor, DocumentReader):
        extractor.begin_document(gold.text, gold.language)
    for chunk in chunks:
        try:
            extraction = extractor.extract(chunk, gold.language, [counter])
        except StoryGraphError:
            run.failures += 1
            continue
        run.extractions.append(extraction)
        relations.extend(extraction.relations)
    run.seconds = time.perf_counter() - started
    usage = counter.snapshot()
    run.chunks = len(chunks)
    run.calls = usage.calls
    run.prompt_tokens, run.completion_tokens = usage.prompt_tokens, usage.completion_tokens
    _score_run(run, gold, relations)
    return run


def _score_run(run: Run, gold: GoldSet, relations: list[ExtractedRelation]) -> None:
    run.score = score(gold.triples, relations)
    run.verb_named, run.verb_named_correct = verb_named(gold.triples, relations)
    run.relations = [(r.source, r.type, r.target) for r in relations]


def measure_parser(extractors: list[str], golds: list[GoldSet]) -> list[Run]:
    """The parser extractors on every gold passage whose language has a reader installed."""
    size, overlap = embedded_chunking()
    languages = []
    for language in dict.fromkeys(g.language for g in golds):
        try:
            reader_for(language)("warm up.")  # the parser's model loads once, off the clock
        except StoryGraphError as exc:
            print(f"parser: no {language} reader ({exc})", flush=True)
            continue
        languages.append(language)
    runs = []
    for key in extractors:
        for gold in golds:
            if gold.language in languages:
                runs.append(run_extractor(PARSER_EXTRACTORS[key](), gold, size, overlap, key))
                print(_line(runs[-1]), flush=True)
    return runs


def gold_audit(run: Run, gold: GoldSet) -> EntityAudit:
    """The entity audit of a run on a gold passage, with the gold's names and facts."""

    def correct(source: str, rel_type: str, target: str) -> bool:
        key = (entity_key(source), type_key(rel_type), entity_key(target))
        return any(g.matches(*key) for g in gold.triples)

    names = [n for g in gold.triples for n in (*g.sources, *g.targets)]
    return audit(gold.name, gold.language, "gold", run.extractions, correct, names, entity_key)


def measure_stories(golds: list[GoldSet], languages: list[str]) -> list[EntityAudit]:
    """`ParserExtractor()` (as ingest uses it) over every whole story of ../shared/stories whose
    language has a reader: the entity audit of each (no gold: junk and types only)."""
    size, overlap = embedded_chunking()
    with_gold = {g.story for g in golds}
    fresh = fresh_stories()
    audits = []
    for story, language in story_files():
        if language not in languages:
            continue
        text = (STORIES / story).read_text(encoding="utf-8").strip()
        whole = GoldSet(story, language, text, [], story)
        run = run_extractor(ParserExtractor(), whole, size, overlap, "parser")
        group = "gold story" if story in with_gold else "fresh" if story in fresh else "in-sample"
        audits.append(audit(story, language, group, run.extractions))
        print(f"{story}: {audits[-1].entities} entities, {len(audits[-1].junk)} junk", flush=True)
    return audits


def entity_tables(runs: list[Run], golds: list[GoldSet], stories: list[EntityAudit]) -> list[Table]:
    """The entity audits of the `parser` runs on the gold passages and of the whole stories."""
    by_name = {g.name: g for g in golds}
    passages = [gold_audit(r, by_name[r.story]) for r in runs if r.extractor == "parser"]
    tables = []
    if passages:
        tables.append(entity_table(passages, "Entities per gold passage: junk and types (parser)"))
    if stories:
        tables.append(entity_table(stories, "Entities per whole story: junk and types (parser)"))
    return tables


def measure(
    threads: list[int], extractors: list[str], model_dir: Path, golds: list[GoldSet]
) -> list[Run]:
    """The model extractors with the real embedded model, once per thread count."""
    from storygraph.llm.embedded_server import EmbeddedServer
    from storygraph.llm.model_files import MODEL_SHA256, MODEL_SIZE, is_verified, model_path

    runs: list[Run] = []
    if not extractors:
        return runs
    with tempfile.TemporaryDirectory(prefix="sg-extraction-bench-") as tmp:
        for count in threads:
            settings = Settings(
                _env_file=None,  # type: ignore[call-arg]
                data_dir=Path(tmp) / f"t{count}",
                model_dir=model_dir,
                embedded_threads=count,
                llm_provider="embedded",
            )
            if not is_verified(model_path(settings), MODEL_SIZE, MODEL_SHA256):
                raise StoryGraphError(
                    f"the embedded model is not installed at {model_path(settings)}",
                    "Run `python -m storygraph.llm.install` first.",
                )
            server = EmbeddedServer(settings)
            url = server.start()
            try:
                built = build_chat_model(settings, embedded_base_url=url)
                assert built is not None
                # Cap replies as SmallModelExtractor does, so a looping reply costs seconds,
                # not the whole context (llama.cpp reads `max_tokens` from the body only).
                llm = built.model_copy(
                    update={"extra_body": {"max_tokens": TRANSFORMER_MAX_TOKENS}}
                )
                size = settings.effective_chunk_size()
                overlap = settings.effective_chunk_overlap()
                for key in extractors:
                    for gold in golds:
                        with RssWatcher(server.pid) as watcher:
                            extractor = MODEL_EXTRACTORS[key](llm)
                            run = run_extractor(extractor, gold, size, overlap, key)
                        run.threads, run.rss_mib = count, watcher.peak_mib
                        runs.append(run)
                        print(_line(run), flush=True)
            finally:
                server.stop()
    return runs


def _line(run: Run) -> str:
    s = run.score
    assert s is not None
    return (
        f"{run.story} {run.extractor} t={run.threads}: recall {s.gold_matched}/{s.gold} "
        f"precision {s.correct}/{s.predicted} {run.seconds:.1f}s {run.calls} calls"
    )


PRECISION_NOTE = (
    "Precision is over the distinct (source, type, target) facts of a passage. `parser` keeps "
    "facts whose verb the verb table lacks under a type named after the verb (流れる → "
    "NAGARERU, flow → FLOW): they count as predictions and are correct only when a gold triple "
    "lists that very type, so nearly all of them count as wrong. Column `off-table types`: "
    "facts whose type is not in the verb table (the parser's verb-named ones; the model's own "
    "type names) and how many of them matched. `parser-typed` drops them (verb-table types only)."
)


def language_table(runs: list[Run]) -> Table:
    """Per language and extractor, the micro sums over the gold passages: the side-by-side view."""
    out = Table(
        "Extraction per language: small model (before) vs parser (after), embedded chunking",
        [
            "lang",
            "extractor",
            "passages",
            "chunks",
            "chars",
            "recall",
            "precision",
            "s / chunk",
            "chars / s",
            "model calls",
            "off-table types (correct)",
        ],
    )
    groups: dict[tuple[str, str, int], list[Run]] = {}
    for run in runs:
        groups.setdefault((run.language, run.extractor, run.threads), []).append(run)
    rows: list[tuple[str, str, list[Run]]] = []
    for (language, extractor, threads), items in sorted(groups.items()):
        rows.append((language, f"{extractor} (t={threads})" if threads else extractor, items))
    rows += _same_passage_rows(groups)
    for language, label, items in sorted(rows, key=lambda row: row[0]):
        s = total(r.score for r in items if r.score is not None)
        seconds = sum(r.seconds for r in items)
        chunks = sum(r.chunks for r in items)
        chars = sum(r.chars for r in items)
        named = sum(r.verb_named for r in items)
        out.add(
            language,
            label,
            len(items),
            chunks,
            chars,
            f"{s.recall:.2f} ({s.gold_matched}/{s.gold})",
            f"{s.precision:.2f} ({s.correct}/{s.predicted})",
            round(seconds / max(chunks, 1), 3),
            round(chars / seconds) if seconds else "–",
            sum(r.calls for r in items),
            f"{named} ({sum(r.verb_named_correct for r in items)})" if named else 0,
        )
    out.notes.append(PRECISION_NOTE)
    out.notes.append(
        "A row `X on Y's passages` scores X on only the passages Y ran on, so that the two "
        "compare on the same text."
    )
    out.notes.append(
        "Chunks of 200 characters with 25 overlap (the app's chunking for the embedded model); "
        "chars / s counts the passage's characters once. The parser's time includes reading the "
        "whole passage once (`begin_document`, as ingest does), not loading its parser model. "
        "Passages per language: "
        + ", ".join(
            f"{lang}: {', '.join(sorted({r.story for r in runs if r.language == lang}))}"
            for lang in sorted({r.language for r in runs})
        )
    )
    return out


def _same_passage_rows(
    groups: dict[tuple[str, str, int], list[Run]],
) -> list[tuple[str, str, list[Run]]]:
    """For an extractor that ran on fewer passages of a language than another, the other's runs
    on just those passages (the model path on two passages, the parser on all of them)."""
    rows = []
    for (language, extractor, threads), items in groups.items():
        subset = {r.story for r in items}
        for (other_language, other, _), others in groups.items():
            if other_language != language or other == extractor:
                continue
            if subset < {r.story for r in others}:
                label = f"{extractor} (t={threads})" if threads else extractor
                same = [r for r in others if r.story in subset]
                rows.append((language, f"{other} on {label}'s passages", same))
    return rows


def table(runs: list[Run]) -> Table:
    out = Table(
        "Extraction per gold passage",
        [
            "story",
            "extractor",
            "threads",
            "chunks",
            "recall",
            "precision",
            "s / chunk",
            "model calls",
            "prompt tok / chunk",
            "completion tok / chunk",
            "failed chunks",
            "server RSS MiB",
        ],
    )
    for run in runs:
        s = run.score
        assert s is not None
        n = max(run.chunks, 1)
        out.add(
            run.story,
            run.extractor,
            run.threads,
            run.chunks,
            f"{s.recall:.2f} ({s.gold_matched}/{s.gold})",
            f"{s.precision:.2f} ({s.correct}/{s.predicted})",
            round(run.seconds / n, 3),
            run.calls,
            round(run.prompt_tokens / n),
            round(run.completion_tokens / n),
            run.failures,
            run.rss_mib,
        )
    out.notes.append(
        "Gold triples and the lenient matching rule: eval/gold/*.json. A failed chunk is one "
        "whose call failed twice (ModelError) or whose reply held no readable graph. Threads 0: "
        "no model server (the parser)."
    )
    return out


def run_all(
    extractors: list[str], threads: list[int], model_dir: Path, model_gold: list[str]
) -> tuple[list[Run], list[str], list[Table]]:
    """The parser and model runs; the notes say what was not run and why; the entity tables
    (the `parser` extractor's, on the gold passages and the whole stories)."""
    golds = [load_gold(GOLD_DIR / name) for name in gold_files()]
    runs = measure_parser([e for e in extractors if e in PARSER_EXTRACTORS], golds)
    languages = sorted({r.language for r in runs if r.extractor == "parser"})
    entities = entity_tables(runs, golds, measure_stories(golds, languages))
    notes = []
    model_keys = [e for e in extractors if e in MODEL_EXTRACTORS]
    model_golds = [g for g in golds if f"{g.name}.json" in model_gold]
    if model_keys and len(model_golds) < len(golds):
        notes.append(
            f"{', '.join(model_keys)} ran on {', '.join(g.name for g in model_golds)} only "
            "(the model path is slow; the parser rows cover every gold passage)."
        )
    try:
        runs += measure(threads, model_keys, model_dir, model_golds)
    except StoryGraphError as exc:
        notes.append(f"{', '.join(model_keys)} not run: {exc}")
    return runs, notes, entities


def run(quick: bool) -> BenchResult:
    """The benchmark as `python -m benchmarks` runs it: small, parser and parser-typed on every
    gold passage (quick: the small model on the two original passages only)."""
    settings = Settings()
    model_dir = settings.model_dir or DEFAULT_MODEL_DIR
    model_gold = list(ORIGINAL_GOLD) if quick else gold_files()
    runs, notes, entities = run_all(
        list(DEFAULT_EXTRACTORS), [settings.embedded_threads], model_dir, model_gold
    )
    summary = language_table(runs)
    summary.notes[:0] = notes
    return BenchResult(
        "extraction",
        [summary, table(runs), *entities],
        data={"runs": [_run_json(r) for r in runs]},
    )


def _run_json(run: Run) -> dict[str, Any]:
    data = dict(vars(run))
    data.pop("extractions")
    data["score"] = vars(run.score) if run.score else None
    return data


def rescore(item: dict[str, Any]) -> Run:
    """A saved run scored again against the current gold files and matching rule."""
    golds = {g.name: g for g in (load_gold(GOLD_DIR / name) for name in gold_files())}
    data = {k: v for k, v in item.items() if k in Run.__dataclass_fields__ and k != "score"}
    run = Run(**data)
    gold = golds[run.story]
    run.language = run.language or gold.language
    run.chars = run.chars or len(gold.text)
    relations = [ExtractedRelation(s, "", t, o, "", "", "") for s, t, o in run.relations]
    _score_run(run, gold, relations)
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.extraction_bench")
    parser.add_argument("--threads", type=int, nargs="+", default=[2])
    parser.add_argument(
        "--extractor",
        choices=EXTRACTORS,
        action="append",
        help=f"repeatable; default: {', '.join(DEFAULT_EXTRACTORS)} (transformer only if named)",
    )
    parser.add_argument("--model-dir", type=Path, default=DEFAULT_MODEL_DIR)
    parser.add_argument(
        "--model-gold",
        choices=("all", "original"),
        default="all",
        help="gold passages for the model extractors (original: the first two only)",
    )
    parser.add_argument("--json", type=Path, help="also write the runs (with relations) here")
    parser.add_argument(
        "--rescore", type=Path, nargs="+", help="score saved --json runs again, no model calls"
    )
    args = parser.parse_args(argv)
    machine = machine_info()
    print(
        f"{machine['date']} · {machine['nproc']} CPUs ({machine['cpu']}) · "
        f"load average {os.getloadavg()[0]:.2f} at start\n",
        flush=True,
    )
    notes: list[str] = []
    entities: list[Table] = []
    if args.rescore:
        runs = [rescore(item) for path in args.rescore for item in json.loads(path.read_text())]
    else:
        model_gold = list(ORIGINAL_GOLD) if args.model_gold == "original" else gold_files()
        extractors = args.extractor or list(DEFAULT_EXTRACTORS)
        runs, notes, entities = run_all(extractors, args.threads, args.model_dir, model_gold)
    summary = language_table(runs)
    summary.notes[:0] = notes
    print(summary.render() + "\n")
    print(table(runs).render())
    for entity in entities:
        print("\n" + entity.render())
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")
    if args.json:
        args.json.write_text(
            json.dumps([_run_json(r) for r in runs], ensure_ascii=False, indent=1),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
