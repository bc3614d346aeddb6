"""Labels and relation types from the LLM become safe, non-structural identifiers."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storygraph.text import sanitize
from storygraph.text.normalize import sudachi_available
from storygraph.text.sanitize import (
    RESERVED_LABELS,
    RESERVED_REL_TYPES,
    backtick,
    romanize,
    sanitize_label,
    sanitize_rel_type,
)

SAFE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
needs_sudachi = pytest.mark.skipif(not sudachi_available(), reason="sudachipy not installed")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("lives in", "LIVES_IN"),
        ("is-friend.of", "IS_FRIEND_OF"),
        ("livesIn", "LIVES_IN"),
        ("RELATED_TO", "RELATED_TO"),
        ("  defeats ", "DEFEATS"),
        ("café owner", "CAFE_OWNER"),
        ("3rd place", "_3RD_PLACE"),
        ("`) DETACH DELETE n //", "DETACH_DELETE_N"),
        ("X]->(m) MATCH (n) DELETE n", "X_M_MATCH_N_DELETE_N"),
        ("a\nb}{'\"", "A_B"),
        ("", "RELATED_TO"),
        ("!!!", "RELATED_TO"),
        ("MENTIONS", "MENTIONS_REL"),
        ("mentions", "MENTIONS_REL"),
        ("part of", "PART_OF_REL"),
    ],
)
def test_rel_type_ascii(raw: str, expected: str) -> None:
    assert sanitize_rel_type(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("倒す", "DEFEATS"),
        ("鬼を退治した", "DEFEATS"),
        ("戦う", "FIGHTS"),
        ("住む", "LIVES_IN"),
        ("住んでいる", "LIVES_IN"),
        ("行く", "GOES_TO"),
        ("仲間", "COMPANION_OF"),
        ("家来", "COMPANION_OF"),
        ("家来になる", "BECOMES_COMPANION_OF"),
        ("育てる", "RAISES"),
        ("会う", "MEETS"),
        ("持つ", "OWNS"),
        ("与える", "GIVES"),
        ("あげる", "GIVES"),
        ("拾う", "PICKS_UP"),
        ("生まれる", "BORN_FROM"),
        ("帰る", "RETURNS_TO"),
        ("攻める", "ATTACKS"),
        ("助ける", "HELPS"),
        ("食べる", "EATS"),
        ("ｔａｂｅｒｕ", "TABERU"),  # NFKC first
    ],
)
def test_rel_type_japanese_table(raw: str, expected: str) -> None:
    assert sanitize_rel_type(raw) == expected


@needs_sudachi
def test_rel_type_japanese_transliterated() -> None:
    assert sanitize_rel_type("ねこをかう") == "NEKO_O_KAU"
    assert sanitize_rel_type("友達である") == "FRIEND_OF"
    assert sanitize_rel_type("吾輩") == "WAGAHAI"
    assert sanitize_rel_type("ガッツ") == "GATTSU"


def test_kanji_without_sudachi_falls_back_to_code_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sanitize, "token_readings", lambda text: None)
    assert sanitize_rel_type("村") == "U6751"
    assert sanitize_rel_type("村人") == "U6751_U4EBA"
    assert sanitize_label("吾輩") == "U543E_U8F29"
    assert sanitize_rel_type("ねこ") == "NEKO"  # kana needs no Sudachi


def test_other_scripts_are_not_dropped() -> None:
    assert sanitize_rel_type("дружит") == "U0434_U0440_U0443_U0436_U0438_U0442"
    assert sanitize_label("🐱") == "U1F431"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("person", "Person"),
        ("Character", "Character"),
        ("PERSON", "Person"),
        ("main character", "MainCharacter"),
        ("magic_item", "MagicItem"),
        ("人物", "Character"),
        ("登場人物", "Character"),
        ("動物", "Animal"),
        ("場所", "Place"),
        ("物", "Object"),
        ("組織", "Organization"),
        ("ねこ", "Neko"),
        ("", "Entity"),
        ("Document", "Document_"),
        ("document", "Document_"),
        ("Chunk", "Chunk_"),
        ("__Entity__", "Entity"),
        ("`Person`) DETACH DELETE n //", "PersonDetachDeleteN"),
    ],
)
def test_label(raw: str, expected: str) -> None:
    assert sanitize_label(raw) == expected


def test_length_limit_and_custom_default() -> None:
    assert len(sanitize_rel_type("word " * 40)) <= 64
    assert len(sanitize_label("word " * 40)) <= 64
    assert sanitize_rel_type("", default="LINKS") == "LINKS"
    with pytest.raises(ValueError):
        sanitize_label("x", default="bad default")


def test_romanize() -> None:
    assert romanize("ももたろう") == "momotarou"
    assert romanize("キジ") == "kiji"
    assert romanize("きょうりゅう") == "kyouryuu"
    assert romanize("ちょっと") == "chotto"
    assert romanize("マッチ") == "matchi"
    assert romanize("コーヒー") == "koohii"
    assert romanize("ファイル") == "fairu"
    assert romanize("しんじゃ") == "shinja"


def test_backtick() -> None:
    assert backtick("LIVES_IN") == "`LIVES_IN`"
    assert backtick("_3RD") == "`_3RD`"
    for bad in ["", "1abc", "a b", "Person`) DETACH DELETE n //", "Person\n", "a-b", "名前"]:
        with pytest.raises(ValueError):
            backtick(bad)


@FAST
@given(st.text(max_size=80))
def test_sanitised_output_is_always_safe(raw: str) -> None:
    rel = sanitize_rel_type(raw)
    label = sanitize_label(raw)
    for value in (rel, label):
        assert SAFE.match(value) and len(value) <= 64
        assert backtick(value) == f"`{value}`"
    assert rel not in RESERVED_REL_TYPES
    assert label not in RESERVED_LABELS
    assert not label.startswith("__")


@FAST
@given(st.text(max_size=60))
def test_sanitising_is_idempotent(raw: str) -> None:
    rel = sanitize_rel_type(raw)
    label = sanitize_label(raw)
    assert sanitize_rel_type(rel) == rel
    assert sanitize_label(label) == label


def test_idempotent_examples() -> None:
    for rel in ["U1F351", "U0434_U0440", "MENTIONS_REL", "_3RD_PLACE", "HTTP2_SERVER"]:
        assert sanitize_rel_type(rel) == rel
    for label in ["U1F431", "_0_U00AC", "Document_", "PersonDetachDeleteN", "_3rdPlace", "IPhone"]:
        assert sanitize_label(label) == label


@FAST
@given(st.text(st.sampled_from("あいうかきゃっーアイウカキャッ鬼桃村人 ab1-`'\"\n"), max_size=20))
def test_japanese_never_vanishes(raw: str) -> None:
    rel = sanitize_rel_type(raw, default="DEFAULT_")
    if any(ch in raw for ch in "あいうかきゃアイウカキャ鬼桃村人ab1"):
        assert rel != "DEFAULT_"
