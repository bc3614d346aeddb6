"""The parse's roles for the asked act, per question of a set, over what the small embedded model
reads, without a model call: what fills the asked slot of the question's act beside its named
participant, in the parser's frames of the sources read and in the facts they tell
(storygraph.qa.verify.premise reads the same relations to say whether the act is told at all).

    PYTHONPATH=. python eval/role_replay.py QUESTIONS.jsonl STORIES_DIR OUT.json

OUT maps each question id to the fillers found: a list of {"filler", "sentence", "how"}
("frame" or "fact"), [] when the question is of a kind the premise check asks (a doer or a thing
of a verb about a named participant) but no relation of its act with that participant was read,
and null when it is not of such a kind. `eval/role_signals.py` turns it into a verifier signal
on saved runs (does the answer's core fill that slot in a sentence it cites?).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Sequence
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
from storygraph.qa.question.relation_words import type_stems
from storygraph.qa.verify.premise import PREMISE_KINDS, GraphPremiseChecker, wanted_slots
from storygraph.qa.verify.support_links import same
from storygraph.services import question_structure, sentence_frames
from storygraph.settings import Settings

SMALL = ModelInfo("embedded", "role-replay", capable=False)


Fillers = list[dict[str, str]]


def fillers(
    checker: GraphPremiseChecker, analysis: QuestionAnalysis, read: Sequence[Citation], answer: Any
) -> Fillers | None:
    """The asked slot's fillers among the links the premise check reads (module doc); `answer`
    is the engine's answer without the model (its citations and facts)."""
    analysis = checker.parser.checked(analysis)
    wanted = [(e, s) for e, s in wanted_slots(analysis) if s != "any"]
    if not wanted or not analysis.stems or analysis.qtype.kind not in PREMISE_KINDS:
        return None
    if analysis.qtype.speech:
        return None
    found = []
    for link in checker._links(analysis, read, answer.citations, answer.facts):
        if not type_stems(link.relation) & (analysis.related or analysis.stems):
            continue
        for entity, slot in wanted:
            if slot == "start" and same(link.end, entity):
                found.append({"filler": link.start, "sentence": link.sentence, "how": link.how})
            if slot == "end" and same(link.start, entity):
                found.append({"filler": link.end, "sentence": link.sentence, "how": link.how})
    return found


def replay(questions: Path, stories: Path) -> dict[str, Fillers | None]:
    settings = Settings()
    cache = Path(settings.data_dir) / "e2e"
    by_story: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for _, row in read_jsonl(questions):
        by_story[str(row["story"])].append(row)
    llm = FakeListChatModel(responses=["(never called)"])
    options = replace(QAOptions.from_settings(settings), compose_answer=False)
    found: dict[str, Fillers | None] = {}
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
                found[str(case["id"])] = fillers(checker, analysis, read, answer)
        print(f"{story}: {len(cases)} questions", file=sys.stderr)
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    found = replay(Path(argv[0]), Path(argv[1]))
    Path(argv[2]).write_text(json.dumps(found, ensure_ascii=False, indent=1), encoding="utf-8")
    asked = [v for v in found.values() if v is not None]
    filled = sum(bool(v) for v in asked)
    print(f"{len(asked)} of {len(found)} asked of the act; {filled} with a filler")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
