"""An English question over a Japanese story answered in Japanese and shown in English (issue 27
item 4, docs/ISSUES.md §60): the real store, sample story, JMdict, Sudachi and support check;
the model scripted at the model boundary (tests/helpers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from storygraph.llm.factory import ModelInfo
from storygraph.models import Answer
from storygraph.qa.engine import QAOptions
from storygraph.qa.factory import build_engine
from storygraph.services import Services
from tests.helpers.scripted_logic import Script
from tests.helpers.scripted_model import ScriptedChatModel

SMALL = ModelInfo("embedded", "scripted-small", capable=False)
QUESTION = "What did Momotaro wear?"
IN_JAPANESE = "桃太郎は何を着ましたか？"


@pytest.fixture
def momotaro(services: Services, shared_dir: Path) -> tuple[Services, str]:
    story = shared_dir / "stories" / "ja" / "momotaro_kusuyama.txt"
    report = services.ingestor().ingest_bytes(story.name, story.read_bytes())
    assert report.status == "added", report.message
    return services, report.document_id


def _ask(
    momotaro: tuple[Services, str], model: ScriptedChatModel, choice: str, question: str = QUESTION
) -> Answer:
    services, story = momotaro
    engine = build_engine(services.store, model, SMALL)
    return engine.ask(question, QAOptions(stories=(story,), crosslang_answer=choice))


def _support(answer: Answer) -> dict[str, object]:
    return next(s.detail for s in answer.steps if s.name == "support")


def test_the_model_answers_the_japanese_question_and_the_reader_gets_english(
    momotaro: tuple[Services, str],
) -> None:
    model = ScriptedChatModel(script=Script(translations={QUESTION: IN_JAPANESE}))
    answer = _ask(momotaro, model, "sources")
    support = _support(answer)
    # two calls: the question into Japanese, the answer
    assert model.calls == ["answer", "answer"]
    assert support["asked_in_sources_language"] == IN_JAPANESE
    assert support["asked_how"] == "model translation"
    written = str(support["answer_in_sources_language"])
    # the scripted small model quotes the Japanese sentence closest to the Japanese question:
    # the same-language check confirms the quote
    assert "陣羽織" in written, written
    assert answer.support is not None and answer.support.verdict == "supported", answer.support
    # shown in English, the Japanese answer in brackets, its source mark kept
    english, _, rest = answer.answer.partition(" (")
    assert english and english.isascii() and "millet dumplings" in english.lower(), answer.answer
    assert written.split("[")[0].rstrip(" 、。") in rest and answer.answer.endswith("]")
    assert any(step.startswith("きびだんご → ") for step in support["rendered"])


def test_read_as_asked_the_model_gets_the_english_question_and_a_japanese_reply_line(
    momotaro: tuple[Services, str],
) -> None:
    model = ScriptedChatModel()
    answer = _ask(momotaro, model, "sources-asked")
    support = _support(answer)
    assert model.calls == ["answer"]
    assert support["asked_in_sources_language"] == QUESTION
    assert support["asked_how"] == "as asked"
    assert support["answer_in_sources_language"]


def test_the_questions_language_path_is_unchanged_and_japanese_questions_are_not_touched(
    momotaro: tuple[Services, str],
) -> None:
    model = ScriptedChatModel(script=Script(translations={QUESTION: IN_JAPANESE}))
    answer = _ask(momotaro, model, "question")
    assert model.calls == ["answer"]
    assert "answer_in_sources_language" not in _support(answer)
    model.calls.clear()
    japanese = _ask(momotaro, model, "sources", IN_JAPANESE)
    assert model.calls == ["answer"]
    assert "answer_in_sources_language" not in _support(japanese)


def test_an_empty_translation_leaves_the_question_as_asked(
    momotaro: tuple[Services, str],
) -> None:
    # no scripted translation: the model's reply is empty, so the question is read as asked
    answer = _ask(momotaro, ScriptedChatModel(), "sources")
    assert _support(answer)["asked_how"] == "as asked"


def test_an_answer_the_check_replaces_is_replaced_in_english(
    momotaro: tuple[Services, str],
) -> None:
    model = ScriptedChatModel(faults={"answer": "text:猿です。[1]"})
    answer = _ask(momotaro, model, "sources-asked")
    support = _support(answer)
    # the same-language check reads 猿 as someone 桃太郎 wears: no such fact or sentence
    assert answer.support is not None and answer.support.verdict == "no premise"
    assert answer.answer.startswith("The story's sentences do not say. "), answer.answer
    assert "猿" not in answer.answer.split("The closest sentence is:")[0]
    assert support["answer_in_sources_language"] == support["model_answer"] == "猿です。[1]"


def test_the_models_refusal_in_japanese_is_shown_in_english(
    momotaro: tuple[Services, str],
) -> None:
    model = ScriptedChatModel(faults={"answer": "text:この話の文からは分かりません。"})
    answer = _ask(momotaro, model, "sources-asked")
    assert answer.answer.startswith("The story's sentences do not say."), answer.answer
    assert "The closest sentence is: 「" in answer.answer


def test_a_model_fault_is_named_for_the_translation_and_the_answer(
    momotaro: tuple[Services, str],
) -> None:
    model = ScriptedChatModel(faults={"answer": TimeoutError("slow")})
    answer = _ask(momotaro, model, "sources")
    told = answer.warnings
    assert any(w.startswith("the question's translation for the answer failed") for w in told)
    assert any(w.startswith("the model could not answer") for w in told)
    assert "answer_in_sources_language" not in _support(answer)
