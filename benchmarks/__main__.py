"""`python -m benchmarks`: run the benchmarks and print their tables (Markdown)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks import (
    calibrate,
    concurrency_bench,
    extraction_bench,
    import_bench,
    ingest_overhead,
    library_bench,
    llm_usage,
    memory,
    retrieval_bench,
    scale_bench,
    startup,
)
from benchmarks.common import BenchResult, machine_info

BENCHMARKS: dict[str, Callable[[bool], BenchResult]] = {
    "import": import_bench.run,
    "retrieval": retrieval_bench.run,
    "ingest": ingest_overhead.run,
    "llm": llm_usage.run,
    "memory": memory.run,
    "calibrate": calibrate.run,
    "extraction": extraction_bench.run,
    "library": library_bench.run,
    "scale": scale_bench.run,
    "concurrency": concurrency_bench.run,
    "startup": startup.run,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller graphs (under 2 minutes)")
    parser.add_argument(
        "--only", action="append", choices=sorted(BENCHMARKS), help="run only this (repeatable)"
    )
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    names = args.only or list(BENCHMARKS)
    machine = machine_info()
    print(
        f"# StoryGraph benchmarks{' (quick)' if args.quick else ''}\n\n"
        f"{machine['date']} · {machine['nproc']} CPUs ({machine['cpu']}) · "
        f"{machine['ram_gib']} GiB RAM · Python {machine['python']} · "
        f"load average {machine['load_avg_1m']} at start\n",
        flush=True,
    )
    results = []
    started_all = time.perf_counter()
    for name in names:
        started = time.perf_counter()
        result = BENCHMARKS[name](args.quick)
        result.seconds = time.perf_counter() - started
        results.append(result)
        for table in result.tables:
            print(table.render(), end="\n\n", flush=True)
        print(f"_{name}: {result.seconds:.1f} s_\n", flush=True)
    total = time.perf_counter() - started_all
    print(f"_total: {total:.1f} s_")
    if args.json:
        payload = {
            "machine": machine,
            "quick": args.quick,
            "seconds": round(total, 1),
            "benchmarks": {
                r.name: {
                    "seconds": round(r.seconds, 1),
                    "tables": [t.to_json() for t in r.tables],
                    "data": r.data,
                }
                for r in results
            },
        }
        args.json.write_text(
            json.dumps(payload, ensure_ascii=False, indent=2, default=str), encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
