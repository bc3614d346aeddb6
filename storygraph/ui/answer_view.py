"""What the chat says about an answer, in a reader's words: one verdict, the status of an
answer being worked out, and its draft (docs/ISSUES.md#draft-answer, #status-phases).

- `verdict_view(answer)`: the one verdict the mark, the line under the answer and the warnings
  beside it all come from. The support check's own warnings (`CHECK_WARNINGS`: "the answer was
  not shown: …", "the answer names what …") are that
  verdict in a developer's words: they go one level deeper (`VerdictView.developer`), never beside
  a mark they could contradict (a green "checked" over "the answer was not confirmed"). When the
  model's answer was replaced, `changed` says so in one plain sentence, in the question's
  language: what the model first wrote and why it is not the answer.
- `status_line(phase, seconds, ahead)`: the phase running now and how long it has run, or the
  model's queue when other requests are ahead.
- `draft_line(text)`: the model's reply while it is written and checked: a draft, never the
  answer's style.
- `phases_line(steps)`: the phases of a finished answer with their times.

No Streamlit here (pages/chat.py draws these).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from storygraph.humanize import duration, plural
from storygraph.models import Answer, Support, TraceStep
from storygraph.qa.generation.answer_core import answer_core
from storygraph.qa.pipeline.progress import Phase, phases_of
from storygraph.qa.verify.support_text import CHECK_WARNINGS, support_line
from storygraph.text.language import detect_language

Language = Literal["ja", "en"]
Mark = Literal["supported", "not sure", "does not say", "declined"]

MARK_OF: dict[str, Mark] = {
    "supported": "supported",
    "not supported": "not sure",
    "no premise": "does not say",
    "declined": "declined",
}
"""The mark each support verdict wears ("not checked": none)."""


@dataclass(frozen=True)
class VerdictView:
    """One answer's verdict as the chat shows it (module doc)."""

    mark: Mark | None
    """None: the answer was not checked (the facts list, no checker): no mark, no line."""
    line: str
    """The mark's words, in the question's language."""
    changed: str
    """What replaced the model's answer and why, in one sentence; "" when nothing did."""
    warnings: tuple[str, ...]
    """The answer's other warnings (not about its support), shown beside it."""
    developer: tuple[str, ...]
    """The check's verdict and its warnings in a developer's words, one level deeper."""


def language_of(answer: Answer) -> Language:
    """The language of the chat's own words about `answer` (Japanese or English): the one the
    question reader read (`Answer.language`); for an answer of a chat saved before answers
    carried it, the question's language read here."""
    if answer.language in ("ja", "en"):
        return "ja" if answer.language == "ja" else "en"
    return "ja" if detect_language(answer.question) == "ja" else "en"


def _cited(source: int | None) -> str:
    return f"[{source}]" if source is not None else ""


def verdict_line(support: Support, language: Language, *, said: bool = False) -> str:
    """The mark's words: what the check found, without its signals and scores; `said`: the
    sentence saying what changed gives the reason, so a "not sure" line does not repeat it."""
    ja = language == "ja"
    mark = MARK_OF.get(support.verdict)
    if mark == "not sure" and said:
        return "確かではありません。" if ja else "Not sure."
    if mark == "supported":
        if ja:
            return f"確認済み：文{_cited(support.source)}にそう書かれています。"
        if support.source is None:
            return "Checked: the sources say so."
        return f"Checked: source {_cited(support.source)} says so."
    if mark == "not sure":
        return ("確かではありません：" if ja else "Not sure: ") + reason_words(support, language)
    if mark == "does not say":
        return "この話の文には書かれていません。" if ja else "The story's sentences do not say."
    if mark == "declined":
        if ja:
            return "答えなし：読んだ文には書かれていません。"
        return "Not answered: the sentences read do not say."
    return ""


