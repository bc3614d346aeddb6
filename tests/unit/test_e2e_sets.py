"""The frozen end-to-end question sets in eval/e2e stay well formed and tied to the stories.

Every evidence string must be a verbatim substring of its story, every hand-written question's
canonical answer must occur in the text (or carry a note), and the FairytaleQA conversion must
reproduce the committed file byte for byte.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import missing_shared

ROOT = Path(__file__).resolve().parents[2]
E2E = ROOT / "eval" / "e2e"
SHARED = ROOT.parent / "shared"
STORIES = SHARED / "stories"
FAIRYTALEQA = SHARED / "eval" / "fairytaleqa_public.jsonl"


@pytest.fixture
def shared_files() -> None:
    """The stories and FairytaleQA file beside the repo: missing, the test fails, never skips."""
    for path in (STORIES, FAIRYTALEQA):
        if not path.exists():
            missing_shared(path)


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, E2E / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SETS = [
    "ja.jsonl",
    "mixed.jsonl",
    "en_fairytaleqa.jsonl",
    "ja_fresh.jsonl",
    "en_fresh.jsonl",
    "mixed_fresh.jsonl",
    "mixed_dev2.jsonl",
]


@pytest.mark.parametrize("name", SETS)
def test_set_matches_its_stories(name: str, shared_files: None) -> None:
    check_sets = load("check_sets")
    errors, _ = check_sets.check_file(E2E / name, STORIES, set())
    assert errors == []


def test_ja_set_is_large_enough_and_marks_its_kinds() -> None:
    rows = [json.loads(line) for line in (E2E / "ja.jsonl").read_text("utf-8").splitlines()]
    assert len(rows) >= 44
    assert len({row["story"] for row in rows}) >= 4
    assert any(row.get("needs_two_facts") for row in rows)
    assert any("wrong" in row and "akutagawa" in row["story"] for row in rows)
    mixed = [json.loads(line) for line in (E2E / "mixed.jsonl").read_text("utf-8").splitlines()]
    assert mixed and all(row["lang_mix"] and row["story"].startswith("ja/") for row in mixed)


def test_fairytaleqa_conversion_reproduces_committed_file(
    tmp_path: Path, shared_files: None
) -> None:
    convert = load("convert_fairytaleqa")
    out = tmp_path / "en.jsonl"
    assert convert.convert(FAIRYTALEQA, out) == 68 + 8  # FairytaleQA's, then the unanswerable
    assert out.read_bytes() == (E2E / "en_fairytaleqa.jsonl").read_bytes()


def test_question_type_prefers_how_many_over_how() -> None:
    convert = load("convert_fairytaleqa")
    assert convert.question_type("How many tin soldiers are there?") == "count"
    assert convert.question_type("How did Momotaro return home?") == "how"
    assert convert.question_type("Who found the tin soldier?") == "who"
    with pytest.raises(ValueError, match="no question type"):
        convert.question_type("Did the soldier melt?")


@pytest.mark.parametrize("name", SETS)
def test_every_set_asks_unanswerable_questions(name: str) -> None:
    rows = [json.loads(line) for line in (E2E / name).read_text("utf-8").splitlines()]
    unanswerable = [row for row in rows if row.get("unanswerable")]
    assert len(unanswerable) >= 0.1 * len(rows), (len(unanswerable), len(rows))
    assert all(row["answers"] == [] and row["note"] for row in unanswerable)


def test_the_check_catches_bad_wrong_lists_and_unanswerable_rows() -> None:
    check = load("check_sets").check_answer_kinds
    question = "桃太郎が猿に出会ったのはどこ？"
    row = {"id": "q", "question": question, "answers": ["森"], "type": "where"}
    assert "no `wrong` list" in check(row, "q")[0]
    assert check({**row, "wrong": ["野原", "山"]}, "q") == []
    assert "occurs in the question" in check({**row, "wrong": ["猿"]}, "q")[0]
    assert "overlaps accepted" in check({**row, "wrong": ["森の中"]}, "q")[0]
    unanswerable = {**row, "answers": [], "unanswerable": True}
    assert "needs a note" in check(unanswerable, "q")[0]
    assert check({**unanswerable, "note": "never given"}, "q") == []
    assert "no answers" in check({**unanswerable, "note": "n", "answers": ["森"]}, "q")[0]
    assert "no accepted answer" in check({**row, "answers": []}, "q")[0]


def test_evidence_written_as_one_string_is_an_error() -> None:
    """A string would pass the verbatim check letter by letter; eval-e2e reads only lists."""
    check_lists = load("check_sets").check_lists
    row = {"answers": ["猿"], "wrong": ["犬"], "evidence": "猿が来ました。"}
    assert check_lists(row, "t:1") == ["t:1: `evidence` must be a list of strings"]
    assert check_lists({**row, "evidence": ["猿が来ました。"]}, "t:1") == []
