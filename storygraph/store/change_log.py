"""The data directory's record of graph writes, so that every session knows which names changed.

Every write to embedded FalkorDB goes through `GraphStore.writing` under the data directory's
write lock; its outermost level appends a line to `<data_dir>/graph.changes` when it starts
(`begin TOKEN KIND`) and another when it is over (`end TOKEN KIND`). KIND says what the write
may change in the entity names (`GraphStore.entity_names`):

- `document:ID`: only the entities of document ID (a document written: merging is per story,
  so a new document adds entities of its own and changes no other story's);
- `any`: anything (a removal, an import, a relabelling, a link between two entities …): the
  names are read again whole.

A write that changes no name (summaries, story time marks) appends nothing. A write that starts
as one document and then does more (the ingest removing a pending leftover) appends a second
`begin TOKEN any` at that moment.

Why a begin line (docs/ISSUES.md#names-cache): a reader must never keep names older than a commit it
can already see. The old stamp was written only after the write, so a question asked between a
document's commit and that stamp read the new document's sentences with the old names, and a
writer that died there left every reader on the old names until the next write. Reading the
record first and the names after, as `ChangeReader` does, a reader that sees a write still open
reads that write's names again on its next question too, and keeps nothing older than it.

Writers are serialised by the write lock, so a `begin` after another `begin` with no `end`
means the first writer died: its write is over, with whatever it did. The file is started
afresh (a new file, so readers read the names whole once) when it grows past ROTATE_BYTES.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

CHANGES_FILE = "graph.changes"
ANY = "any"
NO_NAMES = ""
"""The kind of a write that changes no entity name: nothing is recorded for it."""
ROTATE_BYTES = 256 * 1024


def document_change(document_id: str) -> str:
    """The kind of a write that changes only the entities of this document."""
    return f"document:{document_id}"


def changed_document(kind: str) -> str | None:
    """The document of a `document:ID` kind; None for `any`."""
    prefix, _, document_id = kind.partition(":")
    return document_id if prefix == "document" and document_id else None


def _widened(kind: str, inner: str) -> str:
    """The kind of a write of `kind` that also does a write of `inner`."""
    if inner in (NO_NAMES, kind):
        return kind
    if kind == NO_NAMES:
        return inner
    return ANY


@dataclass
class _Open:
    token: str
    kind: str
    recorded: str = NO_NAMES  # the kind of the last begin line appended for this write


class ChangeLog:
    """The writing side: `record(kind)` around every write (re-entrant per thread)."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / CHANGES_FILE
        self._local = threading.local()

    def _stack(self) -> list[_Open]:
        stack: list[_Open] | None = getattr(self._local, "stack", None)
        if stack is None:
            stack = []
            self._local.stack = stack
        return stack

    @contextmanager
    def record(self, kind: str) -> Iterator[None]:
        """Record a write of `kind`; call it only while holding the data directory's write
        lock. A nested call widens the outermost write's kind (and records that at once)."""
        stack = self._stack()
        if stack:
            outer = stack[0]
            outer.kind = _widened(outer.kind, kind)
            self._begin(outer)
            yield
            return
        current = _Open(os.urandom(6).hex(), kind)
        stack.append(current)
        try:
            self._begin(current)
            yield
        finally:
            stack.clear()
            if current.recorded != NO_NAMES:
                self._append(f"end {current.token} {current.kind}\n")

    def _begin(self, current: _Open) -> None:
        if current.kind != current.recorded:
            if current.recorded == NO_NAMES:
                self._rotate_if_large()
            self._append(f"begin {current.token} {current.kind}\n")
            current.recorded = current.kind

    def _append(self, line: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:  # one short write: atomic append
            fh.write(line)

    def _rotate_if_large(self) -> None:
        try:
            if self.path.stat().st_size <= ROTATE_BYTES:
                return
        except FileNotFoundError:
            return
        fresh = self.path.with_name(f"{CHANGES_FILE}.{os.getpid()}.new")
        fresh.write_text("", encoding="utf-8")
        fresh.replace(self.path)  # a new file: readers read the names whole once


@dataclass
class Changes:
    """What a reader has to read again since its last look at the record."""

    whole: bool = False
    """Read every name again (first read, a restarted record, or a write of any kind)."""
    documents: list[str] = field(default_factory=list)
    """Read again the names of these documents (writes of them, finished or still open)."""
    settled: bool = True
    """No write was open: names read now can be kept until the record moves."""

    @property
    def none(self) -> bool:
        return not self.whole and not self.documents


class ChangeReader:
    """The reading side: `changes()` says what changed since the last call (one per store;
    not thread-safe on its own, the store calls it under its lock)."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / CHANGES_FILE
        self._inode: int | None = None
        self._offset = 0
        self._open: tuple[str, str] | None = None  # (token, kind) of a write not ended yet
        self._started = False

    def changes(self) -> Changes:
        try:
            with open(self.path, "rb") as fh:
                inode = os.fstat(fh.fileno()).st_ino
                if inode != self._inode:  # a new record (or the first look): start over
                    self._inode, self._offset, self._open = inode, 0, None
                    whole = True
                else:
                    whole = not self._started
                fh.seek(self._offset)
                data = fh.read()
        except FileNotFoundError:
            whole = not self._started or self._inode is not None
            self._inode, self._offset, self._open, data = None, 0, None, b""
        self._started = True
        complete = data[: data.rfind(b"\n") + 1]
        self._offset += len(complete)
        finished: list[str] = []
        for line in complete.decode("utf-8", errors="replace").splitlines():
            parts = line.split(" ", 2)
            if len(parts) != 3:
                whole = True  # not a line of ours: be safe
                continue
            verb, token, kind = parts
            if verb == "begin":
                if self._open is not None and self._open[0] != token:
                    finished.append(self._open[1])  # its writer died: the write is over
                self._open = (token, kind)
            else:
                finished.append(kind)
                if self._open is not None and self._open[0] == token:
                    self._open = None
        kinds = finished + ([self._open[1]] if self._open is not None else [])
        documents: list[str] = []
        for kind in kinds:
            document_id = changed_document(kind)
            if document_id is None:
                whole = True
            elif document_id not in documents:
                documents.append(document_id)
        return Changes(
            whole=whole, documents=[] if whole else documents, settled=self._open is None
        )
