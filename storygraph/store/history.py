"""What one document did to each entity it mentions: created, updated or referenced it.

Graphiti's citation chain, per document: a document *created* an entity that was not in the
graph, *updated* one when it added a relation touching it, a new alias or changed its type, and
otherwise only *referenced* it (mentioned it, or stated again what the graph already knew).
`changes` says what, in short lines for the entity page. Computed from the merge plan and the
graph's state just before the write; stored in the entity's `history` list, one entry per
document: `"<document id>:" + JSON`, so a document delete strips its entries by prefix, like
chunk ids.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Any, Literal

from storygraph.models import DocumentInfo
from storygraph.store.plan import MergePlan, RelationRecord

Kind = Literal["created", "updated", "referenced"]
MAX_CHANGES = 40


@dataclass(frozen=True)
class HistoryEntry:
    entity_id: str
    kind: Kind
    changes: tuple[str, ...]


def relation_line(rel: RelationRecord) -> str:
    return f"{rel.source} -[{rel.type}]→ {rel.target}"


def entity_history(
    plan: MergePlan,
    state: Mapping[str, Mapping[str, Any]],
    existing_relations: Set[tuple[str, str, str]],
) -> list[HistoryEntry]:
    """One entry per entity of the plan. `state`: id → stored type / aliases of existing
    entities; `existing_relations`: keys of the plan's relations already in the graph."""
    touching: dict[str, list[RelationRecord]] = {}
    for rel in plan.relations:
        touching.setdefault(rel.source, []).append(rel)
        touching.setdefault(rel.target, []).append(rel)
    entries: list[HistoryEntry] = []
    for record in plan.entities:
        rels = touching.get(record.id, [])
        added = [f"+ {relation_line(r)}" for r in rels if r.key not in existing_relations]
        restated = [f"= {relation_line(r)}" for r in rels if r.key in existing_relations]
        if not record.existing:
            changes = [f"type {record.label}"]
            changes += [f"alias {a}" for a in record.aliases]
            entries.append(
                HistoryEntry(record.id, "created", tuple((changes + added)[:MAX_CHANGES]))
            )
            continue
        stored = state.get(record.id, {})
        old_aliases = set(stored.get("aliases") or [])
        old_type = str(stored.get("type") or record.existing_label or "")
        changes = []
        if old_type and record.label != old_type:
            changes.append(f"type {old_type} → {record.label}")
        changes += [f"alias {a}" for a in record.aliases if a not in old_aliases and a != record.id]
        changes += added
        if changes:
            entries.append(HistoryEntry(record.id, "updated", tuple(changes[:MAX_CHANGES])))
        else:
            entries.append(
                HistoryEntry(
                    record.id, "referenced", tuple((restated or ["mentioned"])[:MAX_CHANGES])
                )
            )
    return entries


def history_entry(doc: DocumentInfo, entry: HistoryEntry, at: str) -> str:
    """The stored form of one history entry (see module docstring)."""
    body = {
        "document_name": doc.name,
        "kind": entry.kind,
        "changes": list(entry.changes),
        "at": at,
    }
    return f"{doc.id}:" + json.dumps(body, ensure_ascii=False, sort_keys=True)


def parse_history(stored: str) -> dict[str, Any] | None:
    """One stored entry back as document_id, document_name, kind, changes, at; None if broken."""
    document_id, sep, body = stored.partition(":")
    if not sep:
        return None
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    return {
        "document_id": document_id,
        "document_name": str(data.get("document_name") or ""),
        "kind": str(data.get("kind") or ""),
        "changes": [str(c) for c in data.get("changes") or []],
        "at": str(data.get("at") or ""),
    }
