"""One-hop retrieval latency on embedded FalkorDB vs the same result computed in memory.

The store side is the app's `GraphStore.retrieve("onehop", [id])` (RETRIEVE_ONEHOP plus the
pending-document check). The floor is a NetworkX MultiDiGraph holding the same edges: every edge
touching the node, both directions, structural types excluded. Each query's two results are
compared, so a fast wrong answer cannot win.
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path
from typing import Any

import networkx as nx

from benchmarks.common import BenchResult, Table, median, ms, percentile, ratio, rss_mb, temp_store
from benchmarks.synthetic import make_plan
from storygraph.cypher import STRUCTURAL_TYPES
from storygraph.store.plan import MergePlan


def build_graph(plan: MergePlan) -> nx.MultiDiGraph:
    graph = nx.MultiDiGraph()
    graph.add_nodes_from(e.id for e in plan.entities)
    for r in plan.relations:
        graph.add_edge(r.source, r.target, key=r.type, chunk_ids=r.chunk_ids)
    return graph


def onehop_in_memory(graph: nx.MultiDiGraph, node: str) -> set[tuple[str, str, str]]:
    found: set[tuple[str, str, str]] = set()
    for a, b, key in graph.out_edges(node, keys=True):
        if key not in STRUCTURAL_TYPES:
            found.add((a, key, b))
    for a, b, key in graph.in_edges(node, keys=True):
        if key not in STRUCTURAL_TYPES:
            found.add((a, key, b))
    return found


def _scale(root: Path, edges: int, queries: int) -> dict[str, Any]:
    nodes = max(edges // 3, 10)
    plan = make_plan(nodes, edges, seed=edges)
    graph = build_graph(plan)
    rng = random.Random(1)
    ids = [plan.entities[rng.randrange(nodes)].id for _ in range(queries)]
    hub = max(graph.nodes, key=graph.degree)
    with temp_store(root, f"retrieval-{edges}") as ts:
        ts.store.write_plan(plan)
        store_s: list[float] = []
        query_s: list[float] = []
        floor_s: list[float] = []
        mismatches = 0
        sizes: list[int] = []
        for node in ids[:20]:  # warm-up: caches, connection, query plan
            ts.store.retrieve("onehop", [node])
        ts.timing.reset()
        for node in ids:
            before = ts.timing.seconds.get("RETRIEVE_ONEHOP", 0.0)
            started = time.perf_counter()
            facts = ts.store.retrieve("onehop", [node])
            store_s.append(time.perf_counter() - started)
            query_s.append(ts.timing.seconds["RETRIEVE_ONEHOP"] - before)
            started = time.perf_counter()
            expected = onehop_in_memory(graph, node)
            floor_s.append(time.perf_counter() - started)
            sizes.append(len(expected))
            if {f.key for f in facts} != expected:
                mismatches += 1
        hub_store = []
        hub_floor = []
        for _ in range(20):
            started = time.perf_counter()
            hub_facts = ts.store.retrieve("onehop", [hub])
            hub_store.append(time.perf_counter() - started)
            started = time.perf_counter()
            onehop_in_memory(graph, hub)
            hub_floor.append(time.perf_counter() - started)
        rss = rss_mb(ts.pid())
    return {
        "edges": edges,
        "nodes": nodes,
        "queries": queries,
        "store_p50": median(store_s),
        "store_p95": percentile(store_s, 95),
        "query_p50": median(query_s),
        "floor_p50": median(floor_s),
        "floor_p95": percentile(floor_s, 95),
        "facts_mean": sum(sizes) / len(sizes),
        "mismatches": mismatches,
        "hub_degree": len(hub_facts),
        "hub_store_p50": median(hub_store),
        "hub_floor_p50": median(hub_floor),
        "rss_mb": rss,
    }


def run(quick: bool = False) -> BenchResult:
    scales = [1_000, 10_000] if quick else [1_000, 10_000, 100_000]
    queries = 100 if quick else 300
    with tempfile.TemporaryDirectory(prefix="sg-bench-") as tmp:
        results = [_scale(Path(tmp), edges, queries) for edges in scales]
    table = Table(
        "One-hop retrieval latency: GraphStore.retrieve('onehop', [id]) vs NetworkX in memory",
        ["edges", "nodes", "queries", "facts/query", "store p50 ms", "store p95 ms",
         "RETRIEVE_ONEHOP p50 ms", "NetworkX p50 ms", "NetworkX p95 ms", "p50 × floor",
         "results differ"],
    )  # fmt: skip
    for r in results:
        table.add(
            r["edges"], r["nodes"], r["queries"], round(r["facts_mean"], 1),
            ms(r["store_p50"]), ms(r["store_p95"]), ms(r["query_p50"]),
            ms(r["floor_p50"]), ms(r["floor_p95"]), ratio(r["store_p50"], r["floor_p50"]),
            r["mismatches"],
        )  # fmt: skip
    table.notes.append(
        "random graph, 3 edges per node (mean degree 6), start nodes drawn uniformly; store = "
        "the whole method (RETRIEVE_ONEHOP + the pending-document check + building Facts)"
    )
    table.notes.append("target: ≤ 5 ms median at 100k edges")
    hub = Table(
        "One-hop retrieval from the highest-degree node",
        ["edges", "hub facts", "store p50 ms", "NetworkX p50 ms", "× floor",
         "FalkorDB RSS after load MiB"],
    )  # fmt: skip
    for r in results:
        hub.add(
            r["edges"], r["hub_degree"], ms(r["hub_store_p50"]), ms(r["hub_floor_p50"]),
            ratio(r["hub_store_p50"], r["hub_floor_p50"]), r["rss_mb"],
        )  # fmt: skip
    return BenchResult("retrieval", [table, hub], data={"scales": results})
