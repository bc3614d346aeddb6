"""Retrieval modes by name: a base retrieval plus optional stages
(storygraph.qa.retrieval.retrieval runs
them). Only strings and the store's query names here, so the CLI can list the modes in its help
without importing the question path."""

from __future__ import annotations

from dataclasses import dataclass

from storygraph.store.graph_store import RETRIEVAL_QUERIES

BASE_MODES: tuple[str, ...] = tuple(RETRIEVAL_QUERIES)
STAGES: tuple[str, ...] = ("qtype", "reltype", "rerank")
DEFAULT_MODE = "onehop+qtype+reltype+rerank"


@dataclass(frozen=True)
class ModeSpec:
    base: str
    qtype: bool = False
    reltype: bool = False
    rerank: bool = False

    @property
    def name(self) -> str:
        stages = [s for s in STAGES if getattr(self, s)]
        return "+".join([self.base, *stages])


def parse_mode(mode: str) -> ModeSpec:
    """`onehop+reltype+qtype` → ModeSpec; raises ValueError for unknown parts."""
    parts = [p.strip().lower() for p in mode.split("+") if p.strip()]
    bases = [p for p in parts if p in BASE_MODES]
    unknown = [p for p in parts if p not in BASE_MODES and p not in STAGES]
    if len(bases) != 1 or unknown:
        raise ValueError(
            f"unknown retrieval mode {mode!r}: use one of {', '.join(BASE_MODES)}, optionally "
            f"followed by +{', +'.join(STAGES)} (e.g. {DEFAULT_MODE})"
        )
    return ModeSpec(bases[0], "qtype" in parts, "reltype" in parts, "rerank" in parts)


def canonical_mode(mode: str) -> str:
    return parse_mode(mode).name


def available_modes() -> list[str]:
    """The modes worth comparing, the default first (the UI's list, the eval's default)."""
    return [
        DEFAULT_MODE,
        "onehop",
        "onehop+rerank",
        "onehop+qtype",
        "onehop+reltype",
        "onehop+qtype+reltype",
        "onehop+qtype+rerank",
        "onehop+reltype+rerank",
        "directed2",
        "undirected2",
    ]
