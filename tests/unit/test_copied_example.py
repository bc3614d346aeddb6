"""An answer that repeats a worked example's answer is told apart from one the sentences hold."""

from __future__ import annotations

from storygraph.models import Citation
from storygraph.qa.generation.answer import UNKNOWN
from storygraph.qa.generation.answer_examples import answer_examples
from storygraph.qa.generation.checks import copied_example


def _read(*texts: str) -> list[Citation]:
    return [
        Citation(number=i, chunk_id=f"c{i}", document_name="s.txt", text=t, kind="sentence")
        for i, t in enumerate(texts, 1)
    ]


def test_the_example_s_answer_with_no_sentence_holding_it_is_a_copy() -> None:
    for language in ("ja", "en"):
        examples = answer_examples(language, UNKNOWN[language])
        written = [e.answer for e in examples if e.answer != UNKNOWN[language]]
        assert written, language
        for answer in written:
            read = _read("The old man cut bamboo.", "竹の中に女の子がいました。")
            assert copied_example(answer, language, read) == answer
            # the source number and spacing the model wrote do not hide it
            assert copied_example(answer.replace("[", " ["), language, read) == answer


def test_the_same_words_held_by_a_sentence_read_are_an_answer() -> None:
    read = _read("むかし、ぶんじは湖の岸のあしの中で鈴をひろいました。")
    assert copied_example("湖の岸のあしの中です。[1]", "ja", read) is None
    read = _read("The bell lay in the reeds by the lake shore.")
    assert copied_example("In the reeds by the lake shore. [1]", "en", read) is None


def test_other_answers_and_the_fixed_reply_are_not_copies() -> None:
    read = _read("竹の中に女の子がいました。")
    assert copied_example("竹の中です。[1]", "ja", read) is None
    assert copied_example(UNKNOWN["ja"], "ja", read) is None
    assert copied_example("", "en", read) is None
