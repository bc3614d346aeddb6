"""The verifier's self-check in the app's pipeline (storygraph.qa.verify.self_check), on a real
embedded store with the small model scripted at the model boundary (its replies carry token
probabilities, as the embedded server's do): one question asks the model twice (its answer,
then the check), the check's value reaches the evidence the verifier judges and the trace; a
library's answer per story does not ask it (two model calls at most); a model whose replies
carry no probabilities is not asked."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storygraph.llm.factory import ModelInfo
from storygraph.models import Answer
from storygraph.qa.pipeline.answering import SELF_CHECK_SKIPPED
from storygraph.qa.pipeline.factory import build_engine
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.verify.self_check import FAILED, NO_PROBABILITIES
from storygraph.services import Services
from tests.helpers.library import ingested_library
from tests.helpers.scripted_model import ScriptedChatModel

SMALL = ModelInfo("embedded", "scripted-small", capable=False)
TRIPLES = (("Momotaro", "Character", "GOES_TO", "Onigashima", "Place"),)
TEXT = "Momotaro went to Onigashima.\nThe sea was calm.\nThe Red Ogre kept the gate.\n"


@pytest.fixture
def library(tmp_path: Path) -> Iterator[tuple[Services, dict[str, str]]]:
    stories = {"story_a.txt": TEXT, "story_b.txt": TEXT.replace("Red", "Blue")}
    services, ids = ingested_library(tmp_path, stories, TRIPLES)
    yield services, ids
    services.close()


def _ask_one_story(services: Services, ids: dict[str, str], model: ScriptedChatModel) -> Answer:
    """A question scoped to the first story, every answer shown with its verdict."""
    engine = build_engine(services.store, model, SMALL)
    return engine.ask(
        "Where did Momotaro go?", QAOptions(stories=(ids["story_a.txt"],), verify="label")
    )


def _support(answer: Answer) -> list[dict[str, Any]]:
    return [s.detail for s in answer.steps if s.name == "support"]


def test_one_story_asks_the_answer_then_the_check_and_the_verifier_reads_it(
    library: tuple[Services, dict[str, str]],
) -> None:
    services, ids = library
    model = ScriptedChatModel(logprobs=True)
    answer = _ask_one_story(services, ids, model)
    (support,) = _support(answer)
    assert model.calls == ["answer", "answer"] and answer.usage.calls == 2
    assert support["self_check"] == pytest.approx(math.log(9.0))  # log(0.9 / 0.1): "yes"
    evidence = support["verifier"]["evidence"]
    assert evidence["self_check"] == pytest.approx(support["self_check"], abs=1e-4)  # rounded
    assert support["verifier"]["signals"]["self_check"] == pytest.approx(math.log(9.0), abs=1e-4)


def test_a_library_answer_per_story_does_not_ask_it(
    library: tuple[Services, dict[str, str]],
) -> None:
    services, _ = library
    model = ScriptedChatModel(logprobs=True)
    engine = build_engine(services.store, model, SMALL)
    answer = engine.ask("Who kept the gate at Onigashima?", QAOptions(verify="label"))
    supports = _support(answer)
    assert len(supports) == 2 and answer.usage.calls == 2
    assert all(s.get("self_check_note") == SELF_CHECK_SKIPPED for s in supports)


def test_a_model_sending_no_token_probabilities_is_not_asked(
    library: tuple[Services, dict[str, str]],
) -> None:
    services, ids = library
    model = ScriptedChatModel()
    answer = _ask_one_story(services, ids, model)
    (support,) = _support(answer)
    assert model.calls == ["answer"] and support["self_check_note"] == NO_PROBABILITIES


def test_a_fault_in_the_check_keeps_the_written_answer_and_names_the_fault(
    library: tuple[Services, dict[str, str]],
) -> None:
    services, ids = library
    calls: list[str] = []

    def second_call_fails(kind: str) -> None:
        calls.append(kind)
        if len(calls) == 2:
            raise ConnectionError("the model server went away")

    model = ScriptedChatModel(logprobs=True, on_call=second_call_fails)
    answer = _ask_one_story(services, ids, model)
    (support,) = _support(answer)
    assert len(calls) == 2 and "Onigashima" in answer.answer
    assert support["self_check"] is None
    assert any(w.startswith(FAILED) and "went away" in w for w in answer.warnings)


def test_an_answer_citing_no_source_holding_it_cites_the_one_that_does(
    library: tuple[Services, dict[str, str]],
) -> None:
    # qa/generation/recite.py: the mark follows the answer's words, and the check and the
    # verifier read that sentence
    services, ids = library
    model = ScriptedChatModel(logprobs=True, faults={"answer": "text:The Red Ogre."})
    engine = build_engine(services.store, model, SMALL)
    answer = engine.ask(
        "Who kept the gate?", QAOptions(stories=(ids["story_a.txt"],), verify="label")
    )
    (moved,) = [s.detail for s in answer.steps if s.name == "citation"]
    assert moved["written"] == []
    held = next(c for c in answer.citations if c.number == moved["cites"])
    assert "Red Ogre" in held.text and answer.answer.startswith(f"The Red Ogre. [{held.number}]")
    (support,) = _support(answer)
    evidence = support["verifier"]["evidence"]
    assert evidence["cited"] == [held.text]
    assert evidence["answer"] == "The Red Ogre."  # as written: its tokens align with it
