"""Where each question's evidence sentence ranks in sentence search, without the model.

For every question with an `evidence` string: whether the evidence is among what the small
model reads (as `eval-e2e --no-llm` counts it), the rank by words (BM25) of the first story
sentence holding the evidence among the sentences searched, and its rank after the encoder's
re-scoring (None: outside the re-scored pool). It reads the answer path's own sentence search
(storygraph.qa.retrieval.passages) by recording what it scored; the stories are ingested
through the eval cache as `eval-e2e` does.

    PYTHONPATH=. python eval/evidence_ranks.py eval/novels3/dev.jsonl --stories eval/novels3/stories
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from storygraph.evaluation.answer_scoring import evidence_found
from storygraph.evaluation.e2e import (
    ingest_story,
    load_e2e_questions,
    no_model_settings,
    read_citations,
    story_services,
)
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.retrieval import passages
from storygraph.settings import get_settings

_scored: dict[str, Any] = {}
_passages = passages._passages


def _recording(*args: Any) -> Any:
    """sentence search's last scoring (sentences, re-scored order, combined, lexical, …)."""
    _scored.update(sentences=args[0], scored=args[1], lexical=args[3])
    return _passages(*args)


def _squeezed(text: str) -> str:
    return "".join(text.split())


def ranks(evidence: str) -> tuple[int | None, int | None, int]:
    """The evidence sentence's rank by words and after re-scoring, and how many were searched."""
    sentences = _scored.get("sentences") or []
    lexical = _scored.get("lexical") or []
    key = _squeezed(evidence)[:25]
    hits = [
        i for i, s in enumerate(sentences)
        if key[:12] in _squeezed(s.text) or key[-12:] in _squeezed(s.text)
    ]  # fmt: skip
    if not hits:
        return None, None, len(sentences)
    order = sorted(range(len(sentences)), key=lambda i: -lexical[i])
    scored = list(_scored.get("scored") or [])
    first = hits[0]
    return order.index(first), scored.index(first) if first in scored else None, len(sentences)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions")
    parser.add_argument("--stories", required=True)
    args = parser.parse_args(argv)
    settings = no_model_settings(get_settings())
    options = QAOptions.from_settings(settings, no_llm=True, small_model_budget=True)
    passages._passages = _recording
    by_story: dict[str, list[Any]] = {}
    for case in load_e2e_questions(Path(args.questions)):
        if case.evidence:
            by_story.setdefault(case.story, []).append(case)
    for story, cases in by_story.items():
        with story_services(settings) as services:
            ingest_story(services, Path(args.stories) / story, Path(settings.data_dir) / "e2e")
            for case in cases:
                _scored.clear()
                read = read_citations(services.qa().ask(case.question, options))
                found = evidence_found([c.text for c in read], case.evidence, case.answers)
                by_words, rescored, searched = ranks(case.evidence[0])
                print(
                    f"{case.id}\t{'read' if found else 'MISSED'}\tby words {by_words} of "
                    f"{searched}\tre-scored {rescored}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
