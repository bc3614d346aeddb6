"""Sound keys (storygraph.text.phonetic): an English spelling or romaji of a katakana loan-name
folds to the name's key, and a near-miss does not (made-up names)."""

from __future__ import annotations

import pytest

from storygraph.text.phonetic import english_keys, katakana_key, key_distance


@pytest.mark.parametrize(
    ("katakana", "spelling"),
    [
        ("ドラバック", "Draback"),  # c/k, ck, final ック
        ("ドラバック", "Dorabakku"),  # romaji of the same name
        ("ポック", "Pock"),
        ("ポック", "Pok"),
        ("ザッグ", "Zag"),  # final ッグ
        ("ミップ", "Mipp"),  # doubled consonant as ッ, final ップ
        ("ネエル", "Nael"),  # ae → エエ, l as r
        ("ネエル", "Neil"),  # ei → エイ/エエ
        ("ソーリン", "Sorin"),  # long vowel ー
        ("ボリック", "Volick"),  # v as b
        ("キャスト", "Kyasuto"),  # スト: u after s, final o after t
        ("ラッペ", "Lappe"),  # a final e that is sounded
        ("リッチ", "Ritch"),  # tch, ッチ
        ("クレイス", "Kleiss"),
    ],
)
def test_a_spelling_of_a_katakana_name_has_its_key(katakana: str, spelling: str) -> None:
    key = katakana_key(katakana)
    assert key is not None
    assert key in english_keys(spelling)


@pytest.mark.parametrize(
    ("katakana", "spelling"),
    [
        ("ザッグ", "Zack"),  # g is not k: バッグ is not バック
        ("ポック", "Pack"),  # another vowel
        ("ミップ", "Mitt"),
        ("ドラバック", "Drab"),  # a part of the name
        ("ネエル", "Nile"),
        ("ソーリン", "Soren"),
    ],
)
def test_a_near_miss_has_another_key(katakana: str, spelling: str) -> None:
    assert katakana_key(katakana) not in english_keys(spelling)


def test_only_a_katakana_name_has_a_key() -> None:
    assert katakana_key("桃太郎") is None
    assert katakana_key("ももたろう") is None
    assert katakana_key("Drab") is None
    assert katakana_key("ドラ・バック") == "drabak"


def test_a_word_that_is_not_plain_letters_has_no_key() -> None:
    assert english_keys("O'Neil") == set()
    assert english_keys("ドラ") == set()


def test_key_distance_counts_edits() -> None:
    assert key_distance("drabak", "drabak") == 0
    assert key_distance("drabak", "drbak") == 1
    assert key_distance("drabak", "krabuk") == 2
