"""The local finder reads a capitalised English word as a katakana name of the graph when it
spells the name's sound (storygraph.text.phonetic): made-up names of a made-up story."""

from __future__ import annotations

from typing import Any

from storygraph.qa.question.entities import LocalEntityFinder, by_sound
from storygraph.text.normalize import normalize_name

_NAMES = [
    "ドラバック",
    "ポック",
    "ロック",  # one letter from ポック: never a near match for Pock
    "ザッグ",
    "ザック",  # g and k kept apart
    "ネエル",
    "ミップ",
    "ソーリン",
    "サーク",
    "シャーク",
    "河童",
    "Alice",
    "アリス",
]


def _names() -> list[dict[str, Any]]:
    return [{"id": n, "norm": normalize_name(n), "type": "Character"} for n in _NAMES]


def _found(question: str) -> dict[str, str]:
    finding = LocalEntityFinder(None).find(question, _names(), [])
    return {e.node_id: e.source for e in finding.entities}


def test_english_spellings_find_the_katakana_names() -> None:
    found = _found("What did Draback shout after reading Pok's last poem to Nael?")
    assert found == {
        "ドラバック": "transliteration",
        "ポック": "transliteration",
        "ネエル": "transliteration",
    }


def test_romaji_and_doubled_letters_find_them_too() -> None:
    assert _found("Why did Dorabakku visit Zagg?") == {
        "ドラバック": "transliteration",
        "ザッグ": "transliteration",
    }


def test_a_near_spelling_of_a_long_name_finds_it() -> None:
    assert _found("Where did Drabock go?") == {"ドラバック": "transliteration"}


def test_a_short_near_spelling_finds_nothing() -> None:
    assert _found("Where did Pak go?") == {}


def test_a_near_spelling_with_a_letter_dropped_or_another_first_finds_nothing() -> None:
    assert _found("Where did Drabak go?") == {"ドラバック": "transliteration"}  # exact
    assert _found("Where did Drabk go?") == {}  # a letter dropped
    assert _found("Where did Trabak go?") == {}  # another first letter


def test_a_word_of_a_name_found_otherwise_is_not_read() -> None:
    names = [
        {"id": n, "norm": normalize_name(n), "type": "Character"}
        for n in ["March Hare", "マルチ", "サーク"]
    ]
    found = LocalEntityFinder(None).find("Where did the March Hare meet Saak?", names, [])
    assert {e.node_id for e in found.entities} == {"March Hare", "サーク"}
    # read alone, March is マルチ's sound (maruchi → march)
    assert [e.node_id for e in by_sound("Where did the March Hare go?", names)] == ["マルチ"]


def test_a_key_two_names_share_finds_neither() -> None:
    def row(name: str) -> dict[str, Any]:
        return {"id": name, "norm": normalize_name(name), "type": "Character"}

    found = LocalEntityFinder(None).find("What did Mipp say?", [*_names(), row("ミッブ")], [])
    assert {e.node_id for e in found.entities} == {"ミップ"}  # ミッブ is mib
    found = LocalEntityFinder(None).find("What did Mipp say?", [*_names(), row("ミプ")], [])
    assert found.entities == []  # ミプ and ミップ are both mip


def test_common_words_and_sentence_openers_are_not_read() -> None:
    assert "ロック" not in _found("Rock or not, what did the kappa say?")  # opens the sentence
    assert "ロック" not in _found("The kappa asked: Rock?")
    assert "ザッグ" not in _found("Which way did they zag?")  # not capitalised
    assert _found("Did Saak meet Shack?") == {
        "サーク": "transliteration",
        "シャーク": "transliteration",
    }


def test_an_english_name_of_the_graph_is_not_read_again_as_katakana() -> None:
    assert _found("Where did Alice go?") == {"Alice": "dictionary"}
