"""How far the reader has read: an answer uses nothing past it (issue #41.2,
docs/ISSUES.md#chapters).

`QAOptions.until` (the chat's "I have read up to…" picker, `ask --until N`) is turned into a
`Reading` once a question, by `reading_for`: the ids of the chunks of chapter ≤ N of the
question's stories. Then:

- graph retrieval passes them to the one condition of the queries that read facts
  (storygraph.cypher `_read_so_far`): a fact no read chunk states is not a candidate, and of the
  others the store keeps only the read chunks and their sentences (`GraphStore._facts`);
- sentence search keeps only the read sentences of its index before it scores them
  (storygraph.qa.retrieval.passages `SentenceSearch.find`), so no passage (nor its neighbours) is
  later;
- the sources the answer reads, and so its citations, come from those two alone;
- the entity finder reads only the names some read chunk mentions (`Reading.names`): a name the
  story first writes later is neither found nor shown, nor does it decide the question's story
  (the answer's checks still know every name, so a model that names a later one is caught and
  its answer not shown, and no warning or verdict spells it out: `Reading.unread_name`,
  `Reading.named`, `Reading.support`; storygraph.qa.verify.gate);
- an answer that declines says "not in what you have read so far" (`SO_FAR`; the wording is
  put in by storygraph.qa.generation.checks.so_far).

The same `Reading` holds the entity pages (storygraph.library.entity_pages: relations, their
sentences, timeline, mentions and a summary composed from the read facts only) and the graph
tab's drawing (`GraphStore.graph_view(readable=…)`, `Reading.relation` on each row), which also
takes a chapter range (`since`).

A story stored before chapters were read has no chapter on its chunks: all of it is read, and
every answer's warnings say so (`Reading.warnings`), never silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from storygraph.errors import InputError
from storygraph.models import Support
from storygraph.store import GraphStore
from storygraph.store.story_time import parse_position
from storygraph.text.normalize import normalize_name

SO_FAR = {
    "ja": "これまでに読んだところには書かれていません。",
    "en": "Not in what you have read so far.",
}
"""The decline of an answer within a reading position, in place of `UNKNOWN`."""


@dataclass(frozen=True)
class Reading:
    """The reader's position: chapter `until` (None: the whole story) and the chunks read."""

    until: int | None = None
    chunks: frozenset[str] | None = None
    """The ids of the chunks read; None when everything is."""
    unchaptered: tuple[str, ...] = ()
    """Stories in scope stored before chapters were read (read whole)."""
    unread: frozenset[str] = frozenset()
    """The keys of the entities of the stories in scope that no read chunk mentions: their
    names first appear later (an entity with no chunk, an import's, is not among them)."""
    since: int = 0
    """The first chapter shown (the graph tab's chapter range); 0 for a reader's position."""
    stories: tuple[str, ...] = ()
    """The stories (document ids) the position is in; empty: every story."""

    @property
    def limited(self) -> bool:
        return self.chunks is not None

    def allows(self, chunk_id: str) -> bool:
        return self.chunks is None or chunk_id in self.chunks

    def shows(self, chunk_id: str) -> bool:
        """Whether a page or a drawing may show what this chunk says: a read chunk, or one of
        a story the position is not in (an answer reads its stories' chunks alone: `allows`)."""
        if self.allows(chunk_id):
            return True
        return bool(self.stories) and chunk_id.rpartition(":")[0] not in self.stories

    def knows(self, key: str) -> bool:
        """Whether the entity of this key is mentioned in what was read."""
        return key not in self.unread

    def names(self, rows: Sequence[dict[str, Any]]) -> Sequence[dict[str, Any]]:
        """The entity-name rows (`GraphStore.entity_names`) of the entities read; `rows` itself
        when none is unread (the same list: the name index built from it is kept)."""
        if not self.unread:
            return rows
        return _names_read(rows, self.unread)

    def unread_name(self, name: str) -> bool:
        """Whether `name` is the name of an entity first written past the position."""
        if not self.unread:
            return False
        wanted = normalize_name(name)
        return any(normalize_name(key.partition(":")[2]) == wanted for key in self.unread)

    def named(self, names: Sequence[str]) -> list[str]:
        """`names` as a warning may list them: one first written past the position is not
        spelled out (a model that knows the tale may write it; the answer is not shown, and its
        warning must not give it away either)."""
        return [NOT_YET if self.unread_name(n) else n for n in names]

    def support(self, support: Support) -> Support:
        """An answer's verdict as the reader sees it: a name first written past the position
        that the (not shown) model answer wrote is not spelled out in it (`named`)."""
        if not any(self.unread_name(n) for n in support.named):
            return support
        return replace(support, named=tuple(self.named(support.named)))

    def position_read(self, value: str) -> bool:
        """Whether a story position (storygraph.store.story_time) is in a chunk shown."""
        if self.chunks is None:
            return True
        parsed = parse_position(value)
        return parsed is not None and self.shows(parsed.chunk_id)

    def relation(self, row: Mapping[str, Any]) -> dict[str, Any] | None:
        """A relation row (`chunk_ids` with their aligned `evidence`, and story time's
        `positions`, `story_order`, `story_order_last`, `invalid_at` when it has them) with
        only what was read: None when no read chunk states it; the row as it is without a
        position (a story the position is not in is shown whole: `shows`)."""
        if self.chunks is None:
            return dict(row)
        chunk_ids = list(row.get("chunk_ids") or [])
        evidence = list(row.get("evidence") or [])
        keep = [i for i, c in enumerate(chunk_ids) if self.shows(c)]
        if not keep:
            return None
        kept = dict(row)
        kept["chunk_ids"] = [chunk_ids[i] for i in keep]
        if isinstance(row.get("evidence"), list):
            kept["evidence"] = [evidence[i] for i in keep if i < len(evidence)]
        if "positions" in row:
            kept["positions"] = [p for p in row.get("positions") or [] if self.position_read(p)]
        for name in ("story_order", "story_order_last", "invalid_at"):
            value = row.get(name) or ""
            if value and not self.position_read(value):
                kept[name] = ""  # stated (or superseded) later than what was read
        if row.get("story_order_last") and not kept.get("story_order_last"):
            # the last statement read (positions sort in story order), else the first
            kept["story_order_last"] = max(kept.get("positions") or [kept.get("story_order") or ""])
        return kept

    @property
    def warnings(self) -> list[str]:
        if self.until is None or not self.unchaptered:
            return []
        return [
            f"{', '.join(self.unchaptered)} was stored before chapters were read: all of it is "
            f"used, not only up to chapter {self.until}. Remove it and add it again to read it "
            "by chapter."
        ]


