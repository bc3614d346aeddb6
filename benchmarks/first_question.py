"""The first question after the app starts: seconds to its first token, with and without the
answer prompt read ahead (`Services.keep_answers_warm`, docs/ISSUES.md#prompt-prefix).

    python -m benchmarks.first_question [--pairs N] [--question Q] [--then Q] [--back Q]

Each trial starts from nothing: a new data directory (so a new embedded model server, loaded
from disk), the sample story ingested through the app's path, then the question asked through
the chat's engine, streamed. `cold` asks at once; `read ahead` first lets the background
read-ahead finish (as it does while the user opens the page and types) and reports its own
seconds. `--then` asks a second question after the first (default: the same story in English),
to show what a change of language costs, and `--back` a third in the first language again
(docs/ISSUES.md#prompt-prefix). Trials alternate, cold first; medians are printed.
Not part of `python -m benchmarks`: it needs the embedded model (`make model`) and takes about
a minute a trial on 2 cores.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from storygraph.evaluation.e2e import Stopwatch
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.services import Services, build_services
from storygraph.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "storygraph" / "samples" / "momotaro_kusuyama.txt"


def first_token(services: Services, question: str) -> tuple[float, float, str]:
    """Seconds to the first streamed piece and to the whole answer, and the answer."""
    watch = Stopwatch()
    options = QAOptions.from_settings(services.settings)
    answer = services.qa().ask(question, options, on_token=watch.on_token)
    total = watch.elapsed()
    return watch.first_token(total), total, answer.answer


def trial(read_ahead: bool, question: str, then: str, back: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="storygraph-first-q-") as tmp:
        settings = Settings(_env_file=None, data_dir=Path(tmp) / "data")  # type: ignore[call-arg]
        services = build_services(settings)
        try:
            if services.info.provider != "embedded" or services.llm() is None:
                raise SystemExit("the embedded model is not installed (make model)")
            services.ingestor().ingest_bytes(SAMPLE.name, SAMPLE.read_bytes())
            row: dict[str, float] = {}
            if read_ahead:
                started = time.perf_counter()
                services.keep_answers_warm()
                assert services.warm_thread is not None
                services.warm_thread.join()
                row["read_ahead"] = time.perf_counter() - started
            row["first"], row["total"], answer = first_token(services, question)
            row["then_first"], row["then_total"], then_answer = first_token(services, then)
            row["back_first"], row["back_total"], back_answer = first_token(services, back)
            print(f"  {answer!r} / {then_answer!r} / {back_answer!r}", file=sys.stderr, flush=True)
            return row
        finally:
            services.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.first_question", description=__doc__
    )
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--question", default="桃太郎の家来になったのは誰？")
    parser.add_argument("--then", default="Who went with Momotaro to the island of the oni?")
    parser.add_argument("--back", default="鬼が島の鬼を退治したのは誰？")
    args = parser.parse_args(argv)
    rows: dict[str, list[dict[str, float]]] = {"cold": [], "read ahead": []}
    for n in range(args.pairs):
        for name in rows:
            print(f"pair {n + 1}, {name}", file=sys.stderr, flush=True)
            rows[name].append(trial(name == "read ahead", args.question, args.then, args.back))
    print(
        "| first question | first token p50 s | answer p50 s | read-ahead p50 s "
        "| next question (other language) first token p50 s "
        "| then the first language again, first token p50 s |"
    )
    print("|---|---|---|---|---|---|")
    for name, found in rows.items():
        med = {k: statistics.median(r[k] for r in found) for k in found[0]}
        ahead = f"{med['read_ahead']:.1f}" if "read_ahead" in med else "–"
        print(
            f"| {name} | {med['first']:.1f} | {med['total']:.1f} | {ahead} "
            f"| {med['then_first']:.1f} | {med['back_first']:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
