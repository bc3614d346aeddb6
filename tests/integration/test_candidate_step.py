"""The candidate step through the engine (storygraph.qa.candidate_answer), on the real embedded
FalkorDB with the sample story ingested by the parser and the real support check: the small
model's answer is scripted wrong (the one who raised 桃太郎), and what is shown instead depends
on the mode; the trace names the step and keeps the model's words."""

from __future__ import annotations

from pathlib import Path

import pytest

from storygraph.llm.factory import ModelInfo
from storygraph.qa.engine import QAOptions
from storygraph.qa.factory import build_engine
from storygraph.qa.support_text import NOT_SURE
from storygraph.services import Services
from tests.helpers import scripted_logic
from tests.helpers.scripted_model import ScriptedChatModel

SMALL = ModelInfo("embedded", "scripted-small", capable=False)
WRONG = "おじいさんです。[1]"


@pytest.fixture
def momotaro(services: Services, shared_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Services:
    story = shared_dir / "stories" / "ja" / "momotaro_kusuyama.txt"
    assert services.ingestor().ingest_bytes(story.name, story.read_bytes()).status == "added"
    monkeypatch.setattr(scripted_logic, "answer", lambda prompt: WRONG)
    return services


def test_off_by_default_the_unconfirmed_answer_is_not_sure(momotaro: Services) -> None:
    model = ScriptedChatModel()
    engine = build_engine(momotaro.store, model, SMALL, embedder=None)
    answer = engine.ask("桃太郎の家来は誰？", QAOptions())
    assert answer.answer.startswith(NOT_SURE["ja"])
    assert answer.support is not None and answer.support.verdict == "not supported"
    assert not any(s.name == "candidate" for s in answer.steps)
    assert len(model.calls) == 1


def test_the_models_choice_among_the_candidates_is_shown_marked_in_two_calls(
    momotaro: Services,
) -> None:
    model = ScriptedChatModel(
        script=scripted_logic.Script(
            triples=(("猿", "Character", "FOLLOWS", "桃太郎", "Character"),)
        )
    )
    engine = build_engine(momotaro.store, model, SMALL, embedder=None)
    answer = engine.ask("桃太郎の家来は誰？", QAOptions(candidates="choice"))
    assert answer.answer.startswith("猿です。[")
    assert answer.support is not None and answer.support.supported
    assert answer.support.answered_by == "choice"
    step = next(s for s in answer.steps if s.name == "candidate")
    assert step.detail["picked"] == "猿" and step.detail["verdict"] == "supported"
    assert {"犬", "猿", "きじ"} <= set(step.detail["candidates"])
    support = next(s for s in answer.steps if s.name == "support")
    assert support.detail["model_answer"] == WRONG  # the model's own words, for a replay
    assert any("the answer shown is chosen by the model" in w for w in answer.warnings)
    assert len(model.calls) == 2  # the answer, then the choice: at most two a question
    # a single candidate needs no call, and several are not one
    single = build_engine(momotaro.store, ScriptedChatModel(), SMALL, embedder=None)
    several = single.ask("桃太郎の家来は誰？", QAOptions(candidates="single"))
    assert several.answer.startswith(NOT_SURE["ja"])
    assert next(s for s in several.steps if s.name == "candidate").detail["picked"] is None


def test_a_server_without_grammars_gets_no_choice_and_says_so(momotaro: Services) -> None:
    remote = ModelInfo("openai_compatible", "s", capable=False)
    engine = build_engine(momotaro.store, ScriptedChatModel(), remote, embedder=None)
    parts = engine.parts_for(QAOptions(candidates="choice"))
    assert parts.candidate is None
    assert any("no grammar" in w for w in parts.warnings)
    assert engine.parts_for(QAOptions(candidates="both")).candidate is not None  # the single one
    assert engine.parts_for(QAOptions(candidates="off")).candidate is None
