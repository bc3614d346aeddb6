"""The one per-engine seam: something that runs a Cypher string with parameters."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

Row = dict[str, Any]
Statement = tuple[str, dict[str, Any]]


class Runner(Protocol):
    """Runs queries against one graph. Implementations: FalkorDBRunner, Neo4jRunner."""

    engine: str
    schema: tuple[str, ...]
    schema_drops: tuple[str, ...]
    """An older store shape's schema, dropped before it is split (storygraph.store.entity_keys)."""

    def run(self, query: str, params: dict[str, Any] | None = None) -> list[Row]:
        """Run one query; rows come back as dicts keyed by the RETURN aliases."""
        ...

    def run_batch(self, statements: Sequence[Statement]) -> list[Row]:
        """Run statements in order, atomically where the engine can (Neo4j: one transaction);
        the rows the last statement returned."""
        ...

    def run_each(self, statements: Sequence[Statement]) -> Iterator[list[Row]]:
        """Run statements in order (not atomically), yielding each one's rows."""
        ...

    def describe(self) -> str:
        """A short human description of where the graph lives (no secrets)."""
        ...

    def close(self) -> None: ...
