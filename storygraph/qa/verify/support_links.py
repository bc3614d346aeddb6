"""The relations the support check's role and premise checks read (`Link`: from a frame of a
source, or a fact), read as the question's act reads them (`as_asked`), and how a link or a
source is matched to a name or a participant of the question.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from storygraph.models import Citation
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.relation_words import relation_words, type_stems, word_in
from storygraph.text.normalize import holds_name, normalize_name, same_entity
from storygraph.text.terms import english_words
from storygraph.text.vocabulary import CONVERSE_STEMS


@dataclass(frozen=True)
class Link:
    """One relation the check can read: from a frame of a source, or a fact."""

    start: str
    relation: str
    end: str
    source: int | None
    sentence: str
    how: str
    pattern: str = ""
    """The frame's construction ("は-へ", "prep:to"); "" for a fact."""
    predicate: str = ""
    """The frame's verb as the sentence writes it (組みふせる); "" for a fact."""
    swapped: bool = False
    """Its ends are read swapped from the source's (`as_asked`): the source tells `end` then
    `start`."""

    def said_in(self, analysis: QuestionAnalysis) -> bool:
        """Does the question use this link's verb: the frame's predicate (its first two
        characters in Japanese, an English stem), else the words of the fact's type?"""
        folded = normalize_name(analysis.predicate) if analysis.predicate else analysis.folded
        if self.predicate:
            head = normalize_name(self.predicate)
            if head.isascii():
                return any(w.startswith(head[:4]) for w in analysis.words)
            return head[:2] in folded
        if any(word_in(w, folded) for w in relation_words(self.relation)):
            return True
        own = english_words(self.relation.replace("_", " "))  # a type the table lacks: WRAPS
        return any(a.startswith(w[:4]) for w in own for a in analysis.words if len(w) > 2)

    def verb(self) -> str:
        """The link's verb in words: its relation's (DEFEATS → defeats), else, for a frame
        whose verb the table lacks, the predicate as the sentence writes it (引き出し)."""
        return verb_words(self.relation) or self.predicate or "is linked to"

    def told(self) -> str:
        """What the source says, in words and in its own order (鬼の酋長 surrenders to 桃太郎,
        also when the check reads the link swapped)."""
        first, last = (self.end, self.start) if self.swapped else (self.start, self.end)
        return f"{first} {self.verb()} {last}"

    def locative(self) -> bool:
        """Does it say where: a place particle or preposition, or a fact type of place?"""
        if self.how == "frame":
            return self.pattern.endswith(_PLACE_PARTICLES) or self.pattern.startswith("prep:")
        return bool(set(self.relation.upper().split("_")) & _PLACE_TOKENS)


_PLACE_PARTICLES = ("に", "へ", "で", "から", "まで")
_PLACE_TOKENS = frozenset({"TO", "IN", "AT", "FROM", "INTO", "ON", "LIVES", "GOES", "LOCATED"})


def as_asked(link: Link, analysis: QuestionAnalysis) -> Link:
    """`link` as the question's act reads it: a relation whose subject is the object of the
    asked act (鬼の酋長 -[SURRENDERS_TO]-> 桃太郎, asked who defeated whom: CONVERSE_STEMS) with
    its ends swapped; any other link, and any link for a question about that converse act
    itself (誰に降参した), as it is."""
    converse = type_stems(link.relation) & CONVERSE_STEMS
    if not converse or converse & analysis.stems or not analysis.stems:
        return link
    return replace(link, start=link.end, end=link.start, swapped=not link.swapped)


def verb_words(relation: str) -> str:
    """A relation type or stem as words of a sentence: DEFEAT → defeats, FOLLOWS → follows,
    BECOMES_COMPANION_OF → becomes companion of."""
    words = relation.lower().replace("_", " ").strip()
    if not words or " " in words or words.endswith("s"):
        return words
    if words.endswith(("sh", "ch", "x")):
        return words + "es"
    if words.endswith("y") and words[-2:-1] not in "aeiou":
        return words[:-1] + "ies"
    return words + "s"


def same(phrase: str, name: str) -> bool:
    """Is a frame's noun phrase (or a fact's end) the named thing? Same entity, or the phrase
    is the name with an owner or a title before it (おじいさんの桃太郎 ≠; "old woman" = woman)."""
    if not phrase or not name:
        return False
    if same_entity(phrase, name):
        return True
    a, b = normalize_name(phrase), normalize_name(name)
    return a.endswith(" " + b) or b.endswith(" " + a)


def beside(
    source: Citation, participants: Sequence[Any], role: bool, links: Sequence[Link]
) -> bool:
    """Does a source name the question's participants, itself or through a fact or frame it
    tells ("He wrapped his cloak": the parser's traveler)? All of them for a what / how
    question (the words are the only check), one for a role question (the role check then
    wants that one in the other slot: 家来 in 「桃太郎の家来は誰？」 is a word of the
    question, not a participant the sentence must name)."""
    if not participants:
        return True
    ends = [end for link in links if link.source == source.number for end in (link.start, link.end)]
    named = [
        names_participant(source.text, e) or any(same(end, e.node_id) for end in ends)
        for e in participants
    ]
    return any(named) if role else all(named)


def in_frame(source: Citation, name: str, links: Sequence[Link]) -> bool:
    """Does a frame of the source have the name in a slot: a subject the sentence leaves
    unsaid and its paragraph's topic gives (「そして、桃太郎のあとから、ついて行きました」
    after 「犬は…」)?"""
    return any(
        link.how == "frame"
        and link.source == source.number
        and (same(link.start, name) or same(link.end, name))
        for link in links
    )


def names_participant(text: str, entity: Any) -> bool:
    """Does a source name a participant of the question, by its graph name or its mention?"""
    return holds_name(text, entity.node_id) or holds_name(text, entity.mention)
