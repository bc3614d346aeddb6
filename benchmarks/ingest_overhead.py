"""Non-LLM ingest overhead per chunk, as a share of a realistic model's time.

Every story of shared/stories is ingested with an instant scripted model at the embedded
model's chunk size (200 chars), so what is timed is everything but the model: decoding and
chunking, LangChain + LLMGraphTransformer building prompts and parsing tool calls, merging and
writing. Stage boundaries come from the ingest's own progress events. The model's time per
chunk is the estimate's (storygraph/estimate.py, measured constants), for the same chunks.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import BenchResult, Table, ms, story_files
from storygraph import estimate
from storygraph.ingest.pipeline import Progress
from storygraph.llm.factory import ModelInfo
from storygraph.services import build_services
from storygraph.settings import Settings
from tests.helpers.scripted_model import ScriptedChatModel

STAGES = ("prepare + chunk", "extract (no model)", "merge + write")


def _ingest_timed(services: Any, path: Path) -> tuple[Any, dict[str, float]]:
    marks: dict[str, float] = {}

    def progress(event: Progress) -> None:
        key = event.stage
        if key == "extract" and "extract" in marks:
            return
        marks.setdefault(key, time.perf_counter())

    started = time.perf_counter()
    report = services.ingestor().ingest_bytes(path.name, path.read_bytes(), progress)
    ended = time.perf_counter()
    first_extract = marks.get("extract", ended)
    write = marks.get("write", ended)
    return report, {
        STAGES[0]: first_extract - started,
        STAGES[1]: write - first_extract,
        STAGES[2]: ended - write,
    }


def run(quick: bool = False) -> BenchResult:
    files = story_files()
    if quick:
        files = [f for f in files if "momotaro" in f.name]
    per_stage = dict.fromkeys(STAGES, 0.0)
    reports = []
    with tempfile.TemporaryDirectory(prefix="sg-bench-") as tmp:
        info = ModelInfo("embedded", "scripted stand-in for the embedded model", capable=False)
        services = build_services(Settings(data_dir=Path(tmp)), llm=ScriptedChatModel(), info=info)
        try:
            expected = estimate.estimate_files(services, files)
            for path in files:
                report, stages = _ingest_timed(services, path)
                reports.append(report)
                for key, value in stages.items():
                    per_stage[key] += value
            checked = estimate.compare(expected, reports)
        finally:
            services.close()
            services.store.runner.server.stop()
    chunks = sum(r.chunks for r in reports)
    overhead = sum(per_stage.values())
    model_s = float(expected["seconds"])
    table = Table(
        "Non-LLM ingest overhead (instant scripted model, 200-char chunks, all stories)",
        ["stage", "total s", "ms per chunk", "share of overhead"],
    )
    for key, value in per_stage.items():
        table.add(key, value, ms(value / chunks), f"{value / overhead:.0%}")
    table.add("all non-LLM work", overhead, ms(overhead / chunks), "100%")
    share = Table(
        "Non-LLM overhead as a share of ingest time with the embedded model",
        ["documents", "chunks", "non-LLM s", "model s (estimated)", "model s per chunk",
         "overhead share"],
    )  # fmt: skip
    share.add(
        len(reports), chunks, overhead, model_s, model_s / chunks if chunks else None,
        f"{overhead / (overhead + model_s):.2%}",
    )  # fmt: skip
    share.notes.append(
        "model time = storygraph.estimate for these chunks with the embedded model's small-model "
        "prompt: (uncached prompt tokens) / "
        f"{estimate.PROMPT_TOKENS_PER_S:.0f} tok/s + completion tokens (ja "
        f"{estimate.SMALL_COMPLETION_TOKENS['ja']}, en {estimate.SMALL_COMPLETION_TOKENS['en']}) / "
        f"{estimate.GENERATION_TOKENS_PER_S:.0f} tok/s (design §6 speeds, measured token counts)"
    )
    share.notes.append("target: non-LLM overhead ≤ 5 % of ingest time with the embedded model")
    comparison = Table(
        "Estimate before ingest vs the ingest reports (storygraph.estimate.compare)",
        ["quantity", "estimated", "actual", "actual / estimated"],
    )
    for key, row in checked.items():
        comparison.add(key, row["estimated"], row["actual"], row["ratio"])
    comparison.notes.append(
        "chunks and calls must match exactly; tokens and seconds here come from the scripted "
        "model (its token counts are chars / 3, it answers instantly), so only the counts are "
        "a check of the estimate"
    )
    return BenchResult(
        "ingest",
        [table, share, comparison],
        data={"stages": per_stage, "chunks": chunks, "model_s": model_s, "compare": checked},
    )
