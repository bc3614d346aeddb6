"""What a question asks of its predicate (`AskedSlot`), read by the question room for the
support check's slot check (storygraph.qa.verify.support_slots, docs/ISSUES.md#support-slots):
a Japanese question's from its structure (`asked_in_japanese`), an English one's from its
clauses (`asked_in_english`); and the `Clause` and `Slot` a parse is read as, the question's
and the sources' (storygraph.qa.verify.support_slots.read_clauses).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from storygraph.qa.question.question_structure import (
    QUESTION_WORDS,
    QuestionStructure,
    case_direction,
)
from storygraph.qa.verify.clauses import SUBJECT_CASES, Voice
from storygraph.text.normalize import normalize_name

WH_CASE = "?"
"""The case a clause of a question gives its question word ("where", "what")."""
_AUXILIARIES = frozenset({"be", "do", "have", "will", "can", "would", "could"})
WH_WORDS = frozenset({"where", "what", "who", "whom", "which"})


@dataclass(frozen=True)
class Slot:
    """One noun phrase of a predicate and its case (ja: が, を, に…; en: subj, obj, a
    preposition; `WH_CASE` for a question word)."""

    phrase: str
    case: str


@dataclass(frozen=True)
class Clause:
    """A predicate of a sentence: its lemma (each verb of a chain is a clause of its own, a
    subject-less one with the chain's subject), its voice and its slots."""

    lemmas: tuple[str, ...]
    voice: Voice
    slots: tuple[Slot, ...]
    sentence: str


ClauseReader = Callable[[str, str], Sequence[Clause]]
"""(text, language) → the clauses of its sentences."""


@dataclass(frozen=True)
class AskedSlot:
    """What a question asks of a predicate: its lemma, the asked case ("" for a gap), the
    direction of the gap ("out": the doer, "in": the one done to) and the question's own
    arguments as (phrase, case)."""

    lemma: str
    voice: Voice
    case: str
    direction: str
    arguments: tuple[Slot, ...]
    where: bool = False


def asked_in_japanese(structure: QuestionStructure, question: str, kind: str) -> AskedSlot | None:
    """The asked slot of a Japanese question by its structure: None without a predicate."""
    if not structure.lemma:
        return None
    own = tuple(
        Slot(question[a.start : a.end], a.case)
        for a in structure.arguments
        if not a.chained and question[a.start : a.end] not in QUESTION_WORDS
    )
    direction = ""
    if not structure.asked_case:
        given = {case_direction(a.case, a.voice) for a in structure.arguments if not a.chained}
        direction = "in" if "out" in given else "out"  # no doer given: the doer is asked
        if structure.voice.startswith("causative") and not any(
            a.case in SUBJECT_CASES for a in structure.arguments
        ):
            direction = "causer"  # 作らせたのは誰: the subject of the causative
    return AskedSlot(
        structure.lemma,
        structure.voice,
        structure.asked_case,
        direction,
        own,
        where=kind == "where" and not structure.asked_case,
    )


def asked_in_english(clauses: Sequence[Clause], kind: str) -> AskedSlot | None:
    """The asked slot of an English question: its last predicate ("Where did the Wolf claim
    the Lamb was feeding?": feed), the case of its question word when the parse gives it one."""
    verbs = [c for c in clauses if c.lemmas[0] not in _AUXILIARIES]
    if not verbs:
        return None
    clause = verbs[-1]
    own = tuple(s for s in clause.slots if normalize_name(s.phrase) not in WH_WORDS)
    if kind == "where":
        return AskedSlot(clause.lemmas[0], clause.voice, "", "", own, where=True)
    wh = [s.case for s in clause.slots if normalize_name(s.phrase) in WH_WORDS]
    if wh and wh[0] != WH_CASE:
        return AskedSlot(clause.lemmas[0], clause.voice, wh[0], "", own)
    subject = any(s.case == "subj" for s in own)
    return AskedSlot(clause.lemmas[0], clause.voice, "", "in" if subject else "out", own)
