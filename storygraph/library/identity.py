"""Cross-story identity, only by a deliberate act (design §3, docs/ISSUES.md#entity-keys).

Two stories' entities are two nodes even when they share a name. When a user says two of them
are the same one (the Entities page's "same as" action, `storygraph entity merge A@story
B@story`), the store links them with a structural `SAME_AS` edge instead of fusing the nodes:
each keeps its own relations, citations and history, a question that starts at one also starts
at the other (qa/scope/scope.py), and the act is undone by removing the edge (`entity unmerge`).
Both entities' histories record the merge and the undo, prefixed with the entity's own
document id like every history entry, so deleting that document drops them with it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

from storygraph.errors import InputError
from storygraph.library.entity_pages import EntityPages
from storygraph.store import GraphStore
from storygraph.store.plan import key_document


@dataclass(frozen=True)
class IdentityChange:
    kind: str
    """"merged" or "unmerged"."""
    keys: tuple[str, str]
    changed: bool
    """False when the two were already linked (merge) or not linked (unmerge)."""


def _one_key(pages: EntityPages, ref: str) -> str:
    keys = pages.resolve(ref)
    if not keys:
        raise InputError(f"no entity called {ref!r}.")
    if len(keys) > 1:
        stories = ", ".join(keys)
        raise InputError(
            f"{ref!r} is an entity of {len(keys)} stories ({stories}).",
            "Name one as NAME@STORY (the story's file name or document id).",
        )
    return keys[0]


def _entry(store: GraphStore, key: str, other: str, kind: str, at: str) -> dict[str, str]:
    names = {d.id: d.name for d in store.list_documents()}
    other_story = names.get(key_document(other), key_document(other))
    body = {
        "document_name": "(you)",
        "kind": kind,
        "changes": [f"same as {other.partition(':')[2]} of {other_story} ({other})"],
        "at": at,
    }
    return f"{key_document(key)}:" + json.dumps(body, ensure_ascii=False, sort_keys=True)


def _change(store: GraphStore, pages: EntityPages, a: str, b: str, kind: str) -> IdentityChange:
    key_a, key_b = _one_key(pages, a), _one_key(pages, b)
    if key_a == key_b:
        raise InputError(f"{a!r} and {b!r} are the same entity already.")
    at = datetime.now(UTC).isoformat(timespec="seconds")
    with store.writing():
        node = store.entity_page_node(key_a) or {}
        linked = {str(t) for t in node.get("twins") or []}
        changed = (key_b not in linked) if kind == "merged" else (key_b in linked)
        if changed:
            history = {
                key: _entry(store, key, other, kind, at)
                for key, other in ((key_a, key_b), (key_b, key_a))
            }
            store.set_same_as(key_a, key_b, same=kind == "merged", history=history, at=at)
    return IdentityChange(kind, (key_a, key_b), changed)


def merge(store: GraphStore, a: str, b: str) -> IdentityChange:
    """Say that entity `a` and entity `b` (keys or NAME@STORY) are the same one."""
    return _change(store, EntityPages(store), a, b, "merged")


def unmerge(store: GraphStore, a: str, b: str) -> IdentityChange:
    """Undo `merge(a, b)`."""
    return _change(store, EntityPages(store), a, b, "unmerged")
