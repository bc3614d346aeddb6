"""The one reading of a Japanese parse's clauses (storygraph.qa.question.clauses) and the question
structure's view of it (question_structure.read_clauses)."""

from __future__ import annotations

from storygraph.ingest.frames.ja import parse
from storygraph.qa.question.clauses import Clause, read
from storygraph.qa.question.question_structure import read_clauses as quote_view

_URASHIMA = (
    "何かとおもって浦島がのぞいてみると、小さいかめの子を一ぴきつかまえて、"
    "棒でつついたり、石でたたいたり、さんざんにいじめているのです。"
)
_KINTARO = (
    "そして大きくなると、えらいお侍になって、渡辺綱、卜部季武、碓井貞光といっしょに、"
    "頼光の四天王と呼ばれるようになりました。"
)


def _clause(text: str, lemma: str) -> Clause:
    return next(c for c in read(parse(text)) if c.lemma == lemma and not c.subsidiary)


def test_the_clauses_leading_up_to_a_verb_give_it_their_nouns_in_the_quote_view() -> None:
    bully = _clause(_URASHIMA, "いじめる")
    assert [(a.phrase, a.source) for a in bully.arguments if a.role == "noun"][:3] == [
        ("さんざん", "own"),
        ("石", "leading"),
        ("棒", "leading"),
    ]
    quoted = next(c for c in quote_view(parse(_URASHIMA)) if c.lemma == "いじめる")
    assert ("かめの子", "を") in quoted.arguments  # with its の-owner, from つかまえて
    assert ("石", "で") in quoted.arguments and ("棒", "で") in quoted.arguments


def test_a_verb_under_a_light_verb_takes_its_hosts_nouns_and_their_case_marked_partner() -> None:
    called = _clause(_KINTARO, "呼ぶ")
    hosted = [(a.phrase, a.case, a.role) for a in called.arguments if a.source == "light host"]
    assert hosted == [("いっしょ", "に", "noun"), ("碓井貞光", "と", "case-marked")]
    quoted = next(c for c in quote_view(parse(_KINTARO)) if c.lemma == "呼ぶ")
    assert quoted.voice == "passive"
    assert quoted.arguments == (("頼光の四天王", "と"), ("いっしょ", "に"), ("碓井貞光", "と"))


def test_a_zero_subject_takes_the_chained_verbs_subject_else_the_topic_before() -> None:
    think = _clause(_URASHIMA, "おもう")
    assert [(a.phrase, a.case) for a in think.arguments if a.source == "inherited subject"] == [
        ("浦島", "が")
    ]
    text = "浦島は見かねて、子どもたちに声をかけました。"
    assert [a.source for a in _clause(text, "かける").arguments][-1] == "topic before"
    # the quote view reads the leading clause's topic as it is written, no filled subject
    quoted = next(c for c in quote_view(parse(text)) if c.lemma == "かける")
    assert quoted.arguments == (("声", "を"), ("浦島", "は"))
    assert quoted.lemmas == ("見る", "かける")