EVERYTHING = Reading()

NOT_YET = "(a name not in what you have read so far)"
"""How a warning lists a name first written past the reading position (`Reading.named`)."""

_last_names: list[tuple[Sequence[dict[str, Any]], frozenset[str], list[dict[str, Any]]]] = []
"""The last names list read and its read rows (`Reading.names`): the same rows come back for
the same list and position, so the name index and the support checker built from them are
kept between questions at one position (both are keyed by the list's identity)."""


def _names_read(
    rows: Sequence[dict[str, Any]], unread: frozenset[str]
) -> list[dict[str, Any]]:
    if _last_names and _last_names[0][0] is rows and _last_names[0][1] == unread:
        return _last_names[0][2]
    kept = [row for row in rows if row.get("key") not in unread]
    _last_names[:] = [(rows, unread, kept)]
    return kept


def reading_for(
    store: GraphStore, until: int | None, stories: Sequence[str] = (), *, since: int = 0
) -> Reading:
    """What the reader has read: the chunks up to chapter `until` of the `stories` (document
    ids; every story when empty) and the entities no such chunk mentions, read from the store
    once (a question, an entity page, a drawing); EVERYTHING when `until` is None and `since`
    is 0. `since`: the graph tab's chapter range starts there."""
    if until is None and not since:
        return EVERYTHING
    for name, value in (("read up to", until), ("to start from", since)):
        if value is not None and value < 0:
            raise InputError(
                f"the chapter {name} must be 0 or more, got {value}",
                "Give the number of the last chapter read (0: only what comes before "
                "chapter 1).",
            )
    rows = store.readable_chunks(until, stories, since=since)
    unchaptered = sorted({str(r["document_id"]) for r in rows if r.get("chapter") is None})
    if unchaptered:
        named = {d.id: d.name for d in store.list_documents()}
        unchaptered = [named.get(d, d) for d in unchaptered]
    chunks = frozenset(str(r["id"]) for r in rows)
    unread = frozenset(
        str(r["key"])
        for r in store.entity_chunks(stories)
        if r.get("chunk_ids") and not chunks.intersection(r["chunk_ids"])
    )
    return Reading(until, chunks, tuple(unchaptered), unread, since, tuple(stories))
