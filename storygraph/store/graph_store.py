"""GraphStore: the store contract (design §4) over any Runner.

Every method here runs the same Cypher on FalkorDB and Neo4j; only the schema DDL differs and
comes from the runner, and on FalkorDB a write's relations find their end nodes by the internal
ids its entity statements return instead of by key (`_write_graph`, docs/ISSUES.md#import-1m-edges).

Documents are all-or-nothing: a document is written with status `pending` and flipped to `ready`
last; retrieval ignores provenance from pending documents, and `cleanup_pending()` (run when a
store opens) removes whatever a crashed ingest left behind.

Every mutation holds the data directory's write lock (`storygraph.locks`), and a writer holds it
from `DOCUMENT_BEGIN` to `DOCUMENT_COMMIT`. So a pending document seen while holding the lock has
no writer any more: cleanup can never delete a document another process is still writing, and a
commit that finds its document gone is an error, never a silent "added".
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from storygraph import cypher as q
from storygraph.errors import StoreError
from storygraph.locks import write_lock
from storygraph.models import Chunk, DocumentInfo, Fact
from storygraph.store.change_log import (
    ANY,
    NO_NAMES,
    ChangeLog,
    ChangeReader,
    document_change,
)
from storygraph.store.gc_pause import collector_paused
from storygraph.store.history import HistoryEntry, entity_history, history_entry
from storygraph.store.plan import (
    EntityRecord,
    MergePlan,
    RelationRecord,
    entity_key,
    unique_relations,
)
from storygraph.store.removals import RemovalPreview, RemovedStories, RemovedStory
from storygraph.store.runner import Row, Runner, Statement
from storygraph.store.story_time import (
    EXCLUSIVE_RELATION_TYPES,
    TimedRelation,
    held_end,
    parse_position,
    story_times,
)

NAMES_CACHE_SECONDS = 5.0
"""Without a data directory (or on Neo4j, which other machines may write), entity names are
re-read after this long, so writes by another process show up."""

RETRIEVAL_QUERIES: dict[str, str] = {
    "onehop": q.RETRIEVE_ONEHOP,
    "directed2": q.RETRIEVE_DIRECTED_2HOP,
    "undirected2": q.RETRIEVE_UNDIRECTED_2HOP,
}


CHUNK_ROW = ("id", "index", "text", "start", "end", "chapter", "chapter_title")
"""A chunk's properties as q.CHUNKS_CREATE writes them: from a `Chunk` at ingest and from a
deleted story's copy at undo alike (one list, so a new property reaches both)."""
DELETING = "deleting"
"""The status of a document while it is deleted with undo (q.DOCUMENT_MARK_DELETING)."""


def _read(value: str, readable: Collection[str]) -> bool:
    """Whether the story position `value` (storygraph.store.story_time) is in a read chunk."""
    parsed = parse_position(value)
    return parsed is not None and parsed.chunk_id in readable


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def chunk_prefix(document_id: str) -> str:
    """Every chunk id of a document starts with this, so provenance can be matched by prefix."""
    return f"{document_id}:"


@dataclass(frozen=True)
class WriteCounts:
    entities_added: int
    entities_merged: int
    relations_added: int
    relations_merged: int


def _batched(rows: Sequence[dict[str, Any]], size: int = 500) -> Iterable[list[dict[str, Any]]]:
    for start in range(0, len(rows), size):
        yield list(rows[start : start + size])


def _own(
    prefix: str, ids: Sequence[str] | None, aligned: Sequence[Any] | None
) -> tuple[list[str], list[Any]]:
    """The chunk ids starting with `prefix` (one document's) with their aligned values."""
    values = list(aligned or [])
    keep = [i for i, chunk_id in enumerate(ids or []) if chunk_id.startswith(prefix)]
    return [str((ids or [])[i]) for i in keep], [values[i] if i < len(values) else "" for i in keep]


def _entity_row(record: EntityRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "key": record.key,
        "document_id": record.document_id,
        "type": record.label,
        "norm": record.norm,
        "rkey": record.rkey,
        "kana": record.kana,
        "chunk_ids": record.chunk_ids,
        "type_votes": record.type_votes,
        "aliases": record.aliases,
    }


