"""Which phase of an answer is running now, for a status line that tells the truth
(docs/ISSUES.md#status-phases).

The engine (storygraph.qa.pipeline.engine) says when each phase begins: `finding` (the question's
names,
retrieval, the rerank and the sentences: a tenth of a second to a second), `reading` (the model
reads its prompt with `sources` sources in it, until its first token: most of the wait with the
small model), `writing` (from the first token on) and `checking` (the support check and the
verifier, once the model's reply is complete). A caller that wants to
hear them wraps the question in `reporting_phases(on_phase)`; the report goes by context, on the
thread that asks, as the model queue's count does (storygraph.llm.model_queue.
waiting_for_the_model). With no one listening, `phase` does nothing.

`phases_of(steps)` reads the same phases back from a finished answer's trace, with how long each
took, for the line under the answer (the trace's "answer" step carries `first_token_s`, when
the model's first token came).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

from storygraph.models import TraceStep

PhaseName = Literal["finding", "reading", "writing", "checking"]


@dataclass(frozen=True)
class Phase:
    """A phase that begins now; `sources`: how many sources the model reads (`reading`)."""

    name: PhaseName
    sources: int = 0


PhaseFn = Callable[[Phase], None]

_ON_PHASE: ContextVar[PhaseFn | None] = ContextVar("storygraph_answer_phase", default=None)


@contextlib.contextmanager
def reporting_phases(on_phase: PhaseFn) -> Iterator[None]:
    """The answers asked in this context report each phase as it begins to `on_phase`."""
    token = _ON_PHASE.set(on_phase)
    try:
        yield
    finally:
        _ON_PHASE.reset(token)


def phase(name: PhaseName, sources: int = 0) -> None:
    """Phase `name` begins now (module doc)."""
    on_phase = _ON_PHASE.get()
    if on_phase is not None:
        on_phase(Phase(name, sources))


@dataclass(frozen=True)
class PhaseTime:
    """One phase of a finished answer and the seconds it took."""

    phase: Phase
    seconds: float


FINDING_STEPS = ("entities", "story lead", "retrieval", "rerank", "sentences")
CHECKING_STEPS = ("support",)


def phases_of(steps: Sequence[TraceStep]) -> list[PhaseTime]:
    """The phases of a finished answer, from its trace: finding, then (when the model wrote the
    answer) reading and writing, split at its first token, then checking. A per-story answer
    adds its stories' steps up."""
    finding = sum(s.seconds for s in steps if s.name in FINDING_STEPS)
    found: list[PhaseTime] = [PhaseTime(Phase("finding"), finding)]
    written = [s for s in steps if s.name == "answer"]
    first = [s.detail.get("first_token_s") for s in written]
    if written and all(isinstance(f, float | int) for f in first):
        reading = sum(float(f) for f in first if f is not None)
        total = sum(s.seconds for s in written)
        read = int(written[0].detail.get("sources_read") or 0)
        found.append(PhaseTime(Phase("reading", read), reading))
        found.append(PhaseTime(Phase("writing"), max(0.0, total - reading)))
    elif written:
        found.append(PhaseTime(Phase("writing"), sum(s.seconds for s in written)))
    checking = [s.seconds for s in steps if s.name in CHECKING_STEPS]
    if checking:
        found.append(PhaseTime(Phase("checking"), sum(checking)))
    return found
