"""The merged entity and relation records one ingest hands to the store."""

from __future__ import annotations

from dataclasses import dataclass, field


def entity_key(document_id: str, name: str) -> str:
    """The store key of a story's entity: the same name in two stories is two nodes (design §3,
    docs/ISSUES.md §42). `document_id` is '' for an imported entity of no document."""
    return f"{document_id}:{name}"


def key_document(key: str) -> str:
    """The document part of an entity key (document ids hold no ':'; names may)."""
    return key.partition(":")[0]


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
    document_id: str = ""
    """The story (document) the entity belongs to; '' for an import of no document."""

    @property
    def key(self) -> str:
        return entity_key(self.document_id, self.id)


@dataclass
class RelationRecord:
    source: str
    type: str
    target: str
    chunk_ids: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    positions: list[str] = field(default_factory=list)
    """Where the story states it (storygraph.store.story_time positions), one per statement."""
    document_id: str = ""
    """The story both ends belong to (a relation never joins two stories)."""

    @property
    def source_key(self) -> str:
        return entity_key(self.document_id, self.source)

    @property
    def target_key(self) -> str:
        return entity_key(self.document_id, self.target)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.source, self.type, self.target)


@dataclass
class MergePlan:
    entities: list[EntityRecord]
    relations: list[RelationRecord]
    dropped: list[str] = field(default_factory=list)
    unlinked: list[str] = field(default_factory=list)
    """Names an extractor gave that take part in no fact: not stored (a node with no edge
    answers nothing and crowds the entity pages)."""
