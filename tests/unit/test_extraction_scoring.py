"""The extraction benchmark's scoring (benchmarks.extraction_bench): matching, micro sums, the
count of verb-named types, and the per-language table that sets the paths side by side."""

from __future__ import annotations

from benchmarks.extraction_bench import (
    GoldTriple,
    Run,
    Score,
    language_table,
    score,
    total,
    type_key,
    verb_named,
)
from storygraph.models import ExtractedRelation


def rel(source: str, rel_type: str, target: str) -> ExtractedRelation:
    return ExtractedRelation(source, "Character", rel_type, target, "Character", "c1")


GOLD = [
    GoldTriple(frozenset({"桃太郎"}), frozenset({"DEFEAT", "FIGHT"}), frozenset({"鬼"})),
    GoldTriple(frozenset({"lion"}), frozenset({type_key("CAUGHT")}), frozenset({"mouse"})),
    GoldTriple(frozenset({"犬"}), frozenset({"ACCOMPANY"}), frozenset({"桃太郎"}), undirected=True),
]


def test_type_key_cuts_inflections_of_long_words_only() -> None:
    assert type_key("catches") == type_key("CATCH") == "CATCH"
    assert type_key("HAS") == "HAS"


def test_score_counts_distinct_facts_and_the_lenient_match() -> None:
    result = score(
        GOLD,
        [
            rel("桃太郎", "DEFEAT", "鬼"),
            rel("桃太郎", "DEFEAT", "鬼"),  # the same fact twice counts once
            rel("The lion", "caught", "a mouse"),  # articles and case are ignored
            rel("桃太郎", "ACCOMPANY", "犬"),  # undirected gold matches backwards
            rel("鬼", "DEFEAT", "桃太郎"),  # directed gold: backwards is wrong
        ],
    )
    assert (result.gold, result.gold_matched, result.predicted, result.correct) == (3, 3, 4, 3)
    assert result.recall == 1.0
    assert result.precision == 0.75


def test_total_is_the_micro_sum() -> None:
    combined = total([Score(10, 5, 4, 2), Score(2, 2, 6, 6)])
    assert combined == Score(12, 7, 10, 8)
    assert combined.recall == 7 / 12
    assert combined.precision == 0.8
    assert total([]).recall == 0.0 and total([]).precision == 0.0


def test_verb_named_counts_types_outside_the_verb_table() -> None:
    relations = [
        rel("桃太郎", "DEFEAT", "鬼"),  # a verb-table type
        rel("桃太郎", "NAGARERU", "川"),
        rel("lion", "ROAR", "forest"),
        rel("lion", "ROAR", "forest"),
    ]
    named, correct = verb_named(GOLD, relations)
    assert (named, correct) == (2, 0)
    roar = GoldTriple(frozenset({"lion"}), frozenset({"ROAR"}), frozenset({"forest"}))
    gold_with_it = [*GOLD, roar]
    assert verb_named(gold_with_it, relations) == (2, 1)


def test_language_table_sums_passages_per_language_and_extractor() -> None:
    runs = [
        Run("a_ja", "small", 2, "ja", 400, chunks=2, seconds=8, calls=2, score=Score(10, 2, 5, 1)),
        Run("b_ja", "small", 2, "ja", 200, chunks=1, seconds=4, calls=1, score=Score(10, 4, 5, 3)),
        Run("a_ja", "parser", 0, "ja", 400, chunks=2, seconds=0.2, score=Score(10, 6, 8, 6),
            verb_named=2, verb_named_correct=0),
        Run("c_en", "parser", 0, "en", 100, chunks=1, seconds=0.1, score=Score(4, 3, 4, 3)),
    ]
    rows = {(row[0], row[1]): row for row in language_table(runs).rows}
    same = ("ja", "small on parser's passages")
    assert set(rows) == {("ja", "small (t=2)"), ("ja", "parser"), ("en", "parser"), same}
    small = rows[("ja", "small (t=2)")]
    assert small[2:5] == [2, 3, 600]
    assert small[5] == "0.30 (6/20)"
    assert small[6] == "0.40 (4/10)"
    assert small[7] == 4.0  # seconds per chunk over both passages
    assert small[8] == 50  # characters per second
    assert small[9] == 3
    assert rows[("ja", "parser")][10] == "2 (0)"
    # the model path on just the passage the parser read, to compare on the same text
    assert rows[same][2] == 1 and rows[same][5] == "0.20 (2/10)"
