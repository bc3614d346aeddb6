"""The English parser reader alone (`storygraph.frames.en`, no model): quality and speed.

Scores `read_facts` on every English gold passage in `eval/gold/*_en_extraction.json` with the
extraction benchmark's matching rule (`benchmarks.extraction_bench.score`): facts whose verb the
table types are scored; facts with relation "" (no table row; a model would pick the type) are
counted apart and left out of precision. Then reads every `../shared/stories/en/*.txt` and
reports characters per second (the pipeline is loaded once before the clock starts).

    python -m benchmarks.frames_en_bench [--show]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from benchmarks.common import SHARED
from benchmarks.extraction_bench import GOLD_DIR, Score, entity_key, load_gold, score, type_key
from storygraph.frames import ProposedFact
from storygraph.frames.en import load_pipeline, read_facts
from storygraph.models import ExtractedRelation


def as_relations(facts: list[ProposedFact]) -> list[ExtractedRelation]:
    return [
        ExtractedRelation(f.subject, f.subject_type, f.relation, f.object, f.object_type, "gold")
        for f in facts
        if f.relation
    ]


def _keys(fact: ProposedFact) -> tuple[str, str, str]:
    return entity_key(fact.subject), type_key(fact.relation), entity_key(fact.object)


def quality(show: bool) -> list[tuple[str, Score, int]]:
    rows = []
    for path in sorted(GOLD_DIR.glob("*_en_extraction.json")):
        gold = load_gold(path)
        facts = read_facts(gold.text)
        result = score(gold.triples, as_relations(facts))
        untyped = sum(1 for f in facts if not f.relation)
        rows.append((gold.name, result, untyped))
        if show:
            print(f"\n## {gold.name}")
            for f in facts:
                hit = any(g.matches(*_keys(f)) for g in gold.triples) if f.relation else False
                rel = f.relation or f"({f.predicate})"
                print(f"  {'+' if hit else ' '} {f.subject} -[{rel}]-> {f.object}  [{f.pattern}]")
    return rows


def speed(paths: list[Path]) -> tuple[int, float, int]:
    load_pipeline()
    chars, facts = 0, 0
    started = time.perf_counter()
    for path in paths:
        text = path.read_text(encoding="utf-8")
        chars += len(text)
        facts += len(read_facts(text))
    return chars, time.perf_counter() - started, facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print every fact read")
    args = parser.parse_args(argv)
    rows = quality(args.show)
    print("\n| gold passage | gold | matched | recall | typed facts | correct | precision "
          "| untyped facts |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    total = Score(0, 0, 0, 0)
    for name, result, untyped in rows:
        total = Score(total.gold + result.gold, total.gold_matched + result.gold_matched,
                      total.predicted + result.predicted, total.correct + result.correct)
        print(f"| {name} | {result.gold} | {result.gold_matched} | {result.recall:.2f} "
              f"| {result.predicted} | {result.correct} | {result.precision:.2f} | {untyped} |")
    print(f"| all (micro) | {total.gold} | {total.gold_matched} | {total.recall:.2f} "
          f"| {total.predicted} | {total.correct} | {total.precision:.2f} | |")
    stories = sorted((SHARED / "stories" / "en").glob("*.txt"))
    chars, seconds, facts = speed(stories)
    print(f"\nspeed: {len(stories)} stories, {chars} chars, {facts} facts in {seconds:.2f} s "
          f"= {chars / seconds:.0f} chars/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
