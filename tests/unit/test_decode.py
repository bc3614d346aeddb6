"""Decoding uploads: encodings, BOMs, UTF-16 without BOM, binaries, control characters."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storygraph.errors import InputError
from storygraph.text.decode import DecodedText, clean_text, decode_bytes, looks_binary
from tests.helpers.stories import story_files

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
STORIES = SHARED / "stories"
needs_stories = pytest.mark.usefixtures("shared_dir")  # fails, never skips, without it

COMMON_KANJI = "日本人山川田中大小上下月火水木金土子女男学生先年時桃太郎鬼島犬猿雉花村家来"
JAPANESE_ALPHABET = (
    "".join(chr(c) for c in range(0x3041, 0x3094))  # hiragana ぁ..ゔ
    + "".join(chr(c) for c in range(0x30A1, 0x30F7))  # katakana ァ..ヶ
    + COMMON_KANJI
    + "、。「」ー　"
    + "abcXYZ019 .,!?\n"
)
# Printable text: no controls, surrogates, line/paragraph separators or a leading BOM.
UNICODE_TEXT = st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters="\ufeff"),
    min_size=1,
    max_size=200,
)
FAST = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def test_utf8_plain_and_with_bom() -> None:
    assert decode_bytes("桃太郎 and the oni\n".encode()) == DecodedText(
        "桃太郎 and the oni\n", "utf-8"
    )
    decoded = decode_bytes(codecs.BOM_UTF8 + "きじ".encode())
    assert decoded == DecodedText("きじ", "utf-8-sig")


@pytest.mark.parametrize(
    ("codec", "expected"), [("utf-16", "utf-16-le"), ("utf-16-be", "utf-16-be")]
)
def test_utf16_with_bom(codec: str, expected: str) -> None:
    data = "\ufeffむかし、むかし。\nOnce upon a time.".encode(codec)
    if codec == "utf-16":
        data = data[2:]  # Python's utf-16 already wrote one BOM; keep exactly one
    assert decode_bytes(data) == DecodedText("むかし、むかし。\nOnce upon a time.", expected)


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize(
    "text",
    [
        "The Wolf and the Lamb\nA wolf met a lamb.\n",
        "　むかし、むかし、あるところに、\r\nおじいさんとおばあさんがありました。\r\n",
        "桃太郎\n",
    ],
)
def test_utf16_without_bom_is_told_by_nul_positions(codec: str, text: str) -> None:
    decoded = decode_bytes(text.encode(codec))
    assert decoded.encoding == codec
    assert decoded.text == text.replace("\r\n", "\n")


@needs_stories
@pytest.mark.parametrize("codec", ["cp932", "euc_jp"])
def test_japanese_legacy_encodings_of_real_stories(codec: str) -> None:
    for path in story_files("ja/*.txt"):
        text = path.read_text(encoding="utf-8")
        decoded = decode_bytes(text.encode(codec), path.name)
        assert decoded.encoding == codec, path.name
        assert decoded.text == text


@needs_stories
def test_raw_aozora_files_are_shift_jis_with_crlf() -> None:
    for path in story_files("ja/raw_sjis/*.txt"):
        decoded = decode_bytes(path.read_bytes(), path.name)
        assert decoded.encoding == "cp932"
        assert "\r" not in decoded.text
        assert "底本：" in decoded.text


@needs_stories
def test_english_stories_decode_as_utf8() -> None:
    for path in story_files("en/*.txt"):
        decoded = decode_bytes(path.read_bytes(), path.name)
        assert decoded.encoding == "utf-8"
        assert decoded.text == clean_text(path.read_text(encoding="utf-8"))


def test_iso2022jp_and_western_fallback() -> None:
    assert decode_bytes("桃太郎がきました。".encode("iso2022_jp")).text == "桃太郎がきました。"
    western = "Café crème, naïve façade. Über straße.\n"
    assert decode_bytes(western.encode("latin-1")).text == western


def test_line_endings_and_controls_are_normalised() -> None:
    data = b"one\r\ntwo\rthree\nfour\x07\tfive\x0c\n"
    assert decode_bytes(data).text == "one\ntwo\nthree\nfour\tfive\n"


def test_empty_file() -> None:
    with pytest.raises(InputError, match="empty") as info:
        decode_bytes(b"", "story.txt")
    assert "story.txt" in str(info.value)
    assert info.value.hint


@pytest.mark.parametrize("data", [b"   \n\t\r\n", "　　\n".encode(), "\ufeff \n".encode()])
def test_whitespace_only(data: bytes) -> None:
    with pytest.raises(InputError, match="whitespace"):
        decode_bytes(data)


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"\x89PNG\r\n\x1a\n" + bytes(40), "PNG"),
        (b"\xff\xd8\xff\xe0" + bytes(40), "JPEG"),
        (b"GIF89a" + bytes(20), "GIF"),
        (b"PK\x03\x04" + bytes(30), "ZIP"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "PDF"),
        (b"\x1f\x8b\x08\x00" + bytes(20), "gzip"),
        (b"ELF\x00\x01\x02\x03" * 20, "NUL"),
        (bytes(range(1, 9)) * 30, "control"),
    ],
)
def test_binary_content_is_refused(data: bytes, kind: str) -> None:
    assert looks_binary(data)
    with pytest.raises(InputError, match="binary") as info:
        decode_bytes(data, "picture.png")
    assert kind in str(info.value)


def test_undecodable_bytes() -> None:
    with pytest.raises(InputError, match="could not be decoded"):
        decode_bytes(bytes(range(0x80, 0x100)) * 3)


def test_looks_binary_is_false_for_text() -> None:
    assert not looks_binary("桃太郎".encode("utf-16"))
    assert not looks_binary("hello\n".encode("utf-16-le"))
    assert not looks_binary("桃太郎".encode("cp932"))
    assert not looks_binary(b"plain text\n")


@FAST
@given(UNICODE_TEXT, st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]))
def test_roundtrip_random_unicode(text: str, codec: str) -> None:
    data = text.encode(codec)
    if not text.strip():
        with pytest.raises(InputError):
            decode_bytes(data)
        return
    assert decode_bytes(data).text == text


def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_short_euc_that_is_also_valid_utf8_reads_as_utf8() -> None:
    # Known limit: EUC-JP 村 is C2 BC, which is also UTF-8 for ¼. Strict UTF-8 wins, because
    # preferring Japanese here would turn "©" or "°" in English UTF-8 files into kanji.
    assert decode_bytes("村".encode("euc_jp")).text == "¼"


@FAST
@given(st.text(st.sampled_from(JAPANESE_ALPHABET), min_size=1, max_size=120))
def test_roundtrip_japanese_legacy(text: str) -> None:
    for codec in ("cp932", "euc_jp"):
        data = text.encode(codec)
        if _valid_utf8(data) and not data.isascii():
            continue  # ambiguous with UTF-8 (see the test above); real prose never is
        if not text.strip():
            with pytest.raises(InputError):
                decode_bytes(data)
            continue
        decoded = decode_bytes(data)
        assert decoded.text == text, (codec, decoded.encoding)


@FAST
@given(st.binary(max_size=600))
def test_arbitrary_bytes_only_raise_input_error(data: bytes) -> None:
    looks_binary(data)
    try:
        decoded = decode_bytes(data)
    except InputError:
        return
    assert decoded.text.strip()
    assert "\r" not in decoded.text
