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
- an answer that declines says "not in what you have read so far" (`so_far`).

A story stored before chapters were read has no chapter on its chunks: all of it is read, and
every answer's warnings say so (`Reading.warnings`), never silently.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from storygraph.errors import InputError
from storygraph.store import GraphStore

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

    def allows(self, chunk_id: str) -> bool:
        return self.chunks is None or chunk_id in self.chunks

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


def reading_for(store: GraphStore, until: int | None, stories: Sequence[str] = ()) -> Reading:
    """The chunks read up to chapter `until` of the `stories` (document ids; every story when
    empty), read from the store once; EVERYTHING when `until` is None."""
    if until is None:
        return EVERYTHING
    if until < 0:
        raise InputError(
            f"the chapter read up to must be 0 or more, got {until}",
            "Give the number of the last chapter read (0: only what comes before chapter 1).",
        )
    rows = store.readable_chunks(until, stories)
    unchaptered = sorted({str(r["document_id"]) for r in rows if r.get("chapter") is None})
    if unchaptered:
        named = {d.id: d.name for d in store.list_documents()}
        unchaptered = [named.get(d, d) for d in unchaptered]
    return Reading(until, frozenset(str(r["id"]) for r in rows), tuple(unchaptered))


def so_far(text: str, reading: Reading) -> str:
    """`text` with the answer's "the story does not say" (`UNKNOWN`, the fixed decline, which
    the model is told to write too: in either language, anywhere, in any case, with or without
    its stop) as "not in what you have read so far" when the reader has a position."""
    from storygraph.qa.generation.answer import (
        UNKNOWN,  # imported here: the answer's modules import this
    )

    if reading.until is None:
        return text
    for lang, unknown in UNKNOWN.items():
        stem = re.escape(unknown.rstrip("。."))
        text = re.sub(stem, SO_FAR[lang].rstrip("。."), text, flags=re.IGNORECASE)
    return text
