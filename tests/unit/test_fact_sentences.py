"""A fact stated in several sentences is read by the one holding most of the question's
terms (storygraph.qa.retrieval.fact_sentences); made-up sentences."""

from __future__ import annotations

from storygraph.models import Fact
from storygraph.qa.retrieval.fact_sentences import nearest_sentence, terms_held
from storygraph.text.terms import content_terms

LINES = [
    "“Who are you?” said the Owl to the Mole.",
    "“Sing me the song of the river,” said the Owl to the Mole.",
    "“Good night,” said the Owl to the Mole.",
]


def _says(sentences: list[str]) -> Fact:
    return Fact(
        "Owl",
        "SAYS",
        "Mole",
        chunk_ids=[f"c:{i}" for i in range(len(sentences))],
        evidence=next((s for s in sentences if s), ""),
        sentences=list(sentences),
    )


def _terms(question: str, language: str = "en") -> tuple[str, ...]:
    return content_terms(question, language)


def test_a_line_said_again_and_again_is_read_by_the_one_the_question_asks_about() -> None:
    fact = nearest_sentence(
        _says(LINES), _terms("What song did the Owl ask to hear from the river?")
    )
    assert fact.evidence == LINES[1]
    assert fact.chunk_ids == ["c:1", "c:0", "c:2"]
    assert fact.sentences == [LINES[1], LINES[0], LINES[2]]


def test_a_question_whose_terms_no_sentence_holds_keeps_the_first_sentence() -> None:
    original = _says(LINES)
    assert nearest_sentence(original, _terms("What colour was the boat?")) is original


def test_a_tie_keeps_the_earlier_sentence() -> None:
    lines = ["The fox gave the crow a ring.", "The fox gave the crow a ring again."]
    original = _says(lines)
    assert nearest_sentence(original, _terms("What did the fox give the crow?")) is original


def test_a_fact_stated_once_is_unchanged() -> None:
    original = _says([LINES[1]])
    assert nearest_sentence(original, _terms("What song did the Owl ask for?")) is original


def test_a_chunk_without_a_sentence_is_never_chosen() -> None:
    fact = nearest_sentence(_says(["", *LINES[:2]]), _terms("Which river song?"))
    assert fact.evidence == LINES[1]


def test_japanese_sentences_are_compared_in_their_own_terms() -> None:
    lines = [
        "きつねはからすに「こんにちは」と言いました。",
        "きつねはからすに「歌を歌って」と頼みました。",
    ]
    fact = nearest_sentence(
        _says(lines), content_terms("きつねはからすに何を歌ってと頼んだ？", "ja")
    )
    assert fact.evidence == lines[1]
    assert terms_held(lines[1], content_terms("歌を頼む", "ja")) >= 1
