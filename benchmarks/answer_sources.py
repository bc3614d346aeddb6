"""What the small model reads: the same questions, the same sources, in different arrangements.

    python -m benchmarks.answer_sources eval/e2e/ja.jsonl [--variant NAME ...] [--per-story N]
                                        [--stories ../shared/stories] [--json OUT]

For every question of an e2e set, the story is ingested through the app's path (the e2e ingest
cache applies), the engine builds the answer's citations without a model call
(`compose_answer=False`), and the engine's own answerer for the configured model (the embedded
one by default: the small model's prompt and budget) then reads them, streamed, once per
variant of the sources:

- `v9`: the citations as the engine orders them;
- `merge`: a source whose text an earlier one holds is left out, and one holding an earlier
  one's text gives it its text in that earlier place;
- `trim`: later sources lose the text an earlier one already gives;
- `closest-first`: the source sharing the most of the question's terms (sentence search's
  terms) first;
- `lead-sentence`: that source's single best sentence added first, as its own source.

The engine's context builder cuts each variant to the answerer's budget
(`context.small_sources`). It prints, per variant, the answers right (the e2e scoring rule),
those right against v9 and wrong, and the medians of the first token and the whole answer
(docs/EVALUATION.md v10). Not part of `python -m benchmarks`: it needs the model and takes about
five minutes per variant for the 80 Japanese questions on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from storygraph.evaluation.answer_scoring import score_answer
from storygraph.evaluation.e2e import (
    E2EQuestion,
    Stopwatch,
    first_per_story,
    ingest_story,
    load_e2e_questions,
    story_services,
)
from storygraph.evaluation.harness import configured_model
from storygraph.llm.factory import ModelInfo
from storygraph.models import Citation
from storygraph.qa.generation.answer import Answerer
from storygraph.qa.generation.checks import says_unknown
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.question.analysis import QuestionAnalysis, analyse
from storygraph.qa.retrieval.context import ContextBuilder
from storygraph.qa.retrieval.passages import MIN_SENTENCE_CHARS
from storygraph.settings import Settings
from storygraph.text.chunking import split_sentences
from storygraph.text.normalize import normalize_name
from storygraph.text.terms import passage_terms

ROOT = Path(__file__).resolve().parents[1]

Arrange = Callable[[list[str], str, str], list[str]]


def _as_is(texts: list[str], question: str, language: str) -> list[str]:
    return texts


def _merge(texts: list[str], question: str, language: str) -> list[str]:
    kept: list[str] = []
    for text in texts:
        key = normalize_name(text)
        if any(key in normalize_name(k) for k in kept):
            continue
        inner = [i for i, k in enumerate(kept) if normalize_name(k) in key]
        if inner:
            kept[inner[0]] = text
            for i in reversed(inner[1:]):
                del kept[i]
        else:
            kept.append(text)
    return kept


def _trim(texts: list[str], question: str, language: str) -> list[str]:
    kept: list[str] = []
    for text in texts:
        for earlier in kept:
            text = text.replace(earlier.strip(), " " if language != "ja" else "")
        text = " ".join(text.split()) if language != "ja" else text.strip()
        if len(text) >= MIN_SENTENCE_CHARS and not any(text in k for k in kept):
            kept.append(text)
    return kept


def _shared(text: str, wanted: set[str], language: str) -> int:
    return len(wanted & set(passage_terms(text, language)))


def _closest_first(texts: list[str], question: str, language: str) -> list[str]:
    wanted = set(passage_terms(question, language))
    if not texts or not wanted:
        return texts
    best = max(range(len(texts)), key=lambda i: _shared(texts[i], wanted, language))
    return [texts[best], *texts[:best], *texts[best + 1 :]]


def _lead_sentence(texts: list[str], question: str, language: str) -> list[str]:
    wanted = set(passage_terms(question, language))
    sentences = [text[start:end].strip() for text in texts for start, end in split_sentences(text)]
    sentences = [s for s in dict.fromkeys(sentences) if len(s) >= MIN_SENTENCE_CHARS]
    if not wanted or not sentences:
        return texts
    best = max(sentences, key=lambda s: _shared(s, wanted, language))
    if not _shared(best, wanted, language) or normalize_name(best) == normalize_name(texts[0]):
        return texts
    return [best, *texts]


VARIANTS: dict[str, Arrange] = {
    "v9": _as_is,
    "merge": _merge,
    "trim": _trim,
    "closest-first": _closest_first,
    "lead-sentence": _lead_sentence,
}


Sources = tuple[QuestionAnalysis, list[str]]


def sources_for(
    settings: Settings,
    questions: Sequence[E2EQuestion],
    stories: Path,
    llm: Any,
    info: ModelInfo,
) -> tuple[Answerer, ContextBuilder, list[Sources]]:
    """The engine's answerer and context builder, and every question's analysis with its
    citation texts as the engine orders them (the model is not called)."""
    options = replace(QAOptions.from_settings(settings), compose_answer=False)
    by_story: dict[str, list[int]] = {}
    for i, case in enumerate(questions):
        by_story.setdefault(case.story, []).append(i)
    found: list[Sources | None] = [None] * len(questions)
    answerer: Answerer | None = None
    context: ContextBuilder | None = None
    cache = Path(settings.data_dir) / "e2e"
    for story, indexes in by_story.items():
        with story_services(settings, llm=llm, info=info) as services:
            ingest_story(services, stories / story, cache)
            engine = services.qa()
            parts = engine.parts_for(QAOptions.from_settings(settings))  # the answer composed
            answerer, context = parts.answerer, parts.context
            for i in indexes:
                question = questions[i].question
                answer = engine.ask(question, options)
                names = services.store.entity_names()
                analysis = analyse(question, names, parts.reader.finder, [])
                found[i] = (analysis, [c.text for c in answer.citations if c.kind != "graph"])
    assert answerer is not None and context is not None and all(s is not None for s in found)
    return answerer, context, [s for s in found if s is not None]


def read_all(
    answerer: Answerer,
    context: ContextBuilder,
    questions: Sequence[E2EQuestion],
    sources: Sequence[Sources],
    arrange: Arrange,
) -> list[dict[str, Any]]:
    rows = []
    for case, (analysis, texts) in zip(questions, sources, strict=True):
        language = "ja" if analysis.language == "ja" else "en"
        arranged = arrange(list(texts), case.question, language)
        cited = [Citation(n, "", "", t, "sentence") for n, t in enumerate(arranged, start=1)]
        given = context.within_budget(cited)
        watch = Stopwatch()
        try:
            reply = answerer.answer(analysis, [], given, [], watch.on_token)
        except ValueError:  # an empty answer: wrong, as the app would count it
            reply = ""
        total = watch.elapsed()
        read = given.read
        if says_unknown(reply) and read:
            reply += f" 「{read[0].text}」"  # the app shows the closest sentence beside a refusal
        right = score_answer(reply, case.answers, case.wrong).correct
        rows.append(
            {
                "id": case.id,
                "answer": reply,
                "right": right,
                "first": watch.first_token(total),
                "total": total,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.answer_sources", description=__doc__
    )
    parser.add_argument("questions", type=Path)
    parser.add_argument("--variant", action="append", choices=sorted(VARIANTS))
    parser.add_argument("--per-story", type=int, default=0, help="only the first N per story")
    parser.add_argument("--stories", type=Path, default=ROOT.parent / "shared" / "stories")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    questions = load_e2e_questions(args.questions)
    if args.per_story:
        questions = first_per_story(questions, args.per_story)
    settings = Settings()
    names = args.variant or list(VARIANTS)
    if "v9" not in names:
        names = ["v9", *names]
    results: dict[str, list[dict[str, Any]]] = {}
    with configured_model(settings) as (llm, info):
        if llm is None:
            print("no model is configured or installed", file=sys.stderr)
            return 2
        answerer, context, sources = sources_for(settings, questions, args.stories, llm, info)
        llm.invoke("hi", extra_body={"max_tokens": 1})  # loaded before the first timing
        for name in names:
            results[name] = read_all(answerer, context, questions, sources, VARIANTS[name])
            print(f"{name}: done", file=sys.stderr, flush=True)
    base = {r["id"]: r["right"] for r in results["v9"]}
    print(
        f"| variant | right of {len(questions)} | gained / lost against v9 "
        "| first token p50 s | answer p50 s |"
    )
    print("|---|---|---|---|---|")
    for name, rows in results.items():
        gained = sum(r["right"] and not base[r["id"]] for r in rows)
        lost = sum(base[r["id"]] and not r["right"] for r in rows)
        first = statistics.median(r["first"] for r in rows) if rows else 0.0
        total = statistics.median(r["total"] for r in rows) if rows else 0.0
        print(
            f"| {name} | {sum(r['right'] for r in rows)} | {gained} / {lost} | "
            f"{first:.2f} | {total:.2f} |"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
