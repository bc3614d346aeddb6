"""A person question answered with the person the question itself names is told apart
(docs/ISSUES.md#not-an-answer). The analysis is the real one; start entities are given, as the eval
does."""

from __future__ import annotations

from storygraph.qa.generation.checks import echoed_name
from storygraph.qa.question.analysis import analyse
from storygraph.qa.question.entities import LocalEntityFinder


def _echo(question: str, entities: list[str], answer: str) -> str | None:
    analysis = analyse(question, [], LocalEntityFinder(), [], start_entities=entities)
    return echoed_name(answer, analysis)


TANUKI = "たぬきの縄をといてやったのは誰？"
TITLE = "「一寸法師」で鬼を退治したのは誰？"


def test_the_question_s_own_person_as_the_whole_answer_is_an_echo() -> None:
    assert _echo(TANUKI, ["たぬき"], "たぬきです。[3]") == "たぬき"
    whom = "都に帰った貞光は、金太郎を誰に会わせた？"
    assert _echo(whom, ["貞光", "金太郎"], "金太郎です。[2]") == "金太郎"
    assert _echo("Who woke the Lion from his sleep?", ["Lion"], "The Lion. [1]") == "Lion"


def test_another_person_a_longer_answer_or_another_kind_of_question_is_no_echo() -> None:
    assert _echo(TANUKI, ["たぬき"], "おばあさんです。[3]") is None
    # the name inside a sentence that says more is the model's own reading, not an echo
    assert _echo(TANUKI, ["たぬき"], "たぬきを助けたおばあさんです。") is None
    # not a person question: a thing the question names may well be the answer
    assert _echo("桃太郎が持って行ったものは何？", ["桃太郎"], "桃太郎です。") is None
    assert _echo("Who woke the Lion from his sleep?", ["Lion"], "A Mouse. [2]") is None


def test_a_name_the_question_only_quotes_may_be_the_answer() -> None:
    # a story's title in quotes is not a participant the question names
    assert _echo(TITLE, ["一寸法師", "鬼"], "一寸法師です。[1]") is None
    assert _echo(TITLE, ["一寸法師", "鬼"], "鬼です。[1]") == "鬼"
