"""A story's chapters from its headings (storygraph.text.chapters), each construction and the
lines that look like one and are not; the chunks carry them."""

from __future__ import annotations

import itertools

import pytest

from storygraph.ingest.pipeline import prepare
from storygraph.text.aozora import heading_titles, strip_aozora
from storygraph.text.chapters import (
    Chapter,
    chapter_label,
    chapter_name,
    chapters,
    kanji_number,
    kanji_value,
    roman_value,
)
from storygraph.text.chunking import chunk_text


def _titles(text: str, marked: tuple[str, ...] = ()) -> list[tuple[int, str]]:
    return [(c.index, c.title) for c in chapters(text, marked)]


def _covers(text: str, found: list[Chapter]) -> None:
    """Chapters follow one another and cover the text whole."""
    assert found[0].start == 0 and found[-1].end == len(text)
    for before, after in itertools.pairwise(found):
        assert before.end == after.start


def test_a_text_with_no_heading_is_one_chapter_zero_labelled_as_nothing() -> None:
    text = "Once upon a time there was a hare.\nThe tortoise won.\n"
    assert chapters(text) == [Chapter(0, "", 0, len(text))]
    assert chapter_label(0, "en") == "" and chapter_label(None, "ja") == ""


def test_lines_of_kanji_numerals_alone_start_chapters_in_sequence() -> None:
    text = "むかし。\n\n一\n\nおじいさんは山へ。\n二\n桃が流れてきました。\n十三\n三\n鬼が島へ。\n"
    found = chapters(text)
    # 十三 is out of sequence after 二: a numeral, not a heading
    assert [(c.index, c.title) for c in found] == [(0, ""), (1, "一"), (2, "二"), (3, "三")]
    _covers(text, found)
    assert text[found[1].start :].startswith("一")


def test_a_kanji_numeral_inside_a_sentence_is_no_heading() -> None:
    text = "おじいさんは一人で山へ行きました。\n二人はよろこびました。\n三日たちました。\n"
    assert _titles(text) == [(0, "")]


def test_numbered_japanese_headings_with_and_without_titles() -> None:
    text = "第一章\n犬が来ました。\n第2話　猿\n猿が来ました。\n第三回・きじ\nきじが来ました。\n"
    assert _titles(text) == [(1, "第一章"), (2, "第2話　猿"), (3, "第三回・きじ")]


def test_a_sentence_opening_with_a_numbered_chapter_is_prose() -> None:
    text = "第三章で桃太郎は鬼をたおしました。\n第一章、はじまり。\n"
    assert _titles(text) == [(0, "")]


def test_english_chapter_headings_roman_and_arabic_with_their_titles() -> None:
    text = (
        "Alice's Adventures\n\nCHAPTER I.\nDown the Rabbit-Hole\n\nAlice was tired.\n\n"
        "Chapter II: The Pool of Tears\n\nShe cried.\n\nChapter 3\n\nA race.\n"
    )
    found = chapters(text)
    assert [(c.index, c.title) for c in found] == [
        (0, ""),
        (1, "CHAPTER I. Down the Rabbit-Hole"),
        (2, "Chapter II: The Pool of Tears"),
        (3, "Chapter 3"),
    ]
    _covers(text, found)


def test_a_sentence_about_a_chapter_is_prose() -> None:
    text = "Chapter 3 was the longest one.\nChapter IIII\nThe end.\n"
    assert _titles(text) == [(0, "")]
    assert _titles("Chapter 3 was SO long!\nThe end.\n") == [(0, "")]
    assert _titles("Chapter 3 で桃太郎は鬼をたおしました。\nおしまい。\n") == [(0, "")]


def test_a_title_in_capitals_on_the_headings_line_may_ask_or_exclaim() -> None:
    text = (
        "Chapter 1 THE OWL AND THE MILLER\n\nThe owl flew.\n\n"
        "Chapter 2 COME DOWN, COME DOWN!\n\nThe miller called.\n\n"
        "CHAPTER 3 WHO TOOK THE FLOUR?\n\nNobody knew.\n"
    )
    assert [t for _, t in _titles(text)] == [
        "Chapter 1 THE OWL AND THE MILLER",
        "Chapter 2 COME DOWN, COME DOWN!",
        "CHAPTER 3 WHO TOOK THE FLOUR?",
    ]


def test_roman_numerals_alone_between_blank_lines_start_chapters() -> None:
    text = "I.\n\nThe hare laughed.\n\nII\n\nThe tortoise walked.\n\nXIV\n\nIII\n\nThe end.\n"
    # XIV is out of sequence after II: not a heading
    assert _titles(text) == [(1, "I."), (2, "II"), (3, "III")]


def test_the_word_i_in_dialogue_is_no_heading() -> None:
    text = (
        '"Who is there?"\n\n"I!" said the Hare.\n\nI\nthought so, said the Tortoise.\n\n'
        "Then\nI\nran.\n"
    )
    # "I!" has a mark, the first "I" has text right after it, the last text on both sides
    assert _titles(text) == [(0, "")]


def test_a_lone_i_after_chapter_two_is_no_heading() -> None:
    text = "I\n\nThe hare.\n\nII\n\nThe tortoise said:\n\nI\n\nwill win.\n"
    assert _titles(text) == [(1, "I"), (2, "II")]


