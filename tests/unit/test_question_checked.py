"""The question as the premise check reads it, read in the question room
(storygraph.qa.question.checked, issue 43): the checker's structure reader runs only there,
only when an answer reaches the check, once per question; without the parser the check says
why and reads the question's words."""

from __future__ import annotations

import sys

from storygraph.errors import ModelError
from storygraph.models import Citation
from storygraph.qa.question.analysis import analyse
from storygraph.qa.question.entities import LocalEntityFinder
from storygraph.qa.question.question_structure import QuestionStructure
from storygraph.qa.verify.premise import GraphPremiseChecker

BOW = "桃太郎がふり返ると、猿はていねいに、おじぎをして、たずねました。"
SOURCE = [Citation(1, "c1", "story", BOW)]
QUESTION = "桃太郎を倒したのは誰？"


def test_the_question_s_structure_is_read_by_the_question_room_lazily_and_once() -> None:
    callers: list[tuple[str, str]] = []

    def reader(text: str, language: str) -> QuestionStructure | None:
        callers.append((sys._getframe(1).f_globals["__name__"], text))
        return None

    checker = GraphPremiseChecker(questions=reader)
    analysis = analyse(QUESTION, [], LocalEntityFinder(), [], start_entities=["桃太郎"])
    assert callers == []  # nothing asked yet: no parse
    checker.missing(analysis, SOURCE, SOURCE, [])
    checker.missing(analysis, SOURCE, SOURCE, [])
    assert callers and {module for module, _ in callers} == {"storygraph.qa.question.checked"}
    assert [text for _, text in callers].count(analysis.question) == 1


def test_without_the_parser_the_check_names_it_and_reads_the_question_s_words() -> None:
    calls: list[str] = []

    def broken(text: str, language: str) -> QuestionStructure | None:
        calls.append(text)
        raise ModelError("no parser here")

    words = GraphPremiseChecker()
    checker = GraphPremiseChecker(questions=broken)
    analysis = analyse(QUESTION, [], LocalEntityFinder(), [], start_entities=["桃太郎"])
    said = checker.missing(analysis, SOURCE, SOURCE, [])
    assert said is not None and said == words.missing(analysis, SOURCE, SOURCE, [])
    assert checker.problem == "the question's structure could not be read: no parser here"
    checker.missing(analysis, SOURCE, SOURCE, [])
    assert calls == [analysis.question]  # not tried again
