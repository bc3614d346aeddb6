"""The answer's trace (design §5.5): one step per stage, each with its time, its model usage
and what it found, in words the UI, the CLI and the evaluation read (`Answer.steps`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from storygraph.models import TraceStep, Usage, usage_delta
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.retrieval.passages import Passage
from storygraph.qa.retrieval.retrieval import Retrieval
from storygraph.qa.retrieval.scoring import RerankResult


@dataclass(frozen=True)
class Mark:
    """When a step began, and the usage so far."""

    started: float
    usage: Usage


class Trace:
    """Counts the model's calls and tokens (`callbacks`) and records the steps: each step's time
    and usage run from the end of the one before (the first's from the trace's start).

    `model` False (the question's parts have no model, `QAParts.no_model`): nothing can call a
    model, so there is nothing to count; `callbacks` is empty and every usage is zero, and the
    LangChain callback machinery is not imported (0.6 s of `ask --no-llm`'s imports at load ~14,
    docs/ISSUES.md#startup-imports)."""

    def __init__(self, *, model: bool = True) -> None:
        self.callbacks: list[Any] = []
        self._counter: Any = None
        if model:
            from storygraph.llm.usage import UsageCounter

            self._counter = UsageCounter()
            self.callbacks.append(self._counter)
        self.steps: list[TraceStep] = []
        self._since = self.mark()

    def usage(self) -> Usage:
        """The calls and tokens counted so far."""
        return self._counter.snapshot() if self._counter is not None else Usage()

    def mark(self) -> Mark:
        return Mark(time.perf_counter(), self.usage())

    def elapsed(self) -> float:
        """Seconds since the step that is running began (the end of the one before)."""
        return time.perf_counter() - self._since.started

    def record(self, name: str, **detail: Any) -> None:
        """The step that ends now, with what it found."""
        since = self._since
        elapsed = time.perf_counter() - since.started
        self.steps.append(TraceStep(name, elapsed, detail, usage_delta(since.usage, self.usage())))
        self._since = self.mark()


def entities_detail(analysis: QuestionAnalysis) -> dict[str, Any]:
    pick = analysis.relation_pick
    return {
        "found": analysis.ids,
        "how": {e.node_id: e.source for e in analysis.entities},
        "graph_names": len(analysis.graph_names),
        "stories": list(analysis.scope.documents),
        "scope": analysis.scope.note,
        "relation_type_pick": list(pick) if pick is not None else None,
        "translation": (
            analysis.translation.detail() if analysis.translation is not None else None
        ),
    }


def retrieval_detail(found: Retrieval) -> dict[str, Any]:
    return {
        "candidates": len(found.facts),
        "mode": found.mode,
        "question_type": found.question_type.describe() if found.question_type else None,
        "relation_types": found.relation_types.describe() if found.relation_types else None,
        "asked_types": (
            list(found.relation_types.types)
            if found.relation_types is not None and found.relation_types.filtered
            else []
        ),
        "added": [f.text() for f in found.added],
        "filtered_out": [f.text() for f in found.filtered_out],
        "queries": [label for label, _ in found.queries],
    }


def rerank_detail(
    ranked: RerankResult, kept: int, set_aside: int, top_k: int, min_score: float
) -> dict[str, Any]:
    return {
        "method": ranked.method,
        "kept": kept,
        "set_aside_by_relation_words": set_aside,
        "fell_back": ranked.fell_back,
        "top_k": top_k,
        "min_score": min_score,
    }


def sentences_detail(method: str, passages: Sequence[Passage]) -> dict[str, Any]:
    return {
        "method": method,
        "found": [
            {
                "text": p.text,
                "document": p.document_name,
                "score": p.score,
                "bm25": p.lexical,
                "cosine": p.semantic,
                "found_by": p.found_by,
            }
            for p in passages
        ],
    }
