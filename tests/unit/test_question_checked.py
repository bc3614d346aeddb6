"""The question as the support check reads it, read in the question room
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
from storygraph.qa.verify.support import GraphSupportChecker

FOLLOW = "犬はきびだんごを一つもらって、桃太郎のあとから、ついて行きました。"
SOURCE = [Citation(1, "c1", "story", FOLLOW)]


def _names(text: str, language: str) -> list[tuple[str, str]]:
    return [("犬", "犬")] if "犬" in text else []


def test_the_question_s_structure_is_read_by_the_question_room_lazily_and_once() -> None:
    callers: list[tuple[str, str]] = []

    def reader(text: str, language: str) -> QuestionStructure | None:
        callers.append((sys._getframe(1).f_globals["__name__"], text))
        return None

    checker = GraphSupportChecker(_names, None, None, None, reader)
    analysis = analyse("桃太郎の家来は誰？", [], LocalEntityFinder(), [], start_entities=["桃太郎"])
    assert checker.check(analysis, "  ", SOURCE, [], SOURCE).verdict == "not checked"
    assert callers == []  # an answer that does not reach the check: no parse
    checker.check(analysis, "犬です。[1]", SOURCE, [], SOURCE)
    checker.check(analysis, "犬です。[1]", SOURCE, [], SOURCE)
    assert callers and {module for module, _ in callers} == {"storygraph.qa.question.checked"}
    assert [text for _, text in callers].count(analysis.question) == 1


def test_without_the_parser_the_check_names_it_and_reads_the_question_s_words() -> None:
    calls: list[str] = []

    def broken(text: str, language: str) -> QuestionStructure | None:
        calls.append(text)
        raise ModelError("no parser here")

    words = GraphSupportChecker(_names)
    checker = GraphSupportChecker(_names, None, None, None, broken)
    analysis = analyse("桃太郎の家来は誰？", [], LocalEntityFinder(), [], start_entities=["桃太郎"])
    support = checker.check(analysis, "犬です。[1]", SOURCE, [], SOURCE)
    assert support == words.check(analysis, "犬です。[1]", SOURCE, [], SOURCE)
    assert checker.problem == "the question's structure could not be read: no parser here"
    checker.check(analysis, "犬です。[1]", SOURCE, [], SOURCE)
    assert calls == [analysis.question]  # not tried again
