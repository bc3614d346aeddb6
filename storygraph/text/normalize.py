"""Entity-name normalisation, kana readings (SudachiPy) and the rule for merging names.

Merge rule: two names are one entity when their normalised forms are equal, or when one is
kana-only and equals the other's reading (きじ / キジ / 雉; おに / 鬼). Two different kanji
spellings that share a reading (神 / 紙) stay apart.
"""

from __future__ import annotations

import itertools
import logging
import re
import threading
import unicodedata
from functools import lru_cache
from typing import Any

from storygraph.text.language import is_japanese_text, is_kanji

logger = logging.getLogger(__name__)

READING_PREFIX = "r:"
_MAX_PASSES = 8
_QUOTES = "「」『』\"'`“”‘’„‚«»‹›《》【】〈〉〔〕()[]{}<>"
_TRAILING_PUNCT = ".,;:!?。、・…‥"
_WHITESPACE = re.compile(r"\s+")
# Katakana ァ..ヴ and ヽヾ map to hiragana; ヵ ヶ stay (鬼ヶ島 is not 鬼ゖ島).
_KATA_TO_HIRA = {code: code - 0x60 for code in range(0x30A1, 0x30F5)} | {
    0x30FD: 0x309D,
    0x30FE: 0x309E,
}
_KANA_MARKS = frozenset("ー・゛゜ゝゞヽヾ")

_lock = threading.Lock()
_local = threading.local()
_dictionary: Any = None
_dictionary_loaded = False
_dictionary_error = ""


def normalize_name(name: str) -> str:
    """NFKC, trimmed, one space between words, casefolded, katakana as hiragana, no quotes."""
    current = name
    for _ in range(_MAX_PASSES):
        following = _normalize_once(current)
        if following == current:
            break
        current = following
    return current


def katakana_to_hiragana(text: str) -> str:
    """Map katakana to hiragana (ヵ, ヶ and ヷ..ヺ have no hiragana form and stay)."""
    return text.translate(_KATA_TO_HIRA)


def is_kana_only(name: str) -> bool:
    """True when the normalised name is written only in hiragana/katakana."""
    chars = [ch for ch in normalize_name(name) if not ch.isspace()]
    return (
        bool(chars)
        and all(0x3041 <= ord(ch) <= 0x30FF for ch in chars)
        and any(ch not in _KANA_MARKS for ch in chars)
    )


def has_kanji(text: str) -> bool:
    """True when `text` contains a CJK ideograph (or 々 / 〆)."""
    return any(is_kanji(ch) for ch in text)


def reading(name: str) -> str | None:
    """Hiragana reading of a name that contains kanji; None without kanji or without Sudachi."""
    text = _clean(name)
    if not has_kanji(text):
        return None
    return _joined_reading(token_readings(text))


def _joined_reading(tokens: list[tuple[str, str]] | None) -> str | None:
    """`reading` of a name's Sudachi tokens (None without them or with a kanji left)."""
    if tokens is None:
        return None
    joined = normalize_name("".join(spoken for _, spoken in tokens))
    return joined if joined and not has_kanji(joined) else None


_VOICED = dict(
    zip(
        "カキクケコサシスセソタチツテトハヒフヘホ",
        "ガギグゲゴザジズゼゾダヂヅデドバビブベボ",
        strict=True,
    )
)
_SEMI_VOICED = dict(zip("ハヒフヘホ", "パピプペポ", strict=True))
_GEMINATING_ENDS = "チツキク"
"""A token ending in one of these before a voiceless onset may be spoken with a doubled
consonant instead (一 + 寸: いち + すん → いっすん)."""
_VOICELESS_ONSETS = frozenset(_VOICED) | frozenset(_SEMI_VOICED.values())
MAX_READING_VARIANTS = 8


