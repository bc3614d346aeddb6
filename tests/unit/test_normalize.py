"""Entity-name normalisation, Sudachi readings and the merge rule."""

from __future__ import annotations

import itertools
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storygraph.text import normalize
from storygraph.text.normalize import (
    is_kana_only,
    keys_match,
    merge_keys,
    normalize_name,
    reading,
    same_entity,
    sudachi_available,
)

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
needs_sudachi = pytest.mark.skipif(not sudachi_available(), reason="sudachipy not installed")

# Names that exercise every branch of the merge rule (kana, kanji, homophones, Latin).
NAMES = [
    "雉", "きじ", "キジ", "ｷｼﾞ", "鬼", "おに", "オニ", "桃太郎", "ももたろう", "モモタロウ",
    "おじいさん", "お爺さん", "猿", "さる", "犬", "いぬ", "神", "紙", "かみ", "カミ",
    "鬼ヶ島", "鬼が島", "おにがしま", "Momotaro", "MOMOTARO", "「桃太郎」", "mr. fox", "Mr Fox",
]  # fmt: skip


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  Momo   TARO  ", "momo taro"),
        ("「桃太郎」", "桃太郎"),
        ("『キジ』。", "きじ"),
        ("ｷｼﾞ", "きじ"),
        ('"The Fox"', "the fox"),
        ("`oni`!", "oni"),
        ("Ｏｎｉ　Ｉｓｌａｎｄ", "oni island"),
        ("鬼ヶ島", "鬼ヶ島"),
        ("ヴァイオリン", "ゔぁいおりん"),
        ("Straße", "strasse"),
        ("", ""),
    ],
)
def test_normalize_name(raw: str, expected: str) -> None:
    assert normalize_name(raw) == expected


@FAST
@given(st.text(max_size=40))
def test_normalize_is_idempotent(name: str) -> None:
    once = normalize_name(name)
    assert normalize_name(once) == once


def test_is_kana_only() -> None:
    assert is_kana_only("きじ") and is_kana_only("キジ") and is_kana_only("ｷｼﾞ")
    assert is_kana_only("おじいさん") and is_kana_only("コーヒー")
    assert not is_kana_only("雉") and not is_kana_only("お爺さん")
    assert not is_kana_only("kiji") and not is_kana_only("ー") and not is_kana_only("")


@needs_sudachi
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # Observed with sudachipy 0.7 + sudachidict-core (SplitMode.C, katakana -> hiragana).
        ("雉", "きじ"),
        ("鬼", "おに"),
        ("桃太郎", "ももたろう"),
        ("猿", "さる"),
        ("犬", "いぬ"),
        ("お爺さん", "おじいさん"),  # お + 爺 + さん, token readings joined
        ("神", "かみ"),
        ("紙", "かみ"),
        ("鬼が島", "おにがしま"),
        ("鬼ヶ島", "おにがしま"),
        ("「金太郎」", "きんたろう"),
        ("浦島太郎", "うらしまたろう"),  # 浦島 + 太郎
        ("一寸法師", "いちすんほうし"),  # 一 + 寸 + 法師: joined readings, not いっすんぼうし
    ],
)
def test_reading(name: str, expected: str) -> None:
    assert reading(name) == expected


def test_reading_variants_add_a_compounds_sound_changes_at_token_boundaries() -> None:
    """Gemination (a token ending in ち / つ / き / く before a voiceless onset, a は-row onset
    after it turning to ぱ) and rendaku (the later of two kanji tokens voiced): the readings a
    compound Sudachi reads token by token is also said with; the plain reading first."""
    from storygraph.text.normalize import MAX_READING_VARIANTS, reading_variants
    from storygraph.text.sanitize import romanize

    said = [romanize(v) for v in reading_variants("一寸法師")]  # 一 + 寸 + 法師
    assert said[0] == "ichisunhoushi"
    assert {"issunboushi", "issunhoushi", "ichisunboushi"} <= set(said)
    assert "ippiki" in [romanize(v) for v in reading_variants("一匹")]  # ひ → ぴ after っ
    # の is no kanji: no rendaku across it; a single token has no boundary
    assert reading_variants("天狗の鼻") == ["テングノハナ"]
    assert reading_variants("桃太郎") == []
    assert reading_variants("おじいさん") == []
    assert len(reading_variants("一寸一寸一寸法師")) <= MAX_READING_VARIANTS


