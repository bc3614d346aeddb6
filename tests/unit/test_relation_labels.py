"""The label people see for a relation: the story's verb, found again in its own sentence."""

from __future__ import annotations

import pytest

from storygraph.library.relation_labels import relation_label, type_words
from storygraph.text.sanitize import sanitize_rel_type


@pytest.mark.parametrize(
    "rel_type, sentence, label",
    [
        ("KURABERU", "おじいさんは子供とせいを比べてみました。", "比べる"),  # romaji type
        ("DEFEATS", "桃太郎は鬼を退治しました。", "退治する"),  # the verb table's type
        ("FOLLOWS", "犬は桃太郎について行きました。", "ついて行く"),  # a te-compound
        ("BECOMES_COMPANION_OF", "犬は桃太郎の家来になりました。", "家来になる"),
        ("TALKS_TO", "猿は桃太郎に話しかけました。", "話しかける"),
    ],
)
def test_a_japanese_relation_reads_as_the_verb_its_sentence_writes(
    rel_type: str, sentence: str, label: str
) -> None:
    assert relation_label(rel_type, sentence) == label
    assert sanitize_rel_type(label) == rel_type  # the label is what the type was made from


def test_a_sentence_that_does_not_say_it_gets_the_verb_tables_word_not_romaji() -> None:
    label = relation_label("DEFEATS", "「鬼が島へ行こうと思います。」と桃太郎はこたえました。")
    assert label == "たおす"
    assert sanitize_rel_type(label) == "DEFEATS"


def test_an_english_story_or_no_sentence_reads_the_type_as_words() -> None:
    assert relation_label("TALKS_TO", "The monkey talked to Momotaro.") == "talks to"
    assert relation_label("KURABERU") == "kuraberu" == type_words("KURABERU")
