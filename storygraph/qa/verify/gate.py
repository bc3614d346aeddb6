"""The support step on a written answer: the premise check, then the verifier, and what their
verdict does to the answer shown (`STORYGRAPH_VERIFY`):

- "gate" (the default): the model's written answer is shown as supported when the verifier's
  confidence reaches the threshold chosen on dev; below it the answer is not shown: "the story
  does not say" when the premise check found the asked act told of no one, else "not sure",
  each with the closest sentence (storygraph.qa.verify.support_text.support_reply);
- "label": the model's answer is always shown, its verdict set by the same threshold, its
  confidence in the support line: nothing is withheld (for a capable model, or a reader who
  wants every answer).

A reply that declines keeps its words; its verdict is "declined", or "no premise" when the
premise check finds the asked act told of no one. The facts list (no model answer) and an
answer the deadline cut are "not checked". In either mode an answer naming what is first written
past the reader's reading position (`later`: a model that knows the tale may write it) is not
shown, and its reason does not spell the name out (storygraph.store.reading).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from storygraph.models import Citation, Fact, Support
from storygraph.qa.generation.answer_core import answer_core
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.verify.evidence import Evidence
from storygraph.qa.verify.premise import PremiseChecker
from storygraph.qa.verify.self_check import SelfChecked
from storygraph.qa.verify.support_text import NOT_SHOWN, SupportStep, support_reply
from storygraph.qa.verify.support_words import cited_sources, declines
from storygraph.qa.verify.verifier import Verifier
from storygraph.settings import VerifyMode

__all__ = ["VerifyMode", "evidence_of", "support_step"]

TOLD = "told"
"""`Evidence.rule` when the premise check found the asked act told (or could not check it)."""
NO_PREMISE = "no premise"
PAST_POSITION = "it names what comes past the reading position"


def evidence_of(
    question: str,
    written: str,
    logprobs: Sequence[float],
    citations: Sequence[Citation],
    read: int,
    premise: str | None,
    tokens: Sequence[str] = (),
    as_written: str | None = None,
    asked_forms: Sequence[Sequence[str]] = (),
) -> Evidence:
    """The verifier's evidence for a written answer: the sources it cites and those it read,
    and the premise check's verdict (`premise`: its reason when the act is told of no one).
    `as_written`: the model's reply when `written` is it with its mark moved
    (storygraph.qa.generation.recite): the evidence reads the reply's words as written (its
    tokens align with them) and the sources `written` cites. `asked_forms`: the question's
    translated words (`Evidence.asked_forms`)."""
    cited = tuple(c.text for c in cited_sources(written, citations))
    reply = written if as_written is None else as_written
    return Evidence(
        question=question,
        answer=reply,
        core=answer_core(reply),
        cited=cited,
        read=tuple(c.text for c in citations[:read]),
        logprobs=tuple(logprobs),
        tokens=tuple(tokens),
        rule=NO_PREMISE if premise else TOLD,
        asked_forms=tuple(tuple(forms) for forms in asked_forms),
    )


def support_step(
    mode: VerifyMode,
    verifier: Verifier | None,
    premise: PremiseChecker | None,
    analysis: QuestionAnalysis,
    written: str,
    method: str,
    cut: bool,
    logprobs: Sequence[float],
    citations: Sequence[Citation],
    read: int,
    facts: Sequence[Fact],
    later: bool = False,
    tokens: Sequence[str] = (),
    self_check: Callable[[Evidence], SelfChecked] | None = None,
    as_written: str | None = None,
) -> SupportStep:
    """The support step on `written` (module doc): the verdict, the text shown, its warnings
    and the trace's detail. `read`: how many of `citations` the model read; `later`: the answer
    names what comes past the reading position; `tokens`: the texts of the tokens `logprobs`
    are of; `self_check`: asks the model about its answer (storygraph.qa.verify.self_check),
    None when it is not asked; `as_written`: the model's reply when `written` is it with its
    mark moved (`evidence_of`)."""
    if not method.startswith("llm") or cut or verifier is None:
        why = (
            f"the answer is the {method} list" if not method.startswith("llm")
            else "the answer was cut at the deadline" if cut
            else "no verifier"
        )  # fmt: skip
        support = Support("not checked", reason=why)
        return SupportStep(support, written, (), {"verdict": "not checked", "reason": why})
    told = premise.missing(analysis, citations[:read], citations, facts) if premise else None
    warnings = (f"the premise check read the facts only: {premise.problem}",) if (
        premise is not None and premise.problem
    ) else ()  # fmt: skip
    detail = {"premise": told, "model_answer": None}
    if declines(written):
        support = (
            Support(NO_PREMISE, reason=told, check="premise") if told
            else Support("declined", reason="the answer says the story's sentences do not say")
        )  # fmt: skip
        return SupportStep(support, written, warnings, {**detail, "verdict": support.verdict,
                                                         "reason": support.reason})  # fmt: skip
    translated = analysis.translation.word_forms if analysis.translation is not None else ()
    evidence = evidence_of(
        analysis.question, written, logprobs, citations, read, told, tokens, as_written, translated
    )
    if self_check is not None:
        asked = self_check(evidence)
        evidence = replace(evidence, self_check=asked.value)
        warnings = (*warnings, asked.note) if asked.failed else warnings
        detail = {**detail, "self_check": asked.value, **({"self_check_note": asked.note}
                                                          if asked.note else {})}  # fmt: skip
    verdict = verifier.verify(evidence)
    passes = verifier.passes(verdict)
    detail = {**detail, "verifier": {**verdict.to_json(), "mode": mode, "answer": written},
              "check": "verifier", "reason": verdict.reason}  # fmt: skip
    if later:
        support = Support("not supported", reason=PAST_POSITION, check="reading")
        text = support_reply(support, analysis, citations, written) or written
        return SupportStep(
            support,
            text,
            (*warnings, f"{NOT_SHOWN}{PAST_POSITION}"),
            {**detail, "verdict": support.verdict, "check": "reading", "reason": PAST_POSITION,
             "model_answer": written},
        )  # fmt: skip
    if passes or mode == "label":
        # the best cited sentence's number: `best_evidence` indexes the sources it cites
        cited = cited_sources(written, citations)
        best = verdict.best_evidence
        source = cited[best].number if best is not None and best < len(cited) else None
        verdict_of = "supported" if passes else "not supported"
        support = Support(verdict_of, source=source, reason=verdict.reason, check="verifier")
        return SupportStep(support, written, warnings, {**detail, "verdict": verdict_of,
                                                         "source": source})  # fmt: skip
    support = (
        Support(NO_PREMISE, reason=told, check="premise") if told
        else Support("not supported", reason=verdict.reason, check="verifier")
    )  # fmt: skip
    text = support_reply(support, analysis, citations, written) or written
    warning = f"{NOT_SHOWN}the verifier's {verdict.reason}"
    return SupportStep(
        support,
        text,
        (*warnings, warning),
        {**detail, "verdict": support.verdict, "model_answer": written},
    )
