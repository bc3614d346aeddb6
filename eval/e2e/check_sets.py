"""Check the frozen end-to-end question sets against the story texts.

For every row of every ``eval/e2e/*.jsonl`` file:

- the required fields are present, ids are unique and ``type`` is one of the known types;
- every ``evidence`` string is a verbatim substring of the story file;
- the first accepted answer (the canonical one) occurs, after NFKC and case folding, in the
  story text, unless the row carries a ``note`` (a flagged paraphrase) or is an English
  question over a Japanese story (``lang_mix``), whose English answers cannot occur in the
  Japanese text. The further answers are spelling variants (kana/kanji, honorifics) or
  paraphrases; those absent from the text are listed for review, not failed.
  FairytaleQA rows (ids ``ftqa:``) carry the experts' free-form answers, which often paraphrase
  the text, so for them only the evidence is checked.
- an ``unanswerable`` row (the story does not give the answer: a false premise or a fact it
  never tells) has ``answers: []``, no ``wrong`` and no ``evidence``, and a ``note`` saying why;
  every other row has at least one accepted answer;
- a row whose accepted answers include Japanese of one or two characters (犬, 森) has a
  ``wrong`` list (the story's other characters or things a wrong answer would name), unless it
  is an English question (``lang_mix``);
- no ``wrong`` string occurs in the question (an answer that repeats the question would trip
  it) or overlaps an accepted answer (one containing the other). Wrong strings absent from
  the story (folk memory, ``ポチ``) are listed for review, not failed.

The frozen test split ``eval/test/test.jsonl`` is checked the same way against its own stories
(``eval/test/stories``, or ``--test-stories DIR``). Its texts are not committed (they live beside
the repo like ``../shared/stories``); when the default directory is absent the split is reported
as not checked, while a ``--test-stories`` directory that is absent is an error.

Usage: ``python eval/e2e/check_sets.py [--stories DIR] [--test-set FILE] [--test-stories DIR]
[--verbose]``; exits 1 on any error.
"""

from __future__ import annotations

import argparse
import json
import sys
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_STORIES = HERE.parents[2] / "shared" / "stories"
TEST_SPLIT = HERE.parent / "test"
DEFAULT_TEST_SET = TEST_SPLIT / "test.jsonl"
DEFAULT_TEST_STORIES = TEST_SPLIT / "stories"
TYPES = {"who", "whom", "what", "where", "when", "with_whom", "after", "why", "how", "count"}
REQUIRED = ("id", "story", "question", "answers", "type")
SHORT_JA = 2
FREE_FORM_PREFIX = "ftqa:"


def norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def is_japanese(text: str) -> bool:
    return any("\u3040" <= ch <= "\u30ff" or "\u4e00" <= ch <= "\u9fff" for ch in text)


def check_lists(row: dict, where: str) -> list[str]:
    """`answers`, `wrong` and `evidence` are lists of strings: the only shape eval-e2e reads (a
    string would pass the verbatim check letter by letter)."""
    return [
        f"{where}: `{key}` must be a list of strings"
        for key in ("answers", "wrong", "evidence")
        if key in row
        and not (isinstance(row[key], list) and all(isinstance(x, str) for x in row[key]))
    ]


def check_answer_kinds(row: dict, where: str) -> list[str]:
    """The `unanswerable` and `wrong` rules of the module docstring (no story needed)."""
    errors: list[str] = []
    if row.get("unanswerable"):
        if row["answers"] or row.get("wrong") or row.get("evidence"):
            errors.append(f"{where}: an unanswerable row has no answers, wrong or evidence")
        if not row.get("note"):
            errors.append(f"{where}: an unanswerable row needs a note saying why")
        return errors
    if not row["answers"]:
        errors.append(f"{where}: no accepted answer")
    short = [a for a in row["answers"] if is_japanese(a) and len(a.replace(" ", "")) <= SHORT_JA]
    if short and not row.get("wrong") and not row.get("lang_mix"):
        errors.append(f"{where}: short accepted answers {short} and no `wrong` list")
    question = norm(row["question"])
    for bad in row.get("wrong", []):
        key = norm(bad)
        if key in question:
            errors.append(f"{where}: wrong string {bad!r} occurs in the question")
        for good in row["answers"]:
            if key in norm(good) or norm(good) in key:
                errors.append(f"{where}: wrong string {bad!r} overlaps accepted {good!r}")
    return errors


