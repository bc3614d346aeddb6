"""The retrieve step within one scope: retrieval, scoring and the sources the answer is written
from (`gather`), and what an answer stopped by its deadline keeps of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from storygraph.models import Fact
from storygraph.qa.pipeline.deadline import Deadline
from storygraph.qa.pipeline.parts import QAParts
from storygraph.qa.pipeline.trace import Trace, rerank_detail, retrieval_detail, sentences_detail
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.retrieval.context import Sources
from storygraph.qa.retrieval.retrieval import Retrieval
from storygraph.qa.retrieval.scoring import RerankResult, keep_fitting


@dataclass(frozen=True)
class Gathered:
    """What an answer is written from: the retrieved facts, their ranking, the kept ones and
    the sources (facts' sentences and sentence search's)."""

    found: Retrieval
    ranked: RerankResult
    facts: list[Fact]
    kept: list[Fact]
    sources: Sources


def gather(
    analysis: QuestionAnalysis, parts: QAParts, trace: Trace, deadline: Deadline
) -> Gathered:
    """Retrieval, scoring and the sources within `analysis.scope`, recorded in `trace`; past
    the `deadline`, what was gathered so far (the first candidates, unranked, before the
    rerank; no sources before the sentences)."""
    nothing = Sources([], [])
    if deadline.over(trace, "retrieval"):
        found = Retrieval([], "", mode=parts.retriever.mode)
        return Gathered(found, RerankResult([], False, "not run"), [], [], nothing)
    found = parts.retriever.search(analysis, trace.callbacks)
    trace.record("retrieval", **retrieval_detail(found))
    if deadline.over(trace, "rerank"):
        kept = unranked(found.facts, parts.top_k)
        facts = list(found.facts) + set_aside(found.filtered_out)
        return Gathered(found, RerankResult(kept, False, "not run"), facts, kept, nothing)
    ranked = parts.rank(analysis, found, trace.callbacks)
    facts = ranked.facts + set_aside(found.filtered_out)
    fitting = 0
    if parts.fitting_only and found.relation_types is not None:
        fitting = keep_fitting(facts, found.relation_types.lexical_types)
    kept = [f for f in facts if f.kept]
    trace.record(
        "rerank", **rerank_detail(ranked, len(kept), fitting, parts.top_k, parts.min_score)
    )
    if deadline.over(trace, "sentences"):
        return Gathered(found, ranked, facts, kept, nothing)
    passages = parts.context.sentences(analysis)
    trace.record("sentences", **sentences_detail(parts.context.method, passages))
    sources = parts.context.sources(kept, passages, story_order=found.order is not None)
    return Gathered(found, ranked, facts, kept, sources)


def unranked(facts: Sequence[Fact], top_k: int) -> list[Fact]:
    """The first `top_k` candidates in retrieval order, kept unscored: what an answer stopped
    by its deadline before the rerank shows."""
    for fact in facts[:top_k]:
        fact.kept = True
        fact.reason = "not ranked: the answer's deadline passed"
    return list(facts[:top_k])


def set_aside(facts: Sequence[Fact]) -> list[Fact]:
    """Candidates the relation-type stage set aside: in the trace, dropped, last."""
    for fact in facts:
        fact.kept = False
        fact.reason = "relation type does not fit the question"
    return list(facts)
