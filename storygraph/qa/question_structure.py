"""A Japanese question's structure, read off its dependency parse (GiNZA): which predicate it
asks about, and in which case each of that predicate's arguments stands.

The question's words alone mislead the support check (storygraph.qa.support) where a question
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
(storygraph.services.question_structure, under the parser's lock).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, Literal

from storygraph.qa.question_type import Direction
from storygraph.text.vocabulary import DOING_VERBS_JA, LIGHT_PREDICATES_JA

Voice = Literal["active", "passive", "causative", "causative passive"]

QUESTION_WORDS = frozenset(
    {"誰", "だれ", "どなた", "何者", "何", "なに", "なん", "どこ", "いつ", "どう", "どんな"}
)
"""The question words whose clause names the asked predicate."""
_FORMAL_NOUNS = frozenset({"もの", "物", "こと", "事", "の", "人", "ひと", "ところ", "所", "方"})
"""Nouns that stand for a relative clause's gap (拾ったもの: the thing picked up)."""
_ARGUMENT_DEPS = frozenset({"nsubj", "obj", "obl", "iobj", "nmod", "dislocated", "csubj"})
_CLAUSE_DEPS = frozenset({"acl", "advcl", "csubj", "ccomp"})
_PASSIVE = frozenset({"れる", "られる"})
_CAUSATIVE = frozenset({"せる", "させる"})
_BENEFACTIVE = frozenset({"もらう", "貰う", "いただく", "頂く"})
"""te + these: the subject receives the act, the に (から) noun does it (助けてもらった)."""
_REQUEST_MARKS = frozenset({"よう", "様"})
"""A verb + よう(に) under another verb (頼む, 言いつける): the act asked for."""
_SUBJECT_CASES = ("が", "は", "も", "")
_CASES = ("から", "まで", "より", "が", "を", "に", "へ", "と", "で", "は", "も", "の")


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
    answer read by the same parse says (storygraph.qa.support_quotes)."""
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
    asked_case = _case(asked) if asked is not None and asked.pos_ == "PRON" else ""
    asked_case = "" if asked_case in ("は", "も", "の") else asked_case
    verbal = [t for t in tokens if t.dep_ in _CLAUSE_DEPS and _verbal(t)]
    predicate = _asked_predicate(tokens)
    if predicate is not None and predicate.lemma_ in DOING_VERBS_JA:
        # 食べようとした: the verb of the clause する is said of
        said = [
            c
            for c in predicate.children
            if c.dep_ in ("advcl", "ccomp") and c.pos_ == "VERB" and not _chained(c)
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
        t.lemma_ in _REQUEST_MARKS for t in _predicate_tokens(predicate)
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
    phrases it governs (`Clause.arguments`)."""
    text = doc.text
    found = []
    for tok in doc:
        if tok.pos_ != "VERB" or tok.dep_ in ("fixed", "compound", "aux"):
            continue
        members = verb_chain(tok)
        host = tok.head if tok.dep_ == "advcl" and tok.head.lemma_ in LIGHT_PREDICATES_JA else None
        governors = [*_beneath(tok), *([host] if host is not None and host.i != tok.i else [])]
        arguments = []
        for verb in governors:
            for child in verb.children:
                if child.dep_ not in _ARGUMENT_DEPS or child.pos_ not in ("NOUN", "PROPN", "PRON"):
                    continue
                for noun in (child, *_case_marked(child)):
                    start = doc[_owned_start(noun)].idx
                    arguments.append((text[start : noun.idx + len(noun.text)], _particle(noun)))
        lemmas = tuple(m.lemma_ for m in sorted(members, key=lambda m: m.i))
        found.append(Clause(tok.lemma_, voice_of(tok), tuple(arguments), lemmas))
    return tuple(found)


def _beneath(verb: Any) -> list[Any]:
    """A verb and the verbs of the clauses before it that lead up to it (つかまえて、…つついたり、
    …たたいたり、…いじめている): their nouns are the act's too."""
    found = [verb]
    for child in verb.children:
        if child.dep_ == "advcl" and child.pos_ == "VERB":
            found += _beneath(child)
    return found


def _owned_start(noun: Any) -> int:
    """The first token of a noun phrase with its の-owners (かめの子)."""
    start = _phrase_start(noun)
    for owner in noun.children:
        if owner.dep_ == "nmod" and owner.i < start and _particle(owner) == "の":
            start = min(start, _owned_start(owner))
    return start


def _case_marked(noun: Any) -> list[Any]:
    """A noun's own nouns in a case other than の (貞光 of 貞光といっしょに)."""
    return [
        c
        for c in noun.children
        if c.dep_ == "nmod" and c.pos_ in ("NOUN", "PROPN") and _particle(c) not in ("", "の")
    ]


