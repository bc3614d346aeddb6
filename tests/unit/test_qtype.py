"""Question-type detection (Japanese and English) and the direction / slot adjustment."""

from __future__ import annotations

import pytest

from storygraph.qa.question.question_type import QuestionType, detect_question_type
from storygraph.qa.retrieval.type_priors import DIRECTION_BONUS, expansion_wanted, fact_prior
from storygraph.text.language import detect_language


def _qtype(question: str, entities: list[str]) -> QuestionType:
    """Detection as the analysis runs it: with the question's language read once."""
    return detect_question_type(question, entities, language=detect_language(question))


@pytest.mark.parametrize(
    ("question", "entity", "kind", "direction"),
    [
        ("桃太郎を倒したのは誰？", "桃太郎", "who_did", "in"),
        ("誰が桃太郎を倒した？", "桃太郎", "who_did", "in"),
        ("桃太郎が倒したのは誰？", "桃太郎", "who_was_done_to", "out"),
        ("桃太郎は誰を家来にした？", "桃太郎", "who_was_done_to", "out"),
        ("鬼は誰に倒された？", "鬼", "who_did", "in"),
        ("桃太郎は誰にきびだんごをあげた？", "桃太郎", "who_was_done_to", "out"),
        ("おじいさんは誰と住んでいる？", "おじいさん", "with_whom", "out"),
        ("桃太郎はどこへ行った？", "桃太郎", "where", "out"),
        ("桃太郎はいつ帰った？", "桃太郎", "when", "out"),
        ("鬼は何を持っている？", "鬼", "what", "out"),
        ("桃太郎は何から生まれた？", "桃太郎", "what", "out"),
        ("桃太郎の仲間は誰？", "桃太郎", "who", "any"),
        ("桃太郎は誰？", "桃太郎", "who", "any"),
    ],
)
def test_japanese_question_types(question: str, entity: str, kind: str, direction: str) -> None:
    found = _qtype(question, [entity])
    assert (found.kind, found.direction_for(entity), found.language) == (kind, direction, "ja")


@pytest.mark.parametrize(
    ("question", "entity", "kind", "direction"),
    [
        ("Who defeated Momotaro?", "Momotaro", "who_did", "in"),
        ("Who did Momotaro defeat?", "Momotaro", "who_was_done_to", "out"),
        ("Whom did Momotaro defeat?", "Momotaro", "who_was_done_to", "out"),
        ("Who was defeated by Momotaro?", "Momotaro", "who_was_done_to", "out"),
        ("Who was Momotaro raised by?", "Momotaro", "who_did", "in"),
        ("Who does the old man live with?", "old man", "with_whom", "out"),
        ("With whom does the old man live?", "old man", "with_whom", "out"),
        ("Where did Momotaro go?", "Momotaro", "where", "out"),
        ("When did Momotaro come home?", "Momotaro", "when", "out"),
        ("What did the old woman find?", "old woman", "what", "out"),
        ("What happened to the Lamb?", "Lamb", "what", "in"),
        ("Who are Momotaro's companions?", "Momotaro", "who", "any"),
        ("Who are the companions of Momotaro?", "Momotaro", "who", "any"),
    ],
)
def test_english_question_types(question: str, entity: str, kind: str, direction: str) -> None:
    found = _qtype(question, [entity])
    assert (found.kind, found.direction_for(entity), found.language) == (kind, direction, "en")


def test_an_entity_absent_from_the_question_has_no_preference() -> None:
    found = _qtype("桃太郎を倒したのは誰？", ["犬"])
    assert found.direction_for("犬") == "any"


def test_with_whom_asks_for_an_expansion_and_who_did_does_not() -> None:
    assert expansion_wanted(_qtype("おじいさんは誰と住んでいる？", ["おじいさん"]))
    assert expansion_wanted(_qtype("Who does the old man live with?", ["old man"]))
    assert not expansion_wanted(_qtype("桃太郎を倒したのは誰？", ["桃太郎"]))


def test_prior_prefers_edges_into_the_object_of_the_question() -> None:
    qtype = _qtype("桃太郎を倒したのは誰？", ["桃太郎"])
    types = {"鬼": "Character", "桃太郎": "Character", "村": "Place"}
    into = fact_prior(qtype, "鬼", "桃太郎", ["桃太郎"], types)
    out_of = fact_prior(qtype, "桃太郎", "鬼", ["桃太郎"], types)
    to_place = fact_prior(qtype, "桃太郎", "村", ["桃太郎"], types)
    assert into - out_of == pytest.approx(2 * DIRECTION_BONUS)
    assert to_place < out_of < 0 < into


def test_prior_for_where_prefers_places() -> None:
    qtype = _qtype("Where did Momotaro go?", ["Momotaro"])
    types = {"Momotaro": "Character", "island": "Place", "dog": "Animal"}
    assert fact_prior(qtype, "Momotaro", "island", ["Momotaro"], types) > fact_prior(
        qtype, "Momotaro", "dog", ["Momotaro"], types
    )


def test_prior_is_zero_for_facts_not_touching_a_start_node() -> None:
    qtype = _qtype("Who defeated Momotaro?", ["Momotaro"])
    assert fact_prior(qtype, "dog", "monkey", ["Momotaro"], {}) == 0.0
