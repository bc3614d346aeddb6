"""The verbs of a Japanese parse (GiNZA) and the noun phrases each governs, read in one pass.

The support check (issue #27) reads a sentence's clauses twice: the quote check
(storygraph.qa.verify.support_quotes, through `question_structure.read_clauses`) asks which nouns an
act involves, its leading clauses' and light verb's included; the slot check
(storygraph.qa.verify.support_slots) asks which noun stands in which case of each verb, a missing
subject filled. Two readers of one parse were written for them; `read` is the one reading,
each argument saying where it comes from (`Argument.source`, `Argument.role`), and the two
readers are views of it (`question_structure.read_clauses`, `support_slots.read_clauses`).

This module also holds what those readers and the question's structure
(storygraph.qa.question.question_structure) read of a token: its case particle, its compound, its
voice, the verbs chained to it. It imports no parser.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from storygraph.text.parse_tree import ancestors
from storygraph.text.vocabulary import LIGHT_PREDICATES_JA

Voice = Literal["active", "passive", "causative", "causative passive"]
Role = Literal["noun", "owner", "case-marked", "case-marked owner"]
Source = Literal["own", "leading", "light host", "inherited subject", "topic before"]

ARGUMENT_DEPS = frozenset({"nsubj", "obj", "obl", "iobj", "nmod", "dislocated", "csubj"})
"""The dependencies of a verb's noun phrases."""
CASES = ("から", "まで", "より", "が", "を", "に", "へ", "と", "で", "は", "も", "の")
"""The case particles and topic markers, the first found on a noun being its case."""
SUBJECT_CASES = ("が", "は", "も")
_PASSIVE = frozenset({"れる", "られる"})
_CAUSATIVE = frozenset({"せる", "させる"})
_BENEFACTIVE = frozenset({"もらう", "貰う", "いただく", "頂く"})
"""te + these: the subject receives the act, the に (から) noun does it (助けてもらった)."""
_SUBSIDIARY = ("fixed", "compound", "aux")


@dataclass(frozen=True)
class Argument:
    """One noun phrase of a clause."""

    phrase: str
    """As written, with its compound (お+じい+さん)."""
    owned: str
    """With its の-owners too (かめの子); an owner's is its phrase."""
    case: str
    """Its case particle, the copula's に (さんざんに: an adverb's form) left out; an owner's:
    that of the noun it owns; a filled subject's (inherited, topic before): が."""
    written_case: str
    """The first case particle written on it, the copula's に counted (as the question's
    arguments are read); an owner's: that of the noun it owns."""
    role: Role
    """noun: a noun phrase of the verb; owner: its の-owner; case-marked: a noun the verb's
    noun governs in a case of its own (貞光 of 貞光といっしょに); case-marked owner: its
    の-owner."""
    source: Source
    """own: the verb's; leading: of a clause leading up to it (つかまえて、…いじめる); light
    host: of the light verb it stands under (呼ばれるようになった: なる's); inherited subject:
    the subject of the verb it is chained to; topic before: the last は topic of the text
    before it (the last two only for a verb with no subject of its own)."""


@dataclass(frozen=True)
class Clause:
    """One verb of a parse and the noun phrases it governs."""

    lemma: str
    voice: Voice
    arguments: tuple[Argument, ...]
    chain: tuple[str, ...]
    """The lemmas of the verbs chained before it and its own, in order (つかまえる, いじめる)."""
    sentence: str
    subsidiary: bool
    """Written on another verb (fixed, compound, aux): no act of its own."""


OwnArguments = Callable[[Any], list[Argument]]
"""A verb token → its own arguments (`_own`, read once per verb)."""


def read(doc: Any) -> list[Clause]:
    """Every verb of a parsed text (`doc`: a spaCy Doc) with its arguments."""
    own: dict[int, list[Argument]] = {}

    def of(verb: Any) -> list[Argument]:
        if verb.i not in own:
            own[verb.i] = _own(verb)
        return own[verb.i]

    clauses = []
    for tok in doc:
        if tok.pos_ != "VERB":
            continue
        arguments = list(of(tok))
        for leading in _leading(tok):
            arguments += [replace(a, source="leading") for a in of(leading)]
        host = tok.head if tok.dep_ == "advcl" and tok.head.lemma_ in LIGHT_PREDICATES_JA else None
        if host is not None and host.i != tok.i:
            arguments += [replace(a, source="light host") for a in of(host)]
        if not any(slot_case(a) in SUBJECT_CASES for a in of(tok)):
            arguments += _inherited_subject(tok, of) or _topic_before(tok, of)
        chain = tuple(m.lemma_ for m in sorted(verb_chain(tok), key=lambda m: m.i))
        clauses.append(
            Clause(
                tok.lemma_,
                voice_of(tok),
                tuple(arguments),
                chain,
                tok.sent.text,
                tok.dep_ in _SUBSIDIARY,
            )
        )
    return clauses