def test_aozora_heading_notes_are_read_before_they_are_stripped() -> None:
    raw = (
        "桃太郎\n\n［＃３字下げ］旅立ち［＃「旅立ち」は大見出し］\n\n桃太郎は旅に出ました。\n"
        "旅立ち\n"  # the same words later, in the text: not a second heading
        "［＃大見出し］鬼｜ヶ島《おにがしま》［＃大見出し終わり］\n鬼をたおしました。\n"
        "［＃「小さな話」は小見出し］\n"
    )
    marked = heading_titles(raw)
    assert marked == ("旅立ち", "鬼ヶ島")
    text = strip_aozora(raw)
    assert _titles(text, marked) == [(0, ""), (1, "旅立ち"), (2, "鬼ヶ島")]
    # without the notes nothing marks them: their words are not headings of their own
    assert _titles(text) == [(0, "")]


def test_prepare_reads_an_aozora_texts_chapters_from_its_notes() -> None:
    raw = "一［＃「一」は中見出し］\n犬が来ました。\n二［＃「二」は中見出し］\n猿が来ました。\n"
    prepared = prepare("tale.txt", raw.encode("utf-8"), max_bytes=1 << 20)
    assert [(c.index, c.title) for c in prepared.chapters] == [(1, "一"), (2, "二")]


def test_chunks_never_span_two_chapters_and_carry_theirs() -> None:
    text = "一\n犬が来ました。猿が来ました。\n二\nきじが来ました。鬼が島へ行きました。\n"
    chunks = chunk_text(text, "doc", 200, 50, chapters(text))
    assert [(c.chapter, c.chapter_title) for c in chunks] == [(1, "一"), (2, "二")]
    # the heading is the chunks' title, not their text: no source opens with 「二」
    assert chunks[0].text.startswith("犬") and chunks[1].text.startswith("きじ")
    assert "きじ" not in chunks[0].text and text[chunks[1].start : chunks[1].end] == chunks[1].text
    english = "CHAPTER I.\nDown the Rabbit-Hole\n\nAlice was tired.\n"
    assert [c.text for c in chunk_text(english, "e", 200, 0, chapters(english))] == [
        "Alice was tired."
    ]
    assert [c.id for c in chunks] == ["doc:0000", "doc:0001"]


def test_a_text_with_no_heading_chunks_as_before() -> None:
    text = "The hare ran. The tortoise walked.\n\nThe tortoise won. The hare slept.\n"
    assert chunk_text(text, "d", 40, 10) == chunk_text(text, "d", 40, 10, chapters(text))
    assert {c.chapter for c in chunk_text(text, "d", 40, 10)} == {0}


@pytest.mark.parametrize(
    ("number", "kanji"),
    [(1, "一"), (3, "三"), (10, "十"), (13, "十三"), (20, "二十"), (105, "百五")],
)
def test_kanji_numbers_both_ways(number: int, kanji: str) -> None:
    assert kanji_number(number) == kanji and kanji_value(kanji) == number


def test_numerals_that_are_not_well_formed() -> None:
    assert roman_value("XIV") == 14 and roman_value("IIII") is None and roman_value("IC") is None
    assert kanji_value("一〇") == 10 and kanji_value("人") is None


def test_chapter_labels() -> None:
    assert chapter_label(3, "ja") == "第三章" and chapter_label(3, "en") == "Chapter 3"


def test_a_heading_that_only_prints_its_number_adds_nothing_to_the_chapters_name() -> None:
    for numeral in ("三", "第三章", "３", "3"):
        assert chapter_name(3, numeral, "ja") == "第三章", numeral
    for numeral in ("III", "CHAPTER III.", "Chapter 3", "3."):
        assert chapter_name(3, numeral, "en") == "Chapter 3", numeral
    assert chapter_name(3, "鬼ヶ島", "ja") == "第三章 · 鬼ヶ島"
    assert chapter_name(1, "Down the Rabbit-Hole", "en") == "Chapter 1 · Down the Rabbit-Hole"
    assert chapter_name(0, "序", "ja") == "序" and chapter_name(0, "", "ja") == ""
    assert chapter_name(2, "Ivy", "en") == "Chapter 2 · Ivy"  # a word, not a numeral


def test_an_unnumbered_preface_is_chapter_zero_so_numbers_read_as_printed() -> None:
    raw = (
        "序［＃「序」は中見出し］\n前置き。\n"
        "一［＃「一」は中見出し］\n河童。\n二［＃「二」は中見出し］\n沼。\n"
    )
    text = strip_aozora(raw)
    assert _titles(text, heading_titles(raw)) == [(0, "序"), (1, "一"), (2, "二")]
    # titled chapters that print no number at all are numbered in order
    raw = "旅立ち［＃「旅立ち」は大見出し］\n旅。\n鬼ヶ島［＃「鬼ヶ島」は大見出し］\n鬼。\n"
    assert _titles(strip_aozora(raw), heading_titles(raw)) == [(1, "旅立ち"), (2, "鬼ヶ島")]


def test_a_chapter_title_on_the_next_line_may_be_a_question() -> None:
    text = "CHAPTER XI.\nWho Stole the Tarts?\n\nThe King and Queen sat.\n"
    assert _titles(text.replace("XI", "I")) == [(1, "CHAPTER I. Who Stole the Tarts?")]
    prose = "CHAPTER I.\nThe King and Queen of Hearts sat on their throne, with a crowd.\n\nThen.\n"
    assert _titles(prose) == [(1, "CHAPTER I.")]
