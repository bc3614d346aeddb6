"""The English parser reader alone (`storygraph.ingest.frames.en`, no model): quality and speed.

Scores `read_facts` on every English gold passage in `eval/gold/*_en_extraction.json` with the
extraction benchmark's matching rule (`benchmarks.extraction_bench.score`): facts whose verb the
table types are scored; facts with relation "" (no table row; a model would pick the type) are
counted apart and left out of precision. Then reads every `../shared/stories/en/*.txt` and
reports characters per second (the pipeline is loaded once before the clock starts).

Three ways of reading the gold passage are compared: the whole passage at once; each chunk the
app would cut for the embedded model read alone (pronouns lose antecedents in earlier chunks);
and each chunk through `facts_between` (the whole text parsed once, the chunk's facts kept).

    python -m benchmarks.frames_en_bench [--show]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from benchmarks.common import SHARED
from benchmarks.extraction_bench import (
    GOLD_DIR,
    Score,
    entity_key,
    load_gold,
    score,
    total,
    type_key,
)
from storygraph.ingest.frames import ProposedFact
from storygraph.ingest.frames.en import facts_between, read_facts
from storygraph.models import ExtractedRelation
from storygraph.settings import Settings
from storygraph.text.chunking import chunk_text
from storygraph.text.english import pipeline


def as_relations(facts: list[ProposedFact]) -> list[ExtractedRelation]:
    return [
        ExtractedRelation(f.subject, f.subject_type, f.relation, f.object, f.object_type, "gold")
        for f in facts
        if f.relation
    ]


def _keys(fact: ProposedFact) -> tuple[str, str, str]:
    return entity_key(fact.subject), type_key(fact.relation), entity_key(fact.object)


MODES = ("whole passage", "chunk alone", "chunk in its story")


def _read(text: str, mode: str) -> list[ProposedFact]:
    if mode == "whole passage":
        return read_facts(text)
    settings = Settings(_env_file=None, llm_provider="embedded")  # type: ignore[call-arg]
    size, overlap = settings.effective_chunk_size(), settings.effective_chunk_overlap()
    facts: list[ProposedFact] = []
    for chunk in chunk_text(text, "bench", size, overlap):
        if mode == "chunk alone":
            facts += read_facts(chunk.text)
        else:
            facts += facts_between(text, chunk.start, chunk.end)
    return facts


def quality(show: bool, mode: str = MODES[0]) -> list[tuple[str, Score, int]]:
    rows = []
    for path in sorted(GOLD_DIR.glob("*_en_extraction.json")):
        gold = load_gold(path)
        facts = _read(gold.text, mode)
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


def speed(paths: list[Path]) -> tuple[int, float, float, int]:
    """(characters, wall seconds, CPU seconds of this process, facts) for reading `paths`."""
    pipeline()
    chars, facts = 0, 0
    started, cpu_started = time.perf_counter(), time.process_time()
    for path in paths:
        text = path.read_text(encoding="utf-8")
        chars += len(text)
        facts += len(read_facts(text))
    return chars, time.perf_counter() - started, time.process_time() - cpu_started, facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print every fact read")
    args = parser.parse_args(argv)
    print("\n| read as | gold passage | gold | matched | recall | typed facts | correct "
          "| precision | untyped facts |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for mode in MODES:
        rows = quality(args.show and mode == MODES[0], mode)
        for name, result, untyped in rows:
            print(f"| {mode} | {name} | {result.gold} | {result.gold_matched} "
                  f"| {result.recall:.2f} | {result.predicted} | {result.correct} "
                  f"| {result.precision:.2f} | {untyped} |")
        all_rows = total(result for _, result, _ in rows)
        print(f"| {mode} | **all (micro)** | {all_rows.gold} | {all_rows.gold_matched} "
              f"| {all_rows.recall:.2f} | {all_rows.predicted} | {all_rows.correct} "
              f"| {all_rows.precision:.2f} | |")
    stories = sorted((SHARED / "stories" / "en").glob("*.txt"))
    chars, seconds, cpu, facts = speed(stories)
    print(f"\nspeed: {len(stories)} stories, {chars} chars, {facts} facts in {seconds:.2f} s "
          f"= {chars / seconds:.0f} chars/s ({cpu:.2f} CPU s = {chars / cpu:.0f} chars per "
          f"CPU second; load average {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
