"""A Japanese question's structure on GiNZA's real parse
(storygraph.qa.question.question_structure):
the predicate the question asks about is not the first verb it writes, and a participant's
role comes from its case on that predicate in its voice."""

from __future__ import annotations

from storygraph.ingest.frames.ja import parse
from storygraph.qa.question.question_structure import (
    QuestionStructure,
    case_direction,
    read_structure,
)


def _read(question: str) -> QuestionStructure:
    return read_structure(parse(question))


def _role(question: str, mention: str) -> str | None:
    structure = _read(question)
    at = question.find(mention)
    return structure.direction(at, at + len(mention))


def test_the_asked_predicate_is_the_nominalised_clause_not_a_clause_of_time_before_it():
    question = "船が陸に着いた後、宝物を積んだ車の先に立って引き出したのは誰？"
    structure = _read(question)
    assert structure.lemma == "引き出す"
    assert structure.words == "立って引き出した"  # the chain: one act
    # 船 arrives in a clause of time: no participant of the pulling
    at = question.find("船")
    assert structure.inside_other_clause(at, at + 1)
    # the cart (車の先に立って: standing at its front) takes part, in a slot the chained verb
    # does not say of the pulling
    assert _role(question, "車") == "any"


def test_a_causative_passive_subject_does_the_act():
    # おじいさんが食べさせられた: he was made to eat: he eats (a passive alone would be eaten)
    question = "たぬき汁の代わりに、おじいさんが食べさせられたものは？"
    assert _read(question).voice == "causative passive"
    assert _role(question, "おじいさん") == "out"


def test_a_passive_subject_is_done_to_and_its_ni_noun_does_it():
    assert _role("鬼は誰に倒された？", "鬼") == "in"
    assert _role("うさぎに助けてもらったのは誰？", "うさぎ") == "out"


def test_the_question_words_clause_names_the_predicate():
    assert _read("おじいさんはおばあさんに何をこしらえておくよう頼んだ？").lemma == "こしらえる"
    assert _read("かにが川のそばで拾ったものは？").lemma == "拾う"
    assert _read("桃太郎を倒したのは誰？").lemma == "倒す"
    assert _role("桃太郎を倒したのは誰？", "桃太郎") == "in"
    assert _role("犬は桃太郎から何をもらいましたか？", "桃太郎") == "out"


def test_a_question_asking_what_something_is_has_no_predicate_and_its_clauses_are_outside():
    question = "玉手箱に入っていた「人間のいちばんだいじなたから」とは何だった？"
    structure = _read(question)
    assert structure.predicate == ""
    assert structure.inside_other_clause(0, len("玉手箱"))
    assert _read("桃太郎の仲間は誰？").predicate == ""


def test_case_directions_by_voice():
    assert case_direction("が", "active") == "out"
    assert case_direction("を", "active") == "in"
    assert case_direction("と", "active") == "any"
    assert case_direction("に", "passive") == "out"
    assert case_direction("に", "causative") == "out"
    assert case_direction("が", "causative passive") == "out"


def test_a_clause_on_the_asked_nouns_subject_is_the_asked_predicate() -> None:
    # 「…道具は何？」: the tool is the gap of the clause on it, and 金太郎 its participant
    question = "金太郎がおかあさんにもらって、かついで歩いていた大きな道具は何？"
    structure = _read(question)
    assert structure.predicate
    assert _role(question, "金太郎") == "out"
    assert _read("鬼が島に忘れて行ったものは何？").lemma == "行く"
