"""Library vs one story per store, per question set (issue #28, docs/EVALUATION.md).

Reads two `eval-e2e --json` reports of the same sets, one run without and one with `--library`,
and prints a Markdown table per set: correct (strict rule, lenient in brackets), evidence
found, answers citing a story other than the question's, and of those the ones citing it where
the reader does not see it under that story's name (`misplaced_stories`: outside a per-story
answer's part for that story, or in an answer about one story).

Usage: ``python eval/e2e/library_table.py ONE.json LIBRARY.json SET.jsonl [SET.jsonl ...]``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _ids(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["id"] for line in lines if line.strip()]


def _figures(results: list[dict[str, Any]]) -> tuple[int, int, int, int, int, int]:
    evidence = [r["evidence_found"] for r in results if r["evidence_found"] is not None]
    cited = sum(bool(r.get("other_stories")) for r in results)
    misplaced = sum(bool(r.get("misplaced_stories", r.get("other_stories"))) for r in results)
    strict = sum(bool(r.get("strict_correct")) for r in results)
    lenient = sum(r["correct"] for r in results)
    return strict, lenient, sum(evidence), len(evidence), cited, misplaced


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    one, library = (json.loads(Path(a).read_text(encoding="utf-8")) for a in argv[:2])
    print(
        "| set | questions | correct, strict (lenient): one story / library "
        "| evidence: one / library | citing another story: one / library "
        "| of them not under its own story's name: one / library |"
    )
    print("|---|---|---|---|---|---|")
    rows: dict[str, list[dict[str, Any]]] = {"one": [], "library": []}
    for name in argv[2:]:
        ids = set(_ids(Path(name)))
        a = _figures([r for r in one["questions"] if r["id"] in ids])
        b = _figures([r for r in library["questions"] if r["id"] in ids])
        n = sum(1 for r in one["questions"] if r["id"] in ids)
        _row(Path(name).name, n, a, b)
        rows["one"] += [r for r in one["questions"] if r["id"] in ids]
        rows["library"] += [r for r in library["questions"] if r["id"] in ids]
    if len(argv) > 3:
        _row("all", len(rows["one"]), _figures(rows["one"]), _figures(rows["library"]))
    return 0


def _row(name: str, n: int, a: tuple[int, ...], b: tuple[int, ...]) -> None:
    print(
        f"| {name} | {n} | {a[0]} ({a[1]}) / {b[0]} ({b[1]}) "
        f"| {a[2]} of {a[3]} / {b[2]} of {b[3]} | {a[4]} / {b[4]} | {a[5]} / {b[5]} |"
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
