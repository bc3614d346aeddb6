"""The end-to-end answer scoring rule (storygraph/evaluation/answer_scoring.py)."""

from __future__ import annotations

from storygraph.evaluation.answer_scoring import (
    LONG_F1_THRESHOLD,
    evidence_found,
    normalise,
    rouge_l_f1,
    score_answer,
)


def test_short_answer_counts_when_contained_after_normalising() -> None:
    assert score_answer("It was THE Old Woman. [2]", ["old woman"]).correct
    assert score_answer("おばあさんです。[1]", ["おばあさん"]).rule == "contains:おばあさん"
    assert not score_answer("The old man did.", ["old woman"]).correct


def test_citation_marks_are_not_answers() -> None:
    assert normalise("The Old Man [25]") == "old man"
    assert not score_answer("The dog [25]", ["25"]).correct


def test_kana_and_kanji_variants_match_by_reading() -> None:
    result = score_answer("仲間はキジです", ["雉"])
    assert result.correct and result.rule.startswith("reading:")


def test_short_english_answers_match_word_forms_in_order() -> None:
    result = score_answer("He threw him into the stove. [2]", ["threw him in the stove"])
    assert result.correct and result.rule == "words:threw him in the stove"
    assert score_answer("Listening to the three animals.", ["listen to the three animals"]).correct
    # every content word, in the accepted answer's order
    assert not score_answer("The stove threw him.", ["threw him in the stove"]).correct
    assert not score_answer("The pretty little lady. [2]", ["a tiny little lady"]).correct
    # stop words alone are not an answer
    assert not score_answer("He went to them.", ["for them"]).correct


def test_a_wrong_string_overrides_an_accepted_one() -> None:
    result = score_answer(
        "The North Wind won the contest, not the sun.", ["sun"], ["north wind won"]
    )
    assert not result.correct and result.rule == "wrong:north wind won"


def test_long_answers_use_rouge_l_f1_with_the_stated_threshold() -> None:
    gold = "went into all the rooms of the castle and set the prisoners free"
    close = "He went into every room of the castle and set all the prisoners free."
    far = "He ate a cake and slept."
    assert rouge_l_f1(normalise(close), normalise(gold)) >= LONG_F1_THRESHOLD
    assert score_answer(close, [gold]).rule.startswith("rouge:")
    assert not score_answer(far, [gold]).correct


def test_evidence_found_by_sentence_or_answer() -> None:
    gold = ["ある日、おばあさんが、川のそばで、せっせと洗濯をしていますと、"
            "川上から、大きな桃が一つ、"]
    assert evidence_found(["川上から、大きな桃が一つ、"], gold, ["川上"])
    assert evidence_found(["桃は川上から流れて来ました。"], [], ["川上"])
    assert not evidence_found(["犬がついて来ました。"], gold, ["川上"])
    assert evidence_found([], [], []) is None
