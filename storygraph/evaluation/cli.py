"""The eval command.

`python -m storygraph eval QUESTIONS.jsonl --graph GRAPH.json [--mode M ...] [--no-llm] [--json]`
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from storygraph.evaluation.harness import EvalReport, isolated_services, load_questions, run_eval
from storygraph.graph_io import load_graph_file
from storygraph.llm.factory import ModelInfo, build_chat_model, model_info
from storygraph.qa import QAOptions
from storygraph.settings import Settings

COLUMNS: tuple[tuple[str, str], ...] = (
    ("recall", "recall"),
    ("full_recall", "all exp."),
    ("leaks", "leaks"),
    ("order_accuracy", "order"),
    ("perfect_order", "perfect"),
    ("kept", "kept"),
    ("llm_calls", "calls"),
    ("tokens", "tokens"),
    ("seconds", "s"),
)


def _model(settings: Settings) -> tuple[BaseChatModel | None, ModelInfo]:
    """The configured model without opening the user's store (the eval store is temporary)."""
    info = model_info(settings)
    if info.provider == "none":
        return None, info
    if info.provider == "embedded":
        from storygraph.llm.embedded_server import EmbeddedServer

        url = EmbeddedServer(settings).ensure_running()
        return build_chat_model(settings, embedded_base_url=url), info
    return build_chat_model(settings), info


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def render_table(report: EvalReport) -> str:
    """The overall table (mode × metric), then one line per question and mode."""
    width = max([len(m) for m in report.overall] + [4])
    head = "mode".ljust(width) + "".join(f"{label:>10}" for _, label in COLUMNS)
    lines = [head, "-" * len(head)]
    for mode, metrics in report.overall.items():
        cells = "".join(f"{_cell(metrics.get(key)):>10}" for key, _ in COLUMNS)
        lines.append(mode.ljust(width) + cells)
    lines.append("")
    for result in report.questions:
        missing = f" missing {result.missing}" if result.missing else ""
        leaked = f" leaked {result.leaked}" if result.leaked else ""
        lines.append(
            f"{result.id:<12} {result.mode:<{width}} recall {_cell(result.recall)} "
            f"order {_cell(result.order_accuracy)} kept {result.kept}{missing}{leaked}"
        )
    return "\n".join(lines)


def run_eval_command(args: argparse.Namespace, settings: Settings) -> int:
    questions = load_questions(Path(args.questions))
    graph = load_graph_file(Path(args.graph))
    no_llm = bool(args.no_llm) or settings.no_llm
    llm, info = (None, ModelInfo("none", "", capable=False)) if no_llm else _model(settings)
    options = QAOptions(
        top_k=settings.rerank_top_k,
        min_score=settings.rerank_min_score,
        strategy=settings.rerank_strategy,
        no_llm=llm is None,
    )
    with isolated_services(settings, llm=llm, info=info) as services:
        report = run_eval(services, graph, questions, args.modes or None, options)
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=1))
    else:
        print(f"{len(questions)} questions, model: {info.label}")
        print(render_table(report))
    if not questions:
        print("no questions found in the file", file=sys.stderr)
        return 1
    return 0
