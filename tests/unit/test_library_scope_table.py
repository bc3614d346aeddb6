"""eval/e2e/library_scope.py sorts a library's answers by the stories they cite."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load() -> ModuleType:
    path = ROOT / "eval" / "e2e" / "library_scope.py"
    spec = importlib.util.spec_from_file_location("library_scope", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_answer_is_sorted_by_whether_it_cites_its_own_story_and_others() -> None:
    scope = load()
    rows = [
        {"cites_own_story": True, "other_stories": []},
        {"cites_own_story": True, "other_stories": ["b.txt"]},
        {"cites_own_story": False, "other_stories": ["b.txt", "c.txt"]},
        {"cites_own_story": False, "other_stories": []},
        {"cites_own_story": True, "other_stories": []},
    ]
    assert scope.counts(rows) == {"only its story": 2, "only another": 1, "both": 1, "none": 1}


def test_a_run_saved_before_the_field_reads_as_not_citing_its_story() -> None:
    scope = load()
    assert scope.kind({"other_stories": []}) == "none"
    assert scope.kind({"other_stories": ["b.txt"]}) == "only another"
