"""Story time: positions, the superseded-fact rule, order questions, wiki file names."""

from __future__ import annotations

import pytest

from storygraph.library.wiki import wiki_filename, wiki_filenames
from storygraph.models import Fact
from storygraph.qa.question.question_type import detect_question_type, order_cue
from storygraph.qa.retrieval.order import order_facts, order_for_question, order_priors
from storygraph.store.story_time import (
    TimedRelation,
    is_speech,
    parse_position,
    position,
    story_times,
    supersession_lines,
)
from storygraph.text.language import detect_language


def test_positions_sort_in_story_order_and_parse_back() -> None:
    a = position("doc1", 9, 0)
    b = position("doc1", 120, 1)
    c = position("doc1", 1100, 9)
    assert a < b < c
    # a sentence repeated in the overlap of the next chunk still sorts by its offset
    assert position("doc1", 100, 2) < position("doc1", 110, 1)
    parsed = parse_position(b)
    assert parsed is not None
    assert (parsed.document_id, parsed.offset, parsed.chunk_index) == ("doc1", 120, 1)
    assert parsed.chunk_id == "doc1:0001"
    assert parse_position("not a position") is None
    assert parse_position("doc:x:0001") is None


def test_what_a_character_says_does_not_place_the_fact_when_the_narration_does() -> None:
    announced = position("d", 1908, 1, said=is_speech("「鬼が島へ行こうと思います。」と桃太郎"))
    arrived = position("d", 4000, 3, said=is_speech("桃太郎は鬼が島に着きました。"))
    assert announced.endswith(":said") and not arrived.endswith(":said")
    where = parse_position(announced)
    assert where is not None and where.said and where.offset == 1908 and where.chunk_index == 1
    (time_,) = story_times([_rel("桃太郎", "GOES_TO", "鬼が島", announced, arrived)])
    assert time_.story_order == arrived and time_.story_order_last == arrived
    # only speech: the first statement still places it
    (spoken,) = story_times([_rel("桃太郎", "GOES_TO", "鬼が島", announced)])
    assert spoken.story_order == announced
    assert is_speech('"I will go," said the knight.') and not is_speech("The knight said so.")


def _rel(source: str, rel_type: str, target: str, *positions: str) -> TimedRelation:
    return TimedRelation(source, rel_type, target, tuple(positions))


def test_the_treasure_changes_hands_and_the_earlier_owner_is_superseded() -> None:
    oni = _rel("鬼", "OWNS", "宝物", position("d", 10, 0))
    hero = _rel("桃太郎", "OWNS", "宝物", position("d", 500, 3))
    sake = _rel("鬼", "OWNS", "酒", position("d", 300, 2))
    times = {(t.source, t.target): t for t in story_times([oni, hero, sake])}
    assert times[("鬼", "宝物")].invalid_at == position("d", 500, 3)
    assert times[("鬼", "宝物")].story_order == position("d", 10, 0)
    assert times[("桃太郎", "宝物")].invalid_at is None
    # the oni owning something else does not end his owning the treasure: a thing has one owner
    assert times[("鬼", "酒")].invalid_at is None


def test_a_later_statement_of_the_first_fact_keeps_it_valid() -> None:
    home = _rel("おじいさん", "LIVES_IN", "村", position("d", 10, 0), position("d", 900, 5))
    away = _rel("おじいさん", "LIVES_IN", "山", position("d", 400, 2))
    times = {t.target: t for t in story_times([home, away])}
    assert times["村"].invalid_at is None
    assert times["村"].story_order_last == position("d", 900, 5)
    assert times["山"].invalid_at == position("d", 900, 5)


def test_only_exclusive_types_and_only_the_same_document_supersede() -> None:
    met_dog = _rel("桃太郎", "MEETS", "犬", position("d", 10, 0))
    met_monkey = _rel("桃太郎", "MEETS", "猿", position("d", 90, 1))
    assert all(t.invalid_at is None for t in story_times([met_dog, met_monkey]))
    # the declared list is extensible per call
    extended = story_times([met_dog, met_monkey], exclusive={"MEETS": "source"})
    assert {t.target: t.invalid_at for t in extended}["犬"] == position("d", 90, 1)
    # another document is another story: no supersession across documents
    first = _rel("鬼", "OWNS", "宝物", position("a", 10, 0))
    other = _rel("桃太郎", "OWNS", "宝物", position("b", 500, 1))
    assert all(t.invalid_at is None for t in story_times([first, other]))


def test_a_relation_without_positions_has_no_story_time() -> None:
    (time_,) = story_times([_rel("a", "OWNS", "b")])
    assert (time_.story_order, time_.story_order_last, time_.invalid_at) == (None, None, None)


