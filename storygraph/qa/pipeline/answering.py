"""One answer within one scope: gather → write → its mark set to the source holding its words
(storygraph.qa.generation.recite) → the support step (the premise check, then the verifier:
storygraph.qa.verify.gate) (`answer_within`), each step recorded in the trace and cut short by
the deadline.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

from storygraph.models import Fact
from storygraph.qa.generation.answer import TokenFn
from storygraph.qa.generation.recite import recited
from storygraph.qa.pipeline.deadline import Deadline, unchecked
from storygraph.qa.pipeline.gathering import Gathered, gather
from storygraph.qa.pipeline.parts import QAParts
from storygraph.qa.pipeline.progress import phase
from storygraph.qa.pipeline.trace import Trace
from storygraph.qa.pipeline.writing import Written, facts_written, write
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.retrieval.context import Sources
from storygraph.qa.retrieval.retrieval import Retrieval
from storygraph.qa.retrieval.scoring import RerankResult
from storygraph.qa.verify.gate import support_step
from storygraph.qa.verify.self_check import SelfChecked
from storygraph.qa.verify.support_text import SupportStep
from storygraph.qa.verify.support_words import declines

SELF_CHECK_SKIPPED = (
    "the model was not asked about its answer: an answer per story already spends the "
    "question's model calls"
)


@dataclass(frozen=True)
class Answered:
    """One answer's values from retrieval to the support check (a story's, in a per-story
    answer)."""

    found: Retrieval
    ranked: RerankResult
    facts: list[Fact]
    sources: Sources
    written: Written
    checked: SupportStep

    @property
    def warnings(self) -> list[str]:
        return [
            *self.found.notes,
            *self.ranked.warnings,
            *self.written.warnings,
            *self.checked.warnings,
        ]


def answer_within(
    analysis: QuestionAnalysis,
    parts: QAParts,
    trace: Trace,
    on_token: TokenFn | None,
    deadline: Deadline,
    gathered: Gathered | None = None,
    ask_self: bool = True,
) -> Answered:
    """Retrieval, scoring, sources (unless `gathered` already), the answer and its support
    check within `analysis.scope`, each step recorded in `trace`; past the `deadline`, the
    stages left are skipped (storygraph.qa.pipeline.deadline). `ask_self` False: the model is
    not asked about its answer (storygraph.qa.verify.self_check: a library's answer per story,
    which already spends the question's model calls)."""
    if gathered is None:
        phase("finding")  # a per-story answer's next story
    got = gathered if gathered is not None else gather(analysis, parts, trace, deadline)
    found, ranked, facts, kept, sources = got.found, got.ranked, got.facts, got.kept, got.sources
    asked = None
    if parts.across is not None and parts.answerer.calls_model and (kept or sources.citations):
        asked = parts.across.asked(analysis)  # answered in the sources' language
    first: list[float] = []  # when the answer's first piece came, into the answer step

    def heard(piece: str) -> None:
        if not first:
            first.append(trace.elapsed())
            phase("writing")
        if on_token is not None:
            on_token(piece)

    if deadline.over(trace, "answer"):
        written = facts_written(analysis, kept, facts, sources, on_token)
        asked = None  # the facts' answer is written in the question's language
    else:
        written = write(
            asked or analysis, parts, kept, facts, sources, trace.callbacks, heard, deadline
        )
    by_model = written.method.startswith("llm") and bool(first)
    trace.record(
        "answer", method=written.method, citations=len(sources.citations),
        sources_read=written.read, unsupported_names=list(written.unsupported),
        **({"cut_at_deadline": True} if written.cut else {}),
        **({"first_token_s": round(first[0], 4)} if by_model else {}),
    )  # fmt: skip
    read_as = asked or analysis
    as_written = None
    if written.method.startswith("llm") and not written.cut:
        phase("checking")
        moved = _recited(read_as, written, sources, trace)
        as_written = written.text if moved is not written else None
        written = moved
    check_self = None
    if parts.self_check is not None:
        check_self = (
            partial(parts.self_check.judge, callbacks=trace.callbacks) if ask_self
            else lambda _evidence: SelfChecked(None, SELF_CHECK_SKIPPED)
        )  # fmt: skip
    if deadline.over(trace, "support"):
        shown = unchecked(written.text)
    else:
        shown = support_step(
            parts.verify_mode, parts.verifier, parts.premise, read_as, written.text,
            written.method, written.cut, written.logprobs, sources.citations, written.read, facts,
            later=any(parts.reading.unread_name(n) for n in written.unsupported),
            tokens=written.tokens, self_check=check_self, as_written=as_written,
        )  # fmt: skip
    if asked is not None and parts.across is not None:
        # what the model wrote in the sources' language, rendered in the question's
        shown = parts.across.shown(analysis, shown, written.text, written.method, sources)
    trace.record("support", **shown.detail)
    return Answered(found, ranked, facts, sources, written, shown)


def _recited(
    analysis: QuestionAnalysis, written: Written, sources: Sources, trace: Trace
) -> Written:
    """The model's answer citing the source that holds its words, the move recorded in the
    trace (storygraph.qa.generation.recite); as written when its marks stay or it declines."""
    if declines(written.text):
        return written
    moved = recited(analysis.question, written.text, sources.citations, written.read)
    if moved is None:
        return written
    trace.record("citation", written=list(moved.written), cites=moved.source, text=moved.text)
    return replace(written, text=moved.text)
