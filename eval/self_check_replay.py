"""Ask the model's self-check (storygraph.qa.verify.self_check) of answers a saved run already
holds, and save the run with each judged answer's `self_check` in its evidence: a new signal
that costs a model call is measured on the answers of the pool and the test splits without
running them again (the model writes deterministically, so a run of today's build writes the
same answers and asks the same check).

    python eval/self_check_replay.py OUTDIR RUN.json ...

Each run is written to OUTDIR under its own name; eval/train_verifier.py reads it as any run.
The check is asked through the configured model (the embedded server by default), exactly as
the pipeline asks it.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from storygraph.evaluation.harness import configured_model
from storygraph.evaluation.saved_runs import read_run
from storygraph.qa.verify.evidence import Evidence
from storygraph.qa.verify.self_check import ModelSelfCheck
from storygraph.settings import get_settings


def main(argv: Sequence[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    with configured_model(get_settings()) as (llm, info):
        if llm is None or info.provider != "embedded":
            print("the self-check is the embedded model's signal: no embedded model configured")
            return 2
        check = ModelSelfCheck(llm)
        for run in argv[1:]:
            data = read_run(Path(run))
            started, asked, unread = time.perf_counter(), 0, 0
            for row in data["questions"]:
                judged = row.get("verifier") or {}
                if not judged.get("evidence"):
                    continue
                got = check.judge(Evidence.from_json(judged["evidence"]), callbacks=[])
                judged["evidence"]["self_check"] = got.value
                asked += 1
                unread += got.value is None
            target = out / Path(run).name
            target.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
            seconds = time.perf_counter() - started
            print(
                f"{run}: {asked} answers checked ({unread} not read), {seconds:.0f} s -> {target}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
