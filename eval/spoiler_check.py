"""Nothing past the reading position: every question of a set asked "up to" three chapters of
its story, and every chapter the answer points at counted.

    PYTHONPATH=. python eval/spoiler_check.py QUESTIONS.jsonl [...] --stories DIR

Each story is ingested by the parser (the e2e ingest, one store per story); its three positions
are a quarter, a half and three quarters of its chapters. Every question is asked at each
position through the chat's engine twice: with no model (the facts answer) and with the small
model scripted at the model boundary (it quotes the source that shares most with the question,
so the model path's sources, citations and checks run). Counted per answer: its citations, the
citations from a later chapter, and any chunk id anywhere in the answer's JSON (facts, trace,
support, candidates) that belongs to a later chapter. The figure the issue asks for is those two
columns: 0 everywhere. The control column asks the same questions of the whole story (no
position) and counts the citations it would have shown from past the position: a check that
can fail. A run prints figures only, no answer: it may be run on a test split.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from storygraph.evaluation.e2e import (  # noqa: E402
    E2EQuestion,
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

CHUNK_ID = re.compile(r"[0-9a-f]{8,}:\d{4}")
"""A chunk id as the store writes it (document id, ':', the chunk's index in four digits)."""
MODELS = (
    ("no model", ModelInfo("none", "", capable=False)),
    ("small (scripted)", ModelInfo("embedded", "scripted-small", capable=False)),
)


def positions(chapters: int) -> list[int]:
    """A quarter, a half and three quarters of `chapters` (each at least chapter 1, distinct)."""
    return sorted({max(1, round(chapters * f)) for f in (0.25, 0.5, 0.75)})


def later_refs(answer: dict[str, Any], chapter_of: dict[str, int | None], until: int) -> int:
    """Chunk ids anywhere in the answer's JSON whose chapter is past `until`."""
    text = json.dumps(answer, ensure_ascii=False)
    return sum(1 for cid in set(CHUNK_ID.findall(text)) if (chapter_of.get(cid) or 0) > until)


def check_story(
    story: Path, cases: list[E2EQuestion], cache_dir: Path | None
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with story_services(Settings(no_llm=True)) as services:
        ingest_story(services, story, cache_dir)
        document = services.store.list_documents()[0]
        chunks = services.store.readable_chunks(None, [document.id])
        chapter_of = {str(r["id"]): r.get("chapter") for r in chunks}
        count = max((c for c in chapter_of.values() if c is not None), default=0)
        for label, info in MODELS:
            model = None if info.provider == "none" else ScriptedChatModel()
            engine = build_engine(services.store, model, info, frames=sentence_frames)
            whole = [engine.ask(case.question, QAOptions(verify="rules")) for case in cases]
            for until in positions(count):
                cited = beyond = refs = 0
                for case in cases:
                    answer = engine.ask(case.question, QAOptions(until=until, verify="rules"))
                    cited += len(answer.citations)
                    beyond += sum(1 for c in answer.citations if (c.chapter or 0) > until)
                    refs += later_refs(answer.to_json(), chapter_of, until)
                control = sum(1 for a in whole for c in a.citations if (c.chapter or 0) > until)
                rows.append(
                    {
                        "story": story.name,
                        "chapters": count,
                        "model": label,
                        "until": until,
                        "questions": len(cases),
                        "citations": cited,
                        "citations_beyond": beyond,
                        "chunk_refs_beyond": refs,
                        "control": control,
                    }
                )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("questions", nargs="+", type=Path)
    parser.add_argument("--stories", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path, default=None, help="e2e ingest cache")
    args = parser.parse_args(argv)
    by_story: dict[str, list[E2EQuestion]] = {}
    for path in args.questions:
        for case in load_e2e_questions(path):
            by_story.setdefault(case.story, []).append(case)
    rows = [
        row
        for story, cases in by_story.items()
        for row in check_story(args.stories / story, cases, args.cache_dir)
    ]
    print(
        "| story | chapters | model | up to | questions | citations | citations beyond | "
        "chunk refs beyond | control: whole story's citations beyond |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['story']} | {r['chapters']} | {r['model']} | {r['until']} | {r['questions']} | "
            f"{r['citations']} | {r['citations_beyond']} | {r['chunk_refs_beyond']} | "
            f"{r['control']} |"
        )
    beyond = sum(r["citations_beyond"] + r["chunk_refs_beyond"] for r in rows)
    print(f"\nanswers: {sum(r['questions'] for r in rows)}; past the position: {beyond}")
    return 1 if beyond else 0


if __name__ == "__main__":
    raise SystemExit(main())
