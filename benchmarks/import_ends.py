"""The 1M-edge import with the relations' ends by key and by node id, alternated.

`python -m benchmarks.import_ends --edges 1000000 --rounds 3`: the synthetic plan of the scale
benchmark imported by `GraphStore.write_plan` into a fresh embedded FalkorDB store per import,
once each way per round, the order swapped every round (a shared machine's load moves by
minutes: alternating is what makes the two comparable). "by key" = RELATION_UPSERT matching
both ends by the key index (Neo4j's path, FalkorDB's before docs/ISSUES.md#import-1m-edges); "by
node id" = the app's FalkorDB write (RELATION_UPSERT_BY_NODE_ID). Prints each import and the
medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.common import temp_store
from benchmarks.scale_bench import ENTITY_WRITES, RELATION_WRITES
from benchmarks.synthetic import make_plan
from storygraph.store.plan import MergePlan


def _import(root: Path, name: str, plan: MergePlan, by_node_id: bool) -> tuple[float, ...]:
    with temp_store(root, name, ends_by_node_id=by_node_id) as ts:
        started = time.perf_counter()
        ts.store.write_plan(plan)
        total = time.perf_counter() - started
        seconds = ts.timing.seconds
        entities = sum(seconds.get(n, 0.0) for n in ENTITY_WRITES)
        relations = sum(seconds.get(n, 0.0) for n in RELATION_WRITES)
        stats = ts.store.stats()
    if (stats["entities"], stats["relations"]) != (len(plan.entities), len(plan.relations)):
        raise SystemExit(f"{name}: stored {stats}, planned {len(plan.relations)} relations")
    return total, entities, relations, total - entities - relations


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.import_ends", description=__doc__)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    plan = make_plan(max(args.edges // 3, 10), args.edges, seed=args.edges)
    arms = {"by key": False, "by node id": True}
    results: dict[str, list[tuple[float, ...]]] = {arm: [] for arm in arms}
    print(
        "| round | ends | UTC | load | import s | entity writes s | relation writes s | outside s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="sg-ends-") as tmp:
        for round_ in range(args.rounds):
            order = list(arms) if round_ % 2 == 0 else list(reversed(arms))
            for arm in order:
                load = os.getloadavg()[0]
                at = time.strftime("%H:%M:%S", time.gmtime())
                name = f"{arm.replace(' ', '-')}-{round_}"
                row = _import(Path(tmp), name, plan, arms[arm])
                results[arm].append(row)
                cells = " | ".join(f"{v:.1f}" for v in row)
                print(f"| {round_} | {arm} | {at} | {load:.1f} | {cells} |", flush=True)
    print()
    for arm, rows in results.items():
        medians = [statistics.median(column) for column in zip(*rows, strict=True)]
        print(
            f"{arm}: median import {medians[0]:.1f} s, entity writes {medians[1]:.1f} s, "
            f"relation writes {medians[2]:.1f} s, outside the queries {medians[3]:.1f} s"
        )
    ratios = [i[0] / k[0] for k, i in zip(results["by key"], results["by node id"], strict=True)]
    print("by node id / by key, per round: " + ", ".join(f"{r:.2f}" for r in ratios))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
