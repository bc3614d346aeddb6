"""The asked slot read off the parse of a source sentence (issue #27, docs/ISSUES.md#support-slots).

The role check (storygraph.qa.verify.support) reads the parser's frames and the typed facts: a frame
pairs a subject with an object, a goal or a recipient, so an answer in an oblique case (川上から
流れて来た, "hanging from a trellised vine") or a question with no participant the graph knows
(「親がにを殺したのは誰？」) has no frame or fact to stand in. The sentence's own dependency
parse has it: this module reads each predicate of a source as a `Clause` (its lemmas, its voice,
its noun phrases with their case particle or preposition; storygraph.qa.question.asked_slot,
where the question's asked slot is read) and `fills` says whether one has the answer in the
question's asked slot:

- the predicate is the question's (the same lemma; a light verb only with the question's own
  noun: 行司をした / 行司になった);
- the answer is the clause's noun phrase in the asked case: the question word's particle
  (どこから: から, 何で: で) or, for where, a place particle or preposition ("hanging from a
  vine"); for a gap question (…のは誰？) the doer or the one done to, by the case and voice
  (storygraph.qa.question.question_structure.case_direction; a causative's subject for
  作らせたのは誰);
  the phrase is the answer's name itself, with a modifier (鳥羽という所) or an honorific (お庭)
  at most;
- a clause with no subject takes the subject of the verb it is chained, subordinated or
  coordinated to, else the topic (は) of the text before it, as the frames reader fills a zero
  subject; a は topic beside a が subject is not the verb's subject; an English participle's
  subject is the noun it describes;
- one argument of the question stands in the clause in its role (the same noun phrase, or a
  pronoun in a source that names it: "You feed in my pasture"), and no core argument (subject,
  object) stands there as another noun phrase.

`read_clauses` reads a spaCy `Doc` (GiNZA for Japanese, spaCy's English pipeline) and imports
no parser; the composition root parses (storygraph.services.source_clauses).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from storygraph.qa.question.asked_slot import (
    WH_CASE,
    WH_WORDS,
    AskedSlot,
    Clause,
    Slot,
)
from storygraph.qa.question.question_structure import case_direction
from storygraph.qa.verify.clauses import SUBJECT_CASES, Voice, read, slot_arguments
from storygraph.text.normalize import normalize_name
from storygraph.text.vocabulary import NOUN_ACT_VERBS_JA

PLACE_PREPOSITIONS = frozenset(
    {"in", "on", "at", "from", "into", "onto", "under", "over", "near", "by", "inside", "upon"}
)
"""The English prepositions a where question asks for."""
_PLACE_CASES = ("に", "へ", "で", "から")

_CORE_CASES = frozenset({"が", "は", "を", "subj", "obj"})
"""The cases whose other filler makes a clause another event; a に / で / preposition phrase
may be one of several (まっさきに, 家来に)."""
_PRONOUNS = frozenset(
    {"i", "you", "he", "she", "it", "we", "they", "him", "her", "them", "me", "us", "彼", "彼女"}
)


def phrasal(asked: AskedSlot | None) -> bool:
    """Does an English question ask the object of a preposition after its verb's own object
    ("What did the Hare make fun of?")? Then verb, noun and preposition are one act
    (ridicule) that the verb's own stems (MAKE) do not name."""
    if asked is None or not asked.case or asked.case == WH_CASE:
        return False
    return any(s.case == "obj" for s in asked.arguments)


def fills(
    asked: AskedSlot, clauses: Sequence[Clause], name: str, context: str = ""
) -> Clause | None:
    """The first clause that has `name` in the asked slot of the asked predicate, with no
    argument of the question contradicted and one of them matched; a pronoun
    in an argument's role stands for it when `context` (the source) names it."""
    for clause in clauses:
        if not _same_predicate(asked, clause):
            continue
        if not any(_names(s.phrase, name) and _asked(asked, clause, s) for s in clause.slots):
            continue
        if _agrees(asked, clause, name, context):
            return clause
    return None


def _same_predicate(asked: AskedSlot, clause: Clause) -> bool:
    """The question's predicate: the same lemma; for a light verb (行司をする), which says
    little alone (どうなった, お見送りになる), a light verb or なる with the question's を / に
    noun as its を / に phrase (行司になる, 家来になる)."""
    if asked.lemma not in NOUN_ACT_VERBS_JA:
        return asked.lemma in clause.lemmas
    if not NOUN_ACT_VERBS_JA & set(clause.lemmas):
        return False
    nouns = [a.phrase for a in asked.arguments if a.case in ("を", "に")]
    held = [s.phrase for s in clause.slots if s.case in ("を", "に")]
    return any(_same_phrase(p, n) for n in nouns for p in held)


def _asked(asked: AskedSlot, clause: Clause, slot: Slot) -> bool:
    """Is the slot the one the question asks for?"""
    if asked.where:
        return slot.case in PLACE_PREPOSITIONS or slot.case in _PLACE_CASES
    if asked.case:
        return slot.case == asked.case and clause.voice == asked.voice
    if asked.direction == "causer":
        return slot.case in SUBJECT_CASES and clause.voice == asked.voice
    return _direction(slot.case, clause.voice) == asked.direction


def _direction(case: str, voice: Voice) -> str:
    if case in ("subj", "agent"):
        return "out"
    if case in ("obj", "dative"):
        return "in"
    return case_direction(case, voice)


