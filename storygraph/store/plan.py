"""The merged entity and relation records one ingest hands to the store."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class EntityRecord:
    id: str
    label: str
    norm: str
    rkey: str | None
    kana: bool
    chunk_ids: list[str] = field(default_factory=list)
    type_votes: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    existing: bool = False
    existing_label: str | None = None


@dataclass
class RelationRecord:
    source: str
    type: str
    target: str
    chunk_ids: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    positions: list[str] = field(default_factory=list)
    """Where the story states it (storygraph.store.story_time positions), one per statement."""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.source, self.type, self.target)


@dataclass
class MergePlan:
    entities: list[EntityRecord]
    relations: list[RelationRecord]
    dropped: list[str] = field(default_factory=list)
