"""The answer as the reader gets it, as the scope plan says (storygraph.qa.scope.resolver): one
answer, under its head line when the plan has one (`one_answer`), or story by story, each part
under its story's head line with its citations numbered on (`per_story_answer`); the head line
sent before the first streamed piece (`headed`).
"""

from __future__ import annotations

from collections.abc import Sequence

from storygraph.models import Answer, Citation, Fact, Support
from storygraph.qa.generation.answer import TokenFn
from storygraph.qa.generation.checks import so_far
from storygraph.qa.pipeline.answering import Answered, answer_within
from storygraph.qa.pipeline.deadline import Deadline
from storygraph.qa.pipeline.parts import QAParts
from storygraph.qa.pipeline.trace import Trace
from storygraph.qa.question.analysis import QuestionAnalysis, within
from storygraph.qa.retrieval.passages import unsearched_warning
from storygraph.qa.scope.per_story import moved_support, renumbered, story_head
from storygraph.qa.scope.resolver import ScopePlan
from storygraph.qa.scope.scope import Scope


def per_story_answer(
    analysis: QuestionAnalysis,
    scopes: Sequence[Scope],
    parts: QAParts,
    trace: Trace,
    on_token: TokenFn | None,
    deadline: Deadline,
    *,
    told: str,
) -> Answer:
    """Several stories fit the question (tied by its names, or the stories an undecided
    question's sources came from: that first search stays in the trace before the parts'): an
    answer for each, in turn, each under its story's head line with its citations numbered on
    (storygraph.qa.scope.per_story); past the `deadline`, the stories not begun are left out.
    `told`:
    the warning naming them, formatted with `count` and `stories`."""
    named = parts.stories_named() if parts.stories_named is not None else {}
    japanese = analysis.reply_language == "ja"
    texts: list[str] = []
    citations: list[Citation] = []
    facts: list[Fact] = []
    warnings: list[str] = []
    supports: list[Support] = []
    answered: list[Answered] = []
    for scope in scopes:
        if answered and deadline.over(trace, "the next story's answer"):
            break
        story = scope.documents[0]
        head = story_head(named.get(story, story), japanese=japanese)
        lead = ("\n\n" if texts else "") + head + "\n"
        streamed = headed(on_token, lead) if on_token is not None else None
        part = within(analysis, scope)
        one = answer_within(part, parts, trace, streamed, deadline, ask_self=len(scopes) < 2)
        offset = len(citations)
        said = so_far(one.checked.text, parts.reading)
        text, cited = renumbered(said, one.sources.citations, offset)
        texts.append(f"{head}\n{text}")
        citations.extend(cited)
        facts.extend(one.facts)
        warnings.extend(w for w in one.warnings if w not in warnings)
        supports.append(moved_support(parts.reading.support(one.checked.support), offset))
        answered.append(one)
    stories = ", ".join(named.get(s.documents[0], s.documents[0]) for s in scopes)
    return Answer(
        question=analysis.question,
        language=analysis.reply_language,
        answer="\n\n".join(texts),
        mode=answered[0].found.mode,
        entities=list(analysis.entities),
        facts=facts,
        citations=citations,
        steps=trace.steps,
        usage=trace.usage(),
        rerank_fell_back=any(a.ranked.fell_back for a in answered),
        warnings=[
            *deadline.warnings,
            *parts.warnings,
            told.format(count=len(scopes), stories=stories),
            *analysis.warnings,
            *warnings,
        ],
        cypher="\n\n".join(dict.fromkeys(a.found.cypher for a in answered if a.found.cypher)),
        support=least_supported(supports),
    )


def one_answer(
    plan: ScopePlan, one: Answered, parts: QAParts, trace: Trace, deadline: Deadline
) -> Answer:
    """The answer written within one scope (`answer_within`), under the plan's head line when it
    has one (its story's, or the tellings'), with the plan's warnings."""
    analysis = plan.analysis
    head = plan.head
    text = so_far(one.checked.text, parts.reading)
    return Answer(
        question=analysis.question,
        language=analysis.reply_language,
        answer=f"{head}\n{text}" if head else text,
        mode=one.found.mode,
        entities=list(analysis.entities),
        facts=one.facts,
        citations=one.sources.citations,
        steps=trace.steps,
        usage=trace.usage(),
        rerank_fell_back=one.ranked.fell_back,
        warnings=[
            *deadline.warnings,
            *parts.warnings,
            *plan.warnings,
            *unread_warning(analysis, parts),
            *analysis.warnings,
            *one.warnings,
        ],
        cypher=one.found.cypher,
        support=parts.reading.support(one.checked.support),
    )


def unread_warning(analysis: QuestionAnalysis, parts: QAParts) -> list[str]:
    """A question naming no one in a library too big for sentence search to read whole
    (storygraph.qa.retrieval.passages.MAX_SEARCHED_STORIES) is told so."""
    if analysis.scope.keys or parts.stories_named is None:
        return []
    return unsearched_warning(analysis, len(parts.stories_named()))


def headed(on_token: TokenFn, head: str) -> TokenFn:
    """`on_token` with `head` sent just before the first piece (so a part's head line is not
    a "first token" before its story's retrieval has run)."""
    said = False

    def piece(text: str) -> None:
        nonlocal said
        if not said:
            said = True
            on_token(head)
        on_token(text)

    return piece


def least_supported(supports: Sequence[Support]) -> Support:
    """A per-story answer's verdict: the first part's that is not supported, else the first
    (every part supported)."""
    return next((s for s in supports if not s.supported), supports[0])