def slot_case(argument: Argument) -> str:
    """The case the slot check reads: a verb's noun and its owner by the first particle written
    (`Argument.written_case`), a case-marked noun and its owner by its case particle."""
    if argument.role in ("noun", "owner"):
        return argument.written_case
    return argument.case


def _own(verb: Any) -> list[Argument]:
    """A verb's own noun phrases, each followed by its の-owners and its case-marked nouns
    (with theirs)."""
    found = []
    for child in verb.children:
        if child.dep_ not in ARGUMENT_DEPS or child.pos_ not in ("NOUN", "PROPN", "PRON"):
            continue
        case, written_case = particle_of(child), case_of(child)
        found.append(_argument(child, case, written_case, "noun"))
        found += [
            _argument(owner, case, written_case, "owner")
            for owner in child.children
            if owner.dep_ == "nmod" and owner.i < child.i and case_of(owner) == "の"
        ]
        for noun in _case_marked(child):
            marked = particle_of(noun)
            found.append(_argument(noun, marked, marked, "case-marked"))
            found += [
                _argument(owner, marked, marked, "case-marked owner")
                for owner in noun.children
                if owner.dep_ == "nmod" and owner.i < noun.i and particle_of(owner) == "の"
            ]
    return found


def _argument(noun: Any, case: str, written_case: str, role: Role) -> Argument:
    """A verb's own argument read off its noun token."""
    text, doc = noun.doc.text, noun.doc
    end = noun.idx + len(noun.text)
    phrase = text[doc[phrase_start(noun)].idx : end]
    owned = text[doc[_owned_start(noun)].idx : end] if role in ("noun", "case-marked") else phrase
    return Argument(phrase, owned, case, written_case, role, "own")


def _leading(verb: Any) -> list[Any]:
    """The verbs of the clauses before a verb that lead up to it (つかまえて、…つついたり、
    …たたいたり、…いじめている): their nouns are the act's too."""
    found = []
    for child in verb.children:
        if child.dep_ == "advcl" and child.pos_ == "VERB":
            found += [child, *_leading(child)]
    return found


def _inherited_subject(verb: Any, of: OwnArguments) -> list[Argument]:
    """The subject of the verb a subject-less verb is chained, subordinated or coordinated to
    (Japanese leaves it unsaid there): the first が / は / も phrase up its heads."""
    node = verb
    for head in ancestors(verb):
        if node.dep_ not in ("advcl", "conj") or head.pos_ != "VERB":
            break
        node = head
        found = [a for a in _slot_order(of(node)) if slot_case(a) in SUBJECT_CASES]
        if found:
            return [_as_subject(found[0], "inherited subject")]
    return []


def _topic_before(verb: Any, of: OwnArguments) -> list[Argument]:
    """The topic (the last verb's first は phrase) of the text before a verb with no subject of
    its own or up its heads: whom the narration is about, as the frames reader fills a zero
    subject (storygraph.ingest.frames.ja); a sentence the parser broke in two keeps it."""
    for tok in reversed(verb.doc[: verb.i]):
        if tok.pos_ == "VERB":
            topics = [a for a in _slot_order(of(tok)) if slot_case(a) == "は"]
            if topics:
                return [_as_subject(topics[0], "topic before")]
    return []


def _as_subject(argument: Argument, source: Source) -> Argument:
    return Argument(argument.phrase, argument.phrase, "が", "が", "noun", source)


def _slot_order(arguments: list[Argument]) -> list[Argument]:
    """A verb's own arguments as the slot check lists them: its nouns with their owners first,
    then the case-marked nouns with theirs."""
    return sorted(arguments, key=lambda a: a.role not in ("noun", "owner"))


def slot_arguments(clause: Clause) -> list[tuple[str, str]]:
    """The slot check's view of a clause's arguments: (phrase, case) of the verb's own nouns
    (`_slot_order`), a は topic dropped beside a が subject, then a missing subject."""
    own = [
        (a.phrase, slot_case(a))
        for a in _slot_order([a for a in clause.arguments if a.source == "own"])
    ]
    if any(case == "が" for _, case in own):
        own = [(p, case) for p, case in own if case != "は"]
    filled = [
        (a.phrase, a.case)
        for a in clause.arguments
        if a.source in ("inherited subject", "topic before")
    ]
    return own + filled


