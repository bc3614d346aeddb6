"""What the verifier's verdict does to the answer shown (`STORYGRAPH_VERIFY`):

- "gate" (the default): the model's written answer is shown as supported when its confidence
  reaches the threshold chosen on dev, whatever the rule check said; below it, an answer the
  rule check had confirmed is replaced by the "not sure" reply (with the closest sentence), and
  what the rule check showed otherwise (its "not sure" or "no premise") stands;
- "label": the model's answer is always shown, its verdict set by the same threshold, its
  confidence in the support line: nothing is withheld (for a capable model, or a reader who
  wants every answer);
- "rules": the rule check decides alone, as before the verifier; the verdict is only recorded.

Only a model-written answer that does not decline and was not cut at the deadline is verified.
"""

from __future__ import annotations

from collections.abc import Sequence

from storygraph.models import Citation, Support
from storygraph.qa.generation.answer_core import answer_core
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.verify.evidence import Evidence, Verdict
from storygraph.qa.verify.support_text import NOT_SHOWN, SupportStep, support_reply
from storygraph.qa.verify.support_words import cited_sources, declines
from storygraph.qa.verify.verifier import Verifier
from storygraph.settings import VerifyMode

__all__ = ["VerifyMode", "evidence_of", "gated", "verifiable"]


def evidence_of(
    question: str,
    written: str,
    logprobs: Sequence[float],
    citations: Sequence[Citation],
    read: int,
    rule: Support,
) -> Evidence:
    """The verifier's evidence for a written answer: the sources it cites and those it read."""
    cited = tuple(c.text for c in cited_sources(written, citations))
    return Evidence(
        question=question,
        answer=written,
        core=answer_core(written),
        cited=cited,
        read=tuple(c.text for c in citations[:read]),
        logprobs=tuple(logprobs),
        rule=rule.verdict,
    )


def verifiable(method: str, written: str, cut: bool) -> bool:
    """Whether a written answer is the verifier's to judge (module doc)."""
    return method.startswith("llm") and not cut and not declines(written)


def gated(
    mode: VerifyMode,
    verifier: Verifier,
    verdict: Verdict,
    analysis: QuestionAnalysis,
    written: str,
    checked: SupportStep,
    citations: Sequence[Citation],
) -> SupportStep:
    """The support step shown after the verdict on `written` (`checked`: the rule check's step
    on it, what the rule path shows)."""
    detail = {**checked.detail, "verifier": {**verdict.to_json(), "mode": mode, "answer": written}}
    if mode == "rules":
        return SupportStep(checked.support, checked.text, checked.warnings, detail)
    passes = verifier.passes(verdict)
    # the best cited sentence's number: `best_evidence` indexes the sources the answer cites
    cited = cited_sources(written, citations)
    best = verdict.best_evidence
    source = cited[best].number if best is not None and best < len(cited) else None
    if passes or mode == "label":
        said = checked.support.reason if checked.support.supported else ""
        support = Support(
            "supported" if passes else "not supported",
            source=source,
            reason=verdict.reason + (f" ({said})" if said else ""),
            named=checked.support.named,
            check="verifier",
        )
        return SupportStep(
            support,
            written,
            tuple(w for w in checked.warnings if not w.startswith(NOT_SHOWN)),
            {**detail, "verdict": support.verdict, "check": "verifier", "reason": verdict.reason,
             "model_answer": None},
        )  # fmt: skip
    if checked.support.supported and checked.text == written:
        support = Support("not supported", reason=verdict.reason, check="verifier")
        text = support_reply(support, analysis, citations, written) or written
        warning = f"{NOT_SHOWN}the verifier's {verdict.reason}"
        return SupportStep(
            support,
            text,
            (*checked.warnings, warning),
            {**detail, "verdict": support.verdict, "check": "verifier", "reason": verdict.reason,
             "model_answer": written},
        )  # fmt: skip
    return SupportStep(checked.support, checked.text, checked.warnings, detail)