def check_file(path: Path, stories: Path, seen: set[str]) -> tuple[list[str], list[str]]:
    errors: list[str] = []
    flagged: list[str] = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        where = f"{path.name}:{lineno}"
        row = json.loads(line)
        missing = [key for key in REQUIRED if key not in row]
        if missing:
            errors.append(f"{where}: missing {missing}")
            continue
        if row["id"] in seen:
            errors.append(f"{where}: duplicate id {row['id']}")
        seen.add(row["id"])
        shape = check_lists(row, where)
        if shape:
            errors += shape
            continue
        if row["type"] not in TYPES:
            errors.append(f"{where}: unknown type {row['type']!r}")
        errors += check_answer_kinds(row, where)
        story_path = stories / row["story"]
        if not story_path.is_file():
            errors.append(f"{where}: story not found {story_path}")
            continue
        text = story_path.read_text(encoding="utf-8")
        for sentence in row.get("evidence", []):
            if sentence not in text:
                errors.append(f"{where}: evidence not verbatim in {row['story']}: {sentence!r}")
        folded = norm(text)
        absent_wrong = [w for w in row.get("wrong", []) if norm(w) not in folded]
        if absent_wrong and not row.get("lang_mix"):
            flagged.append(f"{row['id']}: wrong strings not in text {absent_wrong}")
        if row.get("unanswerable"):
            continue
        if row.get("lang_mix") or row["id"].startswith(FREE_FORM_PREFIX):
            continue
        canonical = row["answers"][0]
        if norm(canonical) not in folded and "note" not in row:
            errors.append(f"{where}: canonical answer {canonical!r} not in text and no note")
        absent = [a for a in row["answers"] if norm(a) not in folded]
        if absent:
            flagged.append(f"{row['id']}: not in text {absent} (note: {row.get('note', '-')})")
    return errors, flagged


def report(path: Path, stories: Path, seen: set[str], verbose: bool) -> list[str]:
    """Check one set against its stories and print its summary line."""
    errors, flagged = check_file(path, stories, seen)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    unanswerable = sum(bool(row.get("unanswerable")) for row in rows)
    print(
        f"{path.name}: {len(rows)} questions ({unanswerable} unanswerable), "
        f"{len(errors)} errors, {len(flagged)} rows flagged for review"
    )
    if verbose:
        for item in flagged:
            print(f"  {item}")
    return errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=Path, default=DEFAULT_STORIES)
    parser.add_argument(
        "--test-set",
        type=Path,
        default=DEFAULT_TEST_SET,
        help="the frozen test split (default eval/test/test.jsonl)",
    )
    parser.add_argument(
        "--test-stories",
        type=Path,
        default=None,
        help="the test split's stories (default eval/test/stories)",
    )
    parser.add_argument("--verbose", action="store_true", help="list variants absent from text")
    args = parser.parse_args()
    seen: set[str] = set()
    errors: list[str] = []
    for path in sorted(HERE.glob("*.jsonl")):
        errors += report(path, args.stories, seen, args.verbose)
    test_stories = args.test_stories or DEFAULT_TEST_STORIES
    if not args.test_set.is_file():
        errors.append(f"test split not found: {args.test_set}")
    elif test_stories.is_dir():
        errors += report(args.test_set, test_stories, seen, args.verbose)
    elif args.test_stories is not None:
        errors.append(f"test split stories not found: {test_stories}")
    else:
        print(
            f"{args.test_set.name}: not checked, its stories are not at {test_stories} "
            "(pass --test-stories DIR)",
            file=sys.stderr,
        )
    for error in errors:
        print(f"ERROR {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
