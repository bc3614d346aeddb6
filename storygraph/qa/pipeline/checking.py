"""The support step on a written answer: the rule check over the question's stories' names
(storygraph.qa.verify.support).
"""

from __future__ import annotations

from collections.abc import Sequence

from storygraph.models import Fact
from storygraph.qa.pipeline.parts import QAParts
from storygraph.qa.pipeline.writing import Written
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.retrieval.context import Sources
from storygraph.qa.scope.scope import names_in_scope
from storygraph.qa.verify.support import SupportChecker
from storygraph.qa.verify.support_text import SupportStep, support_step


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
