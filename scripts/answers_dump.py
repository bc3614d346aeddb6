#!/usr/bin/env python
"""Every answer in full, for diffing two checkouts of a refactor that must not change behaviour.

    PYTHONHASHSEED=0 python scripts/answers_dump.py OUT.jsonl [--per-story N] [--only TEXT]
        [--library]

For the first N questions of each story in eval/e2e/ja.jsonl, en_fresh.jsonl and mixed.jsonl
(the story ingested with the parser, through the e2e ingest cache), each question is asked
through ten engine set-ups: no model (three modes), a scripted small embedded model (written
and chosen answers, per-fact scoring, no composed answer) and a scripted capable model (two
modes, and no_llm), the support check reading the parser's frames as in the app. One JSON
line per answer: `Answer.to_json()` without timings, the streamed tokens, and every prompt the
scripted model was sent. `--library` puts every story in one store and asks each question of
them all (the app's default scope), so that the story choice runs too (qa/scope/resolver.py:
per-story answers, a leading story, tellings, an undecided question's sources). No real model
runs. Run it in each checkout and `diff` the files
(docs/ISSUES.md#engine-parts). `PYTHONHASHSEED` fixed: the scripted model lists names of equal
length in set order.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_core.messages import BaseMessage  # noqa: E402

from storygraph.evaluation.e2e import (  # noqa: E402
    first_per_story,
    ingest_story,
    load_e2e_questions,
    story_services,
)
from storygraph.llm.factory import ModelInfo  # noqa: E402
from storygraph.qa.pipeline.factory import build_engine  # noqa: E402
from storygraph.qa.pipeline.parts import QAOptions  # noqa: E402
from storygraph.services import sentence_frames  # noqa: E402
from storygraph.settings import Settings  # noqa: E402
from tests.helpers.scripted_model import ScriptedChatModel  # noqa: E402

SETS = ("eval/e2e/ja.jsonl", "eval/e2e/en_fresh.jsonl", "eval/e2e/mixed.jsonl")
RUNS: tuple[tuple[str, QAOptions], ...] = (
    ("none", QAOptions(no_llm=True)),
    ("none", QAOptions(no_llm=True, mode="directed2")),
    ("none", QAOptions(no_llm=True, mode="onehop+reltype", sentence_sources=0)),
    ("small", QAOptions()),
    ("small", QAOptions(choose_names=True)),
    ("small", QAOptions(strategy="per_fact", mode="onehop+qtype+rerank")),
    ("small", QAOptions(compose_answer=False)),
    ("capable", QAOptions()),
    ("capable", QAOptions(mode="onehop+qtype", top_k=5)),
    ("capable", QAOptions(no_llm=True)),
)
PROMPTS: list[str] = []


class RecordingModel(ScriptedChatModel):
    """The scripted model, keeping every prompt it is sent (and the request's keywords)."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> Any:
        text = "\n".join(str(m.content) for m in messages)
        PROMPTS.append(f"{text}\n##kw {sorted(kwargs)}")
        return super()._generate(messages, stop, run_manager, **kwargs)


TIMINGS = frozenset({"seconds", "first_token_s"})
"""Keys of measured times (a step's, the answer step's first token): two runs differ there."""


def _untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--per-story", type=int, default=4)
    parser.add_argument("--only", default="", help="only stories whose path holds this text")
    parser.add_argument("--stories", type=Path, default=ROOT.parent / "shared" / "stories")
    parser.add_argument("--cache-dir", type=Path, default=None, help="e2e ingest cache")
    parser.add_argument(
        "--library", action="store_true", help="every story in one store, asked of them all"
    )
    args = parser.parse_args(argv)
    by_story: dict[str, list[Any]] = {}
    for name in SETS:
        for case in first_per_story(load_e2e_questions(ROOT / name), args.per_story):
            if args.only in case.story:
                by_story.setdefault(case.story, []).append(case)
    infos = {
        "none": ModelInfo("none", "", capable=False),
        "small": ModelInfo("embedded", "scripted-small", capable=False),
        "capable": ModelInfo("scripted", "scripted-capable", capable=True),
    }
    # one store per story, or (--library) one store holding them all, asked with every story
    # in scope as the app asks by default: the story choice (qa/scope/resolver.py) runs then
    shelves = [list(by_story)] if args.library else [[story] for story in by_story]
    with args.out.open("w", encoding="utf-8") as out:
        for shelf in shelves:
            with story_services(Settings(no_llm=True)) as services:
                for story in shelf:
                    ingest_story(services, args.stories / story, args.cache_dir)
                model = RecordingModel()
                engines = {
                    name: build_engine(
                        services.store,
                        None if name == "none" else model,
                        info,
                        frames=sentence_frames,
                    )
                    for name, info in infos.items()
                }
                for case in (case for story in shelf for case in by_story[story]):
                    for name, options in RUNS:
                        PROMPTS.clear()
                        tokens: list[str] = []
                        answer = engines[name].ask(case.question, options, on_token=tokens.append)
                        row = {
                            "id": case.id,
                            "engine": name,
                            "options": repr(options),
                            "answer": _untimed(answer.to_json()),
                            "tokens": tokens,
                            "prompts": list(PROMPTS),
                        }
                        out.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
