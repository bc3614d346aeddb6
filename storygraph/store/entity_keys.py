"""The one-time split of a store of the old shape: entities keyed by name across stories.

Before issue #28 an entity was one node per name for the whole store, so 「おじいさん」 of 桃太郎
and of 瘤とり were one node. Now an entity belongs to the story (document) that mentions it and
carries `key` = document id + ':' + name (storygraph.store.plan.entity_key). A store written by
the old code opens through `split_legacy_entities` (called by `services.open_store`):

- an entity's stories are the documents of its chunk ids and of its relations' chunk ids;
- an entity of one story (or of none: an import) only gains its key and document;
- an entity of several stories stays as the first story's node and gets a copy per other story,
  each with that story's chunk ids, type votes and history (the summary, made from all of them,
  is marked stale); its mentions move to the copy of their chunk's story;
- every relation touching a split entity is re-made per story between that story's nodes, with
  the chunk ids, evidence and positions of that story (a relation of no document stays with the
  first story's node).

Nothing is dropped: every relation's chunk ids land on exactly one of its parts, so the count of
(relation, chunk) citations is the same before and after (tests/integration/test_entity_keys.py).
It runs when the store has an entity without a key (one indexed-less look, `LIMIT 1`, per
open: no marker node, so the graph holds nothing but documents, chunks and entities), and what
it did is logged as a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from storygraph import cypher as q
from storygraph.store.graph_store import GraphStore
from storygraph.store.plan import entity_key
from storygraph.store.runner import Row, Statement
from storygraph.text.sanitize import sanitize_label

log = logging.getLogger(__name__)


@dataclass
class SplitReport:
    """What the split did (all zero for a store already in the new shape)."""

    entities_keyed: int = 0
    entities_split: int = 0
    copies_made: int = 0
    relations_split: int = 0
    names: list[str] = field(default_factory=list)
    """Names of the split entities (the first 20)."""

    def line(self) -> str:
        return (
            f"entity keys: {self.entities_keyed} entities keyed, {self.entities_split} split "
            f"into {self.copies_made} more per-story nodes, {self.relations_split} relations "
            f"split" + (f" ({', '.join(self.names)})" if self.names else "")
        )


def _document_of(chunk_id: str) -> str:
    return chunk_id.rpartition(":")[0]


def _ordered_documents(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(_document_of(v) for v in values if ":" in v))


def _of_document(values: Sequence[Any], prefix: str) -> list[int]:
    return [i for i, v in enumerate(values) if isinstance(v, str) and v.startswith(prefix)]


def _pick(values: Sequence[Any] | None, indexes: Sequence[int]) -> list[Any]:
    values = list(values or [])
    return [values[i] for i in indexes if i < len(values)]


def split_legacy_entities(store: GraphStore) -> SplitReport:
    """Split the entities of an old-shape store per story (see the module docstring); once."""
    runner = store.runner
    if not runner.run(q.LEGACY_ENTITY_ANY):
        return SplitReport()
    with store.writing():
        if not runner.run(q.LEGACY_ENTITY_ANY):
            return SplitReport()  # another process split it meanwhile
        for statement in runner.schema_drops:
            runner.run(statement)
        if runner.schema_drops:
            store.ensure_schema()  # the name index the dropped constraint stood in for
        report = _split(store)
    if report.entities_keyed:
        log.warning("store migrated: %s", report.line())
    return report


def _split(store: GraphStore) -> SplitReport:
    runner = store.runner
    entities = runner.run(q.LEGACY_ENTITIES)
    report = SplitReport()
    if not entities:
        return report
    relations = runner.run(q.LEGACY_RELATIONS, {"structural": list(q.STRUCTURAL_TYPES)})
    touching: dict[str, list[Row]] = {}
    for rel in relations:
        touching.setdefault(rel["source"], []).append(rel)
        touching.setdefault(rel["target"], []).append(rel)
    documents_of: dict[str, list[str]] = {}
    for entity in entities:
        props = entity["props"] or {}
        chunk_ids = list(props.get("chunk_ids") or [])
        rels = touching.get(entity["id"], [])
        rel_chunks = [c for r in rels for c in (r["props"] or {}).get("chunk_ids") or []]
        documents_of[entity["id"]] = _ordered_documents(chunk_ids + rel_chunks) or [""]

    statements: list[Statement] = []
    key_rows: list[dict[str, Any]] = []
    copies: dict[str, list[dict[str, Any]]] = {}
    mention_rows: list[dict[str, Any]] = []
    for entity in entities:
        name, props = entity["id"], dict(entity["props"] or {})
        documents = documents_of[name]
        for i, document_id in enumerate(documents):
            prefix = f"{document_id}:"
            own = _of_document(props.get("chunk_ids") or [], prefix)
            part = {
                "chunk_ids": _pick(props.get("chunk_ids"), own),
                "type_votes": _pick(props.get("type_votes"), own),
                "history": [h for h in props.get("history") or [] if h.startswith(prefix)],
            }
            if len(documents) == 1:
                part = {k: list(props.get(k) or []) for k in part}
            key = entity_key(document_id, name)
            stale = len(documents) > 1 or bool(props.get("summary_stale"))
            if i == 0:
                key_rows.append(
                    {"id": name, "key": key, "document_id": document_id, "stale": stale, **part}
                )
                continue
            copy = {k: v for k, v in props.items() if v is not None}
            copy.update(part, key=key, document_id=document_id, summary_stale=True)
            label = str(props.get("type") or "")
            label = label if q.IDENTIFIER_RE.fullmatch(label) else sanitize_label(label)
            copies.setdefault(label, []).append({"key": key, "props": copy})
            mention_rows.append(
                {
                    "from_key": entity_key(documents[0], name),
                    "to_key": key,
                    "document_id": document_id,
                }
            )
        if len(documents) > 1:
            report.entities_split += 1
            report.copies_made += len(documents) - 1
            if len(report.names) < 20:
                report.names.append(name)
    report.entities_keyed = len(entities)

    statements.append((q.LEGACY_KEYS_SET, {"rows": key_rows}))
    for label, rows in sorted(copies.items()):
        statements.append((q.render(q.ENTITY_COPY_CREATE, label=label), {"rows": rows}))
    if mention_rows:
        statements.append((q.MENTIONS_COPY, {"rows": mention_rows}))
        statements.append((q.MENTIONS_DROP, {"rows": mention_rows}))
    statements.extend(_relation_statements(relations, documents_of, report))
    runner.run_batch(statements)
    split = [n for n, documents in documents_of.items() if len(documents) > 1]
    # story_order / invalid_at are derived from a relation's positions, now per story
    store.refresh_story_time([entity_key(d, n) for n in split for d in documents_of[n]])
    return report


def _relation_statements(
    relations: Sequence[Row], documents_of: dict[str, list[str]], report: SplitReport
) -> list[Statement]:
    """Delete each relation touching a split entity and make it again per story."""

    def first_key(name: str) -> str:
        return entity_key(documents_of[name][0], name)

    def key_in(name: str, document_id: str) -> str:
        found = documents_of[name]
        return entity_key(document_id if document_id in found else found[0], name)

    deletes: dict[str, list[dict[str, str]]] = {}
    creates: dict[str, list[dict[str, Any]]] = {}
    for rel in relations:
        source, target, props = rel["source"], rel["target"], dict(rel["props"] or {})
        if len(documents_of[source]) == 1 and len(documents_of[target]) == 1:
            continue
        chunk_ids = list(props.get("chunk_ids") or [])
        deletes.setdefault(rel["type"], []).append(
            {"source_key": first_key(source), "target_key": first_key(target)}
        )
        documents = _ordered_documents(chunk_ids) or [""]
        if len(documents) > 1:
            report.relations_split += 1
        for document_id in documents:
            prefix = f"{document_id}:"
            part = dict(props)
            if document_id:
                own = _of_document(chunk_ids, prefix)
                part["chunk_ids"] = _pick(chunk_ids, own)
                part["evidence"] = _pick(props.get("evidence"), own)
                part["weight"] = len(own)
                part["positions"] = [
                    p for p in props.get("positions") or [] if p.startswith(prefix)
                ]
            creates.setdefault(rel["type"], []).append(
                {
                    "source_key": key_in(source, document_id),
                    "target_key": key_in(target, document_id),
                    "props": {k: v for k, v in part.items() if v is not None},
                }
            )
    statements: list[Statement] = []
    for rel_type, rows in sorted(deletes.items()):
        statements.append((q.render(q.RELATIONS_DELETE_BY_KEYS, rel_type=rel_type), {"rows": rows}))
    for rel_type, rows in sorted(creates.items()):
        query = q.render(q.RELATIONS_CREATE_WITH_PROPS, rel_type=rel_type)
        statements.append((query, {"rows": rows}))
    return statements
