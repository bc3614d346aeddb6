"""The parse's roles as verifier signals, measured on saved dev runs (not in the app).

For a question that asks a doer or a thing of a verb about a named participant, the relations of
its act beside that participant read in the frames and facts of what the model read
(`eval/role_replay.py`, one file per run) name who or what fills the asked slot. Signals:

- `role_read`: 1 when one of those fillers is the answer's core, 0 when there are fillers and
  none is; None when there are none (or the core is in another script than them);
- `role_cited`: the same over the fillers read from the sentences the answer cites, 0 when there
  are fillers anywhere and none of a cited sentence is the core;
- `role_told`: 1 when some filler was read, 0 when the question is of that kind and none was.

Prints, out of fold by story at the standing threshold rule, the nine signals of today's weights
refitted on the runs given, then with each set of extra signals named by `--extra`:

    PYTHONPATH=. python eval/role_signals.py RUN.json:QUESTIONS.jsonl:ROLES.json [...] \
        --extra role_read --extra role_cited,role_told
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import train_verifier as trainer

from storygraph.qa.verify import signals
from storygraph.qa.verify.calibration import load
from storygraph.qa.verify.evidence import Evidence
from storygraph.qa.verify.support_links import same
from storygraph.text.language import is_japanese_text
from storygraph.text.normalize import normalize_name

ROLES: dict[str, list[dict[str, Any]] | None] = {}
"""Question text → its fillers (`eval/role_replay.py`), over every run loaded."""


def is_core(filler: str, core: str) -> bool:
    """Does the core name the filler (the same entity, or most of the filler's units: a core
    written as a whole sentence names its filler inside it)?"""
    if same(filler, core):
        return True
    a, b = signals.units(filler), signals.units(core)
    if not a or not b:
        return False
    return len(a & b) / len(a) >= 0.6


def _usable(e: Evidence) -> list[dict[str, Any]] | None:
    found = ROLES.get(e.question)
    if found is None or not e.core.strip():
        return None
    if found and is_japanese_text(found[0]["filler"]) != is_japanese_text(e.core):
        return None
    return found


def role_read(e: Evidence) -> float | None:
    found = _usable(e)
    if not found:
        return None
    return float(any(is_core(f["filler"], e.core) for f in found))


def role_cited(e: Evidence) -> float | None:
    found = _usable(e)
    if not found:
        return None
    cited = [normalize_name(t) for t in e.cited]
    return float(
        any(
            is_core(f["filler"], e.core)
            and any(normalize_name(f["sentence"]) in t or t in normalize_name(f["sentence"])
                    for t in cited)
            for f in found
        )
    )  # fmt: skip


def role_told(e: Evidence) -> float | None:
    found = ROLES.get(e.question)
    return None if found is None else float(bool(found))


def load_roles(questions: str, roles: str) -> None:
    by_id = json.loads(Path(roles).read_text(encoding="utf-8"))
    for line in Path(questions).read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            if q["id"] in by_id:
                ROLES[q["question"]] = by_id[q["id"]]


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="RUN.json:QUESTIONS.jsonl:ROLES.json (dev only)")
    parser.add_argument("--extra", action="append", default=[], help="signals, comma-separated")
    args = parser.parse_args(argv)
    signals.SIGNALS.update(role_read=role_read, role_cited=role_cited, role_told=role_told)
    rows = []
    for spec in args.runs:
        run, questions, roles = spec.split(":")
        load_roles(questions, roles)
        rows += trainer.load_run(f"{run}:{questions}")
    judged = trainer.judged(rows)
    for name in ("role_read", "role_cited", "role_told"):
        for value in (1.0, 0.0):
            got = [r for r in judged if (r.signals or {}).get(name) == value]
            right = sum(r.model_right for r in got)
            print(f"{name}={value:.0f}: {right}/{len(got)} right")
    trainer.compare_extras(rows, load()["embedded"].features, args.extra)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
