"""Today's premise check (storygraph.qa.verify.premise) on every question of a set, over what the
small embedded model reads, without a model call: for runs saved before the check existed, so
that eval/train_verifier.py reads today's `no_premise` signal from them (`RUN:QUESTIONS:OUT`).

    PYTHONPATH=. python eval/premise_replay.py QUESTIONS.jsonl STORIES_DIR OUT.json

Each story is ingested through the app's path for the small model (the parser reader; the e2e
ingest cache under STORYGRAPH_DATA_DIR applies); the engine gathers the sources and facts as for
an answer (`compose_answer=False`: retrieval does not depend on the model), the question is read
in its sources' language when asked across languages (as the model answers it), and the check
runs on the sources the model reads. OUT maps each question id to the check's reason ("no fact
or sentence has …") or null (the act is told, or the question is not one it checks).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from storygraph.evaluation.e2e import ingest_story, story_services
from storygraph.evaluation.harness import read_jsonl
from storygraph.llm.factory import ModelInfo
from storygraph.models import Citation
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.verify.premise import GraphPremiseChecker
from storygraph.services import question_structure, sentence_frames
from storygraph.settings import Settings

SMALL = ModelInfo("embedded", "premise-replay", capable=False)
"""The small embedded model's parts (its retrieval budget and sources); never called."""


Judge = Callable[[GraphPremiseChecker, QuestionAnalysis, Sequence[Citation], Any], Any]
"""What is recorded per question: (the check, the question's analysis as the model answers it,
the sources it reads, the engine's answer without the model) → a JSON value."""


def premise_verdict(
    checker: GraphPremiseChecker, analysis: QuestionAnalysis, read: Sequence[Citation], answer: Any
) -> str | None:
    """The premise check's reason, or None (module doc)."""
    return checker.missing(analysis, read, answer.citations, answer.facts)


def replay(questions: Path, stories: Path, judge: Judge = premise_verdict) -> dict[str, Any]:
    """`judge`'s value for every question of the set, story by story (module doc)."""
    settings = Settings()
    cache = Path(settings.data_dir) / "e2e"
    by_story: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for _, row in read_jsonl(questions):
        by_story[str(row["story"])].append(row)
    llm = FakeListChatModel(responses=["(never called)"])
    options = replace(QAOptions.from_settings(settings), compose_answer=False)
    found: dict[str, Any] = {}
    for story, cases in by_story.items():
        with story_services(settings, llm=llm, info=SMALL) as services:
            ingest_story(services, stories / story, cache)

            def chunk_text(chunk_id: str, store: Any = services.store) -> str:
                return str(store.chunks([chunk_id]).get(chunk_id, {}).get("text") or "")

            checker = GraphPremiseChecker(sentence_frames, chunk_text, question_structure)
            engine = services.qa()
            parts = engine.parts_for(options)
            for case in cases:
                question = str(case["question"])
                answer = engine.ask(question, options)
                analysis = parts.reader.read(question, [])
                if parts.across is not None:
                    analysis = parts.across.asked(analysis) or analysis
                read = parts.context.within_budget(answer.citations).read
                found[str(case["id"])] = judge(checker, analysis, read, answer)
        print(f"{story}: {len(cases)} questions", file=sys.stderr)
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    found = replay(Path(argv[0]), Path(argv[1]))
    Path(argv[2]).write_text(json.dumps(found, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{sum(v is not None for v in found.values())} of {len(found)} without premise")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
