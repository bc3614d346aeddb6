"""Candidate relations for the start nodes (design §5.2).

`onehop` is the default: every relation touching a start node, both directions, one hop, real
direction kept, structural edges excluded. `directed2` and `undirected2` are the founding memo's
earlier phases, kept selectable so their leaks can be shown (docs/ISSUES.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from storygraph.models import Fact
from storygraph.store import GraphStore
from storygraph.store.graph_store import RETRIEVAL_QUERIES

BASE_MODES: tuple[str, ...] = tuple(RETRIEVAL_QUERIES)
DEFAULT_MODE = "onehop"


@dataclass
class Retrieval:
    facts: list[Fact]
    cypher: str
    notes: list[str] = field(default_factory=list)


def retrieve(store: GraphStore, mode: str, ids: Sequence[str]) -> Retrieval:
    if mode not in RETRIEVAL_QUERIES:
        raise ValueError(f"unknown retrieval mode {mode!r}; choose one of {', '.join(BASE_MODES)}")
    return Retrieval(store.retrieve(mode, ids), RETRIEVAL_QUERIES[mode].strip())
