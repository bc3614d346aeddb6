"""The files of deleted stories kept for undo (storygraph.store.removals)."""

from __future__ import annotations

from pathlib import Path

import pytest

from storygraph.errors import StoreError
from storygraph.store.removals import RemovedStories, removed_dir


def _subgraph(document_id: str, name: str) -> dict[str, object]:
    document = {"id": document_id, "name": name, "sha256": "x"}
    chunks = [{"id": f"{document_id}:0000"}]
    return {"document": document, "chunks": chunks, "mentions": [], "entities": [],
            "relations": [], "same_as": []}  # fmt: skip


def test_a_copy_is_listed_newest_first_and_forgotten(tmp_path: Path) -> None:
    kept = RemovedStories(removed_dir(tmp_path, "storygraph"))
    assert kept.stories() == []
    first = kept.save(_subgraph("aaa", "a.txt"), deleted_at="2026-01-01T00:00:00+00:00",
                      entities=3, relations=2)  # fmt: skip
    kept.save(_subgraph("bbb", "b.txt"), deleted_at="2026-01-02T00:00:00+00:00",
              entities=1, relations=0)  # fmt: skip
    assert first.path == tmp_path / "deleted_stories" / "storygraph" / "deleted-aaa.json"
    assert [(s.name, s.chunks, s.entities_deleted) for s in kept.stories()] == [
        ("b.txt", 1, 1),
        ("a.txt", 1, 3),
    ]
    assert kept.update_counts("aaa", entities=4, relations=2).entities_deleted == 4
    assert [s.entities_deleted for s in kept.stories()] == [1, 4]  # read again once changed
    kept.forget("bbb")
    assert [s.name for s in kept.stories()] == ["a.txt"]
    kept.forget_all()
    assert kept.stories() == []
    assert not list(kept.directory.glob("*.tmp"))


def test_a_broken_copy_is_an_error_naming_it_never_a_silent_empty_list(tmp_path: Path) -> None:
    kept = RemovedStories(tmp_path / "removed")
    kept.directory.mkdir()
    (kept.directory / "deleted-ccc.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(StoreError, match="cannot be read"):
        kept.stories()
    with pytest.raises(StoreError, match="can no longer be restored"):
        kept.load("ddd")
    with pytest.raises(ValueError, match="not a document id"):
        kept.path("../x")
