"""Which stories a library's answers cite, per question set (docs/EVALUATION.md, "A library in
one store"; docs/ISSUES.md#story-scope).

Reads an `eval-e2e --library --json` report (with or without `--no-llm`: without the model it
takes a split's library in minutes and shows what the scope and sentence search chose, the
library's dev figure) and prints a Markdown table per set: answers citing only the question's
own story, only other stories, both, or none.

Usage: ``python eval/e2e/library_scope.py LIBRARY.json SET.jsonl [SET.jsonl ...]``
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

KINDS = ("only its story", "only another", "both", "none")


def kind(result: dict[str, Any]) -> str:
    """Which of `KINDS` an answer's citations are (a run saved before `cites_own_story` was
    recorded reads as not citing its own story)."""
    own, other = bool(result.get("cites_own_story")), bool(result.get("other_stories"))
    if own:
        return "both" if other else "only its story"
    return "only another" if other else "none"


def counts(results: Sequence[dict[str, Any]]) -> dict[str, int]:
    found = dict.fromkeys(KINDS, 0)
    for result in results:
        found[kind(result)] += 1
    return found


def _ids(path: Path) -> set[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {json.loads(line)["id"] for line in lines if line.strip()}


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    run = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    print("| set | questions | " + " | ".join(KINDS) + " |")
    print("|---|---|" + "---|" * len(KINDS))
    every: list[dict[str, Any]] = []
    for name in argv[1:]:
        ids = _ids(Path(name))
        rows = [r for r in run["questions"] if r["id"] in ids]
        every += rows
        _row(Path(name).parent.name or Path(name).name, rows)
    if len(argv) > 2:
        _row("all", every)
    return 0


def _row(name: str, rows: Sequence[dict[str, Any]]) -> None:
    found = counts(rows)
    print(f"| {name} | {len(rows)} | " + " | ".join(str(found[k]) for k in KINDS) + " |")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
