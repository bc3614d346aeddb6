"""qa/generation/recite.py: an answer's mark set to the read source that holds its words."""

from __future__ import annotations

from storygraph.models import Citation
from storygraph.qa.generation.recite import recited


def _sources(*texts: str) -> list[Citation]:
    return [Citation(i + 1, f"c{i}", "s.txt", t, kind="sentence") for i, t in enumerate(texts)]


JA = _sources(
    "少年は猫を拾って家に帰った。",
    "そういうことがはっきりするには、それから五日もかかった。",
    "博士は研究室で猫を育てていた。",
)
EN = _sources(
    "The miller went to the market.",
    "The baker gave the boy a loaf of bread.",
    "The boy thanked the miller.",
)


def test_a_mark_on_a_source_without_the_answer_moves_to_the_one_holding_it() -> None:
    moved = recited("何日かかった？", "五日。[3]", JA, 3)
    assert moved is not None and moved.text == "五日。[2]"
    assert moved.source == 2 and moved.written == (3,)
    english = recited("Who gave the boy bread?", "The baker. [1]", EN, 3)
    assert english is not None and english.text == "The baker. [2]"


def test_an_answer_without_a_mark_is_given_the_source_holding_it() -> None:
    moved = recited("Who gave the boy bread?", "The baker", EN, 3)
    assert moved is not None and moved.text == "The baker [2]" and moved.written == ()


def test_several_marks_become_one_where_the_first_stood() -> None:
    moved = recited("Who gave the boy bread?", "The baker [1][3].", EN, 3)
    assert moved is not None and moved.text == "The baker [2]."


def test_marks_stay_when_a_cited_source_holds_the_answer_or_none_holds_it_whole() -> None:
    assert recited("Who gave the boy bread?", "The baker. [2]", EN, 3) is None
    assert recited("Who gave the boy bread?", "The baker's wife. [1]", EN, 3) is None
    assert recited("何日かかった？", "七日。[3]", JA, 3) is None


def test_of_several_sources_holding_it_the_one_holding_the_question_takes_the_mark() -> None:
    # "miller" is in sources 1 and 3; the question's "thanked" only in 3
    moved = recited("Whom did the boy thank?", "The miller. [2]", EN, 3)
    assert moved is not None and moved.source == 3
    first = recited("Who is in the story?", "The miller. [2]", EN, 3)
    assert first is not None and first.source == 1  # a tie: the first read


def test_only_the_sources_the_model_read_are_cited() -> None:
    assert recited("何日かかった？", "五日。[3]", JA, 1) is None


def test_a_cited_source_the_model_did_not_read_that_holds_the_answer_keeps_the_mark() -> None:
    assert recited("何日かかった？", "五日。[2]", JA, 1) is None
