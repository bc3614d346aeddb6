"""Library vs one story per store, per question set (issue #28, docs/EVALUATION.md).

Reads two `eval-e2e --json` reports of the same sets, one run without and one with `--library`,
and prints a Markdown table per set: correct, evidence found, and answers citing a story other
than the question's.

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


def _figures(results: list[dict[str, Any]]) -> tuple[int, int, int, int]:
    evidence = [r["evidence_found"] for r in results if r["evidence_found"] is not None]
    cited = sum(bool(r.get("other_stories")) for r in results)
    return sum(r["correct"] for r in results), sum(evidence), len(evidence), cited


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    one, library = (json.loads(Path(a).read_text(encoding="utf-8")) for a in argv[:2])
    print(
        "| set | questions | correct: one story / library | evidence: one / library "
        "| citing another story: one / library |"
    )
    print("|---|---|---|---|---|")
    for name in argv[2:]:
        ids = set(_ids(Path(name)))
        a = _figures([r for r in one["questions"] if r["id"] in ids])
        b = _figures([r for r in library["questions"] if r["id"] in ids])
        n = sum(1 for r in one["questions"] if r["id"] in ids)
        print(
            f"| {Path(name).name} | {n} | {a[0]} / {b[0]} | {a[1]} of {a[2]} / {b[1]} of {b[2]} "
            f"| {a[3]} / {b[3]} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
