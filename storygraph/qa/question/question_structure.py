"""A Japanese question's structure, read off its dependency parse (GiNZA): which predicate it
asks about, and in which case each of that predicate's arguments stands.

The question's words alone mislead the support check (storygraph.qa.verify.support) where a question
holds more than one clause:

- 「船が陸に着いた後、…車の先に立って引き出したのは誰？」 asks who pulled (引き出す), not who
  arrived: the first verb of the question belongs to a clause of time;
- 「たぬき汁の代わりに、おじいさんが食べさせられたものは？」 is causative passive: おじいさん is
  the one who eats, where a passive alone (られ) would make him the one eaten;
- 「玉手箱に入っていた「…」とは何だった？」 asks what a thing was; 入る only says which thing.

The asked predicate is the one the question word is an argument of (誰と一緒に帰った: 帰る;
何をこしらえておくよう頼んだ: こしらえる), climbing from the question word through the nouns it
modifies to the first verb; when the question word is the sentence's root (…のは誰？) or absent
(…ものは？), the verb of the clause the root's subject is made of (倒したのは: 倒す) or that
modifies a formal noun root (拾ったもの: 拾う). None: the question asks what something is
(「…とは何だった？」, 「桃太郎の仲間は誰？」; the support check then keeps the reading of the
question's words, and claims no missing act for it). A clause on the root's subject noun is
the asked predicate too (「金太郎が…かついで歩いていた大きな道具は何？」: the noun its gap).

`read_structure` reads a parsed question (a spaCy `Doc`: tokens' `dep_`, `pos_`, `lemma_`,
`head`, `children`, `idx`) and imports no parser; the composition root parses with GiNZA
(storygraph.services.question_structure, under the parser's lock), and the question room's
`QuestionParser` (storygraph.qa.question.checked) runs that reader for the support check.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from storygraph.qa.question.clauses import (
    ARGUMENT_DEPS,
    Voice,
    case_of,
    chained,
    phrase_start,
    predicate_tokens,
    quote_arguments,
    read,
    verb_chain,
    voice_of,
)
from storygraph.qa.question.question_type import Direction
from storygraph.text.parse_tree import ancestors, root_of
from storygraph.text.vocabulary import DOING_VERBS_JA

QUESTION_WORDS = frozenset(
    {"誰", "だれ", "どなた", "何者", "何", "なに", "なん", "どこ", "いつ", "どう", "どんな"}
)
"""The question words whose clause names the asked predicate."""
_FORMAL_NOUNS = frozenset({"もの", "物", "こと", "事", "の", "人", "ひと", "ところ", "所", "方"})
"""Nouns that stand for a relative clause's gap (拾ったもの: the thing picked up)."""
_CLAUSE_DEPS = frozenset({"acl", "advcl", "csubj", "ccomp"})
_REQUEST_MARKS = frozenset({"よう", "様"})
"""A verb + よう(に) under another verb (頼む, 言いつける): the act asked for."""
_SUBJECT_CASES = ("が", "は", "も", "")


@dataclass(frozen=True)
class Argument:
    """One noun phrase of the asked predicate: where it stands in the question and its case."""

    start: int
    end: int
    """Character offsets of the phrase in the question (its の-owner included when the phrase
    is a position or part noun: 車の先に is 車's place)."""
    case: str
    """The case particle (が, を, に, へ, と, から, で), else the topic marker (は, も), else ""."""
    voice: Voice = "active"
    """The voice of the verb it is an argument of (a te-chained verb has its own)."""
    chained: bool = False
    """An argument of a verb chained before the asked one (先に立って引き出した: 先 of 立つ):
    its subject is the asked verb's too; its other cases say nothing of the asked verb's slots."""


