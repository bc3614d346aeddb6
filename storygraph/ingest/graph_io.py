"""Graph import / export in the format of `shared/eval/seed_graph.json`.

`{"nodes": [{"id", "type", ...}], "relationships": [{"source", "type", "target", ...}]}`;
extra properties are allowed, and an export carries `chunk_ids` / `evidence` so that a
re-import keeps provenance, plus story time (`positions`, from which `story_order`,
`story_order_last` and `invalid_at` are recomputed on import) and entity summaries (`summary`,
`summary_method`, `summary_updated_at`, `summary_sources`, kept for entities without one). Files
without these properties (older exports, seed_graph.json) import as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from storygraph.errors import InputError
from storygraph.ingest.merge import clean_name, plan_from_graph
from storygraph.store import GraphStore
from storygraph.store.graph_store import WriteCounts
from storygraph.text.normalize import normalize_name


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
        counts = store.write_plan(plan)
        keys = {(e.document_id, e.norm): e.key for e in plan.entities}
        summaries = imported_summaries(nodes, keys)
        if summaries:
            store.set_entity_summaries(summaries, only_missing=True)
        return counts, plan.dropped


def imported_summaries(
    nodes: list[dict[str, Any]], key_of: dict[tuple[str, str], str]
) -> list[dict[str, Any]]:
    """Summary rows of the file's nodes that carry one, keyed by the node they merged into
    (`key_of`: (document id, normalised name) → entity key)."""
    rows = []
    for node in nodes:
        summary = node.get("summary")
        document_id = str(node.get("document_id") or "")
        key = key_of.get((document_id, normalize_name(clean_name(node.get("id")))))
        if not isinstance(summary, str) or not summary.strip() or key is None:
            continue
        sources = node.get("summary_sources") or []
        rows.append(
            {
                "key": key,
                "summary": summary.strip(),
                "method": str(node.get("summary_method") or "imported"),
                "updated_at": str(node.get("summary_updated_at") or ""),
                "sources": [str(s) for s in sources] if isinstance(sources, list) else [],
            }
        )
    return rows


def export_graph(store: GraphStore) -> dict[str, Any]:
    return store.export_graph()
