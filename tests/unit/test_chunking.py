"""Sentence splitting, chunking with overlap, evidence sentences and language detection."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storygraph.models import Chunk
from storygraph.text.chunking import chunk_text, evidence_sentence, split_sentences
from storygraph.text.language import detect_language
from tests.helpers.stories import story_files

STORIES = Path(__file__).resolve().parents[2].parent / "shared" / "stories"
needs_stories = pytest.mark.usefixtures("shared_dir")  # fails, never skips, without it
FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ALPHABET = "あいう桃太郎鬼abc XY。、！？!?.,「」『』()\n\n　"


def _sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in split_sentences(text)]


def _story(name: str) -> str:
    return (STORIES / name).read_text(encoding="utf-8")


def test_japanese_terminators_and_quotes() -> None:
    text = (
        "むかしむかし。「おやおや、桃だこと。持って帰りましょう。」おばあさんは言いました！次は？"
    )
    assert _sentences(text) == [
        "むかしむかし。",
        "「おやおや、桃だこと。持って帰りましょう。」",
        "おばあさんは言いました！",
        "次は？",
    ]


def test_quote_followed_by_quotative_to_stays_in_sentence() -> None:
    text = "「行くぞ！」と桃太郎は言った。\n「はい。」\n　と犬はこたえました。\n次の日。"
    assert _sentences(text) == [
        "「行くぞ！」と桃太郎は言った。",
        "「はい。」\n　と犬はこたえました。",
        "次の日。",
    ]


def test_newlines_and_blank_lines_end_sentences() -> None:
    text = "一\n\n　むかし、山がありました\n川もありました\n\n二"
    assert _sentences(text) == ["一", "むかし、山がありました", "川もありました", "二"]


def test_line_ending_in_comma_continues() -> None:
    text = "桃太郎がふり返ると、きじはおじぎをして、\n「桃太郎さん、どちらへ。」\nと言った。"
    assert _sentences(text) == [text]


def test_unclosed_quote_does_not_swallow_the_text() -> None:
    text = "「あっちの水は、かあらいぞ。\nこっちの水は、ああまいぞ。\n\nと歌いました。"
    assert _sentences(text) == [
        "「あっちの水は、かあらいぞ。",
        "こっちの水は、ああまいぞ。",
        "と歌いました。",
    ]


def test_english_abbreviations_numbers_and_dialogue() -> None:
    text = 'Mr. Fox met Dr. J. Bear at 3.30 p.m. today. "Oh!" cried Hans. Then he left... Go!'
    assert _sentences(text) == [
        "Mr. Fox met Dr. J. Bear at 3.30 p.m. today.",
        '"Oh!" cried Hans.',
        "Then he left...",
        "Go!",
    ]


def test_hard_wrapped_english_is_not_split_at_line_breaks() -> None:
    text = 'A wolf resolved not to lay\nviolent hands on him. He said:\n"Sirrah."\n\nThe end'
    assert _sentences(text) == [
        "A wolf resolved not to lay\nviolent hands on him.",
        'He said:\n"Sirrah."',
        "The end",
    ]


@needs_stories
def test_real_english_story_sentences() -> None:
    text = _story("en/aesop__the_wolf_and_the_lamb.txt")
    sentences = _sentences(text)
    assert sentences[0] == "The Wolf And The Lamb"
    assert sentences[-1] == "The tyrant will always find a pretext for his tyranny."
    assert any("lay\nviolent hands" in s for s in sentences)


@needs_stories
def test_real_japanese_story_sentences() -> None:
    sentences = _sentences(_story("ja/momotaro_kusuyama.txt"))
    assert sentences[:3] == [
        "一",
        "むかし、むかし、あるところに、おじいさんとおばあさんがありました。",
        "まいにち、おじいさんは山へしば刈りに、おばあさんは川へ洗濯に行きました。",
    ]
    assert "「ドンブラコッコ、スッコッコ。\nドンブラコッコ、スッコッコ。」" in sentences


def test_chunk_ids_offsets_and_overlap() -> None:
    text = "一文目です。二文目です。三文目です。四文目です。五文目です。"
    chunks = chunk_text(text, "doc", size=12, overlap=6)
    assert [c.id for c in chunks] == ["doc:0000", "doc:0001", "doc:0002", "doc:0003"]
    assert [c.text for c in chunks] == [
        "一文目です。二文目です。",
        "二文目です。三文目です。",
        "三文目です。四文目です。",
        "四文目です。五文目です。",
    ]
    for index, chunk in enumerate(chunks):
        expected = Chunk(
            chunk.id, "doc", index, text[chunk.start : chunk.end], chunk.start, chunk.end
        )
        assert chunk == expected


def test_zero_overlap_and_limits() -> None:
    text = "一文目です。二文目です。三文目です。"
    chunks = chunk_text(text, "d", size=12, overlap=0)
    assert [c.text for c in chunks] == ["一文目です。二文目です。", "三文目です。"]
    assert chunk_text("   \n ", "d", size=10, overlap=0) == []
    for size, overlap in [(0, 0), (10, 10), (10, -1)]:
        with pytest.raises(ValueError):
            chunk_text(text, "d", size=size, overlap=overlap)


def test_overlap_never_exceeds_the_limit() -> None:
    text = "短い。" + "これはとても長い二番目の文です。" + "三。"
    chunks = chunk_text(text, "d", size=20, overlap=5)
    # The long sentence cannot be repeated within 5 characters: no overlap after it.
    assert [c.text for c in chunks] == ["短い。これはとても長い二番目の文です。", "三。"]


def test_long_sentence_is_split_at_commas_then_hard() -> None:
    text = "あいうえお、かきくけこ、さしすせそ。" + "な" * 25
    chunks = chunk_text(text, "d", size=10, overlap=0)
    assert [c.text for c in chunks] == [
        "あいうえお、",
        "かきくけこ、",
        "さしすせそ。",
        "な" * 10,
        "な" * 10,
        "な" * 5,
    ]


def test_long_english_sentence_is_split_at_spaces() -> None:
    text = "one two three four five six seven eight nine ten"
    assert [c.text for c in chunk_text(text, "d", size=15, overlap=0)] == [
        "one two three",
        "four five six",
        "seven eight",
        "nine ten",
    ]


@needs_stories
def test_real_stories_chunk_within_size() -> None:
    for path in story_files("*/*.txt"):
        text = path.read_text(encoding="utf-8")
        chunks = chunk_text(text, path.stem, size=600, overlap=100)
        assert chunks, path.name
        assert all(len(c.text) <= 600 and text[c.start : c.end] == c.text for c in chunks)
        assert all(a.start < b.start and a.end < b.end for a, b in itertools.pairwise(chunks))


@FAST
@given(
    st.text(st.sampled_from(ALPHABET), max_size=300),
    st.integers(min_value=1, max_value=60),
    st.data(),
)
def test_chunk_properties(text: str, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(min_value=0, max_value=size - 1))
    chunks = chunk_text(text, "doc", size=size, overlap=overlap)
    covered = [False] * len(text)
    for index, chunk in enumerate(chunks):
        assert chunk.index == index and chunk.id == f"doc:{index:04d}"
        assert text[chunk.start : chunk.end] == chunk.text
        assert chunk.text and chunk.text == chunk.text.strip()
        assert len(chunk.text) <= size  # every piece is cut to fit, so no exception needed
        for i in range(chunk.start, chunk.end):
            covered[i] = True
    for earlier, later in itertools.pairwise(chunks):
        assert earlier.start < later.start and earlier.end < later.end
        assert earlier.end - later.start <= overlap  # repeated text stays within overlap
    assert all(covered[i] or ch.isspace() for i, ch in enumerate(text))


@FAST
@given(st.text(st.sampled_from(ALPHABET), max_size=300))
def test_sentence_spans_are_ordered_and_trimmed(text: str) -> None:
    previous_end = 0
    for start, end in split_sentences(text):
        assert previous_end <= start < end <= len(text)
        assert text[start:end] == text[start:end].strip()
        previous_end = end


def test_evidence_sentence() -> None:
    text = "桃太郎は犬に会いました。桃太郎は犬と猿にきびだんごをやりました。猿が来た。"
    assert evidence_sentence(text, ["桃太郎", "犬"]) == "桃太郎は犬に会いました。"
    assert evidence_sentence(text, ["桃太郎", "猿", "キジ"]) == (
        "桃太郎は犬と猿にきびだんごをやりました。"
    )
    assert evidence_sentence(text, ["鬼"]) == ""
    assert evidence_sentence(text, []) == ""
    # Names match after normalisation: katakana = hiragana, case-insensitive.
    assert evidence_sentence("きじが飛んだ。Mr. Fox ran.", ["キジ"]) == "きじが飛んだ。"
    assert evidence_sentence("きじが飛んだ。Mr. Fox ran.", ["fox"]) == "Mr. Fox ran."


@needs_stories
def test_evidence_sentence_in_real_story() -> None:
    text = _story("ja/momotaro_kusuyama.txt")
    assert evidence_sentence(text, ["桃太郎", "きじ"]) == (
        "桃太郎は、その時犬と猿ときじの方を向いてこう言いました。"
    )


@needs_stories
def test_detect_language_on_stories() -> None:
    for path in story_files("*/*.txt"):
        expected = path.parent.name if path.parent.name in ("ja", "en") else "ja"
        assert detect_language(path.read_text(encoding="utf-8")) == expected, path.name


def test_detect_language_edges() -> None:
    assert detect_language("") == "en"
    assert detect_language("12345 !!!") == "en"
    assert detect_language("Momotaro (桃太郎) met an oni.") == "en"
    assert detect_language("Momotaro (桃太郎) と鬼") == "ja"
