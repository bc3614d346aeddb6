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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from premise_replay import replay

from storygraph.models import Citation
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.relation_words import type_stems
from storygraph.qa.verify.premise import PREMISE_KINDS, GraphPremiseChecker, wanted_slots
from storygraph.qa.verify.support_links import same

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
    for link in checker.links(analysis, read, answer.citations, answer.facts):
        if not type_stems(link.relation) & (analysis.related or analysis.stems):
            continue
        for entity, slot in wanted:
            if slot == "start" and same(link.end, entity):
                found.append({"filler": link.start, "sentence": link.sentence, "how": link.how})
            if slot == "end" and same(link.start, entity):
                found.append({"filler": link.end, "sentence": link.sentence, "how": link.how})
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    found = replay(Path(argv[0]), Path(argv[1]), fillers)
    Path(argv[2]).write_text(json.dumps(found, ensure_ascii=False, indent=1), encoding="utf-8")
    asked = [v for v in found.values() if v is not None]
    filled = sum(bool(v) for v in asked)
    print(f"{len(asked)} of {len(found)} asked of the act; {filled} with a filler")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