@dataclass(frozen=True)
class QuestionStructure:
    """What a Japanese question asks about, read off its parse."""

    predicate: str
    """The asked predicate as written, with the verbs and auxiliaries written as one with it
    (引き出した, 食べさせられた); "" when the question asks what something is."""
    lemma: str
    """Its dictionary form (引き出す); "" with no predicate."""
    voice: Voice
    arguments: tuple[Argument, ...]
    """The asked predicate's noun phrases (none without a predicate)."""
    words: str
    """The text the question's relation words are read from: the predicate with the verbs
    chained to it (立って引き出した); "" without a predicate."""
    asked_case: str = ""
    """The case particle on the question word (何で: で, どこへ: へ, 誰と: と); "" when it has
    none (…のは誰？: the gap of a clause)."""
    outside: tuple[tuple[int, int], ...] = ()
    """Spans of the clauses that are not the asked predicate's (a time clause, a relative
    clause): an entity inside one takes no part in the asked relation."""
    clauses: tuple[Clause, ...] = ()
    """Every verb of the text with the noun phrases it governs (`read_clauses`): what an
    answer read by the same parse says (storygraph.qa.verify.support_quotes)."""
    requested: bool = False
    """The asked predicate is what someone is asked or told to do (こしらえておくよう頼んだ):
    its に noun is the one asked, who would do it, and the story need not tell it was done."""

    def direction(self, start: int, end: int) -> Direction | None:
        """The role a question's mention at [start, end) plays, as the support check reads
        roles ("in": the answer is the doer, the mention is done to; "out": the mention does
        it; "any"); None when the mention is no argument of the asked predicate."""
        for arg in self.arguments:  # the mention's last character in the phrase: its head
            if arg.start <= end - 1 < arg.end:
                if arg.chained and arg.case not in _SUBJECT_CASES:
                    return "any"
                if self.requested and arg.case == "に":
                    return "out"  # おばあさんにこしらえておくよう頼んだ: she is to make it
                return case_direction(arg.case, arg.voice)
        return None

    def inside_other_clause(self, start: int, end: int) -> bool:
        """Is the mention at [start, end) inside a clause that is not the asked predicate's?"""
        return any(a <= start and end <= b for a, b in self.outside)


@dataclass(frozen=True)
class Clause:
    """One verb of a text and the noun phrases it governs, each with its case."""

    lemma: str
    """The verb's dictionary form (いじめる)."""
    voice: Voice
    arguments: tuple[tuple[str, str], ...]
    """(phrase as written with its の-owners, case particle or "") of the nouns the verb
    governs: its own, those of the clauses leading up to it (つかまえて、…いじめる), of a light
    verb it stands under (呼ばれるようになった: なる's いっしょに), and a noun's own case-marked
    noun (貞光と of 貞光といっしょに)."""
    lemmas: tuple[str, ...] = ()
    """The chain's verbs' dictionary forms (つかまえる, いじめる)."""


def case_direction(case: str, voice: Voice) -> Direction:
    """The role of a noun with `case` on a predicate in `voice` (see `QuestionStructure.
    direction`): active が / は / も / から do it, を / に / へ are done to; passive (and te +
    もらう) turn が / は into the one done to and に / から into the doer; a causative's に is
    the doer and its が the causer; a causative passive's が is the doer (食べさせられた: he
    eats)."""
    subject = case in _SUBJECT_CASES
    if voice == "active":
        if subject or case == "から":
            return "out"
        return "in" if case in ("を", "に", "へ") else "any"
    if voice == "passive":
        if subject:
            return "in"
        return "out" if case in ("に", "から", "によって") else "any"
    if voice == "causative":
        if case == "に":
            return "out"
        return "in" if case == "を" else "any"
    # causative passive
    if subject:
        return "out"
    return "in" if case == "を" else "any"


def read_structure(doc: Any) -> QuestionStructure:
    """The structure of a parsed Japanese question (`doc`: a spaCy Doc of the question)."""
    tokens = list(doc)
    text = doc.text
    asked = next((t for t in tokens if QUESTION_WORDS & {t.lemma_, t.text}), None)
    asked_case = case_of(asked) if asked is not None and asked.pos_ == "PRON" else ""
    asked_case = "" if asked_case in ("は", "も", "の") else asked_case
    verbal = [t for t in tokens if t.dep_ in _CLAUSE_DEPS and _verbal(t)]
    predicate = _asked_predicate(tokens)
    if predicate is not None and predicate.lemma_ in DOING_VERBS_JA:
        # 食べようとした: the verb of the clause する is said of
        said = [
            c
            for c in predicate.children
            if c.dep_ in ("advcl", "ccomp") and c.pos_ == "VERB" and not chained(c)
        ]
        predicate = said[0] if said else predicate
    clauses = read_clauses(doc)
    if predicate is None:
        spans = tuple(_span(t) for t in verbal)
        return QuestionStructure("", "", "active", (), "", asked_case, spans, clauses)
    members = sorted(verb_chain(predicate), key=lambda m: m.i)
    written = "".join(_written(text, m) for m in members)
    outside = tuple(
        _span(t)
        for t in verbal
        if all(t.i != m.i for m in members) and not any(a.i == t.i for a in predicate.ancestors)
    )
    voice = voice_of(predicate)
    arguments = tuple(
        replace(arg, chained=m.i != predicate.i) for m in members for arg in _arguments(m, voice)
    )
    requested = predicate.dep_ in ("advcl", "ccomp") and any(
        t.lemma_ in _REQUEST_MARKS for t in predicate_tokens(predicate)
    )
    return QuestionStructure(
        written,
        predicate.lemma_,
        voice,
        arguments,
        written,
        asked_case,
        outside,
        clauses,
        requested,
    )


