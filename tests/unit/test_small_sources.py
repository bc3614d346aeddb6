"""What the small model reads: the first sources, within a prompt-token budget that prices
Japanese about three times English a character."""

from __future__ import annotations

import pytest

from storygraph.models import Citation
from storygraph.qa.retrieval.context import (
    SMALL_MAX_SOURCES,
    SMALL_SOURCE_TOKENS,
    ContextBuilder,
    SourceBudget,
    small_sources,
)
from storygraph.text.token_estimate import TOKENS_PER_CHAR, estimated_tokens


def _citations(texts: list[str]) -> list[Citation]:
    return [Citation(i, f"d:{i:04d}", "d.txt", t) for i, t in enumerate(texts, start=1)]


def test_a_character_is_priced_by_its_script() -> None:
    assert estimated_tokens("") == 0
    assert estimated_tokens("Momotaro") == pytest.approx(8 * TOKENS_PER_CHAR["en"])
    assert estimated_tokens("桃太郎です。") == pytest.approx(6 * TOKENS_PER_CHAR["ja"])
    mixed = estimated_tokens("Momotaro 桃太郎")
    assert mixed == pytest.approx(9 * TOKENS_PER_CHAR["en"] + 3 * TOKENS_PER_CHAR["ja"])


def test_four_english_sentences_fit_where_two_japanese_ones_do() -> None:
    english = _citations(["The old man went to the mountain to cut wood. " * 3] * 8)
    assert [c.number for c in small_sources(english)] == list(range(1, SMALL_MAX_SOURCES + 1))
    sentence = "おじいさんは山へしば刈りに、おばあさんは川へ洗濯に行きました。"
    japanese = _citations([sentence * 4] * 4)
    per_source = estimated_tokens(japanese[0].text)
    fit = int(SMALL_SOURCE_TOKENS // per_source)
    assert 1 <= fit < SMALL_MAX_SOURCES
    assert [c.number for c in small_sources(japanese)] == list(range(1, fit + 1))


def test_the_first_source_is_read_however_long_and_the_order_is_kept() -> None:
    long_first = _citations(["桃" * 600, "犬です。", "猿です。"])
    assert [c.number for c in small_sources(long_first)] == [1]
    # a short source after one that does not fit is not read in its place: the rank is kept
    texts = ["桃太郎は鬼が島へ行きました。", "鬼" * 500, "犬です。"]
    assert [c.number for c in small_sources(_citations(texts))] == [1]
    assert small_sources([]) == []


def test_a_passage_that_does_not_fit_is_read_as_its_matched_sentence() -> None:
    first = "おじいさんは山へしば刈りに、おばあさんは川へ洗濯に行きました。" * 9
    matched = "猿は柿の種を蟹に投げつけました。"
    passage = "その日はよく晴れていました。" * 8 + matched + "蟹は泣きました。" * 8
    citations = [
        Citation(1, "d:0001", "d.txt", first, "fact"),
        Citation(2, "d:0002", "d.txt", passage, "sentence", sentence=matched),
        Citation(3, "d:0003", "d.txt", "鬼" * 400, "sentence"),
        Citation(4, "d:0004", "d.txt", "犬です。", "sentence"),
    ]
    assert estimated_tokens(first) + estimated_tokens(passage) > SMALL_SOURCE_TOKENS
    read = small_sources(citations)
    # the passage is read (and so cited) as its sentence alone; the next source that fits
    # neither way ends the list, and the short one after it is not read in its place
    assert [c.number for c in read] == [1, 2]
    assert read[1].text == matched and read[1].sentence == ""
    # a fact source carries no matched sentence: it fits whole or ends the list
    facts = [citations[0], Citation(2, "d:0002", "d.txt", passage, "fact")]
    assert [c.number for c in small_sources(facts)] == [1]


def test_the_sources_cite_what_the_budget_read() -> None:
    first = "桃太郎は鬼が島へ行きました。" * 20
    matched = "きじは鬼の目をつつきました。"
    passage = "鬼たちは逃げました。" * 16 + matched
    citations = [
        Citation(1, "d:0001", "d.txt", first, "fact"),
        Citation(2, "d:0002", "d.txt", passage, "sentence", sentence=matched),
        Citation(3, "d:0003", "d.txt", "犬です。", "sentence"),
    ]
    builder = ContextBuilder(None, None, sentence_sources=2, budget=SourceBudget(4))  # type: ignore[arg-type]
    assert sum(estimated_tokens(c.text) for c in citations[:2]) > SMALL_SOURCE_TOKENS
    sources = builder.within_budget(citations)
    assert sources.citations[: len(sources.read)] == sources.read
    assert sources.citations[1].text == matched
    assert [c.number for c in sources.citations] == [1, 2, 3]