def test_reading_is_none_without_kanji_or_sudachi(monkeypatch: pytest.MonkeyPatch) -> None:
    assert reading("おじいさん") is None
    assert reading("Momotaro") is None
    monkeypatch.setattr(normalize, "_tokenizer", lambda: None)
    assert reading("雉") is None
    assert merge_keys("雉") == ["雉"]
    assert not same_entity("雉", "きじ")


@needs_sudachi
def test_reading_of_unknown_kanji_is_none() -> None:
    assert reading("鸕") is None  # out of vocabulary: Sudachi echoes the kanji


@needs_sudachi
def test_reading_is_thread_safe() -> None:
    results: list[str | None] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(50):
                results.append(reading("桃太郎"))
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert set(results) == {"ももたろう"}


@needs_sudachi
@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("きじ", "キジ", True),
        ("キジ", "雉", True),
        ("きじ", "雉", True),
        ("鬼", "おに", True),
        ("オニ", "鬼", True),
        ("お爺さん", "おじいさん", True),
        ("「桃太郎」", "ももたろう", True),
        ("Momotaro", "momotaro", True),
        ("神", "紙", False),  # two kanji spellings with one reading stay apart
        ("かみ", "神", True),
        ("かみ", "紙", True),
        ("鬼が島", "鬼ヶ島", False),  # both kanji: only the normalised form counts
        ("猿", "犬", False),
        ("さる", "犬", False),
        ("", "", False),
    ],
)
def test_same_entity(a: str, b: str, same: bool) -> None:
    assert same_entity(a, b) is same
    assert same_entity(b, a) is same


@needs_sudachi
def test_merge_keys() -> None:
    assert merge_keys("雉") == ["雉", "r:きじ"]
    assert merge_keys("キジ") == ["きじ", "r:きじ"]
    assert merge_keys("Momotaro") == ["momotaro"]
    assert merge_keys("  ") == []


@needs_sudachi
def test_merge_keys_consistent_with_same_entity() -> None:
    for a, b in itertools.product(NAMES, repeat=2):
        keys_a, keys_b = merge_keys(a), merge_keys(b)
        same = same_entity(a, b)
        assert keys_match(keys_a, keys_b) is same, (a, b)
        shared = set(keys_a) & set(keys_b)
        if same:
            assert shared, (a, b)  # one entity => at least one shared key
        if set(keys_a[:1]) & set(keys_b[:1]):
            assert same, (a, b)  # shared plain key => one entity
        if shared and not same:
            # Only homophone kanji spellings (神 / 紙) share a key and are still apart.
            assert not is_kana_only(a) and not is_kana_only(b), (a, b)
            assert all(key.startswith("r:") for key in shared), (a, b)


@needs_sudachi
@FAST
@given(st.text(st.sampled_from("きじキジ雉鬼おに神紙かみ桃太郎もたろう "), min_size=1, max_size=4))
def test_merge_keys_consistent_random(name: str) -> None:
    for other in ("雉", "きじ", "神", "かみ", "鬼", "おに"):
        assert keys_match(merge_keys(name), merge_keys(other)) is same_entity(name, other)


def test_word_boundaries_and_nouns_follow_sudachi_s_words() -> None:
    from storygraph.text.normalize import noun_spans, word_boundaries

    bounds = word_boundaries("石上の中納言が子安貝だと思った")
    assert bounds is not None
    assert {0, 2, 3, 7, 9, 10} <= bounds  # 石上|の|中|納言|が|子安|貝|…
    assert 8 not in bounds  # no word ends after 子 of 子安貝
    text = "小さな女の子が竹から出てきた"
    nouns = noun_spans(text)
    assert nouns is not None
    words = [text[a:b] for a, b in nouns]
    assert "竹" in words
    assert "小" not in words and "出" not in words  # an adnominal's and a verb's kanji
    counted = "二つの箱と三階の部屋と五月の庭"
    spans = noun_spans(counted)
    assert spans is not None
    words = [counted[a:b] for a, b in spans]
    assert "箱" in words and "部屋" in words and "庭" in words
    assert not {"二", "三", "五"} & set(words)  # numerals: counts and orders, no name's word
