"""Per-chunk extraction cache in the data directory: model work is never done twice.

Each chunk's extraction is saved the moment the model returns it, keyed by the chunk's text,
the model that read it and the extractor (name and version, the version covering its prompts).
An ingest that is cancelled, crashes or whose app is restarted resumes from the saved chunks,
and ingesting the same text again with the same model costs no model call. The graph is not
touched here: it still changes only at the ingest's final, all-or-nothing write.

Entries are small JSON files, `<data dir>/extraction_cache/<key[:2]>/<key>.json`, written
atomically (temporary file + rename), so a crash mid-write leaves either the old state or the
new entry, never half a file. Entries hold what does not depend on the document (names, types,
relation types); chunk ids and evidence sentences are rebuilt from the chunk being ingested.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storygraph.models import Chunk, ChunkExtraction, ExtractedEntity, ExtractedRelation
from storygraph.text.chunking import evidence_sentence

log = logging.getLogger(__name__)

CACHE_DIR_NAME = "extraction_cache"
FORMAT = 1


@dataclass(frozen=True)
class CacheStats:
    entries: int
    bytes: int


def cache_key(chunk_text: str, model: str, extractor: str, language: str) -> str:
    """The entry's key: a hash of the chunk text's hash, the model, the extractor, the language."""
    text_hash = hashlib.sha256(chunk_text.encode("utf-8")).hexdigest()
    joined = "\x1f".join((f"v{FORMAT}", text_hash, model, extractor, language))
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


def _to_entry(extraction: ChunkExtraction) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "entities": [[e.name, e.type] for e in extraction.entities],
        "relations": [
            [r.source, r.source_type, r.type, r.target, r.target_type]
            for r in extraction.relations
        ],
    }


def _from_entry(entry: dict[str, Any], chunk: Chunk) -> ChunkExtraction:
    result = ChunkExtraction(chunk=chunk)
    for name, kind in entry["entities"]:
        result.entities.append(ExtractedEntity(str(name), str(kind), chunk.id))
    for source, source_type, rel_type, target, target_type in entry["relations"]:
        result.relations.append(
            ExtractedRelation(
                source=str(source),
                source_type=str(source_type),
                type=str(rel_type),
                target=str(target),
                target_type=str(target_type),
                chunk_id=chunk.id,
                evidence=evidence_sentence(chunk.text, [str(source), str(target)]),
            )
        )
    return result


class ExtractionCache:
    """Saved chunk extractions for one model and one extractor, in a data directory."""

    def __init__(self, root: Path, *, model: str, extractor: str) -> None:
        self.root = root
        self.model = model
        self.extractor = extractor

    @classmethod
    def in_data_dir(cls, data_dir: Path, *, model: str, extractor: str) -> ExtractionCache:
        return cls(data_dir / CACHE_DIR_NAME, model=model, extractor=extractor)

    def _path(self, chunk: Chunk, language: str) -> Path:
        key = cache_key(chunk.text, self.model, self.extractor, language)
        return self.root / key[:2] / f"{key}.json"

    def get(self, chunk: Chunk, language: str) -> ChunkExtraction | None:
        """The saved extraction of this chunk, or None when there is none (or it is unreadable).

        An unreadable entry (a disk fault, a format from another version) is a miss: the chunk
        is extracted again and the entry rewritten; the log names the file.
        """
        path = self._path(chunk, language)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("extraction cache entry %s is unreadable (%s); extracting again", path, exc)
            return None
        if not isinstance(entry, dict) or entry.get("format") != FORMAT:
            log.warning("extraction cache entry %s has another format; extracting again", path)
            return None
        try:
            return _from_entry(entry, chunk)
        except (KeyError, TypeError, ValueError) as exc:
            log.warning("extraction cache entry %s is malformed (%s); extracting again", path, exc)
            return None

    def put(self, chunk: Chunk, language: str, extraction: ChunkExtraction) -> None:
        """Save an extraction at once (atomically). A chunk whose extraction failed has none:
        the extractor raised, and the document failed without a write."""
        path = self._path(chunk, language)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(_to_entry(extraction), ensure_ascii=False)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def cache_stats(data_dir: Path) -> CacheStats:
    """How many entries the data directory's extraction cache holds, and their size."""
    root = data_dir / CACHE_DIR_NAME
    entries = size = 0
    if root.is_dir():
        for path in root.glob("*/*.json"):
            if path.name.startswith("."):
                continue
            with contextlib.suppress(OSError):
                size += path.stat().st_size
                entries += 1
    return CacheStats(entries, size)


def clear_cache(data_dir: Path) -> CacheStats:
    """Delete every saved extraction of the data directory; returns what was removed."""
    removed = cache_stats(data_dir)
    root = data_dir / CACHE_DIR_NAME
    if root.is_dir():
        shutil.rmtree(root)
    return removed
