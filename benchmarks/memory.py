"""Resident memory (VmRSS) of the embedded servers: FalkorDB and the llama.cpp model server.

The baseline is an empty embedded FalkorDB started in the same run; loaded graphs are written
with the app's GraphStore.write_plan. The app's own servers (its data dir) are read when running.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks.common import (
    BenchResult,
    Table,
    app_data_dir,
    ratio,
    rss_mb,
    running_model_server,
    temp_store,
)
from benchmarks.synthetic import make_plan
from storygraph.store.falkordb_server import ServerPaths


def _pid_file(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def run(quick: bool = False) -> BenchResult:
    scales = [(10_000, 30_000)] if quick else [(10_000, 30_000), (33_334, 100_000)]
    table = Table(
        "Resident memory of the embedded servers (VmRSS)",
        ["server", "content", "RSS MiB", "× empty FalkorDB"],
    )
    with tempfile.TemporaryDirectory(prefix="sg-bench-") as tmp:
        with temp_store(Path(tmp), "empty") as ts:
            empty = rss_mb(ts.pid()) or 0.0
        table.add("embedded FalkorDB (baseline)", "empty graph, schema only", empty, 1.0)
        for nodes, edges in scales:
            with temp_store(Path(tmp), f"mem-{edges}") as ts:
                ts.store.write_plan(make_plan(nodes, edges))
                loaded = rss_mb(ts.pid())
            table.add(
                "embedded FalkorDB", f"{nodes:,} nodes / {edges:,} edges", loaded,
                ratio(loaded or 0.0, empty),
            )  # fmt: skip
    data_dir = app_data_dir()
    app_falkor = rss_mb(_pid_file(ServerPaths.for_data_dir(data_dir).pidfile))
    table.add(
        "app's FalkorDB", str(data_dir), app_falkor,
        ratio(app_falkor, empty) if app_falkor else None,
    )  # fmt: skip
    server = running_model_server(data_dir)
    model_rss = rss_mb(server[1]) if server else None
    table.add(
        "app's embedded model server", "Qwen2.5-Coder-1.5B Q4_K_M, llama.cpp",
        model_rss, ratio(model_rss, empty) if model_rss else None,
    )  # fmt: skip
    table.notes.append("– = not running when the benchmark ran")
    return BenchResult("memory", [table], data={"empty_mb": empty, "model_mb": model_rss})
