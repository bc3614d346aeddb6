"""How well the support check (storygraph.qa.verify.support) tells right answers from wrong ones,
without a model: the answers are made, the check is the app's.

    python -m benchmarks.support_check eval/e2e/ja.jsonl [eval/e2e/ja_fresh.jsonl ...]
                                       [--per-story N] [--stories ../shared/stories] [--json OUT]
                                       [--answers SAVED_RUN.json ...] [--no-across]

For every question of an e2e set, the story is ingested through the app's path for the small
embedded model (the parser reads it; the e2e ingest cache applies) and the engine builds the
citations the small model would read, without a model call (`compose_answer=False`). The
engine's own support check then reads made answers, each written as the small model writes
one (「犬です。[2]」 / "The dog. [2]", citing the first source the model read that holds it,
else [1]):

- the set's first accepted answer (answerable questions): the check should confirm it;
- distractors: every graph name in the sources read that is neither an accepted answer nor a
  name of the question, and the set's `wrong` strings: the check should not confirm them.
  For an unanswerable question every such name is a distractor.

It prints, per set and question kind: right answers confirmed (an upper bound of the share
answered as supported), distractors confirmed (each is a wrong answer that would be shown as
supported) and, for unanswerable questions, the share of distractors found to have no premise.
With `--answers` (saved `eval-e2e --json` runs, scored by the strict rule), the answers are a
real model's instead: each saved answer is checked over the sources the model read (they do not
depend on the model, so they are rebuilt without it), and the table gives the supported precision
(strict-right among the answers the check confirms), the coverage (confirmed among the answerable
questions), the unanswerable questions declined in the run and after the check (an unconfirmed
answer is replaced by "not sure" / "does not say"), and the strict accuracy before and after
(after: confirmed and right, or unanswerable and declined). No model call: the check's effect on
a run that was made without it.

The check's wrong confirmations are what the precision target is about; a real model's answers
mix right and wrong ones in other proportions, so these are the check's rates, not the app's
precision (that is `python -m storygraph eval-e2e`'s "supported precision").
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from storygraph.evaluation.answer_scoring import score_strict
from storygraph.evaluation.e2e import ingest_story, story_services
from storygraph.evaluation.harness import read_jsonl
from storygraph.llm.factory import ModelInfo
from storygraph.models import Citation
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.settings import Settings
from storygraph.text.language import answer_language
from storygraph.text.normalize import normalize_name

ROOT = Path(__file__).resolve().parents[1]
SMALL = ModelInfo("embedded", "support-check-bench", capable=False)
"""The small embedded model's parts (its retrieval budget and sources); never called."""


def _said(text: str, language: str, read: Sequence[Citation]) -> str:
    """`text` as the small model writes an answer, citing the first source holding it."""
    key = normalize_name(text)
    number = next((c.number for c in read if key and key in normalize_name(c.text)), None)
    if number is None:
        number = read[0].number if read else 1
    return f"{text}です。[{number}]" if language == "ja" else f"{text}. [{number}]"


def _overlaps(a: str, b: str) -> bool:
    x, y = normalize_name(a), normalize_name(b)
    return bool(x and y) and (x in y or y in x)


def check_set(
    settings: Settings,
    rows: Sequence[dict[str, Any]],
    stories: Path,
    cache: Path,
    saved: dict[str, dict[str, Any]] | None = None,
    across: bool = True,
) -> list[dict[str, Any]]:
    """One result row per made answer: question id, kind, whether it is the right one, verdict.
    With `saved` (a real run's rows by question id): one row per saved answer instead, its
    verdict beside the run's strict score (`replay`)."""
    llm = FakeListChatModel(responses=["(never called)"])
    options = replace(QAOptions.from_settings(settings), compose_answer=False)
    by_story: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_story[str(row["story"])].append(row)
    results: list[dict[str, Any]] = []
    for story, cases in by_story.items():
        with story_services(settings, llm=llm, info=SMALL) as services:
            ingest_story(services, stories / story, cache)
            engine = services.qa()
            parts = engine.parts_for(options)
            assert parts.support is not None  # the factory always builds the check
            names = services.store.entity_names()
            for case in cases:
                question = str(case["question"])
                answer = engine.ask(question, options)
                # the engine's own analysis: the question's translation too, for a question
                # asked across languages (the check reads the answer by it)
                analysis = parts.reader.read(question, [])
                language = "ja" if analysis.language == "ja" else "en"
                read = parts.context.within_budget(answer.citations).read
                accepted = [str(a) for a in case.get("answers") or []]
                asked = [e.node_id for e in analysis.entities] + [
                    e.mention for e in analysis.entities
                ]
                held = normalize_name(" ".join(c.text for c in read))
                distractors = [
                    str(r["id"])
                    for r in names
                    if normalize_name(str(r["id"])) in held
                    and len(normalize_name(str(r["id"]))) >= 2
                    and not any(_overlaps(str(r["id"]), a) for a in accepted + asked)
                ]
                distractors += [w for w in case.get("wrong") or [] if w not in distractors]
                made = [(accepted[0], True)] if accepted else []
                made += [(d, False) for d in distractors]
                checker = parts.support(names)
                if not across:
                    # the graph's check alone, as before the cross-language reading
                    # (storygraph.qa.verify.support_crosslang wraps it)
                    checker = getattr(checker, "inner", checker)
                if saved is not None:
                    row = saved.get(str(case.get("id", "")))
                    if row is not None:
                        results.append(replay(checker, analysis, answer, read, case, row))
                    continue
                for text, right in made:
                    said = _said(text, language, read)
                    support = checker.check(analysis, said, answer.citations, answer.facts, read)
                    results.append(
                        {
                            "id": case.get("id", ""),
                            "kind": case.get("type", "") or analysis.qtype.kind,
                            "unanswerable": bool(case.get("unanswerable")),
                            "answer": said,
                            "right": right,
                            "verdict": support.verdict,
                            "reason": support.reason,
                        }
                    )
    return results


