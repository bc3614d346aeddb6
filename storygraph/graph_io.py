"""Graph import / export in the format of `shared/eval/seed_graph.json`.

`{"nodes": [{"id", "type", ...}], "relationships": [{"source", "type", "target", ...}]}`;
extra properties are allowed, and an export carries `chunk_ids` / `evidence` so that a
re-import keeps provenance.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from storygraph.errors import InputError
from storygraph.merge import plan_from_graph
from storygraph.store import GraphStore
from storygraph.store.graph_store import WriteCounts


def load_graph_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError as exc:
        raise InputError(f"{path} does not exist.") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(
            f"{path} is not a JSON graph file: {exc}",
            'Expected {"nodes": [...], "relationships": [...]}.',
        ) from exc
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("nodes", []), list)
        or not isinstance(data.get("relationships", []), list)
    ):
        raise InputError(
            f"{path} is not a graph file.", 'Expected {"nodes": [...], "relationships": [...]}.'
        )
    return data


def import_graph(store: GraphStore, data: dict[str, Any]) -> tuple[WriteCounts, list[str]]:
    """Merge a graph file into the store, planned and written under the store's write lock."""
    nodes = [n for n in data.get("nodes", []) if isinstance(n, dict)]
    rels = [r for r in data.get("relationships", []) if isinstance(r, dict)]
    with store.writing():
        plan = plan_from_graph(nodes, rels, store.entity_candidates)
        return store.write_plan(plan), plan.dropped


def export_graph(store: GraphStore) -> dict[str, Any]:
    return store.export_graph()
