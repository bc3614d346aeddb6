"""Ask the model's self-check (storygraph.qa.verify.self_check) of answers a saved run already
holds, and save the run with each judged answer's `self_check` in its evidence: a new signal
that costs a model call is measured on the answers of the pool and the test splits without
running them again (the model writes deterministically, so a run of today's build writes the
same answers and asks the same check).

    python eval/self_check_replay.py OUTDIR RUN.json ...

Each run is written to OUTDIR under its own name; eval/train_verifier.py reads it as any run.
The check is asked through the configured model (the embedded server by default), exactly as
the pipeline asks it.

    python eval/self_check_replay.py --japanese-prompt eval/prompts/self_check_ja.txt \
        OUTDIR RUN.json ...

asks only the answers to a Japanese question over Japanese sentences, with another prompt (a
file like prompts/self_check.txt: instructions, a `---` line, then the sentences, question and
answer; the reply still yes or no), and keeps the value it replaces as `self_check_en` (a
variant measured on dev: docs/EVALUATION.md, "The self-check asked in Japanese of a Japanese
answer").
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from storygraph.evaluation.harness import configured_model
from storygraph.evaluation.saved_runs import read_run
from storygraph.qa.verify.evidence import Evidence
from storygraph.qa.verify.self_check import ModelSelfCheck, check_values
from storygraph.settings import get_settings
from storygraph.text.language import is_japanese_text


def japanese(evidence: Evidence) -> bool:
    """A Japanese question answered over Japanese sentences (what `--japanese-prompt` asks)."""
    cited = "".join(evidence.cited)
    return is_japanese_text(evidence.question) and bool(cited) and is_japanese_text(cited)


def prompted(template: str) -> Callable[[Evidence], list[Any]]:
    """The check's messages from `template` (the format of prompts/self_check.txt), filled as
    the app fills its own (`check_values`)."""
    from langchain_core.messages import HumanMessage, SystemMessage

    system, _, user = template.partition("\n---\n")

    def messages(evidence: Evidence) -> list[Any]:
        filled = user.strip().format(**check_values(evidence))
        return [SystemMessage(system.strip()), HumanMessage(filled)]

    return messages


def main(argv: Sequence[str]) -> int:
    variant: Path | None = None
    if argv[:1] == ["--japanese-prompt"] and len(argv) > 1:
        variant, argv = Path(argv[1]), argv[2:]
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
        if variant is not None:  # the variant's prompt in place of prompts/self_check.txt
            check.messages = prompted(variant.read_text(encoding="utf-8"))
        for run in argv[1:]:
            data = read_run(Path(run))
            started, asked, unread = time.perf_counter(), 0, 0
            for row in data["questions"]:
                judged = row.get("verifier") or {}
                if not judged.get("evidence"):
                    continue
                evidence = Evidence.from_json(judged["evidence"])
                if variant is not None:
                    if not japanese(evidence):
                        continue
                    judged["evidence"]["self_check_en"] = judged["evidence"].get("self_check")
                got = check.judge(evidence, callbacks=[])
                judged["evidence"]["self_check"] = got.value
                asked += 1
                unread += got.value is None
            target = out / Path(run).name.removesuffix(".gz")  # written plain
            target.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
            seconds = time.perf_counter() - started
            print(
                f"{run}: {asked} answers checked ({unread} not read), {seconds:.0f} s -> {target}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
