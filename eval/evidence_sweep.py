"""Evidence in what the small model reads, without the model, for several values of one of
sentence search's constants (storygraph.qa.retrieval.passages), each story ingested once.

For every question with an `evidence` string, whether the evidence is among what the small
model reads, as `eval-e2e --no-llm` counts it, under each value; the stories are ingested
through the eval cache as `eval-e2e` does. Prints one line per story (found / asked under each
value), then each question file's totals.

    PYTHONPATH=. python eval/evidence_sweep.py SCENE_WEIGHT 0,0.5 \\
        eval/novels3/dev.jsonl:eval/novels3/stories eval/test14/test.jsonl:eval/test14/stories
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from storygraph.evaluation.answer_scoring import evidence_found
from storygraph.evaluation.e2e import (
    E2EQuestion,
    ingest_story,
    load_e2e_questions,
    no_model_settings,
    read_citations,
    story_services,
)
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.retrieval import passages
from storygraph.settings import get_settings


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("constant", help="a module constant of qa/retrieval/passages.py")
    parser.add_argument("values", help="comma-separated values, in the constant's type")
    parser.add_argument("sets", nargs="+", help="QUESTIONS.jsonl:STORIES_DIR")
    args = parser.parse_args(argv)
    if not hasattr(passages, args.constant):
        parser.error(f"passages has no constant {args.constant}")
    kind = type(getattr(passages, args.constant))
    values = [kind(v) for v in args.values.split(",")]
    settings = no_model_settings(get_settings())
    options = QAOptions.from_settings(settings, no_llm=True, small_model_budget=True)
    cache = settings.data_dir / "e2e"
    totals: dict[tuple[str, int], list[int]] = {}
    for spec in args.sets:
        questions_file, stories = spec.split(":")
        by_story: dict[str, list[E2EQuestion]] = {}
        for question in load_e2e_questions(Path(questions_file)):
            if question.evidence:
                by_story.setdefault(question.story, []).append(question)
        for story, cases in by_story.items():
            line = [story]
            with story_services(settings) as services:
                ingest_story(services, Path(stories) / story, cache)
                for k, value in enumerate(values):
                    setattr(passages, args.constant, value)
                    found = 0
                    for case in cases:
                        read = read_citations(services.qa().ask(case.question, options))
                        texts = [c.text for c in read]
                        found += bool(evidence_found(texts, case.evidence, case.answers))
                    total = totals.setdefault((questions_file, k), [0, 0])
                    total[0] += found
                    total[1] += len(cases)
                    line.append(f"{found}/{len(cases)}")
            print(*line, flush=True)
    for (questions_file, k), (found, asked) in totals.items():
        print(f"{questions_file} {args.constant}={values[k]}: {found}/{asked}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
