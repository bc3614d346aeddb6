"""Deterministic synthetic graphs shaped like merged extraction output (a MergePlan)."""

from __future__ import annotations

import random

from storygraph.store.plan import EntityRecord, MergePlan, RelationRecord
from storygraph.text.normalize import normalize_name

LABELS = ("Character", "Animal", "Place", "Object", "Event")
REL_TYPES = (
    "GOES_TO",
    "LIVES_IN",
    "MEETS",
    "GIVES",
    "DEFEATS",
    "FINDS",
    "OWNS",
    "BECOMES_COMPANION_OF",
)


def entity_id(i: int) -> str:
    return f"人物{i:06d}"


def make_plan(nodes: int, edges: int, seed: int = 7) -> MergePlan:
    """`nodes` entities over 5 labels and `edges` distinct relations over 8 types, no self-loops.

    Endpoints are uniform, so the mean degree is 2 x edges / nodes (6 at 3 edges per node).
    Each relation carries one chunk id and one evidence sentence, as one extraction gives.
    """
    rng = random.Random(seed)
    entities = [
        EntityRecord(
            id=entity_id(i),
            label=LABELS[i % len(LABELS)],
            norm=normalize_name(entity_id(i)),
            rkey=None,
            kana=False,
            chunk_ids=[f"bench:{i % 997}"],
            type_votes=[LABELS[i % len(LABELS)]],
        )
        for i in range(nodes)
    ]
    seen: set[tuple[int, str, int]] = set()
    relations: list[RelationRecord] = []
    while len(relations) < edges:
        a, b = rng.randrange(nodes), rng.randrange(nodes)
        rel_type = REL_TYPES[rng.randrange(len(REL_TYPES))]
        if a == b or (a, rel_type, b) in seen:
            continue
        seen.add((a, rel_type, b))
        relations.append(
            RelationRecord(
                entity_id(a),
                rel_type,
                entity_id(b),
                chunk_ids=[f"bench:{len(relations) % 997}"],
                evidence=[f"{entity_id(a)}は{entity_id(b)}に会いました。"],
            )
        )
    return MergePlan(entities=entities, relations=relations)
