"""The relations the premise check reads (`Link`: from a frame of a source, or a fact), read
as the question's act reads them (`as_asked`), and how a link or a source is matched to a
participant of the question.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.relation_words import type_stems
from storygraph.text.normalize import holds_name, normalize_name, same_entity
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


def as_asked(link: Link, analysis: QuestionAnalysis) -> Link:
    """`link` as the question's act reads it: a relation whose subject is the object of the
    asked act (鬼の酋長 -[SURRENDERS_TO]-> 桃太郎, asked who defeated whom: CONVERSE_STEMS) with
    its ends swapped; any other link, and any link for a question about that converse act
    itself (誰に降参した), as it is."""
    converse = type_stems(link.relation) & CONVERSE_STEMS
    if not converse or converse & analysis.stems or not analysis.stems:
        return link
    return replace(link, start=link.end, end=link.start, swapped=not link.swapped)


def same(phrase: str, name: str) -> bool:
    """Is a frame's noun phrase (or a fact's end) the named thing? Same entity, or the phrase
    is the name with an owner or a title before it (おじいさんの桃太郎 ≠; "old woman" = woman)."""
    if not phrase or not name:
        return False
    if same_entity(phrase, name):
        return True
    a, b = normalize_name(phrase), normalize_name(name)
    return a.endswith(" " + b) or b.endswith(" " + a)


def names_participant(text: str, entity: Any) -> bool:
    """Does a source name a participant of the question, by its graph name or its mention?"""
    return holds_name(text, entity.node_id) or holds_name(text, entity.mention)