def replay(
    checker: Any,
    analysis: Any,
    answer: Any,
    read: Sequence[Citation],
    case: dict[str, Any],
    row: dict[str, Any],
) -> dict[str, Any]:
    """A real model's saved answer (an `eval-e2e --json` row) checked over the same sources the
    model read (they do not depend on the model), in the language it is written in, and scored
    by today's strict rule. A run made with the check saved the model's own words
    (`model_answer`) where the check replaced them: those are checked and scored instead of the
    text shown."""
    text = str(row.get("model_answer") or row.get("answer", ""))
    # scored by today's strict rule (the run's own score is of its day's rule and sets)
    strict = score_strict(
        text,
        [str(a) for a in case.get("answers") or []],
        [str(w) for w in case.get("wrong") or []],
        unanswerable=bool(case.get("unanswerable")),
    )
    right, declined = strict.correct, strict.declined
    # the answer's language as the answer step reads it
    # (storygraph.qa.generation.checks.judge_reply):
    # an English question's answer may be written in Japanese (「とんとん麦」)
    support = checker.check(
        analysis, text, answer.citations, answer.facts, read, answer_language(text)
    )
    return {
        "id": case.get("id", ""),
        "kind": case.get("type", ""),
        "unanswerable": bool(case.get("unanswerable")),
        "answer": text,
        "strict_correct": right,
        "declined": declined,
        "verdict": support.verdict,
        "check": support.check,
        "reason": support.reason,
    }


def replay_table(name: str, rows: Sequence[dict[str, Any]]) -> list[str]:
    """A replayed run: what the check makes of the model's answers (see `main`)."""
    answerable = [r for r in rows if not r["unanswerable"]]
    unanswerable = [r for r in rows if r["unanswerable"]]
    shown = [r for r in answerable if r["verdict"] == "supported"]
    declined_after = [
        r for r in unanswerable if r["declined"] or r["verdict"] in ("not supported", "no premise")
    ]
    before = sum(r["strict_correct"] for r in rows)
    after = sum(r["strict_correct"] for r in shown) + len(declined_after)
    return [
        f"| {name} | {len(rows)} | {_share(sum(r['strict_correct'] for r in shown), len(shown))} "
        f"| {_share(len(shown), len(answerable))} "
        f"| {_share(sum(r['declined'] for r in unanswerable), len(unanswerable))} → "
        f"{_share(len(declined_after), len(unanswerable))} "
        f"| {_share(before, len(rows))} → {_share(after, len(rows))} |"
    ]


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.2f})" if whole else "–"


def table(name: str, results: Sequence[dict[str, Any]]) -> list[str]:
    """The Markdown rows of one set: overall, then per question kind."""
    groups: dict[str, list[dict[str, Any]]] = {"all": list(results)}
    for r in results:
        groups.setdefault(r["kind"] if not r["unanswerable"] else "unanswerable", []).append(r)
    lines = []
    for kind, rows in groups.items():
        right = [r for r in rows if r["right"]]
        wrong = [r for r in rows if not r["right"]]
        unanswerable = [r for r in wrong if r["unanswerable"]]
        confirmed = _share(sum(r["verdict"] == "supported" for r in right), len(right))
        slipped = _share(sum(r["verdict"] == "supported" for r in wrong), len(wrong))
        no_premise = _share(
            sum(r["verdict"] == "no premise" for r in unanswerable), len(unanswerable)
        )
        lines.append(f"| {name} | {kind} | {confirmed} | {slipped} | {no_premise} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.support_check", description=__doc__)
    parser.add_argument("questions", type=Path, nargs="+")
    parser.add_argument("--per-story", type=int, default=0, help="only the first N per story")
    parser.add_argument("--stories", type=Path, default=ROOT.parent / "shared" / "stories")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--answers",
        type=Path,
        action="append",
        help="a saved `eval-e2e --json` run: check its answers instead of made ones",
    )
    parser.add_argument(
        "--no-across",
        action="store_true",
        help="the graph's check alone, without reading an answer across languages (main's)",
    )
    args = parser.parse_args(argv)
    saved: dict[str, dict[str, Any]] | None = None
    if args.answers:
        saved = {}
        for path in args.answers:
            for row in json.loads(path.read_text(encoding="utf-8")).get("questions", []):
                saved.setdefault(str(row.get("id")), row)
    settings = Settings()
    cache = Path(settings.data_dir) / "e2e"
    every: dict[str, list[dict[str, Any]]] = {}
    lines = [
        "| set | kind | right answers confirmed | distractors confirmed "
        "| unanswerable: no premise |",
        "|---|---|---|---|---|",
    ]
    if saved is not None:
        lines = [
            "| set | questions | supported precision | coverage "
            "| unanswerable declined: run → checked | strict: run → checked |",
            "|---|---|---|---|---|---|",
        ]
    for path in args.questions:
        rows = [row for _, row in read_jsonl(path)]
        if args.per_story:
            seen: dict[str, int] = defaultdict(int)
            kept = []
            for row in rows:
                seen[row["story"]] += 1
                if seen[row["story"]] <= args.per_story:
                    kept.append(row)
            rows = kept
        print(f"{path.name}: {len(rows)} questions", file=sys.stderr)
        every[path.name] = check_set(
            settings, rows, args.stories, cache, saved, across=not args.no_across
        )
        if saved is not None:
            lines += replay_table(path.stem, every[path.name])
        else:
            lines += table(path.stem, every[path.name])
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(every, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
