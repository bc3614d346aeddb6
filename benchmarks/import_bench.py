"""Import throughput into embedded FalkorDB: batched UNWIND vs row-by-row, with / without index.

Batched = the app's own `GraphStore.write_plan` (ENTITY_UPSERT / RELATION_UPSERT from
storygraph/cypher.py, 500 rows per UNWIND) with the relations' ends matched by key, the path
this benchmark is about (Neo4j's; on FalkorDB the app now seeks them by node id, measured by
the scale benchmark and `benchmarks.import_ends`, docs/ISSUES.md#import-1m-edges). Row-by-row = the
same RELATION_UPSERT with one row per call. Only the batched-with-index path is run in full; the
three slower paths are timed on a sample of new edges written into the same loaded graph, and
extrapolated linearly to the full edge count (each edge's cost depends on the node count,
which the sample shares).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import BenchResult, Table, TempStore, ratio, temp_store
from benchmarks.synthetic import make_plan
from storygraph import cypher as q
from storygraph.store.plan import MergePlan, RelationRecord

# Benchmark-only DDL (FalkorDB dialect): drops the entity id index of a throwaway graph so the
# same loaded graph can be timed without it. The app never drops indexes.
DROP_ENTITY_ID_INDEX_FALKORDB = "DROP INDEX FOR (n:__Entity__) ON (n.id)"


def _sample_edges(plan: MergePlan, count: int, rel_type: str, seed: int) -> list[RelationRecord]:
    """New edges (a type the graph lacks) between existing nodes, shaped like the real ones."""
    extra = make_plan(len(plan.entities), count, seed=seed).relations
    return [
        RelationRecord(r.source, rel_type, r.target, list(r.chunk_ids), list(r.evidence))
        for r in extra
    ]


def _upsert_seconds(ts: TempStore, edges: list[RelationRecord], batch: int) -> float:
    """Seconds spent in RELATION_UPSERT writing `edges`, `batch` rows per call."""
    rel_type = edges[0].type
    query = q.render(q.RELATION_UPSERT, rel_type=rel_type)
    rows = [  # RELATION_UPSERT's rows (GraphStore._relation_rows_by_type)
        {
            "source_key": r.source_key,
            "target_key": r.target_key,
            "chunk_ids": r.chunk_ids,
            "evidence": r.evidence,
        }
        for r in edges
    ]
    started = time.perf_counter()
    for i in range(0, len(rows), batch):
        ts.store.runner.run(query, {"rows": rows[i : i + batch], "now": "bench"})
    return time.perf_counter() - started


def _scale(root: Path, nodes: int, edges: int, samples: dict[str, int]) -> dict[str, Any]:
    plan = make_plan(nodes, edges)
    out: dict[str, Any] = {"nodes": nodes, "edges": edges}
    with temp_store(root, f"import-{edges}", ends_by_node_id=False) as ts:
        started = time.perf_counter()
        ts.store.write_plan(plan)
        out["write_plan_s"] = time.perf_counter() - started
        out["breakdown"] = dict(ts.timing.seconds)
        out["batched_index_s"] = ts.timing.seconds.get("RELATION_UPSERT", 0.0)
        stats = ts.store.stats()
        out["stored"] = (stats["entities"], stats["relations"])

        n = samples["row_index"]
        secs = _upsert_seconds(ts, _sample_edges(plan, n, "ROW_INDEX", 11), 1)
        out["row_index"] = (n, secs / n * edges)

        ts.store.runner.run(DROP_ENTITY_ID_INDEX_FALKORDB)
        n = samples["batched_noindex"]
        secs = _upsert_seconds(ts, _sample_edges(plan, n, "BATCH_NOINDEX", 12), 500)
        out["batched_noindex"] = (n, secs / n * edges)
        n = samples["row_noindex"]
        secs = _upsert_seconds(ts, _sample_edges(plan, n, "ROW_NOINDEX", 13), 1)
        out["row_noindex"] = (n, secs / n * edges)
    return out


def run(quick: bool = False) -> BenchResult:
    scales = [(10_000, 30_000)] if quick else [(10_000, 30_000), (33_334, 100_000)]
    samples = (
        {"row_index": 500, "batched_noindex": 500, "row_noindex": 50}
        if quick
        else {"row_index": 2000, "batched_noindex": 1000, "row_noindex": 100}
    )
    results = []
    with tempfile.TemporaryDirectory(prefix="sg-bench-") as tmp:
        for nodes, edges in scales:
            results.append(_scale(Path(tmp), nodes, edges, samples))

    edges_table = Table(
        "Import: writing the edges into embedded FalkorDB (RELATION_UPSERT)",
        ["graph", "method", "entity id index", "edges timed", "s for all edges", "edges/s",
         "× batched+index"],
    )  # fmt: skip
    for r in results:
        graph = f"{r['nodes']:,} nodes / {r['edges']:,} edges"
        base = r["batched_index_s"]
        rows = [
            ("batched UNWIND, 500/call", "yes", f"all {r['edges']:,}", base),
            ("row-by-row, 1/call", "yes", f"{r['row_index'][0]:,} → extrapolated",
             r["row_index"][1]),
            ("batched UNWIND, 500/call", "no", f"{r['batched_noindex'][0]:,} → extrapolated",
             r["batched_noindex"][1]),
            ("row-by-row, 1/call", "no", f"{r['row_noindex'][0]:,} → extrapolated",
             r["row_noindex"][1]),
        ]  # fmt: skip
        for method, index, timed, secs in rows:
            edges_table.add(
                graph, method, index, timed, secs, r["edges"] / secs if secs else None,
                ratio(secs, base),
            )  # fmt: skip
    edges_table.notes.append(
        "baseline = batched UNWIND with the index, in the same run on the same graph; the "
        "slow paths write a sample of new edges into the loaded graph and are extrapolated "
        "linearly to all edges"
    )
    edges_table.notes.append("target: 30k edges ≤ 2 s (batched, with index)")

    full = Table(
        "Import: the whole GraphStore.write_plan (nodes + existence check + edges), with index",
        ["graph", "total s", "ENTITY_CREATE + ENTITY_UPSERT s", "RELATIONS_EXISTING s",
         "RELATION_UPSERT s", "nodes/s", "edges/s"],
    )  # fmt: skip
    for r in results:
        b = r["breakdown"]
        entities_s = b.get("ENTITY_CREATE", 0.0) + b.get("ENTITY_UPSERT", 0.0)
        full.add(
            f"{r['nodes']:,} / {r['edges']:,}",
            r["write_plan_s"],
            entities_s,
            b.get("RELATIONS_EXISTING", 0.0),
            b.get("RELATION_UPSERT", 0.0),
            r["nodes"] / entities_s if entities_s else None,
            r["edges"] / b["RELATION_UPSERT"] if b.get("RELATION_UPSERT") else None,
        )
    full.notes.append(
        "stored counts checked after the write: "
        + ", ".join(
            f"{e:,} entities / {rel:,} relations" for e, rel in (r["stored"] for r in results)
        )
    )
    return BenchResult("import", [edges_table, full], data={"scales": results})
