"""The reading position (storygraph.store.reading): read once from the store, the decline's
wording, a story stored before chapters named, never read silently whole."""

from __future__ import annotations

from typing import Any

import pytest

from storygraph.errors import InputError
from storygraph.models import DocumentInfo
from storygraph.qa.generation.answer import UNKNOWN
from storygraph.qa.generation.checks import so_far
from storygraph.store.reading import EVERYTHING, SO_FAR, Reading, reading_for


class _Store:
    def __init__(
        self, rows: list[dict[str, Any]], entities: list[dict[str, Any]] | None = None
    ) -> None:
        self.rows = rows
        self.entities = entities or []
        self.asked: list[tuple[int | None, tuple[str, ...]]] = []

    def readable_chunks(
        self, until: int | None, documents: tuple[str, ...] = (), *, since: int = 0
    ) -> list[dict[str, Any]]:
        self.asked.append((until, tuple(documents)))
        return self.rows

    def entity_chunks(self, documents: tuple[str, ...] = ()) -> list[dict[str, Any]]:
        return self.entities

    def list_documents(self) -> list[DocumentInfo]:
        return [DocumentInfo("old", "old.txt", "", "ja", 0)]


def test_no_position_reads_everything_without_asking_the_store() -> None:
    store = _Store([])
    assert reading_for(store, None, ("d",)) is EVERYTHING  # type: ignore[arg-type]
    assert store.asked == [] and EVERYTHING.allows("any:0000")


def test_a_position_is_the_chunks_read_of_the_stories_in_scope() -> None:
    store = _Store([{"id": "d:0000", "chapter": 0, "document_id": "d"},
                    {"id": "d:0001", "chapter": 1, "document_id": "d"}])  # fmt: skip
    reading = reading_for(store, 1, ("d",))  # type: ignore[arg-type]
    assert store.asked == [(1, ("d",))]
    assert reading.allows("d:0001") and not reading.allows("d:0002")
    assert reading.warnings == []


def test_a_story_stored_before_chapters_is_read_whole_and_said_so() -> None:
    store = _Store([{"id": "old:0000", "chapter": None, "document_id": "old"}])
    reading = reading_for(store, 2)  # type: ignore[arg-type]
    assert reading.allows("old:0000")
    assert reading.warnings and "old.txt" in reading.warnings[0]


def test_a_negative_chapter_is_an_input_error() -> None:
    with pytest.raises(InputError):
        reading_for(_Store([]), -1)  # type: ignore[arg-type]


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_decline_within_a_position_says_not_read_so_far(lang: str) -> None:
    within = Reading(1, frozenset())
    assert so_far(UNKNOWN[lang], within) == SO_FAR[lang]
    assert so_far(UNKNOWN[lang], EVERYTHING) == UNKNOWN[lang]
    assert so_far("桃太郎はこの話の文からは分かりません", within) == "桃太郎は" + SO_FAR["ja"][:-1]


def test_an_entity_first_named_later_is_unread_and_its_name_row_left_out() -> None:
    store = _Store(
        [{"id": "d:0000", "chapter": 0, "document_id": "d"},
         {"id": "d:0001", "chapter": 1, "document_id": "d"}],
        [{"key": "d:fox", "chunk_ids": ["d:0001", "d:0003"]},
         {"key": "d:owl", "chunk_ids": ["d:0002"]},
         {"key": ":imported", "chunk_ids": []}],
    )  # fmt: skip
    reading = reading_for(store, 1, ("d",))  # type: ignore[arg-type]
    assert reading.unread == frozenset({"d:owl"})
    assert reading.knows("d:fox") and not reading.knows("d:owl") and reading.knows(":imported")
    rows = [{"id": "fox", "key": "d:fox"}, {"id": "owl", "key": "d:owl"}]
    assert [r["id"] for r in reading.names(rows)] == ["fox"]
    assert reading.names(rows) is reading.names(rows)  # kept: the name index is not rebuilt
    assert EVERYTHING.names(rows) is rows


def test_a_relation_row_keeps_only_what_was_read() -> None:
    from storygraph.store.story_time import position

    reading = Reading(1, frozenset({"d:0001"}))
    early, late = position("d", 40, 1), position("d", 300, 3)
    row = {
        "chunk_ids": ["d:0001", "d:0003"],
        "evidence": ["A fox found a lantern.", "The fox found a key."],
        "positions": [early, late],
        "story_order": early,
        "story_order_last": late,
        "invalid_at": late,
    }
    kept = reading.relation(row)
    assert kept is not None
    assert kept["chunk_ids"] == ["d:0001"] and kept["evidence"] == ["A fox found a lantern."]
    assert kept["positions"] == [early] and kept["story_order"] == early
    assert kept["story_order_last"] == early and kept["invalid_at"] == ""
    assert reading.relation({"chunk_ids": ["d:0003"], "evidence": ["later"]}) is None
    assert EVERYTHING.relation(row) == row


def test_within_a_position_not_found_in_the_graph_reads_not_read_so_far() -> None:
    from storygraph.qa.generation.checks import NO_ENTITY

    within = Reading(1, frozenset())
    assert so_far(NO_ENTITY["en"], within) == SO_FAR["en"]
    assert so_far(NO_ENTITY["ja"], within) == SO_FAR["ja"]
    assert so_far(NO_ENTITY["en"], EVERYTHING) == NO_ENTITY["en"]
