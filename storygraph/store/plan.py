"""The merged entity and relation records one ingest hands to the store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace


def entity_key(document_id: str, name: str) -> str:
    """The store key of a story's entity: the same name in two stories is two nodes (design §3,
    docs/ISSUES.md#entity-keys). `document_id` is '' for an imported entity of no document."""
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


def unique_relations(relations: Sequence[RelationRecord]) -> Sequence[RelationRecord]:
    """The relations with each (source, type, target) of a story once, with the sources the
    relation write leaves on the edge (story-time positions are written apart, from the plan's
    own records): the first one's sources, then each later one's sources the edge lacked before
    it, with their evidence (null past the end of its evidence, as Cypher's index is). The
    same sequence when nothing repeats, as in every plan the merge makes.

    FalkorDB 4.16 crashes (signal 11, Record_GetType) when one UNWIND's MERGE meets the edge an
    earlier row of the same query created (docs/ISSUES.md#falkordb-same-query), so a write never
    sends one."""
    keys = [(r.document_id, r.source, r.type, r.target) for r in relations]
    if len(set(keys)) == len(keys):
        return relations
    folded: dict[tuple[str, str, str, str], RelationRecord] = {}
    for key, rel in zip(keys, relations, strict=True):
        kept = folded.get(key)
        if kept is None:
            folded[key] = replace(rel, chunk_ids=list(rel.chunk_ids), evidence=list(rel.evidence))
            continue
        known = set(kept.chunk_ids)
        fresh = [i for i, chunk_id in enumerate(rel.chunk_ids) if chunk_id not in known]
        kept.chunk_ids.extend(rel.chunk_ids[i] for i in fresh)
        more = [rel.evidence[i] if i < len(rel.evidence) else None for i in fresh]
        kept.evidence.extend(more)  # type: ignore[arg-type]
    return list(folded.values())