def reading_variants(name: str) -> list[str]:
    """The katakana readings a kanji compound may also be spoken with, the plain reading first:
    Sudachi reads a name it does not know token by token (一寸法師 → イチ スン ホウシ), while
    the name is said with the sound changes of a compound at the tokens' boundaries. Two are
    made: gemination (促音便: a token ending in チ / ツ / キ / ク before a voiceless onset ends
    in ッ instead, and a ハ-row onset after it turns to パ: イッスン, イッピキ) and rendaku (連濁:
    the second of two kanji tokens begins voiced: ホウシ → ボウシ). At most
    `MAX_READING_VARIANTS`; [] without kanji, without Sudachi, or for a single token."""
    return readings(name)[1]


def readings(name: str) -> tuple[str | None, list[str]]:
    """`reading(name)` and `reading_variants(name)` from one Sudachi pass (the name index reads
    both for every name of the graph)."""
    text = _clean(name)
    if not has_kanji(text):
        return None, []
    tokens = token_readings(text)
    return _joined_reading(tokens), _compound_variants(tokens or [])


def _compound_variants(tokens: list[tuple[str, str]]) -> list[str]:
    """`reading_variants` of a name's Sudachi tokens."""
    if len(tokens) < 2:
        return []
    choices: list[list[str]] = [["plain"]]
    for (before, said_before), (after, said_after) in itertools.pairwise(tokens):
        options = ["plain"]
        if said_before and said_after and said_after[0] in _VOICELESS_ONSETS:
            if said_before[-1] in _GEMINATING_ENDS and len(said_before) > 1:
                options.append("geminate")
            if said_after[0] in _VOICED and has_kanji(before) and has_kanji(after):
                options.append("voice")
        choices.append(options)
    variants: list[str] = []
    for picked in itertools.product(*choices):
        said = [spoken for _, spoken in tokens]
        for i, change in enumerate(picked):
            if change == "geminate":
                said[i - 1] = said[i - 1][:-1] + "ッ"
                said[i] = _SEMI_VOICED.get(said[i][0], said[i][0]) + said[i][1:]
            elif change == "voice":
                said[i] = _VOICED[said[i][0]] + said[i][1:]
        joined = "".join(said)
        if joined not in variants:
            variants.append(joined)
        if len(variants) >= MAX_READING_VARIANTS:
            break
    return variants


def _clean_surrogates(text: str) -> str:
    return "".join(ch for ch in text if not 0xD800 <= ord(ch) <= 0xDFFF)


def token_readings(text: str) -> list[tuple[str, str]] | None:
    """(surface, katakana reading) per Sudachi token; symbols read as written, no spaces."""
    tokenizer = _tokenizer()
    if tokenizer is None:
        return None
    tokens: list[tuple[str, str]] = []
    text = _clean_surrogates(text)
    for morpheme in tokenizer.tokenize(text):
        kind = morpheme.part_of_speech()[0]
        if kind == "空白":
            continue
        surface = morpheme.surface()
        tokens.append((surface, surface if kind == "補助記号" else morpheme.reading_form()))
    return tokens


def word_lemmas(text: str) -> list[tuple[str, str, str]] | None:
    """(surface, dictionary form, part of speech) per Sudachi token, spaces left out: 比べて →
    (比べ, 比べる, 動詞), (て, て, 助詞). None without Sudachi."""
    tokenizer = _tokenizer()
    if tokenizer is None:
        return None
    return [
        (m.surface(), m.dictionary_form(), m.part_of_speech()[0])
        for m in tokenizer.tokenize(_clean_surrogates(text))
        if m.part_of_speech()[0] != "空白"
    ]


@lru_cache(maxsize=8192)
def written_form(name: str) -> str | None:
    """A Japanese name as a dictionary writes it (Sudachi's normalised forms: かに → 蟹,
    たぬき → 狸), when that differs from the name; None for other names or without Sudachi."""
    text = _clean(name)
    if not is_japanese_text(text):
        return None
    tokenizer = _tokenizer()
    if tokenizer is None:
        return None
    written = "".join(m.normalized_form() for m in tokenizer.tokenize(text))
    return written if written and written != text else None


