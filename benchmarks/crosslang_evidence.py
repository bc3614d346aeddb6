"""Cross-language questions without a model: does what the small model reads hold the evidence?

    python -m benchmarks.crosslang_evidence [SET.jsonl ...] [--variant off|dictionary ...]
                                            [--stories ../shared/stories] [--cache-dir DIR]

For each question of the sets (default: eval/e2e/mixed.jsonl and mixed_fresh.jsonl, English
questions over Japanese stories), the story is ingested with the parser (through the e2e ingest
cache), and the question is asked through the engine the small embedded model gets
(`ModelInfo` not capable: its source budget, at most four facts), the model itself a scripted
stand-in whose answer is not looked at, once per translation variant (`QAOptions.translation`:
"off" = before issue 27 item 4, "dictionary" = JMdict). Per variant it prints, over the
answerable questions with a gold evidence sentence, how often sentence search found it (any of
its passages), how often it is the first source the model reads, and how often any source the
model reads holds it (the gold sentence only; an accepted answer's word elsewhere does not
count), with each question's translation. "model" is not a variant here: it needs the real model
(`python -m storygraph eval-e2e` with STORYGRAPH_QUESTION_TRANSLATION=model).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from benchmarks.common import Table
from storygraph.evaluation.answer_scoring import evidence_found
from storygraph.evaluation.e2e import ingest_story, load_e2e_questions, story_services
from storygraph.llm.factory import ModelInfo
from storygraph.models import Answer
from storygraph.qa.pipeline.factory import build_engine
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.services import sentence_frames
from storygraph.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SETS = (ROOT / "eval/e2e/mixed.jsonl", ROOT / "eval/e2e/mixed_fresh.jsonl")
VARIANTS = ("off", "dictionary")


def _step(answer: Answer, name: str) -> dict[str, Any]:
    return next((s.detail for s in answer.steps if s.name == name), {})


def measure(answer: Answer, evidence: tuple[str, ...]) -> dict[str, Any]:
    """Where the gold evidence is: in sentence search's passages, the first source read, any
    source read."""
    passages = [p["text"] for p in _step(answer, "sentences").get("found", [])]
    read = int(_step(answer, "answer").get("sources_read", len(answer.citations)))
    sources = [c.text for c in answer.citations[:read]]
    translation = _step(answer, "entities").get("translation") or {}
    return {
        "search": bool(evidence_found(passages, evidence, [])),
        "first": bool(evidence_found(sources[:1], evidence, [])),
        "read": bool(evidence_found(sources, evidence, [])),
        "translation": translation.get("text", ""),
        "entities": [e.node_id for e in answer.entities],
    }


def main(argv: list[str] | None = None) -> int:
    from tests.helpers.scripted_model import ScriptedChatModel

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sets", nargs="*", type=Path, default=list(SETS))
    parser.add_argument("--variant", action="append", choices=VARIANTS)
    parser.add_argument("--stories", type=Path, default=ROOT.parent / "shared" / "stories")
    parser.add_argument("--cache-dir", type=Path, default=None, help="e2e ingest cache")
    args = parser.parse_args(argv)
    variants = args.variant or list(VARIANTS)
    by_story: dict[str, list[Any]] = {}
    for path in args.sets:
        for case in load_e2e_questions(path):
            if case.evidence and not case.unanswerable:
                by_story.setdefault(case.story, []).append((path.name, case))
    info = ModelInfo("embedded", "scripted-small", capable=False)
    rows: list[tuple[str, str, str, dict[str, Any]]] = []
    for story, cases in by_story.items():
        with story_services(Settings(no_llm=True)) as services:
            ingest_story(services, args.stories / story, args.cache_dir)
            engine = build_engine(services.store, ScriptedChatModel(), info, frames=sentence_frames)
            for name, case in cases:
                for variant in variants:
                    answer = engine.ask(case.question, QAOptions(translation=variant))
                    rows.append((name, case.id, variant, measure(answer, case.evidence)))
    table = Table(
        "Cross-language questions: the gold evidence in what the small model reads (no model)",
        ["set", "variant", "questions", "in sentence search", "first source", "any source read"],
    )
    for path in args.sets:
        for variant in variants:
            found = [m for s, _, v, m in rows if s == path.name and v == variant]
            table.add(
                path.name,
                variant,
                len(found),
                sum(m["search"] for m in found),
                sum(m["first"] for m in found),
                sum(m["read"] for m in found),
            )
    for _, qid, variant, m in rows:
        if variant != "off":
            flags = "".join(k[0] if m[k] else "-" for k in ("search", "first", "read"))
            table.notes.append(
                f"{qid} [{variant}] {flags}: {m['translation'] or '(none)'} → {m['entities']}"
            )
    print(table.render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
