"""The eval commands.

`python -m storygraph eval QUESTIONS.jsonl --graph GRAPH.json [--mode M ...] [--no-llm] [--json]`
`python -m storygraph eval-e2e QUESTIONS.jsonl ... [--stories DIR] [--mode M ...] [--json]`
`python -m storygraph eval-e2e QUESTIONS.jsonl ... --rescore RUN.json ... [--json]` (asks nothing)
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from storygraph.evaluation.e2e import E2EReport
from storygraph.evaluation.harness import (
    EvalReport,
    configured_model,
    isolated_services,
    load_questions,
    run_eval,
)
from storygraph.ingest.graph_io import load_graph_file
from storygraph.llm.factory import ModelInfo, model_info
from storygraph.qa.pipeline.parts import QAOptions
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
    ("entity_recall", "entities"),
)


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
    none = (None, ModelInfo("none", "", capable=False))
    with nullcontext(none) if no_llm else configured_model(settings) as (llm, info):
        options = QAOptions.from_settings(settings, no_llm=llm is None)
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


E2E_COLUMNS: tuple[tuple[str, str], ...] = (
    ("strict_correct", "strict right"),
    ("strict_accuracy", "strict accuracy"),
    ("accuracy", "lenient accuracy"),
    ("strict_accuracy_answerable", "strict, answerable"),
    ("accuracy_answerable", "lenient, answerable"),
    ("supported_precision", "supported precision"),
    ("coverage", "coverage"),
    ("unanswerable_declined", "unanswerable declined"),
    ("first_token_p50", "1st token p50 s"),
    ("first_token_p90", "1st token p90 s"),
    ("seconds_p50", "answer p50 s"),
    ("seconds_p90", "answer p90 s"),
    ("answered_correct", "right in its own words"),
    ("evidence_recall", "evidence"),
    ("evidence_cited", "evidence cited"),
    ("before_answer_p50", "before the model p50 s"),
    ("seconds_max", "max s"),
    ("llm_calls_per_question", "calls/q"),
    ("tokens_per_question", "tokens/q"),
    ("ingest_chars_per_second", "ingest chars/s"),
    ("closest_sentence_shown", "no answer, closest shown"),
    ("unsupported_name_answers", "unsupported names"),
    ("citing_other_stories", "citing other stories"),
)


NOT_YET_MEASURED = frozenset({"supported_precision", "coverage"})
"""None here means the engine has no support check yet: "n/a", not "-"."""


def _e2e_cell(key: str, row: dict[str, Any]) -> str:
    value = row.get(key)
    if value is None and key in NOT_YET_MEASURED:
        return "n/a"
    return _cell(value)


def render_e2e(report: E2EReport) -> str:
    lines = [
        "| mode | questions | unanswerable | lenient right | "
        + " | ".join(h for _, h in E2E_COLUMNS)
        + " |",
        "|" + "---|" * (4 + len(E2E_COLUMNS)),
    ]
    for mode, row in report.overall.items():
        cells = [mode, str(row["questions"]), str(row["unanswerable"]), str(row["correct"])]
        cells += [_e2e_cell(key, row) for key, _ in E2E_COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    head = "| story | chars | chunks | s | chars/s | calls | entities | relations | cached |"
    lines += ["", head]
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for i in report.ingests:
        lines.append(
            f"| {i.story} | {i.chars} | {i.chunks} | {i.seconds:.1f} | "
            f"{_cell(i.chars_per_second)} | {i.llm_calls} | {i.entities} | {i.relations} | "
            f"{'yes' if i.cached else 'no'} |"
        )
    return "\n".join(lines)


def run_e2e_command(args: argparse.Namespace, settings: Settings) -> int:
    from storygraph.evaluation.e2e import (
        first_per_story,
        load_e2e_questions,
        no_model_settings,
        rescore_report,
        run_e2e,
    )
    from storygraph.qa.retrieval.retrieval import canonical_mode

    questions = []
    for name in args.questions:
        questions.extend(load_e2e_questions(Path(name)))
    shelf = list(dict.fromkeys(q.story for q in questions))  # a library holds every set's story
    if args.only:
        questions = [q for q in questions if any(part in q.id for part in args.only)]
    if args.per_story:
        questions = first_per_story(questions, args.per_story)
    if not questions:
        print("no questions to ask", file=sys.stderr)
        return 1
    if args.rescore:
        runs = [json.loads(Path(name).read_text(encoding="utf-8")) for name in args.rescore]
        report = rescore_report(runs, questions)
        asked = len(report.results)
        print(f"re-scored {asked} saved answers of {', '.join(args.rescore)}", file=sys.stderr)
        if len(questions) > asked:
            print(f"{len(questions) - asked} questions of the sets were not in that run",
                  file=sys.stderr)
        return _print_e2e(report, asked, bool(args.json))
    small_model_budget = False
    if args.no_llm:
        # No model, but the sources the configured one would read: the story chunked for it
        # (no model alone chunks as a capable one does) and the small model's budget.
        small_model_budget = model_info(settings).provider == "embedded"
        settings = no_model_settings(settings)
    options = QAOptions.from_settings(
        settings, no_llm=bool(args.no_llm), small_model_budget=small_model_budget
    )
    modes = [canonical_mode(m) for m in (args.modes or [options.mode])]
    cache_dir = None if args.no_cache else Path(args.cache_dir or Path(settings.data_dir) / "e2e")
    with exit_on_terminate():  # a stopped run stops its stores' servers on the way out
        report = run_e2e(
            settings,
            questions,
            Path(args.stories),
            modes=modes,
            options=options,
            cache_dir=cache_dir,
            fresh=bool(args.fresh),
            progress=None if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True)),
            library=bool(args.library),
            shelf=shelf,
        )
    return _print_e2e(report, len(questions), bool(args.json))


@contextmanager
def exit_on_terminate() -> Iterator[None]:
    """SIGTERM (and SIGHUP, a closed terminal) raise SystemExit within the block, so the
    temporary stores' `finally` steps run (their servers stopped, their directories removed)
    as they do for Ctrl-C; outside the main thread, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    kept = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for number, handler in kept.items():
            signal.signal(number, handler)


def _print_e2e(report: E2EReport, questions: int, as_json: bool) -> int:
    if as_json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=1))
    else:
        print(
            f"{questions} questions, model: {report.model}, extractor: {report.extractor}, "
            f"{report.seconds:.0f} s"
        )
        print(render_e2e(report))
    return 0
