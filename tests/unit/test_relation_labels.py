"""The label people see for a relation: the story's verb, found again in its own sentence."""

from __future__ import annotations

import pytest

from storygraph.library.relation_labels import relation_label, type_words
from storygraph.text.sanitize import kana_from_romaji, romanize, sanitize_rel_type


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


def test_a_romaji_type_the_sentence_does_not_say_reads_as_its_kana_never_romaji() -> None:
    """issue #42: SOROERU, MUKU in the facts list of a Japanese story."""
    sentence = "桃太郎は家来をつれて出かけました。"  # the model's fact, not said in so many words
    assert relation_label("SOROERU", sentence) == "そろえる"
    assert relation_label("MUKU", sentence) == "むく"
    assert relation_label("MOTTE_IKU", sentence) == "もっていく"
    assert relation_label("KURABERU", sentence) == "くらべる"


@pytest.mark.parametrize(
    "kana", ["そろえる", "くらべる", "もっていく", "しゃべる", "ちぢむ", "まっちゃ", "かんじる"]
)
def test_kana_from_romaji_is_romanize_read_back(kana: str) -> None:
    romaji = romanize(kana).upper()
    assert romanize(kana_from_romaji(romaji) or "") == romanize(kana)


@pytest.mark.parametrize("rel_type", ["MEETS", "LIVES_IN", "GOES_TO", "DEFEATS", "X1"])
def test_english_types_are_no_romaji(rel_type: str) -> None:
    assert kana_from_romaji(rel_type) is None
