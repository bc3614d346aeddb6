"""An answer's core as each of its readers takes it: the reply checks (`checks._answer_core`) and
the English rendering (`answer_crosslang._core`). They share one stripper
(storygraph.qa.generation.answer_core) and differ on purpose only where these tests pin it:
which copulas close an answer, whether a run of closings is cut, normalisation."""

from __future__ import annotations

import pytest

from storygraph.qa.generation.answer_crosslang import _core as rendered_core
from storygraph.qa.generation.checks import _answer_core as reply_core


@pytest.mark.parametrize(
    "answer",
    ["猿です。[1]", "猿でした。[2]", "猿だ。(1)", "猿。[1][2]", " 猿 [3] ", "猿です！[1]"],
)
def test_every_reader_cuts_the_marks_the_copula_and_the_stop(answer: str) -> None:
    assert reply_core(answer) == rendered_core(answer) == "猿"


def test_a_mark_between_words_is_left_as_a_space() -> None:
    assert reply_core("犬[1]と猿[2]です。") == "犬 と猿"
    assert rendered_core("犬[1]と猿[2]です。") == "犬 と猿"


@pytest.mark.parametrize(
    ("answer", "reply", "rendered"),
    [
        ("鬼ヶ島である。", "鬼ヶ島である", "鬼ヶ島"),
        ("鬼ヶ島だった。", "鬼ヶ島だった", "鬼ヶ島"),
        ("鬼ヶ島でしょう。", "鬼ヶ島でしょう", "鬼ヶ島"),
    ],
)
def test_which_copulas_close_an_answer_differs_by_reader(
    answer: str, reply: str, rendered: str
) -> None:
    assert (reply_core(answer), rendered_core(answer)) == (reply, rendered)


def test_a_run_of_closings_is_cut_whole_by_the_rendering_only() -> None:
    assert rendered_core("猿です 。") == "猿"
    # the reply checks normalise first (the stop and the space go), then cut the copula
    assert reply_core("猿です 。") == "猿"
    # a copula after a stop: the reply checks keep the stop
    assert reply_core("猿。です") == "猿。"
    assert rendered_core("猿。です") == "猿"


def test_the_reply_checks_normalise_the_core() -> None:
    assert reply_core("サルです。[1]") == "さる"
    assert rendered_core("サルです。[1]") == "サル"
    assert reply_core("The Monkey. [1]") == "the monkey"
    assert rendered_core("The Monkey. [1]") == "The Monkey"


def test_english_lead_words_are_kept_by_both() -> None:
    assert reply_core("It was the monkey. [1]") == "it was the monkey"
    assert rendered_core("It was the monkey. [1]") == "It was the monkey"


def test_leading_and_trailing_commas_and_stops() -> None:
    assert rendered_core("、猿、") == "、猿"
    assert reply_core("、猿、") == "、猿"
    assert reply_core("。猿です") == "猿"
    assert rendered_core("。猿です") == "。猿"
    assert rendered_core("dog, [1]") == "dog,"


def test_the_reply_checks_cut_one_copula_not_each_in_turn() -> None:
    # before the shared stripper they cut です, then でした, then だ: 「からだです」 lost its だ
    assert reply_core("からだです。[1]") == "からだ"
