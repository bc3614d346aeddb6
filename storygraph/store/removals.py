"""Deleted stories kept for undo, one file each in the data directory, until the next ingest.

Deleting a story from the app (`GraphStore.delete_document_undoably`) first reads its whole
subgraph (the document, its chunks and their mentions, every entity and relation carrying its
provenance, story time or history, with all their properties, and the SAME_AS links of those
entities) and writes it here, then deletes; both under the data directory's write lock, so no
ingest can slip in between. `GraphStore.undo_delete` writes the subgraph back and removes the
file. The next ingest (a document committed) removes every file: the graph has moved on, and a
story ingested again is a new story (docs/ISSUES.md#delete-undo).

Files: `<data_dir>/deleted_stories/<graph>/deleted-<document id>.json`, written atomically
(a temporary file renamed over), so a crash leaves either the whole record or none.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storygraph.errors import StoreError

REMOVED_DIR = "deleted_stories"
FORMAT = "storygraph-deleted-story/1"
_PREFIX = "deleted-"


@dataclass(frozen=True)
class RemovalPreview:
    """What deleting a story will remove: counted before the user confirms."""

    document_id: str
    name: str
    chunks: int
    entities: int
    relations: int


@dataclass(frozen=True)
class RemovedStory:
    """A deleted story that can still be restored."""

    document_id: str
    name: str
    deleted_at: str
    chunks: int
    entities_deleted: int
    relations_deleted: int
    path: Path


def removed_dir(data_dir: Path, graph: str) -> Path:
    """Where the deleted stories of graph `graph` are kept."""
    return data_dir / REMOVED_DIR / graph


class RemovedStories:
    """The files of deleted stories of one graph (call under the store's write lock)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._read: dict[Path, tuple[tuple[int, int, int], RemovedStory]] = {}
        """What `stories` read of each file, by its inode, modification time and size (a copy
        is replaced whole, so a new one is a new inode): the Ingest tab lists them at every
        rerun, and a long story's copy is megabytes."""

    def path(self, document_id: str) -> Path:
        if not document_id or "/" in document_id or document_id.startswith("."):
            raise ValueError(f"not a document id: {document_id!r}")
        return self.directory / f"{_PREFIX}{document_id}.json"

    def save(
        self, subgraph: dict[str, Any], *, deleted_at: str, entities: int, relations: int
    ) -> RemovedStory:
        document = subgraph["document"]
        record = {
            "format": FORMAT,
            "document_id": document["id"],
            "name": document.get("name") or "",
            "deleted_at": deleted_at,
            "removed": {
                "chunks": len(subgraph["chunks"]),
                "entities": entities,
                "relations": relations,
            },
            "subgraph": subgraph,
        }
        path = self.path(str(document["id"]))
        self.directory.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(temporary, "w", encoding="utf-8") as fh:
            json.dump(record, fh, ensure_ascii=False)
            fh.flush()
            os.fsync(fh.fileno())
        temporary.replace(path)
        return self._story(record, path)

    def update_counts(self, document_id: str, *, entities: int, relations: int) -> RemovedStory:
        """Record what the delete really removed (the counts saved before it were a preview)."""
        record = self.load(document_id)
        return self.save(
            record["subgraph"],
            deleted_at=str(record["deleted_at"]),
            entities=entities,
            relations=relations,
        )

    def load(self, document_id: str) -> dict[str, Any]:
        path = self.path(document_id)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise StoreError(
                f"The deleted story {document_id} can no longer be restored: its saved copy "
                f"({path}) is gone.",
                "A story can be restored only until the next ingest; add the file again.",
            ) from exc
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise StoreError(
                f"The saved copy of the deleted story {document_id} cannot be read: {exc}",
                f"Add the story's file again; {path} can be removed.",
            ) from exc
        if not isinstance(record, dict) or record.get("format") != FORMAT:
            raise StoreError(
                f"{path} is not a saved deleted story ({FORMAT}).",
                "Add the story's file again; the file can be removed.",
            )
        return record

    def stories(self) -> list[RemovedStory]:
        """Every deleted story that can be restored, most recently deleted first."""
        if not self.directory.is_dir():
            return []
        found = []
        read: dict[Path, tuple[tuple[int, int, int], RemovedStory]] = {}
        for path in sorted(self.directory.glob(f"{_PREFIX}*.json")):
            try:
                info = path.stat()
            except FileNotFoundError:  # restored or forgotten meanwhile
                continue
            stamp = (info.st_ino, info.st_mtime_ns, info.st_size)
            known = self._read.get(path)
            if known is None or known[0] != stamp:
                document_id = path.name[len(_PREFIX) : -len(".json")]
                known = (stamp, self._story(self.load(document_id), path))
            read[path] = known
            found.append(known[1])
        self._read = read
        return sorted(found, key=lambda s: s.deleted_at, reverse=True)

    def forget(self, document_id: str) -> None:
        self.path(document_id).unlink(missing_ok=True)

    def forget_all(self) -> None:
        """The next ingest: no deleted story can be restored any more."""
        if self.directory.is_dir():
            for path in self.directory.glob(f"{_PREFIX}*.json"):
                path.unlink(missing_ok=True)

    @staticmethod
    def _story(record: dict[str, Any], path: Path) -> RemovedStory:
        removed = record.get("removed") or {}
        return RemovedStory(
            document_id=str(record["document_id"]),
            name=str(record.get("name") or ""),
            deleted_at=str(record.get("deleted_at") or ""),
            chunks=int(removed.get("chunks") or 0),
            entities_deleted=int(removed.get("entities") or 0),
            relations_deleted=int(removed.get("relations") or 0),
            path=path,
        )
