"""The candidate step: an answer read from the sentences' structure when the model's was not
confirmed (issue 27 item 3, docs/ISSUES.md#candidate-answer).

The support check (storygraph.qa.verify.support) lists, for a role question (who / whom / with whom
/
where / what about a participant), what the parser's frames and the graph's facts put in the
asked slot (`Support.candidates`: the subjects of しばりつける with 瓜子姫子 as its object, each
with its sentence). When the model's answer fails the check (or the model declined) and such
candidates exist, they are narrowed to those a parser frame of a sentence the model read gives,
of the asked kind and case (`offerable`), and a `CandidatePicker` may pick one:

- `SingleCandidate` ("single", the default): exactly one is left → it is the answer, no call;
- `ChosenCandidate` ("choice"): a second model call, held by a GBNF grammar
  (storygraph.llm.grammar.choice_grammar) to the candidates' names and the fixed "the sentences
  do not say" reply, over the sources the model read
  (storygraph.qa.generation.answer_choice.ask_choice);
  at most two calls a question in all (the answer, then this one);
- "both": the single candidate without a call, the model's choice among two or more.

The picked candidate is written as the small model writes a name (「犬です。[2]」 / "犬. [2]")
and goes through the same support check again: only a confirmed one is shown, its `Support`
marked `answered_by` ("structure" / "choice": the chat's line says "read from the sentence's
structure" / "chosen by the model among what the sentences' structure offers"); an unconfirmed
pick leaves the "not sure" reply as it was. The trace's `candidate` step names the picker, the
candidates, the pick and the re-check's verdict. `candidate_step` is
that whole step for the engine; the factory composes the picker (`picker_for`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol

from storygraph.models import Candidate, Citation, Fact, Support
from storygraph.qa.generation.answer import UNKNOWN
from storygraph.qa.generation.answer_choice import ask_choice
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.retrieval.type_priors import fits_kind
from storygraph.qa.verify.support import SupportChecker
from storygraph.settings import AnswerCandidates
from storygraph.text.language import answer_language
from storygraph.text.normalize import normalize_name

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

RETRIED = frozenset({"not supported", "declined"})
"""Verdicts on the model's answer after which a candidate may be offered ("no premise": the
story does not say, and nothing fills the slot)."""


def offerable(analysis: QuestionAnalysis, candidates: Sequence[Candidate]) -> list[Candidate]:
    """The candidates the step may show, one per name, in the check's order (the question's
    own verb first): read from the parser's frame of a sentence the model read (a fact's
    candidate is the graph's extraction, whose sentence may say another act: on the saved runs
    1 of 20 was right, a frame's 5 of 9), of the asked kind by its node's type (a person for
    who, not a place or a thing; a place for where, not a person or a thing) and case (where:
    a place phrase, に / へ / で / から; what: not one: 「山へ」 says where, not what)."""
    found: list[Candidate] = []
    for c in candidates:
        if c.how == "speech" and c.source is not None:
            found.append(c)  # the asked speaker's line, read off its sentence by construction
            continue
        if c.source is None or c.how != "frame" or not fits_asked(analysis, c):
            continue
        if any(normalize_name(c.name) == normalize_name(f.name) for f in found):
            continue
        found.append(c)
    return found


def fits_asked(analysis: QuestionAnalysis, candidate: Candidate) -> bool:
    """Is the candidate of the kind and case the question asks for (`offerable`;
    type_priors.fits_kind)?"""
    return fits_kind(analysis.qtype, candidate.kind, candidate.locative)


def written_as_answer(candidate: Candidate, language: str) -> str:
    """A candidate as the small model writes a name, citing its sentence: 「犬です。[2]」 /
    "犬. [2]"; a line of speech as said: 「「…」と言いました。[2]」 / '"…" [2]'."""
    mark = f"[{candidate.source}]" if candidate.source is not None else ""
    if candidate.how == "speech" and language == "ja":  # a line of speech: its words, as said
        return f"「{candidate.name}」と言いました。{mark}"
    if candidate.how == "speech":
        return f'"{candidate.name}" {mark}'.rstrip()
    if language == "ja":
        return f"{candidate.name}です。{mark}"
    return f"{candidate.name}. {mark}".rstrip()


PickedBy = Literal["structure", "choice"]
"""How a candidate was picked: the one that fills the slot (no call), or the model's choice;
the Support's `answered_by`."""


