"""The candidate step through the engine (storygraph.qa.generation.candidate_answer), on the real
embedded
FalkorDB with the sample story ingested by the parser and the real support check: the small
model's answer is scripted wrong (the one who raised 桃太郎), and what is shown instead depends
on the mode (the default: the single candidate); the trace names the step and keeps the
model's words. The step follows the rule check (`verify="rules"`): under the verifier's gate it
runs when the model's answer is withheld (storygraph.qa.verify.gate, tests/unit/test_verify.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storygraph.evaluation.e2e import load_e2e_questions, run_e2e
from storygraph.llm.factory import ModelInfo
from storygraph.qa.pipeline.engine import QAEngine
from storygraph.qa.pipeline.factory import build_engine
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.verify.support_text import NOT_SURE
from storygraph.services import Services, question_structure, sentence_frames
from storygraph.settings import Settings
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


def test_off_the_unconfirmed_answer_is_not_sure(momotaro: Services) -> None:
    model = ScriptedChatModel()
    answer = _engine(momotaro, model).ask(FOLLOWED, QAOptions(verify="rules", candidates="off"))
    assert answer.answer.startswith(NOT_SURE["ja"])
    assert answer.support is not None and answer.support.verdict == "not supported"
    assert not any(s.name == "candidate" for s in answer.steps)
    assert len(model.calls) == 1


def test_the_one_frame_candidate_is_shown_marked_without_a_call(momotaro: Services) -> None:
    model = ScriptedChatModel()
    # the default candidates
    answer = _engine(momotaro, model).ask(FOLLOWED, QAOptions(verify="rules"))
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
    answer = engine.ask(FOLLOWED, QAOptions(verify="rules", candidates="choice"))
    assert answer.answer.startswith("桃太郎です。[")
    assert answer.support is not None and answer.support.answered_by == "choice"
    assert len(model.calls) == 2  # the answer, then the choice: at most two a question
    # candidates the scripted model links to nothing: it says the sentences do not say (how
    # many the sources offer depends on the story's chunks: one since they follow its chapters)
    options = QAOptions(verify="rules", candidates="choice")
    answer = engine.ask("猿は誰にきびだんごをもらった？", options)
    step = next(s for s in answer.steps if s.name == "candidate")
    assert step.detail["candidates"] and step.detail["picked"] is None
    assert answer.answer.startswith(NOT_SURE["ja"])
    assert len(model.calls) == 4


def test_a_server_without_grammars_gets_no_choice_and_says_so(momotaro: Services) -> None:
    remote = ModelInfo("openai_compatible", "s", capable=False)
    engine = _engine(momotaro, ScriptedChatModel(), remote)
    parts = engine.parts_for(QAOptions(verify="rules", candidates="choice"))
    assert parts.candidate is None
    assert any("no grammar" in w for w in parts.warnings)
    # the single one
    assert engine.parts_for(QAOptions(verify="rules", candidates="both")).candidate is not None
    assert engine.parts_for(QAOptions(verify="rules", candidates="off")).candidate is None


def test_the_harness_counts_a_confirmed_candidate_as_supported_and_keeps_the_models_words(
    tmp_path: Path, shared_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scripted_logic, "answer", lambda prompt: WRONG)
    rows = [
        {"id": "followed", "story": "ja/momotaro_kusuyama.txt", "question": FOLLOWED,
         "answers": ["桃太郎"]},
        {"id": "given", "story": "ja/momotaro_kusuyama.txt",
         "question": "猿は誰にきびだんごをもらった？", "answers": ["桃太郎"]},
    ]  # fmt: skip
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")

    def run(candidates: str) -> dict[str, dict]:
        report = run_e2e(
            Settings(data_dir=tmp_path / "data"),
            load_e2e_questions(path),
            shared_dir / "stories",
            modes=["onehop+qtype+reltype+rerank"],
            options=QAOptions(verify="rules", candidates=candidates),
            cache_dir=tmp_path / "cache",
            llm=ScriptedChatModel(),
        )
        return {q["id"]: q for q in report.to_json()["questions"]}

    shown = run("single")
    assert shown["followed"]["supported"] is True and shown["followed"]["strict_correct"]
    assert shown["followed"]["model_answer"] == WRONG
    # two candidates: nothing shown, "not sure" is not counted as supported
    assert shown["given"]["supported"] is False and not shown["given"]["strict_correct"]
    off = run("off")
    assert off["followed"]["supported"] is False and not off["followed"]["strict_correct"]


def test_the_candidate_step_reads_nothing_past_the_reading_position(momotaro: Services) -> None:
    """The dog follows 桃太郎 in chapter 三: up to chapter 二 nothing offers a candidate (the
    question's 犬 is not yet named, no source is later) and the model's wrong answer stays
    "not sure"; up to 三 the candidate of the sentence read is shown as without a position."""
    model = ScriptedChatModel()
    before = _engine(momotaro, model).ask(FOLLOWED, QAOptions(verify="rules", until=2))
    assert before.answer.startswith(NOT_SURE["ja"]) and "桃太郎です" not in before.answer
    assert "犬" not in {e.node_id for e in before.entities}
    assert all((c.chapter or 0) <= 2 for c in before.citations)
    step = next((s for s in before.steps if s.name == "candidate"), None)
    assert step is None or step.detail.get("picked") is None
    after = _engine(momotaro, ScriptedChatModel()).ask(FOLLOWED, QAOptions(verify="rules", until=3))
    assert after.answer.startswith("桃太郎です。[")
    assert all((c.chapter or 0) <= 3 for c in after.citations)
