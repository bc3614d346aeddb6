"""Parser-only extraction (no model): recall / precision on the gold passages, chars per second.

Scores `ParserExtractor` on every `eval/gold/*.json` whose language has a reader (the matching
rule is the one of `benchmarks.extraction_bench`), chunked as a no-model ingest chunks
(1,200 characters, 150 overlap), and times whole stories of `../shared/stories/<lang>/`.

    python -m benchmarks.frames_bench                 # scores + speed
    python -m benchmarks.frames_bench --show          # also each gold miss and wrong fact
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass, field

from benchmarks.common import STORIES, BenchResult, Table
from benchmarks.extraction_bench import GOLD_DIR, GoldSet, Score, load_gold, score, total
from storygraph.errors import StoryGraphError
from storygraph.ingest.frames.extractor import ParserExtractor, reader_for
from storygraph.models import ExtractedRelation
from storygraph.text.chunking import chunk_text

CHUNK_SIZE, CHUNK_OVERLAP = 1200, 150
SPEED_STORIES = {
    "ja": ("momotaro_kusuyama.txt", "urashimataro_kusuyama.txt", "kachikachiyama_kusuyama.txt"),
    "en": (),
}


@dataclass
class GoldRun:
    gold: GoldSet
    score: Score
    relations: list[ExtractedRelation] = field(default_factory=list)
    untyped: int = 0


def run_gold(gold: GoldSet) -> GoldRun:
    extractor = ParserExtractor(verb_types=False)
    relations: list[ExtractedRelation] = []
    untyped = 0
    for chunk in chunk_text(gold.text, gold.name, CHUNK_SIZE, CHUNK_OVERLAP):
        extraction = extractor.extract(chunk, gold.language, [])
        relations.extend(extraction.relations)
        untyped += extraction.untyped
    return GoldRun(gold, score(gold.triples, relations), relations, untyped)


def speed(language: str, name: str) -> tuple[int, float, float, int]:
    """(characters, wall seconds, CPU seconds, relations) of extracting one whole story, chunked
    as ingest does. CPU seconds do not grow when other processes share the cores."""
    text = (STORIES / language / name).read_text(encoding="utf-8")
    extractor = ParserExtractor(verb_types=False)
    started, cpu_started = time.perf_counter(), time.process_time()
    count = 0
    for chunk in chunk_text(text, name, CHUNK_SIZE, CHUNK_OVERLAP):
        count += len(extractor.extract(chunk, language, []).relations)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    return len(text), wall, cpu, count


def _available(language: str) -> bool:
    try:
        reader_for(language)
    except StoryGraphError:
        return False
    return True


def run(quick: bool = False, show: bool = False) -> BenchResult:
    quality = Table(
        "Parser-only extraction on the gold passages",
        ["gold", "lang", "gold items", "recall", "precision", "relations", "untyped dropped"],
    )
    golds = [load_gold(p) for p in sorted(GOLD_DIR.glob("*.json"))]
    totals: dict[str, list[Score]] = {}
    for gold in golds:
        if not _available(gold.language):
            quality.notes.append(f"{gold.name}: no {gold.language} reader installed")
            continue
        result = run_gold(gold)
        s = result.score
        quality.add(
            gold.name,
            gold.language,
            s.gold,
            f"{s.recall:.2f}",
            f"{s.precision:.2f}",
            s.predicted,
            result.untyped,
        )
        totals.setdefault(gold.language, []).append(s)
        if show:
            _show(result)
    for language, scores in totals.items():
        s = total(scores)
        recall, precision = f"{s.recall:.2f}", f"{s.precision:.2f}"
        quality.add("all", language, s.gold, recall, precision, s.predicted, "")
    pace = Table(
        "Parser-only extraction speed",
        ["story", "chars", "wall s", "chars/s", "CPU s", "chars/CPU-s", "rels"],
        notes=[f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"],
    )
    # load the parser before timing (a one-off per process)
    for language in ("ja", "en"):
        if _available(language):
            warm = chunk_text("桃。", "warm", 10, 0)[0]
            ParserExtractor(verb_types=False).extract(warm, language, [])
    for language, names in SPEED_STORIES.items():
        if not _available(language):
            continue
        for name in names[:1] if quick else names:
            chars, wall, cpu, rels = speed(language, name)
            pace.add(
                name, chars, f"{wall:.1f}", f"{chars / wall:.0f}", f"{cpu:.1f}",
                f"{chars / cpu:.0f}", rels,
            )
    return BenchResult("frames", [quality, pace])


def _show(result: GoldRun) -> None:
    from benchmarks.extraction_bench import entity_key, type_key

    predicted = {
        (entity_key(r.source), type_key(r.type), entity_key(r.target)): r for r in result.relations
    }
    print(f"\n## {result.gold.name}")
    for g in result.gold.triples:
        if not any(g.matches(*p) for p in predicted):
            print(f"  missed: {sorted(g.sources)} {sorted(g.types)[:3]}… {sorted(g.targets)}")
    for key, rel in predicted.items():
        mark = "ok   " if any(g.matches(*key) for g in result.gold.triples) else "wrong"
        print(f"  {mark} {rel.source} -[{rel.type}]-> {rel.target}   | {rel.evidence[:50]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.frames_bench", description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--show", action="store_true", help="print misses and wrong facts")
    args = parser.parse_args(argv)
    result = run(args.quick, args.show)
    for table in result.tables:
        print(table.render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
