"""Every answer has a deadline (storygraph.qa.pipeline.deadline), on the real embedded store with
the model
faked at its boundary: a stage that ends past it stops the answer there, the user gets what was
found so far with "this took too long", and the trace names the stage that ran over. Slowness is
a clock the fake parts move forward (no test waits or measures time); a deadline of 0 s trips at
the first check, after reading the question."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk
from pydantic import Field

from storygraph.ingest.graph_io import import_graph, load_graph_file
from storygraph.llm.factory import ModelInfo
from storygraph.models import Answer
from storygraph.qa.pipeline.deadline import TOO_LONG
from storygraph.qa.pipeline.engine import QAEngine
from storygraph.qa.pipeline.factory import build_engine
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.scope.per_story import split_by_story
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from tests.helpers.scripted_logic import Script
from tests.helpers.scripted_model import ScriptedChatModel

SMALL = ModelInfo("embedded", "scripted-small", capable=False)
QUESTION = "桃太郎を倒したのは誰？"
TOO_LONG_60 = TOO_LONG.format(seconds=60)


@dataclass
class Clock:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def seeded(services: Services, shared_dir: Path) -> Services:
    import_graph(services.store, load_graph_file(shared_dir / "eval" / "seed_graph.json"))
    return services


def _engine(services: Services, model: Any, clock: Clock, **parts: Any) -> QAEngine:
    """The small model's engine (as the embedded default answers), on `clock`, with `parts`
    replaced."""
    built = build_engine(services.store, model, SMALL, embedder=None)
    return QAEngine(lambda options: replace(built.parts_for(options), **parts), clock=clock)


def _step(answer: Answer, name: str) -> dict[str, Any]:
    return next(s.detail for s in answer.steps if s.name == name)


def test_on_time_an_answer_has_no_deadline_step_and_no_warning(seeded: Services) -> None:
    answer = _engine(seeded, ScriptedChatModel(), Clock()).ask(QUESTION)
    assert "deadline" not in [s.name for s in answer.steps]
    assert TOO_LONG_60 not in answer.warnings
    assert answer.support is not None and answer.support.verdict != "not checked"


def test_a_deadline_of_zero_stops_after_reading_the_question(seeded: Services) -> None:
    model = ScriptedChatModel()
    engine = build_engine(seeded.store, model, SMALL, embedder=None)
    answer = engine.ask(QUESTION, QAOptions(deadline_s=0.0))
    assert answer.warnings[0] == TOO_LONG.format(seconds=0)
    assert _step(answer, "deadline") == {
        "ran_over": "entities",
        "stopped_before": "retrieval",
        "deadline_s": 0.0,
    }
    assert [s.name for s in answer.steps] == ["entities", "deadline", "answer", "support"]
    assert "answer" not in model.calls  # the model was not asked
    assert answer.entities and answer.facts == []
    assert answer.support is not None and answer.support.verdict == "not checked"


def test_a_slow_model_reply_is_shown_unchecked(seeded: Services) -> None:
    clock = Clock()

    def slow(kind: str) -> None:
        if kind == "answer":
            clock.advance(61)

    model = ScriptedChatModel(faults={"answer": "text:鬼です。[1]"}, on_call=slow)
    answer = _engine(seeded, model, clock).ask(QUESTION)
    assert answer.answer == "鬼です。[1]"
    assert answer.support is not None and answer.support.verdict == "not checked"
    assert answer.warnings[0] == TOO_LONG_60
    assert _step(answer, "deadline")["ran_over"] == "answer"
    assert _step(answer, "answer")["cut_at_deadline"] is True
    assert [s.name for s in answer.steps][-3:] == ["answer", "deadline", "support"]


class _SlowStream(ScriptedChatModel):
    """Streams its answer piece by piece; the clock passes the deadline before the third."""

    pieces: list[str] = Field(default_factory=list)
    clock: Any = None
    sent: list[str] = Field(default_factory=list)

    def _stream(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        self.calls.append("answer")
        for n, piece in enumerate(self.pieces):
            if n == 2:
                self.clock.advance(61)
            self.sent.append(piece)
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece))


def test_a_streamed_reply_is_cut_at_the_first_piece_past_the_deadline(seeded: Services) -> None:
    clock = Clock()
    model = _SlowStream(pieces=["鬼", "の", "大将", "です。", "[1]"], clock=clock)
    streamed: list[str] = []
    answer = _engine(seeded, model, clock).ask(QUESTION, on_token=streamed.append)
    assert model.sent == ["鬼", "の", "大将"]  # not read any further
    assert answer.answer == "鬼の大将"
    assert streamed[:3] == ["鬼", "の", "大将"]
    assert answer.support is not None and answer.support.verdict == "not checked"
    assert _step(answer, "deadline")["ran_over"] == "answer"
    assert answer.warnings[0] == TOO_LONG_60


class _SlowPremise:
    """The premise check, taking 61 s of the test's clock."""

    def __init__(self, checker: Any, clock: Clock) -> None:
        self._checker = checker
        self._clock = clock
        self.problem = ""

    def missing(self, *args: Any) -> Any:
        self._clock.advance(61)
        return self._checker.missing(*args)


