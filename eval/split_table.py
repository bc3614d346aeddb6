"""One row per saved `eval-e2e --json` run: the figures docs/EVALUATION.md reports for dev and
test, all by the strict rule.

    python eval/split_table.py NAME=RUN.json[:QUESTIONS.jsonl] ...

`QUESTIONS.jsonl` (needed for the "model alone" column: the model's own text scored by the same
strict rule, with the set's accepted and wrong answers) defaults to nothing, which leaves that
column and "right shown / right written" empty. Prints a Markdown table.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

from storygraph.evaluation.answer_scoring import score_strict
from storygraph.evaluation.saved_runs import read_run


def _questions(path: Path | None) -> dict[str, dict[str, Any]]:
    if path is None:
        return {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return {row["id"]: row for row in rows}


def _share(num: int, den: int) -> str:
    return f"{num}/{den} ({num / den:.2f})" if den else "–"


def row(name: str, run: dict[str, Any], questions: dict[str, dict[str, Any]]) -> list[str]:
    results = run["questions"]
    answerable = [r for r in results if not r.get("unanswerable")]
    unanswerable = [r for r in results if r.get("unanswerable")]
    shown = [r for r in answerable if r.get("supported")]
    shown_all = [r for r in results if r.get("supported")]
    strict = sum(bool(r.get("strict_correct")) for r in results)
    mixed = [r for r in answerable if r.get("lang_mix")]
    alone = written_right = shown_right = None
    if questions:
        alone = written_right = shown_right = 0
        for r in results:
            q = questions[r["id"]]
            text = r.get("model_answer") or r["answer"]
            own = score_strict(
                text, q["answers"], q.get("wrong", ()), unanswerable=bool(q.get("unanswerable"))
            )
            alone += bool(own.correct)
            if not q.get("unanswerable") and own.correct:
                written_right += 1
                shown_right += bool(r.get("strict_correct"))
    first = [float(r["first_token_seconds"]) for r in results]
    calls = statistics.mean(float(r.get("llm_calls", 0)) for r in results) if results else 0.0
    return [
        name,
        str(len(results)),
        _share(strict, len(results)),
        "–" if alone is None else str(alone),
        _share(sum(bool(r.get("strict_correct")) for r in shown_all), len(shown_all)),
        _share(len(shown), len(answerable)),
        "–" if written_right is None else f"{shown_right}/{written_right}",
        _share(sum(bool(r.get("declined")) for r in unanswerable), len(unanswerable)),
        _share(sum(bool(r.get("strict_correct")) for r in mixed), len(mixed)) if mixed else "–",
        f"{statistics.median(first):.1f}" if first else "–",
        f"{calls:.1f}",
    ]


COLUMNS = [
    "run",
    "questions",
    "strict",
    "model alone, strict",
    "precision shown as supported",
    "answerable shown as supported",
    "right shown / right written",
    "unanswerable declined",
    "English over Japanese right",
    "first token p50 s",
    "calls",
]


def main(argv: list[str]) -> int:
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    for arg in argv:
        name, _, paths = arg.partition("=")
        run_path, _, questions_path = paths.partition(":")
        run = read_run(Path(run_path))
        questions = _questions(Path(questions_path) if questions_path else None)
        print("| " + " | ".join(row(name, run, questions)) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
