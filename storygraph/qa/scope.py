"""A question's scope in a library of stories (issue #28, docs/ISSUES.md §42).

The user picks the stories a question is about (the chat's story picker, `ask --story`), or all
of them. Within that choice:

- the entity finder sees only the names of the chosen stories (`names_in_scope`);
- the question's names then narrow it (`narrow`): each story is counted by how many of the
  question's found names it has, and the stories with the most are kept. A name only one story
  has scopes the question to that story (「桃太郎のおじいさん」: 桃太郎 is only in the 桃太郎
  stories, so their おじいさん, not 瘤とり's); a name several stories share, asked alone, keeps all
  of them and the trace says so;
- retrieval starts from the kept stories' entities only (their keys) and sentence search reads
  only the kept stories, so an answer never cites a story outside its scope.

Entities a user linked across stories (SAME_AS, storygraph.library.identity) start retrieval
together when the twin's story is within the user's choice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from storygraph.errors import InputError
from storygraph.models import DocumentInfo


@dataclass(frozen=True)
class Scope:
    """Where a question's answer may come from."""

    keys: tuple[str, ...] = ()
    """The start entities' keys (empty: the question named no entity)."""
    documents: tuple[str, ...] = ()
    """The stories the answer may cite (empty: every story)."""
    note: str = ""
    """Why the scope is what it is, for the trace (empty when nothing was narrowed)."""


def story_ids(given: Sequence[str], documents: Sequence[DocumentInfo]) -> tuple[str, ...]:
    """The document ids of stories named by file name, name without extension, or id (the CLI's
    `--story`). Raises InputError naming the stories there are when one is unknown."""
    found: list[str] = []
    for story in given:
        wanted = story.strip()
        matches = [
            d.id
            for d in documents
            if wanted in (d.id, d.name) or wanted == d.name.rsplit(".", 1)[0]
        ]
        if not matches:
            known = ", ".join(sorted(d.name for d in documents)) or "(none yet)"
            raise InputError(f"no story called {wanted!r}.", f"The stories are: {known}")
        found.extend(matches)
    return tuple(dict.fromkeys(found))


def names_in_scope(names: Sequence[dict[str, Any]], stories: Sequence[str]) -> list[dict[str, Any]]:
    """The entity-name rows of the chosen stories (all rows when `stories` is empty)."""
    if not stories:
        return list(names)
    chosen = set(stories)
    return [row for row in names if row.get("document_id") in chosen]


def narrow(
    found: Sequence[str], names: Sequence[dict[str, Any]], stories: Sequence[str]
) -> Scope:
    """The scope of a question whose found start names are `found` (see the module doc).

    `names`: the rows of `names_in_scope`; `stories`: the user's choice (empty: all)."""
    if not found:
        return Scope(documents=tuple(stories))
    wanted = set(found)
    rows = [row for row in names if row["id"] in wanted and row.get("key")]
    holders: dict[str, set[str]] = {}
    for row in rows:
        holders.setdefault(str(row.get("document_id") or ""), set()).add(row["id"])
    if not holders:
        return Scope(documents=tuple(stories))
    counts = Counter({document: len(ids) for document, ids in holders.items()})
    best = max(counts.values())
    kept = sorted(d for d, n in counts.items() if n == best)
    keys = [row["key"] for row in rows if str(row.get("document_id") or "") in kept]
    allowed = set(stories)
    twins = [
        str(t)
        for row in rows
        if str(row.get("document_id") or "") in kept
        for t in row.get("twins") or []
        if not allowed or t.partition(":")[0] in allowed
    ]
    documents = list(dict.fromkeys([*kept, *(t.partition(":")[0] for t in twins)]))
    note = ""
    if len(holders) > 1 and len(kept) < len(holders):
        note = f"scoped to {len(kept)} of the {len(holders)} stories that have its names"
    elif len(kept) > 1:
        note = f"{len(kept)} stories have its names; the answer may draw on each of them"
    return Scope(
        keys=tuple(dict.fromkeys([*keys, *twins])),
        documents=tuple(d for d in documents if d) or tuple(stories),
        note=note,
    )
