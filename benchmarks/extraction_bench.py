"""Extraction quality and cost of the embedded model: LLMGraphTransformer vs SmallModelExtractor.

Runs the REAL embedded model (llama.cpp server, Qwen2.5-Coder-1.5B) on passages of
`../shared/stories/ja/momotaro_kusuyama.txt` (the companions join; the oni fight) and
`../shared/stories/en/aesop__the_lion_and_the_mouse.txt`, chunked as the app chunks for the
embedded model, and scores the relations against the gold triples in `eval/gold/*.json`
(matching rule in those files): recall, precision, seconds / prompt tokens / completion tokens
per chunk and the model server's peak RSS.

    python -m benchmarks --only extraction            # both extractors
    python -m benchmarks.extraction_bench --threads 1 2 --extractor small

Needs the installed model (`python -m storygraph.llm.install`); without it the table says so.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import REPO, SHARED, BenchResult, Table, machine_info
from storygraph.errors import StoryGraphError
from storygraph.extraction import Extractor, TransformerExtractor
from storygraph.llm.factory import build_chat_model
from storygraph.llm.usage import UsageCounter
from storygraph.models import ExtractedRelation
from storygraph.settings import Settings
from storygraph.small_extraction import SmallModelExtractor
from storygraph.text.chunking import chunk_text
from storygraph.text.normalize import normalize_name
from storygraph.text.sanitize import sanitize_rel_type

GOLD_DIR = REPO / "eval" / "gold"
GOLD_FILES = ("momotaro_ja_extraction.json", "lion_mouse_en_extraction.json")
DEFAULT_MODEL_DIR = REPO / "data" / "models"
EXTRACTORS = {"transformer": TransformerExtractor, "small": SmallModelExtractor}
TRANSFORMER_MAX_TOKENS = 768
_INFLECTION = re.compile(r"(ED|ES|S)$")
_ARTICLE = re.compile(r"^(the|a|an)\s+", re.IGNORECASE)


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
    return GoldSet(path.stem, raw["language"], passages(story, raw["passages"]), triples)


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


def score(gold: list[GoldTriple], relations: Iterable[ExtractedRelation]) -> Score:
    predicted = {(entity_key(r.source), type_key(r.type), entity_key(r.target)) for r in relations}
    matched = [g for g in gold if any(g.matches(*p) for p in predicted)]
    correct = [p for p in predicted if any(g.matches(*p) for g in gold)]
    return Score(len(gold), len(matched), len(predicted), len(correct))


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
    chunks: int = 0
    failures: int = 0
    seconds: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    rss_mib: int = 0
    score: Score | None = None
    relations: list[tuple[str, str, str]] = field(default_factory=list)


def run_extractor(extractor: Extractor, gold: GoldSet, chunk_size: int, overlap: int) -> Run:
    run = Run(gold.name, extractor.name, 0)
    chunks = chunk_text(gold.text, gold.name, chunk_size, overlap)
    relations: list[ExtractedRelation] = []
    counter = UsageCounter()
    started = time.perf_counter()
    for chunk in chunks:
        try:
            relations.extend(extractor.extract(chunk, gold.language, [counter]).relations)
        except StoryGraphError:
            run.failures += 1
    run.seconds = time.perf_counter() - started
    usage = counter.snapshot()
    run.chunks = len(chunks)
    run.prompt_tokens, run.completion_tokens = usage.prompt_tokens, usage.completion_tokens
    run.score = score(gold.triples, relations)
    run.relations = [(r.source, r.type, r.target) for r in relations]
    return run


def measure(threads: list[int], extractors: list[str], model_dir: Path) -> list[Run]:
    from storygraph.llm.embedded_server import EmbeddedServer
    from storygraph.llm.model_files import MODEL_SHA256, MODEL_SIZE, is_verified

    golds = [load_gold(GOLD_DIR / name) for name in GOLD_FILES]
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="sg-extraction-bench-") as tmp:
        for count in threads:
            settings = Settings(
                _env_file=None,  # type: ignore[call-arg]
                data_dir=Path(tmp) / f"t{count}",
                model_dir=model_dir,
                embedded_threads=count,
                llm_provider="embedded",
            )
            from storygraph.llm.model_files import model_path

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
                            run = run_extractor(EXTRACTORS[key](llm), gold, size, overlap)
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
        f"precision {s.correct}/{s.predicted} {run.seconds:.0f}s {run.rss_mib} MiB"
    )


def table(runs: list[Run]) -> Table:
    out = Table(
        "Extraction with the embedded model (Qwen2.5-Coder-1.5B Q4_K_M, llama.cpp)",
        [
            "story",
            "extractor",
            "threads",
            "chunks",
            "recall",
            "precision",
            "s / chunk",
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
            round(run.seconds / n, 1),
            round(run.prompt_tokens / n),
            round(run.completion_tokens / n),
            run.failures,
            run.rss_mib,
        )
    out.notes.append(
        "Gold triples and the lenient matching rule: eval/gold/*.json. A failed chunk is one "
        "whose call failed twice (ModelError) or whose reply held no readable graph."
    )
    return out


def run(quick: bool) -> BenchResult:
    """The benchmark as `python -m benchmarks` runs it (quick: only SmallModelExtractor)."""
    settings = Settings()
    model_dir = settings.model_dir or DEFAULT_MODEL_DIR
    extractors = ["small"] if quick else ["transformer", "small"]
    try:
        runs = measure([settings.embedded_threads], extractors, model_dir)
    except StoryGraphError as exc:
        skipped = Table("Extraction with the embedded model", ["status"])
        skipped.add(f"not run: {exc}")
        return BenchResult("extraction", [skipped])
    return BenchResult(
        "extraction",
        [table(runs)],
        data={"runs": [_run_json(r) for r in runs]},
    )


def _run_json(run: Run) -> dict[str, Any]:
    data = dict(vars(run))
    data["score"] = vars(run.score) if run.score else None
    return data


def rescore(item: dict[str, Any]) -> Run:
    """A saved run scored again against the current gold files and matching rule."""
    golds = {load_gold(GOLD_DIR / name).name: load_gold(GOLD_DIR / name) for name in GOLD_FILES}
    data = {k: v for k, v in item.items() if k in Run.__dataclass_fields__ and k != "score"}
    run = Run(**data)
    relations = [ExtractedRelation(s, "", t, o, "", "", "") for s, t, o in run.relations]
    run.score = score(golds[run.story].triples, relations)
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.extraction_bench")
    parser.add_argument("--threads", type=int, nargs="+", default=[2])
    parser.add_argument("--extractor", choices=sorted(EXTRACTORS), action="append")
    parser.add_argument("--model-dir", type=Path, default=DEFAULT_MODEL_DIR)
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
    if args.rescore:
        runs = [rescore(item) for path in args.rescore for item in json.loads(path.read_text())]
    else:
        runs = measure(args.threads, args.extractor or ["transformer", "small"], args.model_dir)
    print(table(runs).render())
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")
    if args.json:
        args.json.write_text(
            json.dumps([_run_json(r) for r in runs], ensure_ascii=False, indent=1),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