def quote_arguments(clause: Clause) -> list[tuple[str, str]]:
    """The quote check's view of a clause's arguments: (phrase with its の-owners, case) of the
    nouns and case-marked nouns of the verb, of its leading clauses and of its light host."""
    return [
        (a.owned, a.case)
        for a in clause.arguments
        if a.role in ("noun", "case-marked") and a.source in ("own", "leading", "light host")
    ]


# --- what a token says ------------------------------------------------------------------------


def case_of(tok: Any) -> str:
    """The first case particle written on a noun (`CASES` order), "" with none."""
    particles = [c.text for c in tok.children if c.dep_ == "case"]
    for case in CASES:
        if case in particles:
            return case
    return ""


def particle_of(tok: Any) -> str:
    """A noun's case particle, leaving out the copula's に (さんざんに: an adverb's form)."""
    particles = [c.text for c in tok.children if c.dep_ == "case" and c.lemma_ != "だ"]
    return next((case for case in CASES if case in particles), "")


def phrase_start(tok: Any) -> int:
    """The first token of the compound ending at `tok` (お+じい+さん)."""
    start = tok.i
    for child in sorted(tok.children, key=lambda c: -c.i):
        if child.dep_ == "compound" and child.i == start - 1:
            start = phrase_start(child)
    return start


def _owned_start(noun: Any) -> int:
    """The first token of a noun phrase with its の-owners (かめの子)."""
    start = phrase_start(noun)
    for owner in noun.children:
        if owner.dep_ == "nmod" and owner.i < start and particle_of(owner) == "の":
            start = min(start, _owned_start(owner))
    return start


def _case_marked(noun: Any) -> list[Any]:
    """A noun's own nouns in a case other than の (貞光 of 貞光といっしょに)."""
    return [
        c
        for c in noun.children
        if c.dep_ == "nmod" and c.pos_ in ("NOUN", "PROPN") and particle_of(c) not in ("", "の")
    ]


def chained(tok: Any) -> bool:
    """Is a verb chained to the verb it depends on, sharing its subject: a te-form
    (先に立って引き出した, つれて行かれた) or a 連用 stem written just before it (組み+ふせた)?"""
    if tok.dep_ != "advcl" or tok.pos_ != "VERB" or tok.head.pos_ != "VERB":
        return False
    # a te whose subsidiary verb is written on it (こしらえておくよう) is the verb's own form
    te = any(
        g.dep_ == "mark"
        and g.text in ("て", "で")
        and not any(f.dep_ == "fixed" for f in g.children)
        for g in tok.children
    )
    stem = tok.i + 1 == tok.head.i and not any(g.dep_ == "mark" for g in tok.children)
    return te or stem


def verb_chain(pred: Any) -> list[Any]:
    """The predicate and the verbs chained before it (`chained`), which share its subject
    (as the frames reader reads them, storygraph.ingest.frames.ja)."""
    members = [pred]
    for child in pred.children:
        if chained(child):
            members += verb_chain(child)
    return members


def predicate_tokens(pred: Any) -> list[Any]:
    """The predicate and what is written as one with it: compound verbs on its left, and the
    auxiliaries, te + subsidiary verbs and fixed parts on its right, in order."""
    doc = pred.doc
    first = pred.i
    while first > 0 and doc[first - 1].dep_ == "compound" and doc[first - 1].head.i == pred.i:
        first -= 1
    last = pred.i
    for tok in doc[pred.i + 1 :]:
        attached = tok.head.i in range(pred.i, last + 1)
        if attached and tok.dep_ in ("aux", "fixed", "mark") and tok.text != "の":
            last = tok.i
            continue
        break
    return list(doc[first : last + 1])


def voice_of(pred: Any) -> Voice:
    """The voice of a predicate by the auxiliaries written on it (られ, させ, te + もらう)."""
    lemmas = [t.lemma_ for t in predicate_tokens(pred)[1:]]
    passive = any(lemma in _PASSIVE for lemma in lemmas)
    causative = any(lemma in _CAUSATIVE for lemma in lemmas)
    if causative and passive:
        return "causative passive"
    if causative:
        return "causative"
    if passive or any(lemma in _BENEFACTIVE for lemma in lemmas):
        return "passive"
    return "active"
