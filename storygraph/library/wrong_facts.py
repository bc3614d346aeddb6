"""Facts a user says are wrong ("this is wrong"): hidden, recorded, and undoable.

The small model states some facts that its story does not (鬼 → あける → 門, where the monkey
opened the gate). A user who sees one in the graph can hide it: the relation stays in the graph
(its sources and story time intact) but carries `hidden`, and every query that reads facts for
answers or drawings leaves it out through one condition (`cypher.FACT_SHOWN`). Both ends'
histories record the act, as identity links do (prefixed with the entity's own document id, so a
delete of that story takes them along, and its undo brings them back), and "show again" undoes
it, recorded the same way (docs/ISSUES.md#wrong-facts).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

from storygraph.errors import InputError
from storygraph.library.relation_labels import relation_label
from storygraph.store import GraphStore
from storygraph.store.plan import key_document
from storygraph.store.runner import Row

HIDDEN = "hidden as wrong"
SHOWN = "shown again"


@dataclass(frozen=True)
class FactRef:
    """One relation, by its ends' keys and its stored type."""

    source_key: str
    rel_type: str
    target_key: str


def fact_line(row: Row, rel_type: str) -> str:
    """A relation in a reader's words: start → the story's verb → end."""
    evidence = row.get("evidence") or []
    sentence = evidence[0] if isinstance(evidence, list) and evidence else str(evidence or "")
    return f"{row['start']} → {relation_label(rel_type, sentence)} → {row['end']}"


def _entry(key: str, kind: str, line: str, at: str) -> str:
    body = {"document_name": "(you)", "kind": kind, "changes": [line], "at": at}
    return f"{key_document(key)}:" + json.dumps(body, ensure_ascii=False, sort_keys=True)


def _set(store: GraphStore, fact: FactRef, *, hidden: bool) -> str:
    at = datetime.now(UTC).isoformat(timespec="seconds")
    kind = HIDDEN if hidden else SHOWN

    def history(row: Row) -> dict[str, str]:
        line = fact_line(row, fact.rel_type)
        return {key: _entry(key, kind, line, at) for key in (fact.source_key, fact.target_key)}

    row = store.set_fact_hidden(
        fact.source_key, fact.rel_type, fact.target_key, hidden=hidden, at=at, history=history
    )
    if row is None:
        raise InputError(
            f"There is no relation {fact.rel_type} from {fact.source_key} to "
            f"{fact.target_key} (its story was deleted meanwhile?).",
            "Reload the page to see the graph as it is.",
        )
    return fact_line(row, fact.rel_type)


def hide(store: GraphStore, fact: FactRef) -> str:
    """Hide a fact as wrong; the fact in a reader's words."""
    return _set(store, fact, hidden=True)


def show_again(store: GraphStore, fact: FactRef) -> str:
    """Undo `hide`; the fact in a reader's words."""
    return _set(store, fact, hidden=False)
