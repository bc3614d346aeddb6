"""Story time: where the story states each fact, and which facts later ones supersede.

A *position* is one place a story states a relation: the document, the character offset of the
evidence sentence in the document, and the chunk index, as one sortable string
`"<document id>:<offset, 8 digits>:<chunk index, 4 digits>"`, plus `":said"` when the evidence
sentence is quoted speech (「鬼が島へ行こうと思います。」と桃太郎はこたえました). It starts with
the document id and a colon like every chunk id of that document, so deleting a document strips
its positions by the same prefix (`chunk_prefix`). Offsets come first so a sentence repeated in
the overlap of two chunks sorts where it stands in the text.

Every relation keeps the set of its positions (`positions`) and, derived from them:

- `story_order`: its first narrated position, else its first position (the fact holds from
  here: Graphiti's `valid_at`). What a character *says* (a plan, a boast) is not yet what
  happens: 「鬼が島へ行こう」 comes before the dog, the journey after the pheasant;
- `story_order_last`: its last position;
- `invalid_at`: for relations of an *exclusive* type (`EXCLUSIVE_RELATION_TYPES`: a thing has
  one owner at a time, a person one home, a group one leader), the first position, in the same
  document, where the same held end is stated with the same type and another partner after this
  relation's last statement there: 鬼 -[OWNS]→ 宝物, later 桃太郎 -[OWNS]→ 宝物 (the treasure
  changes hands); おじいさん -[LIVES_IN]→ 村, later おじいさん -[LIVES_IN]→ 都. Nothing is
  deleted; the earlier fact stays, with its `invalid_at`.

Positions of different documents are not compared: each document is its own story time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from storygraph.models import Fact

Held = Literal["source", "target"]

EXCLUSIVE_RELATION_TYPES: Mapping[str, Held] = MappingProxyType(
    {
        "OWNS": "target",  # the treasure has one owner at a time
        "POSSESSES": "target",
        "BELONGS_TO": "source",
        "LIVES_IN": "source",  # a person has one home at a time
        "LEADS": "target",  # a group has one leader at a time
        "RULES": "target",
        "IS_LEADER_OF": "target",
    }
)
"""Exclusive relation types and which end is held exclusively (a later fact with the same type,
the same held end and another partner supersedes the earlier one). Extend by passing
`exclusive=` to `story_times`, or add a type here."""

OFFSET_DIGITS = 8
INDEX_DIGITS = 4
SAID = ":said"
_QUOTES = ("「", "『", "“", '"', "‘", "'")


def is_speech(sentence: str) -> bool:
    """Is the evidence sentence quoted speech (it opens with a quotation mark)?"""
    return sentence.lstrip().startswith(_QUOTES)


def position(document_id: str, offset: int, chunk_index: int, said: bool = False) -> str:
    """The sortable position string of one statement (see module docstring)."""
    offset_text = f"{max(offset, 0):0{OFFSET_DIGITS}d}"
    index_text = f"{max(chunk_index, 0):0{INDEX_DIGITS}d}"
    return f"{document_id}:{offset_text}:{index_text}{SAID if said else ''}"


@dataclass(frozen=True)
class Position:
    document_id: str
    offset: int
    chunk_index: int
    said: bool = False

    @property
    def chunk_id(self) -> str:
        return f"{self.document_id}:{self.chunk_index:0{INDEX_DIGITS}d}"


def parse_position(value: str) -> Position | None:
    """The parts of a position string; None for anything else (an old or foreign value)."""
    said = value.endswith(SAID)
    document_id, sep, rest = value.removesuffix(SAID).rpartition(":")
    if not sep:
        return None
    document_id, sep, offset = document_id.rpartition(":")
    if not sep or not document_id or not offset.isdigit() or not rest.isdigit():
        return None
    return Position(document_id, int(offset), int(rest), said)


def document_of(value: str) -> str:
    found = parse_position(value)
    return found.document_id if found else ""


def evidence_offset(chunk_text: str, chunk_start: int, evidence: str) -> int:
    """Document offset of the evidence sentence in its chunk; the chunk's start if not found."""
    at = chunk_text.find(evidence) if evidence else -1
    return chunk_start + max(at, 0)


