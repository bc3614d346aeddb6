"""The small model's worked examples: parsed from their prompt files, placed as earlier turns
between the instructions and the question, the same for every question (the cached prefix)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from storygraph.qa.generation.answer import UNKNOWN, small_messages
from storygraph.qa.generation.answer_examples import answer_examples, parse_examples


@pytest.mark.parametrize("language", ["ja", "en"])
def test_each_language_has_answered_examples_and_one_the_sentences_do_not_answer(
    language: str,
) -> None:
    examples = answer_examples(language, UNKNOWN[language])
    assert len(examples) >= 2
    answers = [e.answer for e in examples]
    assert UNKNOWN[language] in answers  # it is shown how to say "the sentences do not say"
    answered = [a for a in answers if a != UNKNOWN[language]]
    assert answered and all("[" in a for a in answered)  # with the sentence's number
    assert all(e.sources.startswith("[1] ") for e in examples)


def test_examples_come_between_the_instructions_and_the_question_as_earlier_turns() -> None:
    values = {"question": "犬は何をもらった？", "sources": "[1] 犬はきびだんごをもらいました。"}
    messages = small_messages("ja", {**values, "language": "Japanese"})
    assert isinstance(messages[0], SystemMessage)
    turns = messages[1:-1]
    assert len(turns) == 2 * len(answer_examples("ja", UNKNOWN["ja"]))
    assert all(isinstance(m, HumanMessage) for m in turns[0::2])
    assert all(isinstance(m, AIMessage) for m in turns[1::2])
    last = messages[-1]
    assert isinstance(last, HumanMessage)
    assert "犬は何をもらった？" in last.content and "[1] 犬はきびだんご" in last.content
    assert all("犬は何をもらった？" not in m.content for m in messages[:-1])


def test_the_prefix_before_the_question_is_the_same_for_every_question() -> None:
    """llama.cpp's server reuses a prompt's longest common prefix: the examples must not vary."""

    def prefix(question: str, sources: str) -> list[str]:
        values = {"question": question, "sources": sources, "language": "English"}
        return [str(m.content) for m in small_messages("en", values)[:-1]]

    assert prefix("Who came?", "[1] A fox came.") == prefix("Why?", "[1] It rained.")


def test_a_malformed_examples_file_is_an_error_not_a_shorter_prompt() -> None:
    good = "[1] A fox came.\nQ: Who came?\nA: A fox. [1]\n"
    assert parse_examples(good)[0].answer == "A fox. [1]"
    with pytest.raises(ValueError, match="unexpected line"):
        parse_examples(good + "Answer: no prefix\n")
    with pytest.raises(ValueError, match="pairs expected"):
        parse_examples("[1] A fox came.\nQ: Who came?\n")
    with pytest.raises(ValueError, match="pairs expected"):
        parse_examples("Q: Who came?\nA: A fox.\n")