@pytest.mark.parametrize(
    ("question", "order", "clause"),
    [
        ("鬼が島へ行く前に桃太郎は誰に会った？", "before", "鬼が島へ行く"),
        ("犬に会ってから桃太郎は誰に会った？", "after", "犬に会っ"),
        ("宝物を取ったあとで桃太郎はどこへ行った？", "after", "宝物を取っ"),
        ("What did the mouse do after the lion let it go?", "after", "the lion let it go"),
        ("Who did the knight meet before he went to the cave?", "before", "he went to the cave"),
        ("桃太郎の名前は？", "", ""),
        ("桃太郎の前に現れたのは誰？", "", ""),
        ("Who looked after the peach?", "", ""),
        ("Who defeated Momotaro?", "", ""),
    ],
)
def test_order_cues(question: str, order: str, clause: str) -> None:
    assert order_cue(question, language=detect_language(question))[0] == order
    assert order_cue(question, language=detect_language(question))[2] == clause
    qtype = detect_question_type(question, ["桃太郎"], language=detect_language(question))
    assert qtype.order == order
    if order:
        assert order in qtype.describe()


def _fact(start: str, rel_type: str, end: str, at: int, invalid: int | None = None) -> Fact:
    return Fact(
        start,
        rel_type,
        end,
        story_order=position("d", at, at // 100),
        invalid_at=position("d", invalid, invalid // 100) if invalid is not None else "",
    )


STORY = [
    _fact("桃太郎", "BORN_FROM", "桃", 10),
    _fact("桃太郎", "GOES_TO", "鬼が島", 400),
    _fact("桃太郎", "MEETS", "猿", 250),
    _fact("桃太郎", "MEETS", "犬", 200),
    _fact("桃太郎", "DEFEATS", "鬼", 600),
    _fact("鬼", "LIVES_IN", "鬼が島", 5),
    Fact("桃太郎", "LIKES", "きびだんご"),  # imported: no position
]


def test_before_the_island_come_the_peach_and_the_companions_in_story_order() -> None:
    ordered = order_for_question(
        "鬼が島へ行く前に桃太郎は誰に会った？", STORY, ["桃太郎", "鬼が島"], language="ja"
    )
    assert ordered.anchor is not None and ordered.anchor.type == "GOES_TO"
    assert [f.end for f in ordered.facts] == ["桃", "犬", "猿"]  # the oni's home is not his
    assert [f.type for f in ordered.unplaced] == ["LIKES"]
    priors = order_priors(STORY, ordered)
    assert priors[("桃太郎", "MEETS", "犬")] > 0
    assert priors[("桃太郎", "DEFEATS", "鬼")] < 0
    assert priors[("桃太郎", "GOES_TO", "鬼が島")] < 0  # the anchor is not the answer


def test_after_picks_the_anchor_the_clause_subject_does_and_whose_type_fits() -> None:
    facts = [
        _fact("lion", "CATCHES", "mouse", 100),
        _fact("lion", "LETS_GO", "mouse", 300),
        _fact("mouse", "PROMISES", "lion", 200),
        _fact("mouse", "GNAWS", "rope", 700),
        _fact("mouse", "FREES", "lion", 800),
        _fact("hunters", "CATCH", "lion", 600),
    ]
    ordered = order_facts(facts, "after", "the lion let it go", ["mouse", "lion"])
    # the lion is the clause's subject (not "mouse FREES lion"), and "let ... go" fits LETS_GO
    assert ordered.anchor is not None and ordered.anchor.type == "LETS_GO"
    assert [f.type for f in ordered.facts] == ["GNAWS", "FREES"]


def test_no_anchor_means_story_order_unfiltered_and_a_note() -> None:
    ordered = order_facts(STORY, "before", "竜宮城へ行く", ["桃太郎"])
    assert ordered.anchor is None and "竜宮城" in ordered.note
    assert ordered.facts[0].type == "LIVES_IN" and len(ordered.facts) == 6


def test_at_first_later_lines_for_superseded_facts() -> None:
    facts = [
        _fact("鬼", "OWNS", "宝物", 100, invalid=500),
        _fact("桃太郎", "OWNS", "宝物", 500),
        _fact("鬼", "LIVES_IN", "鬼が島", 5),
    ]
    assert supersession_lines(facts) == ["At first 鬼 owns 宝物; later 桃太郎 owns 宝物."]
    assert supersession_lines(facts, japanese=True)[0].startswith("はじめは 鬼 -[OWNS]→ 宝物")


def test_wiki_file_names_are_safe_and_unique() -> None:
    assert wiki_filename("桃太郎") == "桃太郎.md"
    odd = wiki_filename("a/b:c")
    assert "/" not in odd and ":" not in odd and odd.endswith(".md")
    assert wiki_filename("a/b") != wiki_filename("a:b")
    files = wiki_filenames(["Dog", "dog", "index"])
    assert len({f.casefold() for f in files.values()}) == 3
    assert files["index"] != "index.md"
