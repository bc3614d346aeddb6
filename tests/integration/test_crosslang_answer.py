"""An English question over a Japanese story answered in Japanese and shown in English (issue 27
item 4, docs/ISSUES.md §60): the real store, sample story, JMdict, Sudachi and support check;
the model scripted at the model boundary (tests/helpers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from storygraph.llm.factory import ModelInfo
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


def _support(answer: object) -> dict[str, object]:
    steps = getattr(answer, "steps")
    return next(s.detail for s in steps if s.name == "support")


def test_the_model_answers_the_japanese_question_and_the_reader_gets_english(
    momotaro: tuple[Services, str],
) -> None:
    services, story = momotaro
    model = ScriptedChatModel(script=Script(translations={QUESTION: IN_JAPANESE}))
    engine = build_engine(services.store, model, SMALL)
    answer = engine.ask(QUESTION, QAOptions(stories=(story,), crosslang_answer="sources"))
    support = _support(answer)
    # two calls: the question into Japanese, the answer
    assert model.calls == ["answer", "answer"]
    assert support["asked_in_sources_language"] == IN_JAPANESE
    assert support["asked_how"] == "model translation"
    written = str(support["answer_in_sources_language"])
    # the scripted small model cites the Japanese sentence closest to the Japanese question
    assert "陣羽織" in written, written
    if answer.support is not None and answer.support.verdict in {"supported", "not checked"}:
        # shown in English, the Japanese answer in brackets, its source mark kept
        assert answer.answer.split(" (", 1)[0].isascii(), answer.answer
        assert "陣羽織" in answer.answer and answer.answer.rstrip().endswith("]")
        assert support["rendered"], support
    else:
        # replaced by the check: the reader is told so in English
        assert answer.answer.startswith("Not sure") or answer.answer.startswith("The story")


def test_read_as_asked_the_model_gets_the_english_question_and_a_japanese_reply_line(
    momotaro: tuple[Services, str],
) -> None:
    services, story = momotaro
    model = ScriptedChatModel()
    engine = build_engine(services.store, model, SMALL)
    answer = engine.ask(QUESTION, QAOptions(stories=(story,), crosslang_answer="sources-asked"))
    support = _support(answer)
    assert model.calls == ["answer"]
    assert support["asked_in_sources_language"] == QUESTION
    assert support["asked_how"] == "as asked"
    assert support["answer_in_sources_language"]


def test_the_questions_language_path_is_unchanged_and_japanese_questions_are_not_touched(
    momotaro: tuple[Services, str],
) -> None:
    services, story = momotaro
    model = ScriptedChatModel(script=Script(translations={QUESTION: IN_JAPANESE}))
    engine = build_engine(services.store, model, SMALL)
    answer = engine.ask(QUESTION, QAOptions(stories=(story,), crosslang_answer="question"))
    assert model.calls == ["answer"]
    assert "answer_in_sources_language" not in _support(answer)
    model.calls.clear()
    japanese = engine.ask(
        "桃太郎は何を着ましたか？", QAOptions(stories=(story,), crosslang_answer="sources")
    )
    assert model.calls == ["answer"]
    assert "answer_in_sources_language" not in _support(japanese)


def test_a_failing_translation_is_named_and_the_question_is_read_as_asked(
    momotaro: tuple[Services, str],
) -> None:
    services, story = momotaro
    # no scripted translation: the model's reply is empty, so the question is read as asked
    model = ScriptedChatModel()
    engine = build_engine(services.store, model, SMALL)
    answer = engine.ask(QUESTION, QAOptions(stories=(story,), crosslang_answer="sources"))
    assert _support(answer)["asked_how"] == "as asked"
