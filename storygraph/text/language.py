"""Tell Japanese from English text by the share of kana and kanji among the letters."""

from __future__ import annotations

JA_SHARE_THRESHOLD = 0.2


def is_kanji(ch: str) -> bool:
    """CJK ideographs (BMP, extension A, compatibility, supplementary planes), 々 and 〆."""
    code = ord(ch)
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0xF900 <= code <= 0xFAFF
        or 0x20000 <= code <= 0x3FFFF
        or ch in "々〆"
    )


def is_kana(ch: str) -> bool:
    """Hiragana, katakana (with ー), katakana extensions and halfwidth katakana."""
    code = ord(ch)
    return 0x3041 <= code <= 0x30FF or 0x31F0 <= code <= 0x31FF or 0xFF66 <= code <= 0xFF9F


def is_japanese_char(ch: str) -> bool:
    """Kana or kanji."""
    return is_kana(ch) or is_kanji(ch)


def is_japanese_text(text: str) -> bool:
    """Whether `text` holds any kana or kanji."""
    return any(is_japanese_char(ch) for ch in text)


def detect_language(text: str) -> str:
    """Return "ja" when more than 20 % of the letters are kana or kanji, else "en"."""
    letters = 0
    japanese = 0
    for ch in text:
        if ch.isalpha():
            letters += 1
            japanese += is_japanese_char(ch)
    if not letters:
        return "en"
    return "ja" if japanese / letters > JA_SHARE_THRESHOLD else "en"


def answer_language(text: str) -> str:
    """The language of an answer a model wrote ("ja" / "en", as `detect_language`), to compare
    with the question's. The question's own language is read once, by the question's analysis
    (storygraph.qa.question.analysis); this reads only answers."""
    return detect_language(text)
