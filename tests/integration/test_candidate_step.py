"""The candidate step through the engine (storygraph.qa.candidate_answer), on the real embedded
FalkorDB with the sample story ingested by the parser and the real support check: the small
model's answer is scripted wrong (the one who raised 桃太郎), and what is shown instead depends
on the mode; the trace names the step and keeps the model's words."""

from __future__ import annotations

from pathlib import Path

import pytest

from storygraph.llm.factory import ModelInfo
from storygraph.qa.engine import QAEngine, QAOptions
from storygraph.qa.factory import build_engine
from storygraph.qa.support_text import NOT_SURE
from storygraph.services import Services, question_structure, sentence_frames
from tests.helpers import scripted_logic
from tests.helpers.scripted_model import ScriptedChatModel

SMALL = ModelInfo("embedded", "scripted-small", capable=False)
WRONG = "おじいさんです。[1]"
FOLLOWED = "犬は誰のあとからついて行きましたか？"


@pytest.fixture
def momotaro(services: Services, shared_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Services:
    story = shared_dir / "stories" / "ja" / "momotaro_kusuyama.txt"
    assert services.ingestor().ingest_bytes(story.name, story.read_bytes()).status == "added"
    monkeypatch.setattr(scripted_logic, "answer", lambda prompt: WRONG)
    return services


def _engine(services: Services, model: ScriptedChatModel, info: ModelInfo = SMALL) -> QAEngine:
    """The engine as the app composes it: the parser's frames and question structure read."""
    return build_engine(
        services.store, model, info, embedder=None, frames=sentence_frames,
        questions=question_structure,
    )  # fmt: skip


def test_off_by_default_the_unconfirmed_answer_is_not_sure(momotaro: Services) -> None:
    model = ScriptedChatModel()
    answer = _engine(momotaro, model).ask(FOLLOWED, QAOptions())
    assert answer.answer.startswith(NOT_SURE["ja"])
    assert answer.support is not None and answer.support.verdict == "not supported"
    assert not any(s.name == "candidate" for s in answer.steps)
    assert len(model.calls) == 1


def test_the_one_frame_candidate_is_shown_marked_without_a_call(momotaro: Services) -> None:
    model = ScriptedChatModel()
    answer = _engine(momotaro, model).ask(FOLLOWED, QAOptions(candidates="single"))
    assert answer.answer.startswith("桃太郎です。[")
    assert answer.support is not None and answer.support.supported
    assert answer.support.answered_by == "structure"
    step = next(s for s in answer.steps if s.name == "candidate")
    assert step.detail["candidates"] == ["桃太郎"] and step.detail["verdict"] == "supported"
    support = next(s for s in answer.steps if s.name == "support")
    assert support.detail["model_answer"] == WRONG  # the model's own words, for a replay
    assert any("read from the sentence's structure" in w for w in answer.warnings)
    assert len(model.calls) == 1


def test_the_models_choice_is_shown_marked_in_two_calls_or_nothing(momotaro: Services) -> None:
    follows = (("犬", "Character", "FOLLOWS", "桃太郎", "Character"),)
    model = ScriptedChatModel(script=scripted_logic.Script(triples=follows))
    engine = _engine(momotaro, model)
    answer = engine.ask(FOLLOWED, QAOptions(candidates="choice"))
    assert answer.answer.startswith("桃太郎です。[")
    assert answer.support is not None and answer.support.answered_by == "choice"
    assert len(model.calls) == 2  # the answer, then the choice: at most two a question
    # two candidates the scripted model links to nothing: it says the sentences do not say
    answer = engine.ask("猿は誰にきびだんごをもらった？", QAOptions(candidates="choice"))
    step = next(s for s in answer.steps if s.name == "candidate")
    assert len(step.detail["candidates"]) == 2 and step.detail["picked"] is None
    assert answer.answer.startswith(NOT_SURE["ja"])
    assert len(model.calls) == 4


def test_a_server_without_grammars_gets_no_choice_and_says_so(momotaro: Services) -> None:
    remote = ModelInfo("openai_compatible", "s", capable=False)
    engine = _engine(momotaro, ScriptedChatModel(), remote)
    parts = engine.parts_for(QAOptions(candidates="choice"))
    assert parts.candidate is None
    assert any("no grammar" in w for w in parts.warnings)
    assert engine.parts_for(QAOptions(candidates="both")).candidate is not None  # the single one
    assert engine.parts_for(QAOptions(candidates="off")).candidate is None
