"""The verifier's signals of where the answer stands in what it cites (storygraph.qa.verify.
signals: `sentences`, `answer_locality`, `answer_in_read`, `hypothesis_in_cited`), on made-up
sentences: a right answer fills the question's gap in the sentence that tells the asked act; a
wrong one is named in another sentence of the same passage, or in none."""

from __future__ import annotations

import pytest

from storygraph.qa.verify import Evidence
from storygraph.qa.verify.signals import (
    answer_in_read,
    answer_locality,
    asked_units,
    hypothesis_in_cited,
    premise_in_read,
    sentences,
    units,
)

JA_PASSAGE = (
    "町はずれに小さな店がありました。"
    "パン屋は朝早く少年にりんごを三つやりました。"
    "魚屋はそのころ店の奥でぐっすり寝ていました。"
)
EN_PASSAGE = (
    "There was a small shop at the edge of town. "
    "Early one morning the baker gave the boy three red apples. "
    "The miller slept all day in the back room."
)


def _ev(question: str, core: str, *cited: str) -> Evidence:
    return Evidence(question, core + "です。[1]", core, cited=cited)


# --- sentences ---------------------------------------------------------------------------------
def test_a_passage_is_cut_into_its_sentences() -> None:
    assert len(sentences(JA_PASSAGE)) == 3
    assert len(sentences(EN_PASSAGE)) == 3
    assert sentences("一つ目です\n\n二つ目です") == ["一つ目です", "二つ目です"]
    wrapped = "A hungry fox saw grapes hanging from\na vine. She could not reach them."
    assert sentences(wrapped) == [
        "A hungry fox saw grapes hanging from a vine.",
        "She could not reach them.",
    ]


def test_a_quotation_stays_with_its_speaker() -> None:
    assert sentences("「待て！」と犬は言いました。猿は逃げました。") == [
        "「待て！」と犬は言いました。",
        "猿は逃げました。",
    ]
    assert sentences("“Stop!” cried the dog. The monkey ran.") == [
        "“Stop!” cried the dog.",
        "The monkey ran.",
    ]
    said = ["「おい、どこへ行く？」", "「山へ行くよ。」"]
    assert sentences("".join(said)) == said


def test_the_question_word_is_left_out_of_the_asked_units() -> None:
    asked = asked_units("りんごをやったのはだれ？")
    assert "だれ" not in asked and "はだ" not in asked and "りん" in asked
    assert asked_units("Who gave the apples?") == units("gave apples")


# --- answer_locality ---------------------------------------------------------------------------
def test_a_name_in_the_sentence_telling_the_asked_act_is_local_and_one_elsewhere_is_not() -> None:
    asked = "少年にりんごをやったのはだれ？"
    right = answer_locality(_ev(asked, "パン屋", JA_PASSAGE))
    other = answer_locality(_ev(asked, "魚屋", JA_PASSAGE))  # named, but in another sentence
    absent = answer_locality(_ev(asked, "八百屋", JA_PASSAGE))
    assert right is not None and other is not None
    assert right > 0.5 > other
    assert absent == 0.0
    english = "Who gave the boy apples?"
    assert answer_locality(_ev(english, "The baker", EN_PASSAGE)) == pytest.approx(1.0)
    assert answer_locality(_ev(english, "The miller", EN_PASSAGE)) == 0.0


def test_a_one_letter_answer_is_found_inside_a_longer_run() -> None:
    passage = "山の奥で熊が少年にどんぐりをやりました。"
    found = answer_locality(_ev("少年にどんぐりをやったのは誰？", "熊", passage))
    assert found is not None and found > 0.5


def test_locality_reads_the_whole_citation_not_only_its_first_passage() -> None:
    asked = "Who gave the boy apples?"
    late = answer_locality(_ev(asked, "The baker", "The miller slept.", EN_PASSAGE))
    assert late == pytest.approx(1.0)


def test_locality_is_none_without_a_citation_or_across_scripts() -> None:
    assert answer_locality(_ev("Who gave the boy apples?", "The baker")) is None
    assert answer_locality(_ev("Who gave the boy apples?", "パン屋", JA_PASSAGE)) is None


def test_an_answer_that_adds_nothing_to_the_question_is_not_local() -> None:
    # the answer names the asked-about participant again: it fills no gap
    assert answer_locality(_ev("パン屋が少年にやったのは何？", "パン屋", JA_PASSAGE)) == 0.0


