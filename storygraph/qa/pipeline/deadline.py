"""Every answer has a deadline (`QAOptions.deadline_s`, STORYGRAPH_ANSWER_DEADLINE_S).

The engine (storygraph.qa.pipeline.engine) asks `Deadline.over` between its stages: reading the
question, the story lead, retrieval, the rerank, the sentences, the written answer, the
support check, each story of a per-story answer. The first time the
deadline has passed, the trace records a "deadline" step naming the stage that ran over and
the one not begun, and every later stage is skipped: the answer is what was found so far (the
facts' answer, or the model's text unchecked) with the plain warning `TOO_LONG`.

A stage is not interrupted in the middle (pure Python cannot be), with one exception: the
model's streamed answer is read through `Deadline.guard`, which stops reading at the first
piece that arrives past the deadline (the pieces so far are the answer, unchecked) and closes
the stream, which gives the model server the request back. Before its first piece a call is
bounded by the client's own timeout (STORYGRAPH_LLM_TIMEOUT_S).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from storygraph.models import Support
from storygraph.qa.generation.answer import TokenFn
from storygraph.qa.pipeline.trace import Trace
from storygraph.qa.verify.support_text import SupportStep

TOO_LONG = "this took too long (over {seconds:g} s); showing what was found so far"
"""The answer's warning once a stage ended past the deadline."""
UNCHECKED = "the answer ran past its deadline before the check"
"""Why an answer the deadline stopped before its support check is "not checked"."""

Clock = Callable[[], float]


class DeadlinePassed(Exception):
    """The streamed answer reached a piece past the deadline (`Deadline.guard`)."""


class Deadline:
    """One question's deadline: `seconds` from now by `clock`, and the stage that ran over."""

    def __init__(self, seconds: float, clock: Clock = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._ends = clock() + seconds
        self.ran_over = ""
        """The stage that ended past the deadline (its trace step's name); "": on time."""

    def passed(self) -> bool:
        return self._clock() > self._ends

    def over(self, trace: Trace, before: str, *, stage: str = "") -> bool:
        """Stop before the stage `before`? True once the deadline has passed at the end of
        `stage` (default: the trace's last step); the first time, the trace records a
        "deadline" step naming both. Stays True for the rest of the answer."""
        if self.ran_over:
            return True
        if not self.passed():
            return False
        self.ran_over = stage or (trace.steps[-1].name if trace.steps else "start")
        trace.record(
            "deadline", ran_over=self.ran_over, stopped_before=before, deadline_s=self.seconds
        )
        return True

    @property
    def warnings(self) -> list[str]:
        """The answer's plain warning, once a stage ran over."""
        return [TOO_LONG.format(seconds=self.seconds)] if self.ran_over else []

    def guard(self, on_token: TokenFn | None, said: list[str]) -> TokenFn:
        """`on_token` for the model's streamed answer: each piece is kept in `said` and handed
        on; after a piece that arrives past the deadline, `DeadlinePassed` ends the reading."""

        def piece(text: str) -> None:
            said.append(text)
            if on_token is not None:
                on_token(text)
            if self.passed():
                raise DeadlinePassed(f"the answer's deadline of {self.seconds:g} s passed")

        return piece


def unchecked(text: str) -> SupportStep:
    """The support step of an answer the deadline stopped before its check: shown as it is,
    marked "not checked"."""
    support = Support("not checked", reason=UNCHECKED)
    return SupportStep(support, text, (), {"verdict": "not checked", "reason": UNCHECKED})
