"""The story listing the loops over ../shared/stories use fails on an empty match."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.stories import story_files


def test_an_empty_listing_fails_the_test(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="would check nothing"):
        story_files("*/*.txt", tmp_path)


def test_a_listing_returns_the_files_sorted(tmp_path: Path) -> None:
    for name in ("b", "a"):
        (tmp_path / "ja").mkdir(exist_ok=True)
        (tmp_path / "ja" / f"{name}.txt").write_text("x", encoding="utf-8")
    assert [p.name for p in story_files("ja/*.txt", tmp_path)] == ["a.txt", "b.txt"]