def reason_words(support: Support, language: Language, question: str = "") -> str:
    """Why the check did not confirm an answer, in a reader's words (one clause, with its stop);
    a question with no premise in the story is quoted."""
    ja = language == "ja"
    if support.verdict == "no premise":
        asked = question.strip()
        if ja:
            if asked:
                return f"この話の文には「{asked}」の答えが書かれていません。"
            return "この話の文には、質問にあることが書かれていません。"
        if asked:
            stop = "" if asked[-1] in "?？.!！。" else "."
            return f"the story's sentences do not answer “{asked}”{stop}"
        return "the story's sentences do not tell of what the question asks about."
    if ja:
        return "根拠の文で確かめられませんでした。"
    return "the sources do not confirm it."


def changed_sentence(
    model_answer: str, support: Support, language: Language, question: str = ""
) -> str:
    """The one sentence saying the model's answer was replaced, and why."""
    first = answer_core(model_answer) or model_answer.strip()
    ja = language == "ja"
    why = reason_words(support, language, question)
    if ja:
        return f"モデルの最初の答え「{first}」は表示していません：{why}"
    return f"The model's first answer, {first}, was not shown: {why}"


def model_answer_of(answer: Answer) -> str:
    """The model's own answer when a check replaced it (the support step's `model_answer`)."""
    for step in answer.steps:
        if step.name == "support":
            said = step.detail.get("model_answer")
            if isinstance(said, str) and said.strip() and said.strip() != answer.answer.strip():
                return said
    return ""


def verdict_view(answer: Answer) -> VerdictView:
    """The one verdict of `answer` (module doc)."""
    language = language_of(answer)
    checks = tuple(w for w in answer.warnings if w.startswith(CHECK_WARNINGS))
    others = tuple(w for w in answer.warnings if not w.startswith(CHECK_WARNINGS))
    support = answer.support
    if support is None or support.verdict not in MARK_OF:
        developer = (support_line(support),) if support is not None else ()
        return VerdictView(None, "", "", tuple(answer.warnings), developer)
    first = model_answer_of(answer)
    changed = changed_sentence(first, support, language, answer.question) if first else ""
    return VerdictView(
        MARK_OF[support.verdict],
        verdict_line(support, language, said=bool(changed)),
        changed,
        others,
        (support_line(support), *checks),
    )


PHASE_WORDS = {
    "finding": "Finding the answer in the graph",
    "reading": "The model is reading the question and {sources}",
    "writing": "The model is writing its answer",
    "checking": "Checking the answer against the sources",
}
PHASE_DONE = {
    "finding": "found in the graph",
    "reading": "the model read {sources}",
    "writing": "wrote",
    "checking": "checked",
}
DRAFT_LEAD = "Draft — checking… not the answer until the sources confirm it:"
"""Leads the model's reply while it is written and checked (`draft_line`)."""


def _sources(count: int) -> str:
    return plural(count, "source")


def waiting_text(ahead: int) -> str:
    """The model's queue: other requests (other people's questions, stories being added)."""
    return f"Waiting for the model: {plural(ahead, 'request')} ahead of yours"


def status_line(phase: Phase | None, seconds: float, ahead: int = 0) -> str:
    """The live status: the queue while others' requests are ahead, else the phase running
    now; with how long it has run."""
    took = f" ({duration(seconds)})"
    if ahead > 0:
        return waiting_text(ahead) + "…" + took
    shown = phase if phase is not None else Phase("finding")
    return PHASE_WORDS[shown.name].format(sources=_sources(shown.sources)) + "…" + took


def draft_line(text: str) -> str:
    """The draft: its lead, then the reply so far (plain text: the caller escapes it)."""
    return f"{DRAFT_LEAD} {' '.join(text.split())}"


def phases_line(steps: Sequence[TraceStep]) -> str:
    """"found in the graph 90 ms · the model read 4 sources 11.6 s · wrote 3.1 s · checked
    0.4 s": a finished answer's phases with their times."""
    return " · ".join(
        f"{PHASE_DONE[p.phase.name].format(sources=_sources(p.phase.sources))} "
        f"{duration(p.seconds)}"
        for p in phases_of(steps)
    )
