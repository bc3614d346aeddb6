"""Aozora Bunko markup removal, checked against the cleaned texts in shared/stories/ja."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

from storygraph.text.aozora import is_aozora, strip_aozora
from storygraph.text.decode import decode_bytes
from tests.helpers.stories import story_files

STORIES = Path(__file__).resolve().parents[2].parent / "shared" / "stories"
RAW = STORIES / "ja" / "raw_sjis"
RAW_FILES = sorted(RAW.glob("*.txt")) if RAW.is_dir() else []
needs_stories = pytest.mark.usefixtures("shared_dir")  # fails, never skips, without it

SAMPLE = """桃太郎
楠山正雄

-------------------------------------------------------
【テキスト中に現れる記号について】

《》：ルビ
（例）しば刈《か》り
-------------------------------------------------------

［＃５字下げ］一［＃「一」は中見出し］

　むかし、おじいさんは山へしば刈《か》りに行きました。
　天地｜開闢《かいびゃく》の頃、※［＃「言＋墟のつくり」、第4水準2-88-74］《うそ》はいうし。
［＃ここから４字下げ］
「ドンブラコッコ。」
［＃ここで字下げ終わり］



底本：「日本の神話と十大昔話」講談社学術文庫
入力：鈴木厚司
青空文庫作成ファイル：
"""


def _no_space(text: str) -> str:
    return re.sub(r"\s", "", text)


@needs_stories
@pytest.mark.parametrize("raw_path", RAW_FILES, ids=lambda p: p.stem)
def test_raw_files_match_clean_versions(raw_path: Path) -> None:
    raw = decode_bytes(raw_path.read_bytes(), raw_path.name).text
    clean = (STORIES / "ja" / raw_path.name).read_text(encoding="utf-8")
    got = strip_aozora(raw)
    # All ten texts come out identical to the cleaned versions, whitespace included. The
    # cleaned files keep the title-less body, leave an empty line where a line held only a
    # ［＃…］ note, collapse runs of blank lines to one, strip the whole text (so the first
    # line "　　　　　一" loses its indent) and keep the ※ of a gaiji note such as
    # ※［＃「言＋墟のつくり」、第4水準2-88-74］ (momotaro_akutagawa); strip_aozora does the same.
    # The whitespace-free similarity is asserted as well, so a future change that only moves
    # whitespace shows up as such.
    ratio = difflib.SequenceMatcher(None, _no_space(got), _no_space(clean), autojunk=False).ratio()
    assert ratio > 0.99
    assert got == clean


@needs_stories
@pytest.mark.parametrize("raw_path", RAW_FILES, ids=lambda p: p.stem)
def test_detection(raw_path: Path) -> None:
    raw = decode_bytes(raw_path.read_bytes()).text
    assert is_aozora(raw)
    assert not is_aozora((STORIES / "ja" / raw_path.name).read_text(encoding="utf-8"))


@needs_stories
def test_english_is_not_aozora() -> None:
    for path in story_files("en/*.txt"):
        assert not is_aozora(path.read_text(encoding="utf-8"))


def test_strip_sample() -> None:
    assert strip_aozora(SAMPLE) == (
        "一\n\n"
        "　むかし、おじいさんは山へしば刈りに行きました。\n"
        "　天地開闢の頃、※はいうし。\n"
        "\n"
        "「ドンブラコッコ。」\n"
    )


def test_crlf_input_and_no_header_marker() -> None:
    text = "題\r\n作者\r\n\r\n　本文《ほんぶん》です。\r\n\r\n底本：どこか\r\n"
    # Without the 【テキスト中に現れる記号について】 block the first lines are kept.
    assert strip_aozora(text) == "題\n作者\n\n　本文です。\n"


def test_ruby_marker_only_removed_before_ruby() -> None:
    assert strip_aozora("ａ｜ｂ と 一｜羽《わ》") == "ａ｜ｂ と 一羽\n"


def test_plain_text_is_unchanged_but_normalised() -> None:
    assert (
        strip_aozora("  Once upon a time.\n\n\n\nThe end.  ") == "Once upon a time.\n\nThe end.\n"
    )
    assert strip_aozora("") == ""
    assert not is_aozora("「こんにちは」と言った。")