def read_clauses(doc: Any) -> tuple[Clause, ...]:
    """Every verb of a parsed text (not a subsidiary one written on another) with the noun
    phrases it governs (`Clause.arguments`): the quote check's view of
    storygraph.qa.question.clauses.read."""
    return tuple(
        Clause(c.lemma, c.voice, tuple(quote_arguments(c)), c.chain)
        for c in read(doc)
        if not c.subsidiary
    )


def _written(text: str, pred: Any) -> str:
    parts = predicate_tokens(pred)
    return text[parts[0].idx : parts[-1].idx + len(parts[-1].text)]


def chain_end(tok: Any) -> Any:
    """The last verb of the chain a verb is in (連れだって出かけた: 出かける)."""
    end = tok
    for head in ancestors(tok):
        if not chained(end):
            break
        end = head
    return end


def _verbal(tok: Any) -> bool:
    return tok.pos_ in ("VERB", "AUX") or (tok.pos_ == "ADJ" and tok.dep_ in _CLAUSE_DEPS)


def _asked_predicate(tokens: list[Any]) -> Any | None:
    """The predicate the question word is an argument of (see the module docstring)."""
    asked = next((t for t in tokens if QUESTION_WORDS & {t.lemma_, t.text}), None)
    # the question word's own sentence's root (a text of several sentences has one root each;
    # the walk up to the text's first ROOT never ended for a word of the second)
    if asked is not None:
        root = root_of(asked)
    else:
        root = next((t for t in tokens if t.dep_ == "ROOT"), None)
    if root is None:
        return None
    for node in ancestors(asked) if asked is not None else ():
        light = node.lemma_ in DOING_VERBS_JA and node.i != root.i and node.head.pos_ == "VERB"
        if node.pos_ == "VERB" and node.dep_ not in ("fixed", "compound", "aux") and not light:
            return chain_end(node)
    if root.pos_ == "VERB" and (asked is None or asked.i != root.i):
        return root
    # the root is the question word or a formal noun: the clause its subject is made of
    formal = bool(_FORMAL_NOUNS & {root.lemma_, root.text})
    for child in root.children:
        clause = child.dep_ in ("csubj", "nsubj") or (child.dep_ == "acl" and formal)
        if clause and child.pos_ == "VERB":
            return child
    for child in root.children:  # …かついで歩いていた道具は何？: the clause on the asked noun
        if child.dep_ == "nsubj" and child.pos_ in ("NOUN", "PROPN"):
            said = [g for g in child.children if g.dep_ == "acl" and g.pos_ == "VERB"]
            if said:
                return chain_end(said[-1])
    for child in root.children:  # …のは誰: the nominalised clause is the root's subject
        nominalised = any(g.dep_ == "mark" and g.text == "の" for g in child.children)
        if child.pos_ == "VERB" and nominalised:
            return child
    return None


def _arguments(pred: Any, chain_voice: Voice) -> Iterator[Argument]:
    """A verb's noun phrases with their case, in its own voice, else the voice of the chain it
    ends (つれて行かれた: passive); a noun's の-owner stands in the same case (車の先に: at the
    cart's front; the support check gives an owner that only says which one is meant, 桃太郎
    of 桃太郎のおじいさん, no role)."""
    for child in pred.children:
        if child.dep_ not in ARGUMENT_DEPS or child.pos_ not in ("NOUN", "PROPN", "PRON"):
            continue
        case, voice = case_of(child), voice_of(pred)
        voice = chain_voice if voice == "active" else voice
        start = phrase_start(child)
        yield Argument(child.doc[start].idx, child.idx + len(child.text), case, voice)
        for owner in child.children:
            if owner.dep_ == "nmod" and owner.i < child.i and case_of(owner) == "の":
                first = owner.doc[phrase_start(owner)]
                yield Argument(first.idx, owner.idx + len(owner.text), case, voice)


def _span(tok: Any) -> tuple[int, int]:
    """Character span of a token's subtree."""
    subtree = list(tok.subtree)
    first, last = subtree[0], subtree[-1]
    return first.idx, last.idx + len(last.text)
