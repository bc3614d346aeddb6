"""Retrieval metrics on one question's ranked facts (pure functions, no I/O).

- expected recall: share of the expected relations among the kept facts;
- excluded leaks: excluded relations among the kept facts;
- pairwise order accuracy: share of (expected, excluded) pairs where the expected relation ranks
  higher. A relation that was not retrieved ranks below every retrieved one; a pair where neither
  was retrieved counts as not won (the expected one is missing, which is a loss).
"""

from __future__ import annotations

from collections.abc import Sequence

Triple = tuple[str, str, str]


def expected_recall(kept: Sequence[Triple], expected: Sequence[Triple]) -> float | None:
    if not expected:
        return None
    found = set(kept)
    return sum(1 for t in expected if t in found) / len(expected)


def excluded_leaks(kept: Sequence[Triple], excluded: Sequence[Triple]) -> list[Triple]:
    found = set(kept)
    return [t for t in excluded if t in found]


def order_accuracy(
    ranked: Sequence[Triple], expected: Sequence[Triple], excluded: Sequence[Triple]
) -> float | None:
    """Share of expected × excluded pairs where the expected one ranks higher; None if no pair."""
    if not expected or not excluded:
        return None
    position = {t: i for i, t in reversed(list(enumerate(ranked)))}
    absent = len(ranked)
    wins = 0
    for good in expected:
        for bad in excluded:
            good_at = position.get(good, absent)
            if good_at < position.get(bad, absent):
                wins += 1
    return wins / (len(expected) * len(excluded))


def mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None
