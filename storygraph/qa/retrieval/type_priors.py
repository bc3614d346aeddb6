"""What a question's type adds to a candidate relation's score (the founding memo's Phase 2,
used by retrieval's +qtype stage, storygraph.qa.retrieval.retrieval): a bonus for the edge
direction the
question prefers for each start entity, one for a node at the other end that fits the asked slot
(a place for where, a character for who, a stored line for a question about speech), and one
for a with-whom question's co-members.
The type itself is detected by storygraph.qa.question.question_type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from storygraph.qa.question.question_type import PERSON_KINDS, Direction, QuestionType
from storygraph.text.vocabulary import SAYS_TYPE

DIRECTION_BONUS = 2.0
SLOT_BONUS = 1.0
EXPANSION_BONUS = 1.0
PLACE_TYPES = frozenset(
    {"place", "location", "country", "city", "town", "village", "island", "building", "area"}
)
PERSON_TYPES = frozenset(
    {"character", "person", "animal", "creature", "deity", "god", "monster", "oni", "people"}
)
THING_TYPES = frozenset({"object", "item", "thing", "food", "treasure", "artifact", "tool"})


def _slot_fit(qtype: QuestionType, other_type: str) -> float:
    """Does the node at the other end fit the slot the question asks for?"""
    kind = other_type.lower()
    if qtype.kind == "where":
        return SLOT_BONUS if kind in PLACE_TYPES else 0.0
    if qtype.kind in PERSON_KINDS:
        if kind in PERSON_TYPES:
            return SLOT_BONUS
        return -SLOT_BONUS if kind in PLACE_TYPES | THING_TYPES else 0.0
    if qtype.kind == "what":
        return SLOT_BONUS if kind in THING_TYPES else 0.0
    return 0.0


def fact_prior(
    qtype: QuestionType,
    start: str,
    end: str,
    start_ids: Sequence[str],
    node_types: Mapping[str, str],
) -> float:
    """Score adjustment for one relation: + for the preferred direction and a fitting slot."""
    adjustments: list[float] = []
    for entity in start_ids:
        if entity not in (start, end) or start == end:
            continue
        direction: Direction = "out" if start == entity else "in"
        other = end if start == entity else start
        wanted = qtype.direction_for(entity)
        value = 0.0
        if wanted != "any":
            value += DIRECTION_BONUS if wanted == direction else -DIRECTION_BONUS
        value += _slot_fit(qtype, node_types.get(other, ""))
        adjustments.append(value)
    return max(adjustments) if adjustments else 0.0


SPEECH_BONUS = 1.0


def speech_prior(qtype: QuestionType, rel_type: str) -> float:
    """A question about a line of speech (what X said, who said it): its answer is a stored
    line (a SAYS fact, whose sentence holds the quote), as a where question's is a place."""
    return SPEECH_BONUS if qtype.speech and rel_type == SAYS_TYPE else 0.0


def expansion_wanted(qtype: QuestionType) -> bool:
    """Question types whose answer lies beyond one hop: a partner shares a relation's target."""
    return qtype.kind == "with_whom"


def fits_kind(qtype: QuestionType, kind: str, locative: bool) -> bool:
    """Is a node of type `kind`, named in a place phrase (`locative`: に / へ / で / から) or
    not, of the kind and case the question asks for: a person for who (not a place or a
    thing), a place phrase for where (not a person; a thing's place is where: 「水がめの陰に」
    for 「どこにかくれた？」), for what not a place at all (「山へ」 says where, not what)? Any
    for the other kinds."""
    if qtype.kind in PERSON_KINDS:
        return kind not in PLACE_TYPES | THING_TYPES
    if qtype.kind == "where":
        return locative and kind not in PERSON_TYPES
    if qtype.kind == "what":
        return not locative and kind not in PLACE_TYPES
    return True
