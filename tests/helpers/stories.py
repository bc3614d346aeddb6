"""The shared stories, for tests that loop over them: a loop over no file passes whatever the
code does, so every listing here fails when it finds nothing."""

from __future__ import annotations

from pathlib import Path

STORIES = Path(__file__).resolve().parents[2].parent / "shared" / "stories"


def story_files(pattern: str, root: Path = STORIES) -> list[Path]:
    """The files under `root` matching `pattern`, sorted; fails the test when there are none."""
    paths = sorted(root.glob(pattern))
    assert paths, f"no story matches {pattern!r} under {root}: the test would check nothing"
    return paths
