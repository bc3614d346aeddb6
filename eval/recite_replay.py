"""Set saved answers' source marks as the app now does (storygraph.qa.generation.recite) and ask
the self-check again for each answer whose mark moved, so the verifier can be refitted on the
evidence the app reads today without running the questions again.

    python eval/recite_replay.py OUTDIR RUN.json ... [--no-check]

Each judged answer's evidence (`answer`, `cited`, `read`) is read back as the sources the model
read, numbered in order (as the app numbers them), and the sources its marks cite; an answer
whose mark moves gets its new cited sentence (its reply stays as written, as in the app's
evidence) and, unless `--no-check`, its self-check asked again through the configured embedded
model (storygraph.qa.verify.self_check, exactly as the pipeline asks it). Each run is
written to OUTDIR under its own name; eval/train_verifier.py reads it as any run.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from storygraph.evaluation.harness import configured_model
from storygraph.evaluation.saved_runs import read_run
from storygraph.models import Citation
from storygraph.qa.generation.answer_core import cited_numbers
from storygraph.qa.generation.recite import recited
from storygraph.qa.verify.evidence import Evidence
from storygraph.qa.verify.self_check import ModelSelfCheck
from storygraph.settings import get_settings


def moved(evidence: dict[str, Any]) -> bool:
    """Set `evidence`'s mark as the app does; True when it moved (`evidence` updated: the
    sources it cites, its self-check to be asked again; the reply stays as written, as the
    app's evidence keeps it)."""
    texts = {i + 1: text for i, text in enumerate(evidence["read"])}
    # the sources it cites, by their numbers in the citations' order (read or not)
    texts |= dict(zip(sorted(cited_numbers(evidence["answer"])), evidence["cited"], strict=False))
    sources = [Citation(n, f"s{n}", "", t, kind="sentence") for n, t in sorted(texts.items())]
    got = recited(evidence["question"], evidence["answer"], sources, len(evidence["read"]))
    if got is None:
        return False
    evidence["cited"] = [texts[got.source]]
    evidence["self_check"] = None
    return True


def main(argv: Sequence[str]) -> int:
    check_again = "--no-check" not in argv
    args = [a for a in argv if a != "--no-check"]
    if len(args) < 2:
        print(__doc__)
        return 2
    out = Path(args[0])
    out.mkdir(parents=True, exist_ok=True)
    model = configured_model(get_settings()) if check_again else nullcontext((None, None))
    with model as (llm, info):
        if check_again and (llm is None or info is None or info.provider != "embedded"):
            print("the self-check is the embedded model's signal: no embedded model configured")
            return 2
        check = ModelSelfCheck(llm) if check_again else None
        for run in args[1:]:
            data = read_run(Path(run))
            started, count = time.perf_counter(), 0
            for row in data["questions"]:
                evidence = (row.get("verifier") or {}).get("evidence")
                if not evidence or not moved(evidence):
                    continue
                count += 1
                if check is not None:
                    got = check.judge(Evidence.from_json(evidence), callbacks=[])
                    evidence["self_check"] = got.value
            target = out / Path(run).name
            target.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
            seconds = time.perf_counter() - started
            print(f"{run}: {count} answers' marks moved, {seconds:.0f} s -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