def short_words(text: str, split: str = "A") -> list[tuple[int, int, str]] | None:
    """(start, end, part of speech) of Sudachi's shortest words of `text` (split mode A:
    中|納言, 子安|貝, 熱心, 竹|取り; `split="B"`: middle units, 子犬 whole, 犬|と|猿 apart);
    None without Sudachi. Offsets count characters of `text`."""
    tokenizer = _tokenizer()
    if tokenizer is None or len(_clean_surrogates(text)) != len(text):
        return None
    from sudachipy import SplitMode

    return [
        (m.begin(), m.end(), m.part_of_speech()[0])
        for m in tokenizer.tokenize(text, getattr(SplitMode, split))
    ]


def word_boundaries(text: str, split: str = "A") -> frozenset[int] | None:
    """The offsets in `text` where one of its shortest words (`short_words`) starts or ends:
    子安貝 ends no word after 子, 熱心 none after 熱, 竹取り none after 取. None without
    Sudachi."""
    words = short_words(text, split)
    if words is None:
        return None
    return frozenset({0, len(text)} | {a for a, _, _ in words} | {b for _, b, _ in words})


def noun_spans(text: str) -> list[tuple[int, int]] | None:
    """(start, end) of every noun (名詞) of `text` as Sudachi cuts it in its longest units
    (split mode C: 山奥, 舟出, 子安); verbs, adjectives and particles are left out (出 of
    出た, 小 of 小さな), and so are numerals (数詞: 二 of 二つ, 二階, 二月): a count or an order
    is no word a name is made of. None without Sudachi."""
    tokenizer = _tokenizer()
    if tokenizer is None or len(_clean_surrogates(text)) != len(text):
        return None
    return [
        (m.begin(), m.end())
        for m in tokenizer.tokenize(text)
        if (pos := m.part_of_speech())[0] == "名詞" and pos[1] != "数詞"
    ]


@lru_cache(maxsize=8192)
def is_common_noun(text: str) -> bool | None:
    """Whether a Japanese name is one ordinary word of the dictionary: a single common noun
    (普通名詞) in Sudachi's longest units, a prefix or suffix around it allowed (親, 骨, 鬼,
    名前, お|じい|さん); False for a proper noun (金太郎, 桃太郎, かぐや姫) or a compound of
    several words (一寸|法師 reads as a name); None without Sudachi."""
    tokenizer = _tokenizer()
    if tokenizer is None:
        return None
    kinds = [
        m.part_of_speech()[:2]
        for m in tokenizer.tokenize(_clean_surrogates(text))
        if m.part_of_speech()[0] not in ("空白", "接頭辞", "接尾辞")
    ]
    return len(kinds) == 1 and kinds[0] == ("名詞", "普通名詞")


def is_proper_name(text: str) -> bool | None:
    """Whether Japanese `text` is written as a name: all katakana (a name the dictionary does
    not know reads as a common noun: ギン, トック), or holding a proper noun (固有名詞) with no
    particle (花子, 坂田金時, 木村君; not 兵十のおっ母, 加茂の長者, 伯父さん, 狼共); None without
    Sudachi."""
    body = text.strip()
    if body and all("\u30a0" <= ch <= "\u30ff" for ch in body):
        return True
    tokenizer = _tokenizer()
    if tokenizer is None:
        return None
    kinds = [m.part_of_speech()[:2] for m in tokenizer.tokenize(_clean_surrogates(body))]
    if any(kind[0] == "助詞" for kind in kinds):
        return False
    return ("名詞", "固有名詞") in kinds


def sudachi_available() -> bool:
    """True when SudachiPy and its core dictionary can be loaded."""
    return _load_dictionary() is not None


def sudachi_problem() -> str:
    """Why SudachiPy or its dictionary could not be loaded; empty when they load."""
    return "" if _load_dictionary() is not None else _dictionary_error or "not loaded"


