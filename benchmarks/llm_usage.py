"""LLM calls and tokens per question, per retrieval mode and rerank strategy.

Counted through LangChain callbacks (storygraph.llm.usage.UsageCounter, summed in
`Answer.usage`). The graph is shared/eval/seed_graph.json, the questions
shared/eval/seed_questions.jsonl. With the scripted model the call counts are exact and the
token counts are its own estimate (prompt chars / 3, 20 per completion). When the embedded
model server of the app's data dir is running, a couple of questions also go to the real model.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import SHARED, BenchResult, Table, real_chat_model, running_model_server
from storygraph.ingest.graph_io import import_graph, load_graph_file
from storygraph.llm.factory import ModelInfo
from storygraph.qa.pipeline.engine import QAEngine
from storygraph.qa.pipeline.factory import build_engine
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.retrieval import retrieval
from storygraph.services import build_services
from storygraph.settings import Settings
from tests.helpers.scripted_model import ScriptedChatModel

REAL_MODEL_BUDGET_S = 300.0


def modes() -> list[str]:
    available = getattr(retrieval, "available_modes", None)
    return list(available()) if callable(available) else list(retrieval.BASE_MODES)


def questions() -> list[str]:
    path = SHARED / "eval" / "seed_questions.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines if line.strip()]


def _per_question(engine: QAEngine, qs: list[str], mode: str, strategy: str) -> dict[str, Any]:
    calls = prompt = completion = candidates = 0
    by_step: dict[str, int] = {}
    seconds = 0.0
    for question in qs:
        started = time.perf_counter()
        answer = engine.ask(question, QAOptions(mode=mode, strategy=strategy))
        seconds += time.perf_counter() - started
        calls += answer.usage.calls
        prompt += answer.usage.prompt_tokens
        completion += answer.usage.completion_tokens
        for step in answer.steps:
            if step.usage.calls:
                by_step[step.name] = by_step.get(step.name, 0) + step.usage.calls
            if step.name == "retrieval":
                candidates += int(step.detail.get("candidates", 0) or 0)
    n = len(qs)
    return {
        "mode": mode,
        "strategy": strategy,
        "calls": calls / n,
        "prompt": prompt / n,
        "completion": completion / n,
        "candidates": candidates / n,
        "steps": ", ".join(f"{k} {v / n:.1f}" for k, v in by_step.items()),
        "seconds": seconds / n,
    }


def run(quick: bool = False) -> BenchResult:
    qs = questions()
    graph = load_graph_file(SHARED / "eval" / "seed_graph.json")
    results: list[dict[str, Any]] = []
    real: list[dict[str, Any]] = []
    skipped_note = ""
    with tempfile.TemporaryDirectory(prefix="sg-bench-") as tmp:
        model = ScriptedChatModel()
        services = build_services(Settings(data_dir=Path(tmp)), llm=model)
        try:
            import_graph(services.store, graph)
            info = ModelInfo("scripted", "ScriptedChatModel", capable=True)
            engine = build_engine(services.store, model, info)
            for mode in modes():
                for strategy in ("batched", "per_fact"):
                    results.append(_per_question(engine, qs, mode, strategy))
            baseline = _per_question(
                build_engine(services.store, None, ModelInfo("none", "", False)),
                qs,
                modes()[0],
                "batched",
            )
            server = None if quick else running_model_server()
            if server is not None:
                real_engine = build_engine(
                    services.store,
                    real_chat_model(server[0]),
                    ModelInfo("embedded", "qwen2.5-coder-1.5b-instruct", capable=False),
                )
                started = time.monotonic()
                real.append(_per_question(real_engine, qs[:1], modes()[0], "batched"))
                first = real[0]
                per_call = first["seconds"] / max(first["calls"], 1)
                predicted = per_call * (first["candidates"] + first["calls"])
                remaining = REAL_MODEL_BUDGET_S - (time.monotonic() - started)
                if predicted <= remaining:
                    real.append(_per_question(real_engine, qs[:1], modes()[0], "per_fact"))
                else:
                    skipped_note = (
                        f"per-fact rerank on the real model skipped: ~{predicted:.0f} s predicted "
                        f"({per_call:.0f} s per call on the shared server) exceeds the "
                        f"{REAL_MODEL_BUDGET_S:.0f} s budget"
                    )
        finally:
            services.close()
            services.store.runner.server.stop()

    table = Table(
        "LLM calls and tokens per question (scripted model: calls exact, tokens = its chars/3 "
        "estimate)",
        ["mode", "rerank", "calls/q", "prompt tok/q", "completion tok/q", "candidates/q",
         "calls by step"],
    )  # fmt: skip
    for r in results:
        table.add(
            r["mode"], r["strategy"], r["calls"], r["prompt"], r["completion"], r["candidates"],
            r["steps"],
        )  # fmt: skip
    table.add(
        f"{baseline['mode']} (no LLM: baseline)", "lexical", baseline["calls"], 0, 0,
        baseline["candidates"], "–",
    )  # fmt: skip
    table.notes.append(
        f"{len(qs)} questions of shared/eval/seed_questions.jsonl on shared/eval/seed_graph.json; "
        "per-fact rerank makes one call per candidate, so its cost grows with the graph"
    )
    table.notes.append("target: ≤ 3 LLM calls per question with a capable model (batched rerank)")
    tables = [table]
    if real:
        t2 = Table(
            "LLM calls and tokens per question with the real embedded model (server-reported "
            "tokens)",
            ["mode", "rerank", "questions", "calls/q", "prompt tok/q", "completion tok/q",
             "calls by step", "s/q"],
        )  # fmt: skip
        for r in real:
            t2.add(
                r["mode"], r["strategy"], 1, r["calls"], r["prompt"], r["completion"],
                r["steps"], r["seconds"],
            )  # fmt: skip
        if skipped_note:
            t2.notes.append(skipped_note)
        t2.notes.append(
            "the server was shared with other engineers' test runs, so seconds are inflated; "
            "calls and tokens are not"
        )
        tables.append(t2)
    return BenchResult("llm", tables, data={"scripted": results, "real": real})
