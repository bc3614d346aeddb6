"""The names index (storygraph.qa.name_index): built once per names list, and the finder's
dictionary and word steps find through it what a walk over every name finds."""

from __future__ import annotations

from typing import Any

from storygraph.qa.entities import LocalEntityFinder, dictionary_match
from storygraph.qa.name_index import name_index
from storygraph.text.normalize import normalize_name


def _names(ids: list[str]) -> list[dict[str, Any]]:
    return [{"id": i, "norm": normalize_name(i), "type": "Character"} for i in ids]


def _walk(question: str, names: list[dict[str, Any]]) -> set[str]:
    """Every name whose normalised form occurs in the normalised question (no boundaries)."""
    text = normalize_name(question)
    return {str(r["id"]) for r in names if r["norm"] and r["norm"] in text}


def test_the_index_is_built_once_per_names_list() -> None:
    names = _names(["桃太郎", "おばあさん"])
    assert name_index(names) is name_index(names)
    again = _names(["桃太郎", "おばあさん"])
    assert name_index(again) is not name_index(names)


def test_a_name_among_fifty_thousand_is_found_as_a_walk_finds_it() -> None:
    names = _names([f"Person {i:05d}" for i in range(50_000)] + ["Old Man", "Man"])
    for question in ("Who did Person 01234 meet?", "Where did the Old Man go?", "Who is it?"):
        found = {e.node_id for e in dictionary_match(question, names)}
        walked = _walk(question, names)
        # the dictionary keeps the longest of nested names at one place (Man inside Old Man)
        longest = {n for n in walked if not any(n != o and n in o for o in walked)}
        assert found == longest


def test_the_longer_of_two_nested_japanese_names_wins() -> None:
    names = _names(["鬼", "鬼ヶ島", "桃太郎"])
    assert [e.node_id for e in dictionary_match("桃太郎は鬼ヶ島へ行った？", names)] == [
        "桃太郎",
        "鬼ヶ島",
    ]


def test_an_english_question_finds_a_japanese_name_by_its_reading_among_many() -> None:
    names = _names([f"人物{i:05d}" for i in range(2_000)] + ["桃太郎", "old man"])
    found = LocalEntityFinder(None).find("What did Momotaro give the old man?", names, [])
    how = {e.node_id: e.source for e in found.entities}
    assert how == {"桃太郎": "transliteration", "old man": "dictionary"}
