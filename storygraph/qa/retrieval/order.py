"""Order questions: the facts before or after an anchor fact, in story order."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from storygraph.models import Fact
from storygraph.qa.question.relation_words import question_stems, related_stems, type_stems
from storygraph.store.story_time import document_of, in_story_order, story_key
from storygraph.text.normalize import normalize_name

ORDER_BONUS = 2.0
"""Ranking adjustment (retrieval's question-type stage): + on the asked side of the anchor,
- on the other side and for the anchor itself."""

_LET_GO = re.compile(r"\blet (?:it|him|her|them|the \w+|\w+) go\b")


@dataclass
class OrderedFacts:
    """The answer side of an order question: facts before / after the anchor, in story order."""

    order: str
    anchor: Fact | None
    facts: list[Fact] = field(default_factory=list)
    unplaced: list[Fact] = field(default_factory=list)
    """Facts without a story position: they cannot be placed before or after anything."""
    note: str = ""


def _clause_stems(clause: str) -> set[str]:
    return related_stems(question_stems(_LET_GO.sub("let go", clause.lower())))


_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "to",
        "of",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "it",
        "its",
        "he",
        "she",
        "they",
        "him",
        "her",
        "them",
        "his",
        "their",
    ]
)
_DETERMINERS = ("the ", "a ", "an ", "his ", "her ", "their ")


def _word_fit(clause: str, rel_type: str) -> bool:
    """English clause words that are (the start of) a token of the relation type."""
    words = {w for w in re.findall(r"[a-z]+", clause.lower()) if w not in _STOPWORDS}
    tokens = {t for t in rel_type.lower().split("_") if t not in _STOPWORDS}
    return any(
        t == w or (len(w) >= 3 and t.startswith(w)) or (len(t) >= 3 and w.startswith(t))
        for t in tokens
        for w in words
    )


def clause_subject(clause: str, names: Sequence[str]) -> str | None:
    """The entity the anchor clause names as its subject: the one it starts with (English,
    after a determiner) or the one followed by が / は (Japanese)."""
    lowered = clause.lower()
    for prefix in _DETERMINERS:
        lowered = lowered.removeprefix(prefix)
    for name in sorted(names, key=len, reverse=True):
        if name.isascii() and re.match(rf"{re.escape(name.lower())}\b", lowered):
            return name
        if not name.isascii() and re.search(rf"{re.escape(name)}[がは]", clause):
            return name
    return None


def anchor_fact(facts: Sequence[Fact], clause: str, start_ids: Sequence[str]) -> Fact | None:
    """The fact the order is relative to: it touches an entity named in the anchor clause (and
    another start entity, if one does); the clause's subject doing it, if one does; its type
    fitting the clause's words, if one does; the earliest of those."""
    folded = normalize_name(clause)
    in_clause = {i for i in start_ids if normalize_name(i) and normalize_name(i) in folded}
    placed = [f for f in facts if f.story_order]
    touching = [f for f in placed if f.start in in_clause or f.end in in_clause]
    if not touching:
        return None
    others = set(start_ids) - in_clause
    pool = [f for f in touching if f.start in others or f.end in others] or touching
    subject = clause_subject(clause, sorted(in_clause))
    pool = [f for f in pool if f.start == subject] or pool
    stems = _clause_stems(clause)
    pool = [f for f in pool if type_stems(f.type) & stems or _word_fit(clause, f.type)] or pool
    return min(pool, key=story_key)


def _on_side(value: str, anchor: str, order: str) -> bool:
    return value < anchor if order == "before" else value > anchor


def order_facts(
    facts: Sequence[Fact], order: str, clause: str, start_ids: Sequence[str]
) -> OrderedFacts:
    """Facts on the asked side (`order` "before" / "after") of the anchor clause, in story order.

    Kept: facts touching a start entity the clause does not name (the question's subject), from
    the anchor's document only (each document is its own story time).
    With no order, or no anchor fact, every placed fact comes back in story order and `note`
    says why nothing was filtered.
    """
    placed = [f for f in facts if f.story_order]
    unplaced = [f for f in facts if not f.story_order]
    if order not in ("before", "after"):
        return OrderedFacts("", None, in_story_order(placed), unplaced)
    anchor = anchor_fact(facts, clause, start_ids)
    if anchor is None:
        note = f"no fact places 「{clause}」 in the story: facts kept in story order, unfiltered"
        return OrderedFacts(order, None, in_story_order(placed), unplaced, note)
    document = document_of(anchor.story_order)
    folded = normalize_name(clause)
    subjects = {i for i in start_ids if normalize_name(i) not in folded} or set(start_ids)
    side = [
        f
        for f in placed
        if f.key != anchor.key
        and (f.start in subjects or f.end in subjects)
        and document_of(f.story_order) == document
        and _on_side(f.story_order, anchor.story_order, order)
    ]
    return OrderedFacts(order, anchor, in_story_order(side), unplaced)


def order_priors(facts: Sequence[Fact], ordered: OrderedFacts) -> dict[tuple[str, str, str], float]:
    """Ranking adjustment per fact for an order question (see ORDER_BONUS)."""
    if ordered.anchor is None:
        return {}
    wanted = {f.key for f in ordered.facts}
    adjust: dict[tuple[str, str, str], float] = {}
    for fact in facts:
        if fact.key in wanted:
            adjust[fact.key] = ORDER_BONUS
        elif fact.story_order:
            adjust[fact.key] = -ORDER_BONUS
    return adjust


def order_for_question(
    question: str, facts: Sequence[Fact], start_ids: Sequence[str], *, language: str
) -> OrderedFacts:
    """Detect the question's order cue and order `facts` by it (`language`: the question's)."""
    from storygraph.qa.question.question_type import order_cue

    order, _cue, clause = order_cue(question, language=language)
    return order_facts(facts, order, clause, start_ids)
