"""An English question over a Japanese story answered in Japanese and shown in English (issue 27
item 4, docs/ISSUES.md#crosslang-answer): the real store, sample story, JMdict, Sudachi and the
support step; the model scripted at the model boundary (tests/helpers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from storygraph.llm.factory import ModelInfo
from storygraph.models import Answer
from storygraph.qa.pipeline.factory import build_engine
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.services import Services
from tests.helpers.scripted_model import ScriptedChatModel

SMALL = ModelInfo("embedded", "scripted-small", capable=False)
QUESTION = "What did Momotaro wear?"
IN_JAPANESE = "桃太郎は何を着ましたか？"


@pytest.fixture
def momotaro(services: Services, shared_dir: Path) -> tuple[Services, str]:
    story = shared_dir / "stories" / "ja" / "momotaro_kusuyama.txt"
    # without its chapter headings (一 … 四): one chapter, chunked as the sources these tests
    # quote were (chapters end chunks, and the first source would be another sentence)
    text = story.read_text(encoding="utf-8")
    plain = "\n".join(x for x in text.split("\n") if x.strip() not in {"一", "二", "三", "四"})
    report = services.ingestor().ingest_bytes(story.name, plain.encode("utf-8"))
    assert report.status == "added", report.message
    return services, report.document_id


def _ask(
    momotaro: tuple[Services, str],
    model: ScriptedChatModel,
    choice: str,
    question: str = QUESTION,
    verify: str = "gate",
) -> Answer:
    services, story = momotaro
    engine = build_engine(services.store, model, SMALL)
    options = QAOptions(stories=(story,), crosslang_answer=choice, verify=verify)  # type: ignore[arg-type]
    return engine.ask(question, options)


def _support(answer: Answer) -> dict[str, object]:
    return next(s.detail for s in answer.steps if s.name == "support")


def test_the_model_answers_in_japanese_and_the_reader_gets_english(
    momotaro: tuple[Services, str],
) -> None:
    model = ScriptedChatModel()
    # every answer shown with its verdict (`label`): the rendering is what is tested here
    answer = _ask(momotaro, model, "sources", verify="label")
    support = _support(answer)
    # one call: the English question, the reply asked in Japanese over the Japanese sources
    assert model.calls == ["answer"]
    written = str(support["answer_in_sources_language"])
    # the scripted small model quotes the source sharing most character pairs with the question
    # (an English question shares none: the first, 「桃太郎は十五になりました。」)
    assert written.startswith("桃太郎は十五になりました。"), written
    assert answer.support is not None and answer.support.check == "verifier", answer.support
    # shown in English (桃太郎 is the question's own Momotaro: left out), the Japanese answer in
    # brackets, its source mark kept
    assert answer.answer == "15 (桃太郎は十五になりました) [1]", answer.answer
    # the chat's own words follow the question's language, read once by the question reader
    assert answer.language == "en"
    assert support["rendered"] == ["十五 → 15"]


def test_the_questions_language_path_is_unchanged_and_japanese_questions_are_not_touched(
    momotaro: tuple[Services, str],
) -> None:
    model = ScriptedChatModel()
    answer = _ask(momotaro, model, "question")
    assert model.calls == ["answer"]
    assert "answer_in_sources_language" not in _support(answer)
    model.calls.clear()
    japanese = _ask(momotaro, model, "sources", IN_JAPANESE)
    assert model.calls == ["answer"]
    assert "answer_in_sources_language" not in _support(japanese)


def test_an_answer_the_check_replaces_is_replaced_in_english(
    momotaro: tuple[Services, str],
) -> None:
    model = ScriptedChatModel(faults={"answer": "text:猿です。[1]"})
    answer = _ask(momotaro, model, "sources")
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
    answer = _ask(momotaro, model, "sources")
    assert answer.answer.startswith("The story's sentences do not say."), answer.answer
    assert "The closest sentence is: 「" in answer.answer


def test_a_model_fault_is_named_and_the_facts_are_shown(
    momotaro: tuple[Services, str],
) -> None:
    answer = _ask(momotaro, ScriptedChatModel(faults={"answer": TimeoutError("slow")}), "sources")
    assert any(w.startswith("the model could not answer") for w in answer.warnings)
    assert "answer_in_sources_language" not in _support(answer)


def test_in_a_library_of_both_languages_a_question_held_to_japanese_stories_is_translated(
    momotaro: tuple[Services, str], shared_dir: Path
) -> None:
    """A library that also holds an English fable: the question was searched as asked (a story
    in its own language exists) and answered in the model's Japanese. Its names put it in the
    Japanese story (Momotaro → 桃太郎), so it is brought into Japanese as for that story alone;
    a question about the fable is not."""
    services, _ = momotaro
    fable = shared_dir / "stories" / "en" / "aesop__the_fox_and_the_grapes.txt"
    report = services.ingestor().ingest_bytes(fable.name, fable.read_bytes())
    assert report.status == "added", report.message
    engine = build_engine(services.store, ScriptedChatModel(), SMALL)
    asked = engine.ask(QUESTION, QAOptions(crosslang_answer="sources"))
    support = _support(asked)
    assert "answer_in_sources_language" in support, support
    assert {c.document_name for c in asked.citations} == {"momotaro_kusuyama.txt"}
    about_fable = engine.ask("What did the Fox see?", QAOptions(crosslang_answer="sources"))
    assert "answer_in_sources_language" not in _support(about_fable)
