"""The one verb table: extraction's types are the types retrieval reads."""

from __future__ import annotations

import pytest

from storygraph.qa.question.relation_words import question_stems, type_stems
from storygraph.text.sanitize import sanitize_rel_type
from storygraph.text.vocabulary import VERBS, relation_type_for, relation_types


@pytest.mark.parametrize(
    ("predicate", "language", "expected"),
    [
        ("倒す", "ja", "DEFEATS"),
        ("退治する", "ja", "DEFEATS"),
        ("組みふせる", "ja", "DEFEATS"),
        ("拾う", "ja", "PICKS_UP"),
        ("住む", "ja", "LIVES_IN"),
        ("defeat", "en", "DEFEATS"),
        ("pick up", "en", "PICKS_UP"),
        ("Went", "en", "GOES_TO"),
        ("ponder", "en", None),
        ("考える", "ja", None),
        ("", "ja", None),
    ],
)
def test_predicates_map_to_the_table_types(
    predicate: str, language: str, expected: str | None
) -> None:
    assert relation_type_for(predicate, language) == expected


def test_every_japanese_form_round_trips_through_the_sanitiser() -> None:
    """A model naming a relation with a table form gets the type a parser would write."""
    for verb in VERBS:
        for form in verb.ja:
            if len(form) < 2:
                continue  # single characters are matched only inside longer words
            written = sanitize_rel_type(form)
            assert relation_type_for(form, "ja") == written, (form, written)


def test_a_question_word_finds_the_stem_of_the_type_extraction_writes() -> None:
    """拾う was in the extraction table and missing from the question lexicon before."""
    pairs = [("拾う", "桃を拾ったのは誰？"), ("pick up", "Who picked up the peach?")]
    for predicate, question in pairs:
        written = relation_type_for(predicate, "ja" if not predicate.isascii() else "en")
        assert written is not None
        assert type_stems(written) & question_stems(question), (predicate, written)


def test_types_are_safe_identifiers_and_unique() -> None:
    types = relation_types()
    assert len(types) == len(set(types))
    assert all(sanitize_rel_type(t) == t for t in types)


def test_a_hiragana_word_of_the_table_counts_only_where_a_word_of_the_question_starts() -> None:
    # くれ (GIVES) is inside かくれた (to hide): the question asks about hiding, not giving
    assert "GIVE" not in question_stems("蜂は猿の家のどこにかくれた？")
    assert "GIVE" in question_stems("乙姫さまが浦島にくれたものは？")
    assert "GIVE" in question_stems("鬼の大将は何をさし出した？")  # kanji forms as before