class CandidatePicker(Protocol):
    """Picks the answer among the candidates the step may show (`offerable`, at least one), or
    None."""

    name: str

    def pick(
        self,
        analysis: QuestionAnalysis,
        candidates: Sequence[Candidate],
        read: Sequence[Citation],
        callbacks: list[Any],
    ) -> tuple[Candidate, PickedBy] | None: ...


@dataclass(frozen=True)
class SingleCandidate:
    """Exactly one candidate (with a sentence read) fills the asked slot: it is the answer."""

    name: str = "single"

    def pick(
        self,
        analysis: QuestionAnalysis,
        candidates: Sequence[Candidate],
        read: Sequence[Citation],
        callbacks: list[Any],
    ) -> tuple[Candidate, PickedBy] | None:
        return (candidates[0], "structure") if len(candidates) == 1 else None


@dataclass
class ChosenCandidate:
    """The model chooses among the candidates' names or says none fits, held to them by a
    grammar (one call); `single` first: one candidate is taken without a call ("both")."""

    llm: BaseChatModel
    single: bool = False

    @property
    def name(self) -> str:
        return "both" if self.single else "choice"

    def pick(
        self,
        analysis: QuestionAnalysis,
        candidates: Sequence[Candidate],
        read: Sequence[Citation],
        callbacks: list[Any],
    ) -> tuple[Candidate, PickedBy] | None:
        if not candidates:
            return None
        if self.single and len(candidates) == 1:
            return candidates[0], "structure"
        picked = ask_choice(self.llm, analysis, read, [c.name for c in candidates], callbacks)
        if picked == UNKNOWN[analysis.reply_language]:
            return None
        chosen = next((c for c in candidates if c.name == picked), None)
        if chosen is None:
            raise ValueError(f"the model's choice is none of the candidates: {picked[:40]!r}")
        return chosen, "choice"


NO_CHOICE = "answer candidates: the model cannot be held to the candidates' names (no grammar);"
"""The named fallback when the model's choice is asked of a model without grammars (the parts'
warnings)."""


def picker_for(mode: AnswerCandidates, llm: BaseChatModel | None) -> CandidatePicker | None:
    """The picker a mode asks for; a mode that needs a model gets none without one (the
    single candidate alone for "both")."""
    if mode == "single":
        return SingleCandidate()
    if mode in ("choice", "both"):
        if llm is None:
            return SingleCandidate() if mode == "both" else None
        return ChosenCandidate(llm, single=mode == "both")
    return None


@dataclass(frozen=True)
class Picked:
    """What the candidate step gives the answer: the text to show and its (re-checked)
    support, and the trace's detail."""

    text: str | None
    """The candidate as the answer, when the check confirms it; None: the reply stands."""
    support: Support | None
    detail: dict[str, Any]


def candidate_step(
    picker: CandidatePicker,
    checker: SupportChecker,
    analysis: QuestionAnalysis,
    support: Support,
    citations: Sequence[Citation],
    facts: Sequence[Fact],
    read: Sequence[Citation],
    callbacks: list[Any],
) -> Picked | None:
    """Pick a candidate after the model's answer failed the check (`support`), and keep it only
    when the same check confirms it; None when the step does not apply (another verdict, no
    candidate with a sentence read)."""
    offered = offerable(analysis, support.candidates)
    if support.verdict not in RETRIED or not offered:
        return None
    detail: dict[str, Any] = {"picker": picker.name, "candidates": [c.name for c in offered]}
    try:
        picked = picker.pick(analysis, offered, read, callbacks)
    except ValueError as exc:  # a reply outside the grammar (a server that did not hold it)
        detail.update(picked=None, error=str(exc))
        return Picked(None, None, detail)
    if picked is None:
        detail.update(picked=None)
        return Picked(None, None, detail)
    chosen, how = picked
    language = "ja" if analysis.reply_language == "ja" else "en"
    text = written_as_answer(chosen, language)
    again = checker.check(analysis, text, citations, facts, read, answer_language(text))
    detail.update(picked=chosen.name, by=how, source=chosen.source, verdict=again.verdict)
    detail.update(reason=again.reason)
    if not again.supported:
        return Picked(None, None, detail)
    marked = replace(again, answered_by=how, candidates=(chosen,))
    return Picked(text, marked, detail)