# --- answer_in_read ----------------------------------------------------------------------------
def _read_not_cited(
    question: str, core: str, cited: str, *read: str, forms: tuple[tuple[str, ...], ...] = ()
) -> Evidence:
    return Evidence(question, core + " [1]", core, cited=(cited,), read=read, asked_forms=forms)


def test_a_right_answer_citing_the_wrong_source_still_stands_in_a_sentence_it_read() -> None:
    # the model read the passage telling the act but marked another source
    asked = "Who gave the boy apples?"
    other_source = "The miller slept all day in the back room."
    right = _read_not_cited(asked, "The baker", other_source, other_source, EN_PASSAGE)
    assert answer_locality(right) == 0.0
    assert answer_in_read(right) == pytest.approx(1.0)
    wrong = _read_not_cited(asked, "The miller", other_source, other_source, EN_PASSAGE)
    assert answer_in_read(wrong) == 0.0  # named, but never where the boy gets apples
    ja = _read_not_cited(
        "少年にりんごをやったのはだれ？", "パン屋", "魚屋は寝ていました。", JA_PASSAGE
    )
    ja_wrong = _read_not_cited(
        "少年にりんごをやったのはだれ？", "魚屋", "魚屋は寝ていました。", JA_PASSAGE
    )
    assert (answer_in_read(ja) or 0.0) > 0.5 > (answer_in_read(ja_wrong) or 0.0)


def test_a_question_in_another_script_is_read_by_its_translated_words() -> None:
    asked = "Who gave the boy apples?"
    forms = (("少年", "しょうねん"), ("りんご", "林檎"), ("やる", "やり", "与え"))
    right = _read_not_cited(asked, "パン屋", "魚屋は寝ていました。", JA_PASSAGE, forms=forms)
    wrong = _read_not_cited(asked, "魚屋", "魚屋は寝ていました。", JA_PASSAGE, forms=forms)
    assert (answer_in_read(right) or 0.0) > 0.5 > (answer_in_read(wrong) or 0.0)
    untranslated = _read_not_cited(asked, "パン屋", "魚屋は寝ていました。", JA_PASSAGE)
    assert answer_in_read(untranslated) is None


def test_nothing_read_is_none() -> None:
    assert answer_in_read(_ev("Who gave the boy apples?", "The baker", EN_PASSAGE)) is None


# --- hypothesis_in_cited -----------------------------------------------------------------------
def test_the_question_with_its_gap_filled_stands_in_the_right_sentence() -> None:
    asked = "少年にりんごをやったのはだれ？"
    right = hypothesis_in_cited(_ev(asked, "パン屋", JA_PASSAGE))
    other = hypothesis_in_cited(_ev(asked, "魚屋", JA_PASSAGE))
    assert right is not None and other is not None and right > other
    english = "Who gave the boy apples?"
    assert hypothesis_in_cited(_ev(english, "The baker", EN_PASSAGE)) == pytest.approx(1.0)
    assert hypothesis_in_cited(_ev(english, "The baker")) is None


# --- premise_in_read ---------------------------------------------------------------------------
def _read(question: str, *read: str) -> Evidence:
    return Evidence(question, "パン屋です。[1]", "パン屋", cited=read[:1], read=read)


def test_a_question_about_a_told_act_finds_its_words_in_one_sentence_read() -> None:
    told = premise_in_read(_read("少年にりんごをやったのはだれ？", JA_PASSAGE))
    untold = premise_in_read(_read("少年に金の靴をぬすまれたのはだれ？", JA_PASSAGE))
    assert told is not None and untold is not None
    assert told >= 0.5 > 0.3 > untold  # the question's own frame (〜たのは) is never in the story
    en_told = premise_in_read(_read("Who gave the boy three apples?", EN_PASSAGE))
    en_untold = premise_in_read(_read("Who stole the boy's golden shoes?", EN_PASSAGE))
    assert en_told == pytest.approx(1.0)
    assert en_untold is not None and en_untold < 0.5


def test_words_scattered_over_sentences_are_not_a_told_act() -> None:
    # every word is in the passage, but no one sentence tells the miller giving apples
    scattered = premise_in_read(_read("Who gave the miller apples in the back room?", EN_PASSAGE))
    whole = premise_in_read(_read("Who gave the boy apples?", EN_PASSAGE))
    assert scattered is not None and whole is not None
    assert scattered < whole


def test_nothing_read_or_another_script_reads_as_none() -> None:
    assert premise_in_read(_read("少年にりんごをやったのはだれ？")) is None
    assert premise_in_read(_read("Who gave the boy apples?", JA_PASSAGE)) is None