def test_a_slow_support_step_is_the_last_stage_and_keeps_its_verdict(seeded: Services) -> None:
    """The support step runs past the deadline: no stage is left to skip, so the answer is
    whole, with its verdict and no "too long" warning."""
    clock = Clock()
    built = build_engine(seeded.store, ScriptedChatModel(), SMALL, embedder=None)
    premise = built.parts_for(QAOptions()).premise
    assert premise is not None
    slowed = _SlowPremise(premise, clock)
    answer = _engine(seeded, ScriptedChatModel(), clock, premise=slowed).ask(QUESTION)
    assert "deadline" not in [s.name for s in answer.steps]
    assert answer.support is not None and answer.support.verdict != "not checked"
    assert TOO_LONG_60 not in answer.warnings
    assert clock.now >= 1061  # the check did run past the deadline


TRIPLES = (  # the library of tests/integration/test_library_scope.py
    ("old man", "Character", "GOES_TO", "mountain", "Place"),
    ("old man", "Character", "FINDS", "Momotaro", "Character"),
    ("old man", "Character", "HAS", "lump", "Object"),
)


@pytest.fixture
def library(tmp_path: Path) -> Iterator[Services]:
    settings = Settings(data_dir=tmp_path / "data", chunk_size=40, chunk_overlap=0)
    services = build_services(settings, llm=ScriptedChatModel(script=Script(triples=TRIPLES)))
    for name, text in (
        ("story_a.txt", "The old man went to the mountain.\nThe old man found Momotaro.\n"),
        ("story_b.txt", "The old man went to the mountain.\nThe old man had a lump.\n"),
    ):
        report = services.ingestor().ingest_bytes(name, text.encode("utf-8"))
        assert report.status == "added", report.message
    yield services
    services.close()


class _SlowRetriever:
    """Retrieval taking 61 s of the test's clock."""

    def __init__(self, retriever: Any, clock: Clock) -> None:
        self._retriever = retriever
        self._clock = clock
        self.mode = retriever.mode

    def search(self, *args: Any, **kwargs: Any) -> Any:
        self._clock.advance(61)
        return self._retriever.search(*args, **kwargs)


def test_a_per_story_answer_past_its_deadline_leaves_the_stories_not_begun(
    library: Services,
) -> None:
    clock = Clock()
    options = QAOptions(no_llm=True)
    question = "What did the old man have?"
    whole = library.qa().ask(question, options)
    assert len(split_by_story(whole.answer)) == 2  # on time: a part for each story
    built = library.qa()
    slow = _SlowRetriever(built.parts_for(options).retriever, clock)
    engine = QAEngine(lambda o: replace(built.parts_for(o), retriever=slow), clock=clock)
    answer = engine.ask(question, options)
    assert [s.name for s in answer.steps].count("retrieval") == 1
    assert _step(answer, "deadline") == {
        "ran_over": "retrieval",
        "stopped_before": "rerank",
        "deadline_s": 60.0,
    }
    assert len(split_by_story(answer.answer)) == 1
    assert answer.warnings[0] == TOO_LONG_60
    # what retrieval found, unranked, is the answer's
    assert answer.facts and all(f.score is None for f in answer.kept_facts)
