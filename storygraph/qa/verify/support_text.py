"""What the reader is told of an answer's support verdict (storygraph.qa.verify.gate), in plain
words.

- `support_reply`: the answer text that replaces a model sentence the check did not confirm: "not
  sure" with the closest sentence; "the story does not say" for a question with no premise in
  the story.
- `SupportStep`: the whole step, for the engine: the verdict, the text to show, the warnings
  and the trace's detail.
- `support_line`: the short line shown under an answer in the chat ("checked: confidence 0.81:
  …" / "the story does not say: no fact or sentence has anyone defeats 桃太郎").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from storygraph.models import Citation, Support
from storygraph.qa.generation.answer import CLOSEST_LEAD, UNKNOWN
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.verify.support_words import declines

NOT_SURE = {
    "ja": "確かな答えは見つかりませんでした（答えを根拠の文で確かめられませんでした）。",
    "en": "Not sure: the sources do not confirm an answer.",
}


def _quote(text: str, number: int | None, language: str) -> str:
    mark = f"[{number}]" if number is not None else ""
    if language == "ja":
        return f"「{text}」{mark}"
    return f'"{text}" {mark}'.rstrip()


def _closest(citations: Sequence[Citation], language: str) -> str:
    sentences = [c for c in citations if c.kind != "graph"]
    if not sentences:
        return ""
    best = sentences[0]
    return CLOSEST_LEAD[language] + _quote(best.text, best.number, language)


def support_reply(
    support: Support, analysis: QuestionAnalysis, citations: Sequence[Citation], written: str
) -> str | None:
    """The text shown instead of the model's answer `written`, or None when that stands (it
    is supported, it already declines, or it was not checked)."""
    language = "ja" if analysis.language == "ja" else "en"
    gap = "" if language == "ja" else " "
    if declines(written):
        return None
    if support.verdict == "no premise":
        closest = _closest(citations, language)
        return UNKNOWN[language] + (" " + closest if closest else "")
    if support.verdict != "not supported":
        return None
    closest = _closest(citations, language)
    return NOT_SURE[language] + (gap + closest if closest else "")


NOT_SHOWN = "the answer was not shown: "
"""Leads the warning of a model answer a check replaced (the verifier's gate)."""
NAMES_UNHELD = "the answer names what the kept facts and their sentences do not: "
"""Leads the warning of a written answer naming what its sources do not hold (the answer step)."""
CHECK_WARNINGS = (NOT_SHOWN, NAMES_UNHELD)
"""The warnings that are the support check's verdict in a developer's words: the chat shows
the one verdict (storygraph.ui.answer_view) and these one level deeper, never beside it."""


def support_line(support: Support | None) -> str:
    """One line for the reader: what the check found, in words."""
    if support is None:
        return ""
    if support.verdict == "supported":
        return f"checked: {support.reason}"
    if support.verdict == "not supported":
        return f"not sure: {support.reason}"
    if support.verdict == "no premise":
        return f"the story does not say: {support.reason}"
    if support.verdict == "declined":
        return "not answered: the sentences read do not say"
    return f"not checked: {support.reason}" if support.reason else "not checked"


@dataclass(frozen=True)
class SupportStep:
    """What the support step gives the answer: its verdict, the text to show (the model's, or
    the replacement), warnings for the trace and the step's detail."""

    support: Support
    text: str
    warnings: tuple[str, ...] = ()
    detail: dict[str, Any] = field(default_factory=dict)