def _agrees(asked: AskedSlot, clause: Clause, name: str, context: str) -> bool:
    """No argument of the question in a core case (subject, object) stands in the clause as
    another noun phrase in its role, and at least one argument stands there (a question with
    none of its own, 「…飛び出して「…」と言ったのは誰？」, is not read this way: any speaker
    would do)."""
    matched = False
    for argument in asked.arguments:
        role = _direction(argument.case, asked.voice)
        same_role = [
            s
            for s in clause.slots
            if not _names(s.phrase, name)
            and s.case != WH_CASE
            and (
                s.case == argument.case
                if role == "any"
                else _direction(s.case, clause.voice) == role
            )
        ]
        if any(_same_phrase(s.phrase, argument.phrase) for s in same_role):
            matched = True
        elif any(normalize_name(s.phrase) in _PRONOUNS for s in same_role) and (
            normalize_name(argument.phrase) in normalize_name(context)
        ):
            matched = True  # "You feed in my pasture" in a source naming the Lamb
        elif argument.case in _CORE_CASES and any(
            normalize_name(s.phrase) not in _PRONOUNS for s in same_role
        ):
            return False  # another doer or another thing done to: another event
    return matched


def _names(phrase: str, name: str) -> bool:
    """Is a clause's noun phrase (its head and compounds) the answer's name: the same; the
    name with a modifier the phrase leaves out (鳥羽という所 for 所, trellised vine for vine);
    or the phrase with an honorific prefix (お庭 for 庭). Not another name sharing its end
    (車持皇子 is not 皇子)."""
    a, b = normalize_name(phrase), normalize_name(name)
    if not a or not b:
        return False
    if a.isascii() and b.isascii():
        return _same_phrase(a, b)
    if a == b:
        return True
    if b.endswith(a):
        return b[: -len(a)].endswith(_MODIFIER_ENDS)
    return a.endswith(b) and a[: -len(b)] in _HONORIFIC_PREFIXES


_MODIFIER_ENDS = ("の", "という", "といふ", "とかいう")
_HONORIFIC_PREFIXES = frozenset({"お", "ご", "御"})


def _same_phrase(phrase: str, name: str) -> bool:
    """Is a clause's noun phrase the question's argument: the same, or one ends or starts
    with the other (the question's parse may cut a name short: 親 of 親がに)?"""
    a, b = normalize_name(phrase), normalize_name(name)
    if not a or not b:
        return False
    if a.isascii() and b.isascii():
        a_words, b_words = a.split(), b.split()
        n = min(len(a_words), len(b_words))
        return a_words[-n:] == b_words[-n:]
    return a == b or a.endswith(b) or b.endswith(a) or a.startswith(b) or b.startswith(a)


# --- reading a parse --------------------------------------------------------------------------


def read_clauses(doc: Any, language: str) -> list[Clause]:
    """The clauses of a parsed text (`doc`: a spaCy Doc)."""
    return _japanese(doc) if language == "ja" else _english(doc)


def _japanese(doc: Any) -> list[Clause]:
    """The slot check's view of storygraph.qa.verify.clauses.read: each verb with its own noun
    phrases in their cases, a は topic beside a が subject dropped (子がには猿が親がにを殺した
    から…: the が noun is the verb's subject, the は topic that of the sentence's main verb), a
    missing subject taken from the verb it is chained to, else from the topic before it."""
    return [
        Clause(
            (c.lemma,),
            c.voice,
            tuple(Slot(phrase, case) for phrase, case in slot_arguments(c)),
            c.sentence,
        )
        for c in read(doc)
    ]


def _english(doc: Any) -> list[Clause]:
    clauses = []
    for tok in doc:
        if tok.pos_ not in ("VERB", "AUX") or (tok.lemma_ == "be" and tok.dep_ == "aux"):
            continue
        passive = any(c.dep_ in ("nsubjpass", "auxpass") for c in tok.children)
        slots: list[Slot] = []
        for child in tok.children:
            word = child.text.lower()
            if word in WH_WORDS:
                slots.append(Slot(word, WH_CASE))
            elif child.dep_ == "nsubj":
                slots.append(Slot(_noun(child), "subj"))
            elif child.dep_ == "nsubjpass" or child.dep_ == "dobj":
                slots.append(Slot(_noun(child), "obj"))
            elif child.dep_ == "agent":
                slots += [Slot(_noun(p), "subj") for p in child.children if p.dep_ == "pobj"]
            elif child.dep_ == "prep":
                slots += [
                    Slot(_noun(p), child.lemma_.lower()) for p in child.children if p.dep_ == "pobj"
                ]
        if tok.dep_ in ("acl", "relcl") and not any(s.case == "subj" for s in slots):
            slots.append(Slot(_noun(tok.head), "subj"))  # grapes hanging from a vine
        clauses.append(
            Clause(
                (tok.lemma_.lower(),),
                "passive" if passive else "active",
                tuple(slots),
                tok.sent.text,
            )
        )
    return clauses


def _noun(tok: Any) -> str:
    """A noun with its compounds and adjectives (trellised vine); "of" partitives read
    through (clusters of grapes → grapes)."""
    of = [
        p
        for c in tok.children
        if c.dep_ == "prep" and c.lower_ == "of"
        for p in c.children
        if p.dep_ == "pobj"
    ]
    if of and tok.lemma_.lower() in ("cluster", "bunch", "handful", "piece", "lot"):
        return _noun(of[0])
    words = [c for c in tok.children if c.dep_ in ("compound", "amod") and c.i < tok.i]
    return " ".join(w.text for w in sorted([*words, tok], key=lambda w: w.i))