def _particle(tok: Any) -> str:
    """A noun's case particle, leaving out the copula's に (さんざんに: an adverb's form)."""
    particles = [c.text for c in tok.children if c.dep_ == "case" and c.lemma_ != "だ"]
    return next((case for case in _CASES if case in particles), "")


def _written(text: str, pred: Any) -> str:
    parts = _predicate_tokens(pred)
    return text[parts[0].idx : parts[-1].idx + len(parts[-1].text)]


def chain_end(tok: Any) -> Any:
    """The last verb of the chain a verb is in (連れだって出かけた: 出かける)."""
    while _chained(tok):
        tok = tok.head
    return tok


def _chained(tok: Any) -> bool:
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
    """The predicate and the verbs chained before it (`_chained`), which share its subject
    (as the frames reader reads them, storygraph.ingest.frames.ja)."""
    members = [pred]
    for child in pred.children:
        if _chained(child):
            members += verb_chain(child)
    return members


def _verbal(tok: Any) -> bool:
    return tok.pos_ in ("VERB", "AUX") or (tok.pos_ == "ADJ" and tok.dep_ in _CLAUSE_DEPS)


def _asked_predicate(tokens: list[Any]) -> Any | None:
    """The predicate the question word is an argument of (see the module docstring)."""
    asked = next((t for t in tokens if QUESTION_WORDS & {t.lemma_, t.text}), None)
    root = next((t for t in tokens if t.dep_ == "ROOT"), None)
    if root is None:
        return None
    node = asked
    while node is not None and node.i != root.i:
        node = node.head
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


def _predicate_tokens(pred: Any) -> list[Any]:
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
    lemmas = [t.lemma_ for t in _predicate_tokens(pred)[1:]]
    passive = any(lemma in _PASSIVE for lemma in lemmas)
    causative = any(lemma in _CAUSATIVE for lemma in lemmas)
    if causative and passive:
        return "causative passive"
    if causative:
        return "causative"
    if passive or any(lemma in _BENEFACTIVE for lemma in lemmas):
        return "passive"
    return "active"


def _arguments(pred: Any, chain_voice: Voice) -> Iterator[Argument]:
    """A verb's noun phrases with their case, in its own voice, else the voice of the chain it
    ends (つれて行かれた: passive); a noun's の-owner stands in the same case (車の先に: at the
    cart's front; the support check gives an owner that only says which one is meant, 桃太郎
    of 桃太郎のおじいさん, no role)."""
    for child in pred.children:
        if child.dep_ not in _ARGUMENT_DEPS or child.pos_ not in ("NOUN", "PROPN", "PRON"):
            continue
        case, voice = _case(child), voice_of(pred)
        voice = chain_voice if voice == "active" else voice
        start = _phrase_start(child)
        yield Argument(child.doc[start].idx, child.idx + len(child.text), case, voice)
        for owner in child.children:
            if owner.dep_ == "nmod" and owner.i < child.i and _case(owner) == "の":
                first = owner.doc[_phrase_start(owner)]
                yield Argument(first.idx, owner.idx + len(owner.text), case, voice)


def _case(tok: Any) -> str:
    particles = [c.text for c in tok.children if c.dep_ == "case"]
    for case in _CASES:
        if case in particles:
            return case
    return ""


def _phrase_start(tok: Any) -> int:
    """The first token of the compound ending at `tok` (お+じい+さん)."""
    start = tok.i
    for child in sorted(tok.children, key=lambda c: -c.i):
        if child.dep_ == "compound" and child.i == start - 1:
            start = _phrase_start(child)
    return start


def _span(tok: Any) -> tuple[int, int]:
    """Character span of a token's subtree."""
    subtree = list(tok.subtree)
    first, last = subtree[0], subtree[-1]
    return first.idx, last.idx + len(last.text)


def argument_phrases(verb: Any, voice: Voice) -> list[tuple[str, str]]:
    """A verb's noun phrases as written, with their case (`_arguments`), and the nouns those
    govern in a case of their own (山うば of おかあさんの山うばといっしょに: と; each with its
    の-owner in the same case, as `_arguments` reads an owner): what the support check reads
    of a source's clause (storygraph.qa.support_slots)."""
    text = verb.doc.text
    found = [(text[a.start : a.end], a.case) for a in _arguments(verb, voice)]
    for child in verb.children:
        if child.dep_ not in _ARGUMENT_DEPS or child.pos_ not in ("NOUN", "PROPN", "PRON"):
            continue
        for noun in _case_marked(child):
            case = _particle(noun)
            found.append(
                (text[verb.doc[_phrase_start(noun)].idx : noun.idx + len(noun.text)], case)
            )
            for owner in noun.children:
                if owner.dep_ == "nmod" and owner.i < noun.i and _particle(owner) == "の":
                    start = verb.doc[_phrase_start(owner)].idx
                    found.append((text[start : owner.idx + len(owner.text)], case))
    return found