def same_entity(a: str, b: str) -> bool:
    """The merge rule: equal normalised names, or a kana-only name equal to the other's reading."""
    norm_a, norm_b = normalize_name(a), normalize_name(b)
    if not norm_a or not norm_b:
        return False
    if norm_a == norm_b:
        return True
    if is_kana_only(a) and has_kanji(norm_b):
        return reading(b) == norm_a
    if is_kana_only(b) and has_kanji(norm_a):
        return reading(a) == norm_b
    return False


def merge_keys(name: str) -> list[str]:
    """Keys to index a name under: its normalised form, then an "r:" reading key if any.

    Kanji names get "r:" + reading, kana-only names "r:" + their normalised form. A shared
    plain key always means one entity; a shared "r:" key only when at least one of the two
    names is kana-only (see `keys_match`), because 神 and 紙 both carry "r:かみ" and no key
    scheme can put かみ with both of them but keep them apart.
    """
    normalized = normalize_name(name)
    if not normalized:
        return []
    if is_kana_only(name):
        return [normalized, READING_PREFIX + normalized]
    spoken = reading(name)
    return [normalized, READING_PREFIX + spoken] if spoken else [normalized]


def keys_match(keys_a: list[str], keys_b: list[str]) -> bool:
    """`same_entity` decided from two `merge_keys` results alone."""
    if not keys_a or not keys_b:
        return False
    if keys_a[0] == keys_b[0]:
        return True
    shared = set(keys_a[1:]) & set(keys_b[1:])
    return bool(shared) and (_kana_keys(keys_a) or _kana_keys(keys_b))


def _kana_keys(keys: list[str]) -> bool:
    return len(keys) == 2 and keys[1] == READING_PREFIX + keys[0]


def _normalize_once(name: str) -> str:
    text = _clean(name).casefold()
    text = unicodedata.normalize("NFKC", text)
    return katakana_to_hiragana(text)


def _clean(name: str) -> str:
    """NFKC, whitespace collapsed, surrounding quotes and trailing punctuation removed."""
    text = unicodedata.normalize("NFKC", name)
    text = _WHITESPACE.sub(" ", text).strip()
    previous = None
    while previous != text:
        previous = text
        text = text.strip(_QUOTES).rstrip(_TRAILING_PUNCT).strip()
    return text


def _load_dictionary() -> Any:
    global _dictionary, _dictionary_loaded, _dictionary_error
    if _dictionary_loaded:
        return _dictionary
    with _lock:
        if not _dictionary_loaded:
            try:
                from sudachipy import Dictionary

                _dictionary = Dictionary(dict="core")
            except Exception as exc:  # noqa: BLE001 - no import or no dictionary: readings off
                logger.warning("Sudachi is not available, kanji readings are off: %s", exc)
                _dictionary = None
                _dictionary_error = f"{type(exc).__name__}: {exc}"[:200]
            _dictionary_loaded = True
    return _dictionary


def _tokenizer() -> Any:
    """One tokenizer per thread: a Sudachi Tokenizer refuses concurrent use."""
    tokenizer = getattr(_local, "tokenizer", None)
    if tokenizer is not None:
        return tokenizer
    dictionary = _load_dictionary()
    if dictionary is None:
        return None
    from sudachipy import SplitMode

    factory = getattr(dictionary, "tokenizer", None) or dictionary.create
    tokenizer = factory(mode=SplitMode.C)
    _local.tokenizer = tokenizer
    return tokenizer


def holds_name(text: str, name: str) -> bool:
    """Does the text name it? A name ending in a kanji not inside a longer kanji word (三にん
    の家 is not in 三にんの家来); an English name on word boundaries, a plural naming it too
    ("the grapes" for grape)."""
    key = normalize_name(name)
    if not key:
        return False
    folded = normalize_name(text)
    if key.isascii():
        return re.search(rf"(?<![a-z]){re.escape(key)}(?:e?s)?(?![a-z])", folded) is not None
    at = folded.find(key)
    while at >= 0:
        after = folded[at + len(key) : at + len(key) + 1]
        if not (is_kanji(key[-1]) and after and is_kanji(after)):
            return True
        at = folded.find(key, at + 1)
    return False
