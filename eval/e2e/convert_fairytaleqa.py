"""Convert ../shared/eval/fairytaleqa_public.jsonl into the end-to-end question format.

Mechanical and deterministic: ids are kept exactly; ``story`` is ``story_file`` without its
leading ``stories/``; ``answers`` is ``answers`` followed by ``alt_answers``; ``evidence`` and
``attribute`` are copied; ``type`` is derived from the question's first word(s). Rows keep the
source order. Run from anywhere: ``python eval/e2e/convert_fairytaleqa.py [--source F] [--out F]``.

After the converted rows come the hand-written unanswerable questions of
``en_fairytaleqa_unanswerable.json`` (not FairytaleQA's: a false premise or a fact the story
never gives, ``unanswerable: true``; eval/e2e/README.md), copied as they are.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_SOURCE = HERE.parents[2] / "shared" / "eval" / "fairytaleqa_public.jsonl"
DEFAULT_OUT = HERE / "en_fairytaleqa.jsonl"
UNANSWERABLE = HERE / "en_fairytaleqa_unanswerable.json"
STORIES_PREFIX = "stories/"

# Longest prefix first: "how many" must win over "how".
TYPE_BY_PREFIX: tuple[tuple[str, str], ...] = (
    ("how many ", "count"),
    ("how much ", "count"),
    ("who ", "who"),
    ("whom ", "whom"),
    ("what ", "what"),
    ("where ", "where"),
    ("when ", "when"),
    ("why ", "why"),
    ("how ", "how"),
)


def question_type(question: str) -> str:
    lowered = question.strip().lower()
    for prefix, kind in TYPE_BY_PREFIX:
        if lowered.startswith(prefix):
            return kind
    raise ValueError(f"no question type for {question!r}: add its first word to TYPE_BY_PREFIX")


def convert_row(row: dict[str, Any]) -> dict[str, Any]:
    story_file: str = row["story_file"]
    if not story_file.startswith(STORIES_PREFIX):
        raise ValueError(f"{row['id']}: story_file {story_file!r} does not start with 'stories/'")
    return {
        "id": row["id"],
        "story": story_file.removeprefix(STORIES_PREFIX),
        "question": row["question"],
        "answers": [*row["answers"], *row["alt_answers"]],
        "evidence": list(row["evidence"]),
        "type": question_type(row["question"]),
        "attribute": row["attribute"],
    }


def convert(source: Path, out: Path, unanswerable: Path = UNANSWERABLE) -> int:
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line]
    lines = [json.dumps(convert_row(row), ensure_ascii=False) for row in rows]
    added = json.loads(unanswerable.read_text(encoding="utf-8"))
    lines += [json.dumps(row, ensure_ascii=False) for row in added]
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    count = convert(args.source, args.out)
    print(f"wrote {count} questions to {args.out}")


if __name__ == "__main__":
    main()