@dataclass(frozen=True)
class TimedRelation:
    """A relation as story time sees it: its key and the positions that state it."""

    source: str
    type: str
    target: str
    positions: tuple[str, ...]

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.source, self.type, self.target)


@dataclass(frozen=True)
class StoryTime:
    """Derived story-time properties of one relation (None: no position, or still valid)."""

    source: str
    type: str
    target: str
    story_order: str | None
    story_order_last: str | None
    invalid_at: str | None


def _by_document(positions: Iterable[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for value in positions:
        document = document_of(value)
        if document:
            found.setdefault(document, []).append(value)
    return found


def held_end(rel_type: str, source: str, target: str, exclusive: Mapping[str, Held]) -> str | None:
    """The exclusively held end of a relation of an exclusive type; None for other types."""
    held = exclusive.get(rel_type)
    if held is None:
        return None
    return source if held == "source" else target


def story_times(
    relations: Sequence[TimedRelation],
    exclusive: Mapping[str, Held] = EXCLUSIVE_RELATION_TYPES,
) -> list[StoryTime]:
    """First and last positions of every relation, and `invalid_at` for superseded ones.

    `relations` must hold, for each (exclusive type, held end) it contains, every relation of
    the graph with that type touching that end (the rule compares them with each other).
    """
    groups: dict[tuple[str, str], list[TimedRelation]] = {}
    for rel in relations:
        held = held_end(rel.type, rel.source, rel.target, exclusive)
        if held is not None:
            groups.setdefault((rel.type, held), []).append(rel)
    invalid: dict[tuple[str, str, str], str] = {}
    for members in groups.values():
        for rel in members:
            earliest: str | None = None
            for document, own in _by_document(rel.positions).items():
                last = max(own)
                for other in members:
                    if other.key == rel.key:
                        continue
                    later = [p for p in _by_document(other.positions).get(document, []) if p > last]
                    if later and (earliest is None or min(later) < earliest):
                        earliest = min(later)
            if earliest is not None:
                invalid[rel.key] = earliest
    times: list[StoryTime] = []
    for rel in relations:
        parsed = [(p, parse_position(p)) for p in rel.positions]
        valid = [p for p, where in parsed if where is not None]
        narrated = [p for p, where in parsed if where is not None and not where.said]
        times.append(
            StoryTime(
                rel.source,
                rel.type,
                rel.target,
                min(narrated or valid) if valid else None,
                max(valid) if valid else None,
                invalid.get(rel.key),
            )
        )
    return times


# --- facts in story order ----------------------------------------------------------------------


def story_key(fact: Fact) -> tuple[int, str]:
    """Sort key: facts with a position first, in story order; the rest after, as given."""
    return (0, fact.story_order) if fact.story_order else (1, "")


def in_story_order(facts: Sequence[Fact]) -> list[Fact]:
    """The facts sorted by where the story first states them (stable for unplaced ones)."""
    return sorted(facts, key=story_key)


def supersession_lines(facts: Sequence[Fact], japanese: bool = False) -> list[str]:
    """ "At first … later …" for each superseded fact whose successor is among `facts`.

    A fact with `invalid_at` is followed by the fact of the same type and held end (see
    `EXCLUSIVE_RELATION_TYPES`) whose first position is exactly that `invalid_at`.
    """
    exclusive = EXCLUSIVE_RELATION_TYPES
    by_start = {
        (f.type, held_end(f.type, f.start, f.end, exclusive), f.story_order): f
        for f in facts
        if f.story_order
    }
    lines: list[str] = []
    for fact in in_story_order(facts):
        if not fact.invalid_at:
            continue
        held = held_end(fact.type, fact.start, fact.end, exclusive)
        later = by_start.get((fact.type, held, fact.invalid_at))
        if later is None:
            continue
        verb = fact.type.lower().replace("_", " ")
        if japanese:
            lines.append(
                f"はじめは {fact.start} -[{fact.type}]→ {fact.end}、"
                f"のちに {later.start} -[{later.type}]→ {later.end}。"
            )
        else:
            lines.append(
                f"At first {fact.start} {verb} {fact.end}; later {later.start} {verb} {later.end}."
            )
    return lines
