"""The support step on a written answer: the rule check over the question's stories' names
(storygraph.qa.verify.support) and the candidate step after an answer it did not confirm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from storygraph.models import Fact
from storygraph.qa.generation.candidate_answer import candidate_step
from storygraph.qa.pipeline.parts import QAParts
from storygraph.qa.pipeline.writing import Written
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.retrieval.context import Sources
from storygraph.qa.scope.scope import names_in_scope
from storygraph.qa.verify.support import SupportChecker
from storygraph.qa.verify.support_text import ANSWERED_BY, NOT_CONFIRMED, SupportStep, support_step


def scoped_checker(analysis: QuestionAnalysis, parts: QAParts) -> SupportChecker | None:
    """The support checker for one question: it reads the names of the question's stories
    only (`Scope.documents`; every story's when the scope is all of them): in a library,
    another story's names (丹後, a place of another tale) made a right answer's words "names
    the sources do not hold", and the answer the one-story store showed was replaced
    (docs/ISSUES.md#story-scope). None: the parts check nothing."""
    if parts.support is None:
        return None
    return parts.support(names_in_scope(analysis.name_rows, analysis.scope.documents))


def check_support(
    analysis: QuestionAnalysis,
    checker: SupportChecker | None,
    written: Written,
    sources: Sources,
    facts: Sequence[Fact],
) -> SupportStep:
    """The support check on the written answer: does a cited source say what it says, in that
    role? (storygraph.qa.verify.support_text.support_step: one that fails is replaced by "not
    sure".)"""
    return support_step(
        checker,
        analysis,
        written.method,
        written.text,
        sources.citations,
        facts,
        written.read,
        written.language or None,
    )


def offer_candidate(
    analysis: QuestionAnalysis,
    parts: QAParts,
    checker: SupportChecker | None,
    written: Written,
    sources: Sources,
    facts: Sequence[Fact],
    checked: SupportStep,
    callbacks: list[Any],
) -> Offered | None:
    """The candidate step (storygraph.qa.generation.candidate_answer) after a model answer the
    check did not confirm or that declined: a candidate of the asked slot, shown when the same check
    confirms it; None when the parts have no picker or the step does not apply."""
    if parts.candidate is None or checker is None:
        return None
    if parts.reading.later_names(analysis.question):
        return None  # it asks about what comes past the reading position (store/reading.py)
    read = sources.citations[: written.read]
    picked = candidate_step(
        parts.candidate, checker, analysis, checked.support, sources.citations, facts, read,
        callbacks,
    )  # fmt: skip
    if picked is None:
        return None
    if picked.text is None or picked.support is None:
        return Offered(checked, picked.detail)
    by = ANSWERED_BY.get(picked.support.answered_by, picked.support.answered_by)
    warning = f"{NOT_CONFIRMED}the answer shown is {by} ({picked.support.reason})"
    step = SupportStep(
        picked.support,
        picked.text,
        (*checked.warnings, warning),
        {**checked.detail, "model_answer": written.text},
    )
    return Offered(step, picked.detail)


@dataclass(frozen=True)
class Offered:
    """The candidate step's outcome: the support step the answer keeps (the candidate's when
    one was shown) and the candidate step's trace detail."""

    step: SupportStep
    detail: dict[str, Any]
