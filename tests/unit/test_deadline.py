"""An answer's deadline (storygraph.qa.pipeline.deadline): it comes from the settings, trips once
and says
so in the trace, and cuts a streamed model answer at the first piece past it, closing the
stream. Time is a clock the test moves: nothing here waits or measures."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from pydantic import ValidationError

from storygraph.models import Answer, TraceStep
from storygraph.qa.generation.answer import ModelAnswerer
from storygraph.qa.pipeline.deadline import TOO_LONG, Deadline, DeadlinePassed, unchecked
from storygraph.qa.pipeline.explain import plain_trace
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.pipeline.trace import Trace
from storygraph.qa.retrieval.context import Sources
from storygraph.settings import Settings


@dataclass
class Clock:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_deadline_setting_reaches_the_engines_options(monkeypatch: pytest.MonkeyPatch) -> None:
    assert QAOptions.from_settings(Settings()).deadline_s == 90.0
    monkeypatch.setenv("STORYGRAPH_ANSWER_DEADLINE_S", "7.5")
    assert QAOptions.from_settings(Settings()).deadline_s == 7.5
    assert QAOptions.from_settings(Settings(), deadline_s=2.0).deadline_s == 2.0
    with pytest.raises(ValidationError):
        Settings(answer_deadline_s=0)


def test_the_deadline_trips_once_and_the_trace_names_the_stage_that_ran_over() -> None:
    clock = Clock()
    deadline = Deadline(60, clock)
    trace = Trace(model=False)
    trace.record("retrieval")
    clock.now += 60  # exactly at the deadline: not past it
    assert not deadline.over(trace, "rerank") and deadline.warnings == []
    trace.record("rerank")
    clock.now += 0.5
    assert deadline.over(trace, "sentences")
    assert deadline.over(trace, "answer")  # every later stage is skipped, recorded once
    steps = [(s.name, s.detail) for s in trace.steps]
    assert steps == [
        ("retrieval", {}),
        ("rerank", {}),
        ("deadline", {"ran_over": "rerank", "stopped_before": "sentences", "deadline_s": 60}),
    ]
    assert deadline.ran_over == "rerank"
    assert deadline.warnings == [TOO_LONG.format(seconds=60)]
    assert deadline.warnings == ["this took too long (over 60 s); showing what was found so far"]


def test_a_stage_named_by_the_engine_is_the_one_recorded() -> None:
    clock = Clock()
    deadline = Deadline(1, clock)
    trace = Trace(model=False)
    trace.record("answer")
    clock.now += 2
    assert deadline.over(trace, "support", stage="answer")
    assert trace.steps[-1].detail["ran_over"] == "answer"


def test_the_guard_hands_pieces_on_and_stops_at_the_first_one_past_the_deadline() -> None:
    clock = Clock()
    deadline = Deadline(10, clock)
    shown: list[str] = []
    said: list[str] = []
    piece = deadline.guard(shown.append, said)
    piece("桃太郎")
    clock.now += 11
    with pytest.raises(DeadlinePassed):
        piece("です")
    assert said == shown == ["桃太郎", "です"]
    quiet: list[str] = []
    with pytest.raises(DeadlinePassed):
        deadline.guard(None, quiet)("。")  # no stream to show: the pieces are still kept
    assert quiet == ["。"]


def test_an_answer_stopped_before_its_check_is_shown_and_marked_not_checked() -> None:
    step = unchecked("犬です。[1]")
    assert step.text == "犬です。[1]"
    assert step.support.verdict == "not checked" and "deadline" in step.support.reason


@dataclass
class _StreamingModel:
    """A chat model at the answerer's boundary: its stream says whether it was closed."""

    pieces: list[str]
    sent: list[str] = field(default_factory=list)
    closed: list[bool] = field(default_factory=list)

    def stream(self, messages: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]:
        try:
            for text in self.pieces:
                self.sent.append(text)
                yield _Chunk(text)
        finally:
            self.closed.append(True)


@dataclass
class _Chunk:
    content: str


def test_the_model_answerer_closes_its_stream_when_the_reading_stops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The request (and the model queue's turn) is given back at once, not at garbage
    collection: the stream is closed before `answer` returns."""
    model = _StreamingModel(["犬", "です", "。", "[1]"])
    answerer = ModelAnswerer(model)  # type: ignore[arg-type]
    monkeypatch.setattr(answerer, "messages", lambda *args: [])
    clock = Clock()
    deadline = Deadline(5, clock)
    said: list[str] = []

    def late(text: str) -> None:
        if len(said) == 2:
            clock.now += 6

    try:
        answerer.answer(None, [], Sources([], []), [], deadline.guard(late, said))  # type: ignore[arg-type]
    except DeadlinePassed:
        closed_when_raised = list(model.closed)  # the traceback still holds the stream here
    else:
        pytest.fail("the answer was read past its deadline")
    assert said == ["犬", "です"]
    assert model.sent == ["犬", "です"] and closed_when_raised == [True]


def test_the_plain_trace_says_which_step_ran_past_the_deadline() -> None:
    on_time = Answer("q", "a", "onehop", steps=[TraceStep("answer", 1.0, {"method": "llm"})])
    assert "deadline" not in plain_trace(on_time)
    detail = {"ran_over": "retrieval", "stopped_before": "rerank", "deadline_s": 60.0}
    late = replace(on_time, steps=[TraceStep("retrieval", 61.0), TraceStep("deadline", 0, detail)])
    assert plain_trace(late).endswith(
        "the retrieval step ended past the answer's deadline (60 s): the steps after it were "
        "skipped."
    )