class GraphStore:
    """The graph of documents, chunks, entities and relations (design §3)."""

    def __init__(
        self,
        runner: Runner,
        *,
        lock_dir: Path | None = None,
        ends_by_node_id: bool | None = None,
        removed_dir: Path | None = None,
    ) -> None:
        """`removed_dir`: where deleted stories are kept for undo (storygraph.store.removals);
        without it `delete_document_undoably` refuses. `ends_by_node_id`: whether a write's
        relations find their ends by internal node id (`_write_graph`); by default on FalkorDB
        only (Neo4j's ids are not stable), and never on Neo4j. False on FalkorDB runs the key
        path Neo4j runs (the tests compare the two)."""
        if ends_by_node_id and runner.engine != "falkordb":
            raise ValueError("relations by internal node id are for FalkorDB only")
        self.runner = runner
        self.lock_dir = lock_dir
        self._names_cache: list[Row] | None = None
        self._names_read_at = 0.0
        self._types_cache: list[tuple[str, int]] | None = None
        self._types_read_at = 0.0
        self._names_lock = threading.Lock()
        self._ends_by_node_id = (
            runner.engine == "falkordb" if ends_by_node_id is None else ends_by_node_id
        )
        logged = lock_dir is not None and runner.engine == "falkordb"
        self._change_log = ChangeLog(lock_dir) if logged and lock_dir else None
        self._change_reader = ChangeReader(lock_dir) if logged and lock_dir else None
        self._types_reader = ChangeReader(lock_dir) if logged and lock_dir else None
        self.removed = RemovedStories(removed_dir) if removed_dir is not None else None

    # --- lifecycle -----------------------------------------------------------------------------
    @property
    def engine(self) -> str:
        return self.runner.engine

    def describe(self) -> str:
        return self.runner.describe()

    def ensure_schema(self) -> None:
        for statement in self.runner.schema:
            try:
                self.runner.run(statement)
            except StoreError as exc:
                if "already indexed" not in str(exc) and "already exists" not in str(exc):
                    raise

    def close(self) -> None:
        self.runner.close()

    def _changed(self) -> None:
        if self._change_reader is None:  # else the change record says what to read again
            self._names_cache = None
        self._types_cache = None

    @contextmanager
    def writing(self, change: str = ANY) -> Iterator[None]:
        """Hold the data directory's write lock (re-entrant): every mutation runs inside it, and
        a caller can hold it across a read-check-write sequence. `change` says which entity
        names the write may change (storygraph.store.change_log: ANY, NO_NAMES or
        `document_change(id)`); on embedded FalkorDB it is recorded for every session."""
        with write_lock(self.lock_dir):
            if self._change_log is None:
                yield
                return
            with self._change_log.record(change):
                yield

    # --- documents -----------------------------------------------------------------------------
    def find_document_by_sha(self, sha256: str) -> Row | None:
        rows = self.runner.run(q.DOCUMENT_BY_SHA, {"sha256": sha256})
        return rows[0] if rows else None

    def list_documents(self) -> list[DocumentInfo]:
        return [
            DocumentInfo(
                id=row["id"],
                name=row["name"] or "",
                sha256=row["sha256"] or "",
                language=row["language"] or "",
                chars=int(row["chars"] or 0),
                uploaded_at=row["uploaded_at"] or "",
                status=row["status"] or "",
                chunks=int(row["chunks"] or 0),
            )
            for row in self.runner.run(q.DOCUMENTS_LIST)
        ]

    def pending_document_ids(self) -> list[str]:
        return [row["id"] for row in self.runner.run(q.PENDING_DOCUMENT_IDS)]

    def write_document(
        self, doc: DocumentInfo, chunks: Sequence[Chunk], plan: MergePlan
    ) -> WriteCounts:
        """Write a document, its chunks, entities and relations; `ready` only at the very end.

        Raises StoreError when the commit finds no document (it was removed meanwhile)."""
        with self.writing(document_change(doc.id)), collector_paused():
            counts = self._write_document(doc, chunks, plan)
            if self.removed is not None:  # deleted stories can be restored until an ingest
                self.removed.forget_all()
            return counts

    def _write_document(
        self, doc: DocumentInfo, chunks: Sequence[Chunk], plan: MergePlan
    ) -> WriteCounts:
        now = _now()
        statements: list[Statement] = [
            (
                q.DOCUMENT_BEGIN,
                {
                    "id": doc.id,
                    "name": doc.name,
                    "sha256": doc.sha256,
                    "language": doc.language,
                    "chars": doc.chars,
                    "chunks": len(chunks),
                    "now": now,
                },
            )
        ]
        chunk_rows = [{k: getattr(c, k) for k in CHUNK_ROW} for c in chunks]
        for rows in _batched(chunk_rows):
            statements.append((q.CHUNKS_CREATE, {"document_id": doc.id, "rows": rows}))
        mention_rows = [
            {"chunk_id": chunk_id, "entity_key": record.key}
            for record in plan.entities
            for chunk_id in record.chunk_ids
        ]
        mentions: list[Statement] = [
            (q.MENTIONS_CREATE, {"rows": rows}) for rows in _batched(mention_rows)
        ]
        existing_keys = self._existing_relation_keys(plan)
        history = entity_history(plan, self._entity_state(plan), existing_keys)
        after = self._story_time_statements(plan.relations)
        after.extend(self._history_statements(doc, history, now))
        after.append((q.DOCUMENT_COMMIT, {"id": doc.id}))
        committed = self._write_graph(statements, plan, mentions, after, now)
        if [row.get("id") for row in committed] != [doc.id]:
            self.delete_document(doc.id)  # the provenance written after the document went
            raise StoreError(
                f"The document {doc.name} ({doc.id}) was removed while it was being written, "
                "so its commit matched nothing.",
                "Nothing of it is kept; ingest it again.",
            )
        return self._counts(plan, len(existing_keys))

    def _write(self, statements: Sequence[Statement]) -> list[Row]:
        """Run a write batch; the rows of its last statement."""
        try:
            return self.runner.run_batch(statements)
        finally:
            self._changed()

    def _write_graph(
        self,
        before: list[Statement],
        plan: MergePlan,
        between: list[Statement],
        after: list[Statement],
        now: str,
    ) -> list[Row]:
        """Write `before`, the plan's entities, `between`, its relations and `after`, in that
        order; the rows of the last statement.

        Neo4j: one batch (one transaction), the relations matching their ends by key. FalkorDB
        (no transactions: a batch there is its statements run in order either way): the entity
        statements return their nodes' internal ids and the relations seek their ends by them
        (RELATION_UPSERT_BY_NODE_ID; matching both ends by the key index was most of a 1M-edge
        import, docs/ISSUES.md#import-1m-edges). The ids are valid for the whole write: the write
        lock keeps every other writer out, and this write deletes no node."""
        relations = unique_relations(plan.relations)
        if not self._ends_by_node_id:
            rows_by_type = self._relation_rows_by_type(relations)
            return self._write(
                [
                    *before,
                    *self._entity_statements(plan.entities, now),
                    *between,
                    *self._relation_statements(rows_by_type, now, q.RELATION_UPSERT),
                    *after,
                ]
            )
        try:
            if before:
                self.runner.run_batch(before)
            node_ids: dict[str, int] = {}
            entities = self._entity_statements(plan.entities, now, returning_ids=True)
            for rows in self.runner.run_each(entities):
                for row in rows:
                    node_ids[row["key"]] = row["node_id"]
            rows_by_type = self._relation_rows_by_node_id(relations, node_ids)
            writes = self._relation_statements(rows_by_type, now, q.RELATION_UPSERT_BY_NODE_ID)
            return self.runner.run_batch([*between, *writes, *after])
        finally:
            self._changed()

    def _node_ids(self, keys: Sequence[str]) -> dict[str, int]:
        """The internal ids of the entities of these keys that have a node."""
        found: dict[str, int] = {}
        for start in range(0, len(keys), 500):
            batch = list(keys[start : start + 500])
            for row in self.runner.run(q.ENTITY_NODE_IDS, {"keys": batch}):
                found[row["key"]] = row["node_id"]
        return found

    @staticmethod
    def _counts(plan: MergePlan, existing_relations: int) -> WriteCounts:
        """What a written plan added to the graph and what it merged into existing nodes."""
        merged = sum(1 for e in plan.entities if e.existing)
        return WriteCounts(
            entities_added=len(plan.entities) - merged,
            entities_merged=merged,
            relations_added=len(plan.relations) - existing_relations,
            relations_merged=existing_relations,
        )

    def _entity_statements(
        self, entities: Sequence[EntityRecord], now: str, *, returning_ids: bool = False
    ) -> list[Statement]:
        """The plan's entity writes; `returning_ids` (FalkorDB only): each returns its nodes'
        keys and internal ids."""
        statements: list[Statement] = []
        relabel: dict[str, list[str]] = {}
        for record in entities:
            if record.existing_label and record.existing_label != record.label:
                relabel.setdefault(record.existing_label, []).append(record.key)
        for old_label, keys in sorted(relabel.items()):
            query = q.render(q.ENTITY_REMOVE_LABEL, old_label=old_label)
            statements.append((query, {"keys": keys}))
        groups: dict[tuple[bool, str], list[dict[str, Any]]] = {}
        for record in entities:
            groups.setdefault((record.existing, record.label), []).append(_entity_row(record))
        templates = {
            True: q.ENTITY_UPSERT_RETURNING_IDS if returning_ids else q.ENTITY_UPSERT,
            False: q.ENTITY_CREATE_RETURNING_IDS if returning_ids else q.ENTITY_CREATE,
        }
        for (existing, label), label_rows in sorted(groups.items()):
            template = templates[existing]
            query = q.render(template, label=label)
            for rows in _batched(label_rows):
                statements.append((query, {"rows": rows, "now": now}))
        return statements

    @staticmethod
    def _relation_rows_by_type(
        relations: Sequence[RelationRecord],
    ) -> dict[str, list[dict[str, Any]]]:
        """RELATION_UPSERT's rows (ends by key) by relation type, each computed once per write."""
        by_type: dict[str, list[dict[str, Any]]] = {}
        for rel in relations:
            by_type.setdefault(rel.type, []).append(
                {
                    "source_key": rel.source_key,
                    "target_key": rel.target_key,
                    "chunk_ids": rel.chunk_ids,
                    "evidence": rel.evidence,
                }
            )
        return by_type

    def _relation_rows_by_node_id(
        self, relations: Sequence[RelationRecord], node_ids: dict[str, int]
    ) -> dict[str, list[dict[str, Any]]]:
        """RELATION_UPSERT_BY_NODE_ID's rows (ends by internal id) by relation type, in one pass
        over the relations. The ids of ends the plan's entities did not write (entities already
        in the graph that the plan leaves out) are read afterwards; a relation with an end of
        no node is left out, as RELATION_UPSERT's MATCH by key writes none."""
        by_type: dict[str, list[dict[str, Any]]] = {}
        unknown: list[tuple[RelationRecord, str, str]] = []
        for rel in relations:
            source, target = rel.source_key, rel.target_key
            a, b = node_ids.get(source), node_ids.get(target)
            if a is None or b is None:
                unknown.append((rel, source, target))
                continue
            by_type.setdefault(rel.type, []).append(
                {"a": a, "b": b, "chunk_ids": rel.chunk_ids, "evidence": rel.evidence}
            )
        if unknown:
            wanted = {key for _, s, t in unknown for key in (s, t)} - node_ids.keys()
            node_ids.update(self._node_ids(sorted(wanted)))
        for rel, source, target in unknown:
            a, b = node_ids.get(source), node_ids.get(target)
            if a is not None and b is not None:
                by_type.setdefault(rel.type, []).append(
                    {"a": a, "b": b, "chunk_ids": rel.chunk_ids, "evidence": rel.evidence}
                )
        return by_type

    @staticmethod
    def _relation_statements(
        rows_by_type: dict[str, list[dict[str, Any]]], now: str, template: str
    ) -> list[Statement]:
        statements: list[Statement] = []
        for rel_type, type_rows in sorted(rows_by_type.items()):
            query = q.render(template, rel_type=rel_type)
            for rows in _batched(type_rows):
                statements.append((query, {"rows": rows, "now": now}))
        return statements

    def _existing_relation_keys(self, plan: MergePlan) -> set[tuple[str, str, str]]:
        """The plan's relations already in the graph, as (source, type, target).

        Only relations between two entities the graph already has are looked up: an edge with
        a new end cannot exist yet (every relation of a new document, every relation of an
        import into new entities: 4.5-15 s of a 1M-edge import here,
        docs/ISSUES.md#import-1m-edges). Should the plan be wrong about an entity (another machine
        wrote it meanwhile, on Neo4j), RELATION_UPSERT still keeps the edge once with both
        provenances; only the counts of added and merged relations would be off."""
        new_ends = {e.key for e in plan.entities if not e.existing}
        by_type: dict[str, list[dict[str, Any]]] = {}
        for rel in plan.relations:
            source_key, target_key = rel.source_key, rel.target_key
            if source_key in new_ends or target_key in new_ends:
                continue
            by_type.setdefault(rel.type, []).append(
                {
                    "source": rel.source,
                    "target": rel.target,
                    "source_key": source_key,
                    "target_key": target_key,
                }
            )
        found: set[tuple[str, str, str]] = set()
        for rel_type, type_rows in by_type.items():
            query = q.render(q.RELATIONS_EXISTING, rel_type=rel_type)
            for rows in _batched(type_rows):
                for row in self.runner.run(query, {"rows": rows}):
                    found.add((row["source"], rel_type, row["target"]))
        return found

    # --- story time and entity history (store/story_time.py, library/entity_pages.py) ---------
    def _entity_state(self, plan: MergePlan) -> dict[str, Row]:
        """Stored type / aliases of the plan's existing entities, by name (one plan, one story)."""
        keys = [e.key for e in plan.entities if e.existing]
        if not keys:
            return {}
        return {row["id"]: row for row in self.runner.run(q.ENTITY_STATE, {"keys": keys})}

    def _time_context(self, keys: Sequence[str]) -> dict[tuple[str, str, str], list[str]]:
        """Positions of every timed relation touching these entities (by entity key)."""
        if not keys:
            return {}
        rows = self.runner.run(q.RELATIONS_TIME_CONTEXT, {"keys": list(keys)})
        return {
            (row["source"], row["type"], row["target"]): list(row["positions"] or [])
            for row in rows
        }

    @staticmethod
    def _time_set_statements(
        context: dict[tuple[str, str, str], list[str]], ids: Sequence[str]
    ) -> list[Statement]:
        """SETs of the derived story time of `context` (every timed relation touching `ids`).

        An exclusive relation is compared with all relations of its type at its held end, which
        the context holds only when that end is one of `ids`; the others keep their values (no
        relation of their group changed)."""
        timed = [TimedRelation(s, t, e, tuple(p)) for (s, t, e), p in sorted(context.items())]
        wanted = set(ids)
        by_type: dict[str, list[dict[str, Any]]] = {}
        for time_ in story_times(timed):
            held = held_end(time_.type, time_.source, time_.target, EXCLUSIVE_RELATION_TYPES)
            if held is not None and held not in wanted:
                continue
            by_type.setdefault(time_.type, []).append(
                {
                    "source": time_.source,
                    "target": time_.target,
                    "story_order": time_.story_order,
                    "story_order_last": time_.story_order_last,
                    "invalid_at": time_.invalid_at,
                }
            )
        statements: list[Statement] = []
        for rel_type, type_rows in sorted(by_type.items()):
            query = q.render(q.RELATION_TIME_SET, rel_type=rel_type)
            for rows in _batched(type_rows):
                statements.append((query, {"rows": rows}))
        return statements

    def _story_time_statements(self, relations: Sequence[RelationRecord]) -> list[Statement]:
        """Add the plan's positions, then set every derived story-time property they change."""
        timed = [r for r in relations if r.positions]
        if not timed:
            return []
        statements: list[Statement] = []
        by_type: dict[str, list[dict[str, Any]]] = {}
        for rel in timed:
            by_type.setdefault(rel.type, []).append(
                {"source": rel.source_key, "target": rel.target_key, "positions": rel.positions}
            )
        for rel_type, type_rows in sorted(by_type.items()):
            query = q.render(q.RELATION_POSITIONS_ADD, rel_type=rel_type)
            for rows in _batched(type_rows):
                statements.append((query, {"rows": rows}))
        ends = sorted({n for r in timed for n in (r.source_key, r.target_key)})
        context = self._time_context(ends)
        for rel in timed:
            known = context.setdefault((rel.source_key, rel.type, rel.target_key), [])
            known.extend(p for p in rel.positions if p not in known)
        statements.extend(self._time_set_statements(context, ends))
        return statements

    def refresh_story_time(self, keys: Sequence[str]) -> None:
        """Recompute story_order / story_order_last / invalid_at of relations touching the
        entities of these keys."""
        with self.writing(NO_NAMES):
            statements = self._time_set_statements(self._time_context(keys), keys)
            if statements:
                self.runner.run_batch(statements)

    def _history_statements(
        self, doc: DocumentInfo, history: Sequence[HistoryEntry], now: str
    ) -> list[Statement]:
        rows = [
            {"key": entity_key(doc.id, h.entity_id), "entry": history_entry(doc, h, now)}
            for h in history
        ]
        prefix = chunk_prefix(doc.id)
        statements: list[Statement] = [
            (q.ENTITY_HISTORY_WRITE, {"prefix": prefix, "rows": batch}) for batch in _batched(rows)
        ]
        changed = [entity_key(doc.id, h.entity_id) for h in history if h.kind != "referenced"]
        for start in range(0, len(changed), 500):
            statements.append((q.ENTITIES_MARK_STALE, {"keys": changed[start : start + 500]}))
        return statements

    def mark_summaries_stale(self, keys: Sequence[str]) -> None:
        if keys:
            with self.writing(NO_NAMES):
                self.runner.run(q.ENTITIES_MARK_STALE, {"keys": list(keys)})

    def entity_page_node(self, key: str) -> Row | None:
        rows = self.runner.run(q.ENTITY_PAGE_NODE, {"key": key})
        return rows[0] if rows else None

    def entity_relations(self, keys: Sequence[str]) -> list[Row]:
        """Every relation touching these entities (by key), both directions, each edge once."""
        if not keys:
            return []
        params = {
            "keys": list(keys),
            "structural": list(q.STRUCTURAL_TYPES),
            "show_hidden": False,
        }
        return self.runner.run(q.ENTITY_RELATIONS, params)

    def set_entity_summaries(
        self, rows: Sequence[dict[str, Any]], *, only_missing: bool = False
    ) -> None:
        """Store summaries: rows of key, summary, method, updated_at, sources."""
        query = q.ENTITY_SUMMARY_IMPORT if only_missing else q.ENTITY_SUMMARY_SET
        with self.writing(NO_NAMES):
            for batch in _batched(rows):
                self.runner.run(query, {"rows": batch})

    def entity_list(
        self, search: str = "", limit: int = 200, documents: Sequence[str] = ()
    ) -> list[Row]:
        """Entities matching a search (one row per story that has the name), best connected
        first; `documents` limits them to those stories."""
        from storygraph.text.normalize import normalize_name

        params = {
            "search": normalize_name(search) if search.strip() else "",
            "raw": search.strip(),
            "limit": int(limit),
            "documents": list(documents),
            "structural": list(q.STRUCTURAL_TYPES),
        }
        return self.runner.run(q.ENTITY_LIST, params)

    def delete_document(self, document_id: str) -> dict[str, int]:
        """Remove a document, its chunks and the provenance it contributed.

        Entities and relations go only when no other document (or import) supports them.
        """
        params = {
            "prefix": chunk_prefix(document_id),
            "document_id": document_id,
            "structural": list(q.STRUCTURAL_TYPES),
        }
        with self.writing():
            return self._delete_document(params)

    def _delete_document(self, params: dict[str, Any]) -> dict[str, int]:
        try:
            ends = self.runner.run(q.RELATIONS_ENDS_WITH_POSITIONS, params)
            timed = sorted({row[end] for row in ends for end in ("source", "target")})
            rels = self.runner.run(q.RELATIONS_DELETE_ONLY_SUPPORTED_BY, params)
            self.runner.run(q.RELATIONS_STRIP_PROVENANCE, params)
            self.runner.run(q.RELATIONS_STRIP_POSITIONS, params)
            ents = self.runner.run(q.ENTITIES_DELETE_ONLY_SUPPORTED_BY, params)
            touched = [row["key"] for row in self.runner.run(q.ENTITIES_STRIP_PROVENANCE, params)]
            self.reconcile_types(touched)
            self.refresh_story_time(timed)
            self.runner.run(q.ENTITY_HISTORY_STRIP, params)
            self.mark_summaries_stale(touched)
            self.runner.run(q.CHUNKS_AND_DOCUMENT_DELETE, params)
        finally:
            self._changed()
        return {
            "relations_deleted": int(rels[0]["deleted"]) if rels else 0,
            "entities_deleted": int(ents[0]["deleted"]) if ents else 0,
        }

    # --- delete with undo (storygraph.store.removals, docs/ISSUES.md#delete-undo) ------------
    @staticmethod
    def _document_params(document_id: str) -> dict[str, Any]:
        return {
            "prefix": chunk_prefix(document_id),
            "document_id": document_id,
            "structural": list(q.STRUCTURAL_TYPES),
        }

    def removal_preview(self, document_id: str) -> RemovalPreview | None:
        """What deleting the document would remove (None: no such document)."""
        rows = self.runner.run(q.DOCUMENT_REMOVAL_COUNTS, self._document_params(document_id))
        if not rows:
            return None
        row = rows[0]
        return RemovalPreview(
            document_id=document_id,
            name=str(row.get("name") or ""),
            chunks=int(row.get("chunks") or 0),
            entities=int(row.get("entities") or 0),
            relations=int(row.get("relations") or 0),
        )

    def document_subgraph(self, document_id: str) -> dict[str, Any] | None:
        """Everything of the document a delete removes or strips, with every property: the
        document, its chunks and mentions, the entities and relations carrying its provenance,
        story time or history, and the SAME_AS links of those entities (None: no document)."""
        params = self._document_params(document_id)
        documents = self.runner.run(q.DOCUMENT_PROPERTIES, params)
        if not documents:
            return None
        entities = []
        for row in self.runner.run(q.DOCUMENT_ENTITIES_PROPERTIES, params):
            labels = [label for label in row["labels"] or [] if label != "__Entity__"]
            if len(labels) != 1:
                raise StoreError(
                    f"The entity {row['key']} has the labels {row['labels']}, not one type, so "
                    "its story cannot be deleted with undo.",
                    "Run `python -m storygraph doctor`; delete it with `storygraph docs delete`.",
                )
            entities.append({"key": row["key"], "label": labels[0], "props": row["props"]})
        keys = [e["key"] for e in entities]
        return {
            "document": documents[0]["props"],
            "chunks": [
                row["props"] for row in self.runner.run(q.DOCUMENT_CHUNKS_PROPERTIES, params)
            ],
            "mentions": self.runner.run(q.DOCUMENT_MENTIONS, params),
            "entities": entities,
            "relations": self.runner.run(q.DOCUMENT_RELATIONS_PROPERTIES, params),
            "same_as": self.runner.run(q.SAME_AS_OF_ENTITIES, {"keys": keys}) if keys else [],
        }

    def _removed(self) -> RemovedStories:
        if self.removed is None:
            raise StoreError(
                "This store keeps no deleted stories (it was opened without a data directory), "
                "so a delete could not be undone.",
                "Open the store through storygraph.services.open_store.",
            )
        return self.removed

    def delete_document_undoably(self, document_id: str) -> RemovedStory:
        """Delete a document as `delete_document` does, keeping its subgraph for `undo_delete`.

        Read, saved and deleted under one hold of the write lock: no ingest (which commits under
        the same lock) can change the story between the copy and the delete. The copy is on disk
        before anything is deleted; a delete that fails half-way is rolled back from it."""
        removed = self._removed()
        with self.writing():
            preview = self.removal_preview(document_id)
            subgraph = self.document_subgraph(document_id)
            if preview is None or subgraph is None:
                raise StoreError(
                    f"There is no story {document_id} to delete (deleted meanwhile?).",
                    "Reload the page to see the stored stories.",
                )
            story = removed.save(
                subgraph,
                deleted_at=_now(),
                entities=preview.entities,
                relations=preview.relations,
            )
            try:
                marked = {"document_id": document_id, "status": DELETING}
                self.runner.run(q.DOCUMENT_MARK_DELETING, marked)
                result = self.delete_document(document_id)
            except Exception:
                self._restore(subgraph)  # the copy is kept should this fail too
                removed.forget(document_id)
                raise
            if (result["entities_deleted"], result["relations_deleted"]) != (
                preview.entities,
                preview.relations,
            ):
                story = removed.update_counts(
                    document_id,
                    entities=result["entities_deleted"],
                    relations=result["relations_deleted"],
                )
            return story

    def removed_stories(self) -> list[RemovedStory]:
        """Deleted stories that can still be restored (none after an ingest)."""
        return [] if self.removed is None else self.removed.stories()

    def undo_delete(self, document_id: str) -> RemovedStory:
        """Restore a story `delete_document_undoably` deleted: its chunks, entities, relations,
        provenance, story time, history and SAME_AS links, as they were. Refused once the
        copy is gone (an ingest ran since) or the story was stored again."""
        removed = self._removed()
        with self.writing():
            record = removed.load(document_id)
            subgraph = record["subgraph"]
            document = subgraph["document"]
            again = self.find_document_by_sha(str(document.get("sha256") or ""))
            if again and again.get("status") == "ready":
                removed.forget(document_id)
                raise StoreError(
                    f"{document.get('name')} was added again since it was deleted (as "
                    f"{again.get('name')}), so the deleted copy is not restored.",
                    "The story is in the list of stored stories.",
                )
            self._restore(subgraph)
            story = RemovedStories._story(record, removed.path(document_id))
            removed.forget(document_id)
            return story

    def _restore(self, subgraph: dict[str, Any]) -> None:
        """Write a `document_subgraph` back (a set union where parts of it are still there)."""
        document = subgraph["document"]
        document_id = str(document["id"])
        prefix = chunk_prefix(document_id)
        entities: list[dict[str, Any]] = subgraph["entities"]
        existing = set(self.entity_types_by_key([e["key"] for e in entities]))
        statements: list[Statement] = [
            (
                q.DOCUMENT_RESTORE,
                {
                    "document_id": document_id,
                    "props": {k: v for k, v in document.items() if k != "status"},
                },
            )
        ]
        chunk_rows = [{k: c.get(k) for k in CHUNK_ROW} for c in subgraph["chunks"]]
        for rows in _batched(chunk_rows):
            statements.append((q.CHUNKS_CREATE, {"document_id": document_id, "rows": rows}))
        by_label: dict[str, list[dict[str, Any]]] = {}
        provenance: list[dict[str, Any]] = []
        for entity in entities:
            props = dict(entity["props"])
            ids, votes = _own(prefix, props.pop("chunk_ids", None), props.pop("type_votes", None))
            history = [h for h in props.pop("history", None) or [] if h.startswith(prefix)]
            by_label.setdefault(entity["label"], []).append({"key": entity["key"], "props": props})
            provenance.append(
                {"key": entity["key"], "chunk_ids": ids, "type_votes": votes, "history": history}
            )
        for label, label_rows in sorted(by_label.items()):
            query = q.render(q.ENTITIES_RESTORE_MISSING, label=label)
            statements.extend((query, {"rows": rows}) for rows in _batched(label_rows))
        statements.extend(
            (q.ENTITIES_RESTORE_PROVENANCE, {"rows": rows, "prefix": prefix})
            for rows in _batched(provenance)
        )
        statements.extend(
            (q.MENTIONS_CREATE, {"rows": rows}) for rows in _batched(subgraph["mentions"])
        )
        by_type: dict[str, list[dict[str, Any]]] = {}
        timed: set[str] = set()
        for rel in subgraph["relations"]:
            props = dict(rel["props"])
            ids, evidence = _own(prefix, props.pop("chunk_ids", None), props.pop("evidence", None))
            props.pop("weight", None)
            positions = [p for p in props.pop("positions", None) or [] if p.startswith(prefix)]
            if positions:
                timed.update((rel["source_key"], rel["target_key"]))
            by_type.setdefault(rel["type"], []).append(
                {
                    "source_key": rel["source_key"],
                    "target_key": rel["target_key"],
                    "props": props,
                    "chunk_ids": ids,
                    "evidence": evidence,
                    "positions": positions,
                }
            )
        for rel_type, type_rows in sorted(by_type.items()):
            query = q.render(q.RELATIONS_RESTORE, rel_type=rel_type)
            statements.extend((query, {"rows": rows}) for rows in _batched(type_rows))
        statements.extend(
            (q.SAME_AS_RESTORE, {"rows": rows}) for rows in _batched(subgraph["same_as"])
        )
        try:
            self.runner.run_batch(statements)
            kept = sorted(existing)  # entities a delete only stripped: their type and summary
            self._reconcile_types(kept)
            self.refresh_story_time(sorted(timed))
            self.mark_summaries_stale(kept)
            self.runner.run(q.DOCUMENT_COMMIT, {"id": document_id})
        finally:
            self._changed()

    def cleanup_pending(self) -> list[str]:
        """Remove documents a crashed or failed ingest left half-written.

        Under the write lock, which every writer holds until its commit: a pending document seen
        here has no writer left (in this data directory), so deleting it loses nothing."""
        with self.writing():
            pending = self.pending_document_ids()
            for document_id in pending:
                self.delete_document(document_id)
        return pending

    def reconcile_types(self, keys: Sequence[str]) -> None:
        """Set each entity's type (and label) to its most frequent vote (entities by key)."""
        if not keys:
            return
        with self.writing():
            self._reconcile_types(keys)

    def _reconcile_types(self, keys: Sequence[str]) -> None:
        relabel: dict[tuple[str, str], list[str]] = {}
        for row in self.runner.run(q.ENTITY_VOTES, {"keys": list(keys)}):
            votes = [v for v in row["type_votes"] or [] if v]
            if not votes:
                continue
            best = Counter(votes).most_common(1)[0][0]
            if best != row["type"]:
                relabel.setdefault((row["type"] or "", best), []).append(row["key"])
        for (old, new), group in relabel.items():
            if old:
                self.runner.run(q.render(q.ENTITY_REMOVE_LABEL, old_label=old), {"keys": group})
            rows = [{"key": k, "type": new} for k in group]
            self.runner.run(q.render(q.ENTITY_TYPE_SET, label=new), {"rows": rows})

    # --- entities ------------------------------------------------------------------------------
    def entity_candidates(
        self, norms: Sequence[str], rkeys: Sequence[str], document_id: str = ""
    ) -> list[Row]:
        """The document's entities whose name or reading may match (merging is per story)."""
        if not norms and not rkeys:
            return []
        params = {"norms": list(norms), "rkeys": list(rkeys), "document_id": document_id}
        return self.runner.run(q.ENTITY_CANDIDATES, params)

    def entity_names(self) -> list[Row]:
        """Every entity's id (name), normalised name, type, key, document and SAME_AS twins' keys:
        one row per story that has a name, one list kept until the graph changes.

        On embedded FalkorDB every write on the data directory is recorded as it starts and
        ends (storygraph.store.change_log): the names are kept while the record does not move,
        and after another session wrote a document only that document's names are read again
        (a graph of 333,333 names took 3-20 s to read whole, docs/ISSUES.md#names-cache). The
        record is read before the names, and a write still open is read again at the next
        call, so no list older than a commit this store can see is kept. Elsewhere (Neo4j,
        which other machines may write) the names expire after NAMES_CACHE_SECONDS and own
        writes clear them."""
        with self._names_lock:
            if self._change_reader is None:
                fresh = time.monotonic() - self._names_read_at <= NAMES_CACHE_SECONDS
                if self._names_cache is None or not fresh:
                    self._names_cache = self.runner.run(q.ENTITY_NAMES)
                    self._names_read_at = time.monotonic()
                return self._names_cache
            changes = self._change_reader.changes()
            if changes.whole or self._names_cache is None:
                self._names_cache = self.runner.run(q.ENTITY_NAMES)
            elif changes.documents:
                self._names_cache = self._names_with_documents(self._names_cache, changes.documents)
            return self._names_cache

    def _names_with_documents(self, names: list[Row], document_ids: Sequence[str]) -> list[Row]:
        """`names` with the rows of these documents read again (the same list when they are
        unchanged, so nothing built from it is built again)."""
        wanted = set(document_ids)
        fresh = [
            row
            for document_id in document_ids
            for row in self.runner.run(q.ENTITY_NAMES_OF_DOCUMENT, {"document_id": document_id})
        ]
        kept = [row for row in names if row.get("document_id") not in wanted]
        if len(kept) + len(fresh) == len(names) and fresh == [
            row for row in names if row.get("document_id") in wanted
        ]:
            return names
        return kept + fresh

    def entity_types(self, ids: Sequence[str], keys: Sequence[str] = ()) -> dict[str, str]:
        """Type by name; `keys` (when given) limits the names to those entities."""
        rows = self.runner.run(q.ENTITY_TYPES_OF, {"ids": list(ids), "keys": list(keys)})
        return {row["id"]: row["type"] or "" for row in rows}

    def entity_types_in(self, ids: Sequence[str], documents: Sequence[str]) -> dict[str, str]:
        """Type by name of the entities so named in `documents` (and imported ones, of no
        document), found by key: in a library a name such as 山 is an entity of every story,
        and reading all of them took ~2 s a question at 1,000 stories
        (docs/ISSUES.md#library-speed)."""
        keys = [entity_key(d, name) for d in (*documents, "") for name in ids]
        rows = self.runner.run(q.ENTITY_TYPES_BY_KEYS, {"keys": keys})
        return {row["id"]: row["type"] or "" for row in rows}

    def set_same_as(self, a: str, b: str, *, same: bool, history: dict[str, str], at: str) -> None:
        """Link (`same`) or unlink two entities by key, appending `history` (key → stored entry)
        and marking both summaries stale (storygraph.library.identity)."""
        statements: list[Statement] = [
            (q.ENTITY_LINK if same else q.ENTITY_UNLINK, {"a": a, "b": b, "now": at})
        ]
        for key, entry in history.items():
            statements.append((q.ENTITY_HISTORY_APPEND, {"key": key, "entry": entry}))
        statements.append((q.ENTITIES_MARK_STALE, {"keys": [a, b]}))
        with self.writing():
            self._write(statements)

    def entity_types_by_key(self, keys: Sequence[str]) -> dict[str, str]:
        rows = self.runner.run(q.ENTITY_VOTES, {"keys": list(keys)}) if keys else []
        return {row["key"]: row["type"] or "" for row in rows}

    # --- retrieval -----------------------------------------------------------------------------
    def retrieve(
        self,
        mode: str,
        ids: Sequence[str],
        keys: Sequence[str] = (),
        readable: Collection[str] | None = None,
    ) -> list[Fact]:
        """Relations around the start nodes, with their real direction (design §5.2).

        Start nodes are the entities named `ids`, in every story that has them, or (with `keys`)
        only the entities of those keys: the question's scope. `readable`: the chunks the
        reader has read (storygraph.store.reading; None: all): a fact no such chunk states is not
        returned, and of the others only those chunks and their sentences."""
        try:
            query = RETRIEVAL_QUERIES[mode]
        except KeyError as exc:
            raise ValueError(f"unknown retrieval mode {mode!r}") from exc
        if not ids:
            return []
        params = {
            "ids": list(ids),
            "keys": list(keys),
            "structural": list(q.STRUCTURAL_TYPES),
            "show_hidden": False,  # a fact hidden as wrong is never an answer's (q.FACT_SHOWN)
            "readable": None if readable is None else sorted(readable),
        }
        return self._facts(self.runner.run(query, params), readable)

    def co_members(
        self,
        ids: Sequence[str],
        types: Sequence[str],
        keys: Sequence[str] = (),
        readable: Collection[str] | None = None,
    ) -> list[Fact]:
        """Edges of the same type into the same node as an edge from a start node (both
        stated within `readable`, as `retrieve`)."""
        if not ids or not types:
            return []
        params = {
            "ids": list(ids),
            "types": list(types),
            "keys": list(keys),
            "show_hidden": False,
            "readable": None if readable is None else sorted(readable),
        }
        return self._facts(self.runner.run(q.RETRIEVE_CO_MEMBERS, params), readable)

    def _facts(self, rows: Sequence[Row], readable: Collection[str] | None = None) -> list[Fact]:
        """Facts of retrieval rows, each with the chunks (and their sentences) of committed
        documents and, with `readable`, only the read ones; `invalid_at` kept only when the
        reader has read the statement that superseded the fact."""
        pending = tuple(chunk_prefix(d) for d in self.pending_document_ids())
        facts: dict[tuple[str, str, str], Fact] = {}
        for row in rows:
            chunk_ids = list(row.get("chunk_ids") or [])
            evidence = list(row.get("evidence") or [])
            if (pending or readable is not None) and chunk_ids:
                keep = [
                    i
                    for i, c in enumerate(chunk_ids)
                    if not c.startswith(pending or ("\0",)) and (readable is None or c in readable)
                ]
                if not keep:
                    continue  # supported only by a document not committed, or not read yet
                evidence = [evidence[i] for i in keep if i < len(evidence)]
                chunk_ids = [chunk_ids[i] for i in keep]
            invalid_at = row.get("invalid_at") or ""
            if invalid_at and readable is not None and not _read(invalid_at, readable):
                invalid_at = ""  # superseded later than the reader has read
            first = row.get("story_order") or ""
            last = row.get("story_order_last") or ""
            if last and readable is not None and not _read(last, readable):
                last = first  # stated again later than the reader has read (`ask --json`)
            key = (row["start"], row["type"], row["end"])
            # each chunk's sentence, aligned with its chunk ("" where the edge holds none)
            sentences = [evidence[i] if i < len(evidence) else "" for i in range(len(chunk_ids))]
            if key in facts:
                # The same statement in another story (or the same edge twice from a UNION):
                # one fact citing every story in scope that states it.
                known = facts[key]
                for chunk, sentence in zip(chunk_ids, sentences, strict=True):
                    if chunk not in known.chunk_ids:
                        known.chunk_ids.append(chunk)
                        known.sentences.append(sentence)
                continue
            facts[key] = Fact(
                start=row["start"],
                type=row["type"],
                end=row["end"],
                chunk_ids=chunk_ids,
                evidence=next((e for e in evidence if e), ""),
                sentences=sentences,
                story_order=first,
                story_order_last=last,
                invalid_at=invalid_at,
            )
        return list(facts.values())

    def relation_types(self) -> list[tuple[str, int]]:
        """Every relation type with its count (a whole-graph count: cached like the names,
        until the data directory's record of writes moves, or for NAMES_CACHE_SECONDS where
        writes are not recorded; own writes clear it). At 1,000 stories the count took 0.35 s
        a question when it expired every 5 s (docs/ISSUES.md#library-speed)."""
        with self._names_lock:
            if self._types_reader is not None:
                changes = self._types_reader.changes()
                fresh = changes.none and changes.settled
            else:
                fresh = time.monotonic() - self._types_read_at <= NAMES_CACHE_SECONDS
            if self._types_cache is None or not fresh:
                rows = self.runner.run(q.RELATION_TYPES, {"structural": list(q.STRUCTURAL_TYPES)})
                self._types_cache = [(row["type"], int(row["count"])) for row in rows]
                self._types_read_at = time.monotonic()
            return list(self._types_cache)

    def chunks(self, ids: Sequence[str]) -> dict[str, Row]:
        if not ids:
            return {}
        return {row["id"]: row for row in self.runner.run(q.CHUNKS_BY_IDS, {"ids": list(ids)})}

    def passage_documents(
        self, entity_keys: Sequence[str], documents: Sequence[str] = ()
    ) -> list[Row]:
        """Ready documents (id, sha256, chunks, language) mentioning these entities (by key);
        without keys, the ready documents of `documents`, every one if that is empty too."""
        if entity_keys:
            return self.runner.run(q.PASSAGE_DOCUMENTS_OF_ENTITIES, {"keys": list(entity_keys)})
        return self.runner.run(q.PASSAGE_DOCUMENTS_ALL, {"documents": list(documents)})

    def readable_chunks(
        self, until: int | None, documents: Sequence[str] = (), *, since: int = 0
    ) -> list[Row]:
        """The chunks (id, chapter, document_id) of the ready documents of `documents` (every
        one when empty) from chapter `since` up to chapter `until` (None: the last), and every
        chunk of a document stored before chapters were read (chapter None):
        storygraph.store.reading names those."""
        params = {
            "until": None if until is None else int(until),
            "since": int(since),
            "documents": list(documents),
        }
        return self.runner.run(q.CHUNKS_UNTIL_CHAPTER, params)

    def entity_chunks(self, documents: Sequence[str] = ()) -> list[Row]:
        """Each entity's key and the chunks it is mentioned in, of the entities of `documents`
        (every one when empty): the reading position's entities read."""
        return self.runner.run(q.ENTITY_CHUNKS, {"documents": list(documents)})

    def document_chapters(self, document_id: str) -> list[tuple[int, str]]:
        """A story's chapters (number, heading) in order; empty for one stored before chapters
        were read."""
        rows = self.runner.run(q.DOCUMENT_CHAPTERS, {"document_id": document_id})
        return [(int(row["chapter"]), str(row.get("title") or "")) for row in rows]

    def document_chunks(self, document_ids: Sequence[str]) -> list[Row]:
        """Every chunk of these documents (id, text, index, document, document_id), in order."""
        if not document_ids:
            return []
        return self.runner.run(q.CHUNKS_OF_DOCUMENTS, {"ids": list(document_ids)})

    # --- whole graph ---------------------------------------------------------------------------
    def graph_view(
        self,
        *,
        limit: int = 300,
        document_id: str = "",
        types: Sequence[str] = (),
        search: str = "",
        readable: Collection[str] | None = None,
    ) -> list[Row]:
        """The whole graph's relations for the graph tab; `readable`: only those some of these
        chunks state (the reading position or chapter range, storygraph.store.reading, whose
        `Reading.relation` trims each row to them; None: all)."""
        from storygraph.text.normalize import normalize_name

        params = {
            "structural": list(q.STRUCTURAL_TYPES),
            "prefix": chunk_prefix(document_id) if document_id else "",
            "types": list(types),
            "search": normalize_name(search) if search.strip() else "",
            "limit": int(limit),
            "show_hidden": False,
            "readable": None if readable is None else sorted(readable),
        }
        return self.runner.run(q.GRAPH_VIEW, params)

    # --- facts hidden as wrong (storygraph.library.wrong_facts) -------------------------------
    def set_fact_hidden(
        self,
        source_key: str,
        rel_type: str,
        target_key: str,
        *,
        hidden: bool,
        at: str,
        history: Callable[[Row], dict[str, str]],
    ) -> Row | None:
        """Hide (or show again) the relation `source_key` -[rel_type]→ `target_key`, appending
        the entries `history(row)` gives (entity key → stored entry) and marking both ends'
        summaries stale; the relation's row (start, end, keys, evidence), None when there is
        no such relation. `rel_type` must be a stored type (sanitised: `q.render` refuses
        anything else)."""
        query = q.render(q.RELATION_SET_HIDDEN, rel_type=rel_type)
        params = {
            "source_key": source_key,
            "target_key": target_key,
            "hidden": hidden,
            "at": at,
        }
        with self.writing(NO_NAMES):
            try:
                rows = self.runner.run(query, params)
                if not rows:
                    return None
                statements: list[Statement] = [
                    (q.ENTITY_HISTORY_APPEND, {"key": key, "entry": entry})
                    for key, entry in history(rows[0]).items()
                ]
                statements.append((q.ENTITIES_MARK_STALE, {"keys": [source_key, target_key]}))
                self.runner.run_batch(statements)
                return rows[0]
            finally:
                self._changed()

    def hidden_facts(self, keys: Sequence[str] = ()) -> list[Row]:
        """Relations hidden as wrong (touching these entity keys; all without), latest first."""
        return self.runner.run(q.HIDDEN_RELATIONS, {"keys": list(keys)})

    def export_graph(self) -> dict[str, Any]:
        nodes = [
            {k: v for k, v in row.items() if v not in (None, [])}
            for row in self.runner.run(q.EXPORT_NODES)
        ]
        rels = [
            {k: v for k, v in row.items() if v not in (None, [])}
            for row in self.runner.run(
                q.EXPORT_RELATIONSHIPS, {"structural": list(q.STRUCTURAL_TYPES)}
            )
        ]
        return {"nodes": nodes, "relationships": rels}

    def stats(self) -> dict[str, int]:
        rows = self.runner.run(q.STATS, {"structural": list(q.STRUCTURAL_TYPES)})
        row = rows[0] if rows else {}
        return {k: int(row.get(k) or 0) for k in ("documents", "chunks", "entities", "relations")}

    def reset(self) -> None:
        with self.writing():
            try:
                self.runner.run(q.RESET)
            finally:
                self._changed()
            if self.removed is not None:  # nothing to restore into an emptied graph
                self.removed.forget_all()

    def write_plan(self, plan: MergePlan) -> WriteCounts:
        """Write entities and relations that belong to no document (graph import)."""
        with self.writing(), collector_paused():
            now = _now()
            existing_keys = self._existing_relation_keys(plan)
            after = self._story_time_statements(plan.relations)
            # Existing entities that gained a relation need a new summary (new ones have none).
            existing = {e.key for e in plan.entities if e.existing}
            grown: list[str] = []
            if existing:  # an import into new entities only has none (1M edges: 1-3 s)
                new = [r for r in plan.relations if r.key not in existing_keys]
                grown = sorted({n for r in new for n in (r.source_key, r.target_key)} & existing)
            if grown:
                after.append((q.ENTITIES_MARK_STALE, {"keys": grown}))
            self._write_graph([], plan, [], after, now)
            return self._counts(plan, len(existing_keys))
