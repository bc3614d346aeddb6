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

Usage: ``python eval/e2e/check_sets.py [--stories DIR] [--verbose]``; exits 1 on any error.
"""

from __future__ import annotations

import argparse
import json
import sys
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_STORIES = HERE.parents[2] / "shared" / "stories"
TYPES = {"who", "whom", "what", "where", "when", "with_whom", "after", "why", "how", "count"}
REQUIRED = ("id", "story", "question", "answers", "type")
FREE_FORM_PREFIX = "ftqa:"


def norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


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
        if row["type"] not in TYPES:
            errors.append(f"{where}: unknown type {row['type']!r}")
        if not row["answers"]:
            errors.append(f"{where}: no accepted answer")
        story_path = stories / row["story"]
        if not story_path.is_file():
            errors.append(f"{where}: story not found {story_path}")
            continue
        text = story_path.read_text(encoding="utf-8")
        for sentence in row.get("evidence", []):
            if sentence not in text:
                errors.append(f"{where}: evidence not verbatim in {row['story']}: {sentence!r}")
        if row.get("lang_mix") or row["id"].startswith(FREE_FORM_PREFIX):
            continue
        folded = norm(text)
        canonical = row["answers"][0]
        if norm(canonical) not in folded and "note" not in row:
            errors.append(f"{where}: canonical answer {canonical!r} not in text and no note")
        absent = [a for a in row["answers"] if norm(a) not in folded]
        if absent:
            flagged.append(f"{row['id']}: not in text {absent} (note: {row.get('note', '-')})")
    return errors, flagged


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=Path, default=DEFAULT_STORIES)
    parser.add_argument("--verbose", action="store_true", help="list variants absent from text")
    args = parser.parse_args()
    seen: set[str] = set()
    errors: list[str] = []
    for path in sorted(HERE.glob("*.jsonl")):
        file_errors, flagged = check_file(path, args.stories, seen)
        errors += file_errors
        rows = len(path.read_text(encoding="utf-8").splitlines())
        print(f"{path.name}: {rows} questions, {len(file_errors)} errors, "
              f"{len(flagged)} rows with variants absent from the text")
        if args.verbose:
            for item in flagged:
                print(f"  {item}")
    for error in errors:
        print(f"ERROR {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
