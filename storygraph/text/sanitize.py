"""Make LLM-proposed labels and relation types safe graph identifiers.

Output always matches IDENTIFIER (`^[A-Za-z_][A-Za-z0-9_]*$`, at most 64 chars). Japanese is
mapped through the one verb table (`storygraph.text.vocabulary`) first, else transliterated to
romaji (kanji via their Sudachi reading; without Sudachi as "U" + hex code point, e.g. 村 -> U6751).

Structural names are never produced: relation types in RESERVED_REL_TYPES get a "_REL"
suffix (MENTIONS -> MENTIONS_REL) and labels in RESERVED_LABELS a trailing "_"
(Document -> Document_, Chunk -> Chunk_). "__Entity__" loses its underscores like any other
separator and becomes the generic label "Entity" (the default), so it cannot collide.
Both functions are idempotent: a sanitised value passes through unchanged.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from storygraph.text.language import is_kana, is_kanji
from storygraph.text.normalize import has_kanji, katakana_to_hiragana, token_readings
from storygraph.text.vocabulary import RELATION_NOUNS, japanese_forms

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_LENGTH = 64
MAX_INPUT = 256
RESERVED_REL_TYPES = frozenset(
    {"MENTIONS", "PART_OF", "HAS_CHUNK", "NEXT_CHUNK", "FROM_CHUNK", "FROM_DOCUMENT"}
)
RESERVED_LABELS = frozenset({"Document", "Chunk", "__Entity__", "__KGBuilder__"})

_REL_EXACT: dict[str, str] = RELATION_NOUNS
_REL_STEMS: dict[str, tuple[str, ...]] = japanese_forms()
_LABEL_EXACT: dict[str, str] = {
    "人": "Character",
    "物": "Object",
    "もの": "Object",
    "鬼": "Creature",
    "神": "Deity",
    "国": "Place",
    "島": "Place",
    "山": "Place",
    "村": "Place",
    "町": "Place",
    "城": "Place",
    "鳥": "Animal",
    "獣": "Animal",
    "木": "Plant",
    "花": "Plant",
    "宝": "Treasure",
}
_LABEL_STEMS: dict[str, tuple[str, ...]] = {
    "Character": ("人物", "人間", "キャラクター", "主人公"),
    "Animal": ("動物", "生き物", "生物"),
    "Place": ("場所", "地名", "土地", "建物", "地域"),
    "Object": ("物体", "道具", "品物", "アイテム"),
    "Organization": ("組織", "団体", "集団"),
    "Creature": ("妖怪", "怪物", "化け物"),
    "Deity": ("神様",),
    "Plant": ("植物",),
    "Food": ("食べ物", "食物", "食料"),
    "Treasure": ("宝物", "財宝"),
    "Event": ("出来事", "事件", "イベント"),
    "Weapon": ("武器",),
}

_KANA = (
    "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめも"
    "やゆよらりるれろわゐゑをんがぎぐげござじずぜぞだぢづでどばびぶべぼぱぴぷぺぽ"
    "ぁぃぅぇぉゃゅょゎゔゕゖヵヶヷヸヹヺ"
)
_KANA_ROMAJI = (
    "a i u e o ka ki ku ke ko sa shi su se so ta chi tsu te to na ni nu ne no"
    " ha hi fu he ho ma mi mu me mo ya yu yo ra ri ru re ro wa i e o n"
    " ga gi gu ge go za ji zu ze zo da ji zu de do ba bi bu be bo pa pi pu pe po"
    " a i u e o ya yu yo wa vu ka ke ka ke va vi ve vo"
)
_ROMAJI: dict[str, str] = dict(zip(_KANA, _KANA_ROMAJI.split(" "), strict=True))
_FOREIGN_DIGRAPHS: dict[str, str] = {
    "ふぁ": "fa", "ふぃ": "fi", "ふぇ": "fe", "ふぉ": "fo", "てぃ": "ti", "でぃ": "di",
    "とぅ": "tu", "どぅ": "du", "うぃ": "wi", "うぇ": "we", "うぉ": "wo", "ゔぁ": "va",
    "ゔぃ": "vi", "ゔぇ": "ve", "ゔぉ": "vo", "しぇ": "she", "じぇ": "je", "ちぇ": "che",
    "つぁ": "tsa", "いぇ": "ye", "くぁ": "kwa",
}  # fmt: skip


def _yoon_digraphs() -> dict[str, str]:
    """きゃ -> kya, しゅ -> shu, ちょ -> cho, じゃ -> ja, ..."""
    table: dict[str, str] = {}
    for base in "きしちにひみりぎじぢびぴ":
        stem = _ROMAJI[base][:-1]
        glide = "" if stem in ("sh", "ch", "j") else "y"
        for small, vowel in zip("ゃゅょ", "auo", strict=True):
            table[base + small] = stem + glide + vowel
    return table


_DIGRAPHS = _FOREIGN_DIGRAPHS | _yoon_digraphs()
# Words of an ASCII run: a "U" + hex code-point word (our own fallback, kept whole so that
# sanitising is idempotent), CamelCase humps with digits attached, or digits.
_CODE_POINT = re.compile(r"U[0-9A-F]{4,6}")
_ASCII_WORD = re.compile(
    r"U[0-9A-F]{4,6}(?![0-9A-Za-z])|[0-9]*(?:[A-Z]+(?![a-z])|[A-Z]?[a-z]+)[0-9]*|[0-9]+"
)


def sanitize_rel_type(raw: str, default: str = "RELATED_TO") -> str:
    """An UPPER_SNAKE relation type: "lives in" -> LIVES_IN, 退治する -> DEFEATS."""
    _check_default(default)
    text = unicodedata.normalize("NFKC", (raw or "")[:MAX_INPUT])
    mapped = _lookup(text, _REL_EXACT, _REL_CANDIDATES)
    words = [mapped] if mapped else [w.upper() for w in _words(text)]
    result = _finish("_".join(words), default)
    return f"{result}_REL" if result in RESERVED_REL_TYPES else result


def sanitize_label(raw: str, default: str = "Entity") -> str:
    """A CamelCase node label: "person" -> Person, "main character" -> MainCharacter."""
    _check_default(default)
    if _is_canonical_label(raw):
        return raw
    text = unicodedata.normalize("NFKC", (raw or "")[:MAX_INPUT])
    mapped = _lookup(text, _LABEL_EXACT, _LABEL_CANDIDATES)
    words = [mapped] if mapped else [_camel(w) for w in _words(text)]
    joined = "_".join(_camel(part) for part in _join_label(words).split("_"))
    result = _finish(joined, default)
    reserved = {name.casefold() for name in RESERVED_LABELS}
    return f"{result}_" if result.casefold() in reserved else result


def _is_canonical_label(raw: str) -> bool:
    """Already a label of ours (e.g. "Character", "MagicItem"): kept, so sanitising is stable.

    CamelCase joins lose word boundaries ("A" + "0a" = "A0a" would re-split as "A0" + "a"),
    so a safe, capitalised, mixed-case identifier is taken as it is.
    """
    return (
        bool(raw)
        and IDENTIFIER.fullmatch(raw) is not None
        and len(raw) <= MAX_LENGTH
        and (raw[0].isupper() or raw[:2] in {f"_{d}" for d in "0123456789"})
        and any(ch.islower() for ch in raw)
        and "__" not in raw
        and not raw.endswith("_")
        and raw.casefold() not in {name.casefold() for name in RESERVED_LABELS}
    )


def backtick(identifier: str) -> str:
    """Quote a sanitised identifier for Cypher; anything else raises ValueError."""
    if not isinstance(identifier, str) or not IDENTIFIER.fullmatch(identifier):
        raise ValueError(f"not a safe graph identifier: {identifier!r}")
    return f"`{identifier}`"


def romanize(kana: str) -> str:
    """Hepburn-style romaji for hiragana/katakana; other characters are dropped."""
    text = katakana_to_hiragana(kana)
    out: list[str] = []
    double_next = False
    i = 0
    while i < len(text):
        piece, step = _romaji_at(text, i, out)
        i += step
        if piece == "っ":
            double_next = True
            continue
        if double_next and piece and piece[0] not in "aeiou":
            piece = ("t" if piece.startswith("ch") else piece[0]) + piece
        double_next = False
        out.append(piece)
    return "".join(out)


def _kana_of_romaji() -> dict[str, str]:
    """romanize's syllables back to hiragana, the first kana of each winning (じ, not ぢ)."""
    table: dict[str, str] = {}
    for kana, romaji in [*_DIGRAPHS.items(), *_ROMAJI.items()]:
        if kana[0] not in "ぁぃぅぇぉゃゅょゎゕゖヵヶ" and romaji:
            table.setdefault(romaji, kana)
    return table


_KANA_OF_ROMAJI = _kana_of_romaji()
_LONGEST_SYLLABLE = max(len(r) for r in _KANA_OF_ROMAJI)


def kana_from_romaji(romaji: str) -> str | None:
    """romanize's inverse for a relation type made from a verb's reading (SOROERU → そろえる,
    MOTTE_IKU → もっていく); None when `romaji` is not wholly made of its syllables (MEETS)."""
    text = romaji.lower().replace("_", "")
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] not in "aeioun" and text[i : i + 1] == text[i + 1 : i + 2]:
            out.append("っ")  # a doubled consonant (motte, kitto)
            i += 1
            continue
        if text.startswith("tch", i):
            out.append("っ")
            i += 1
            continue
        for size in range(min(_LONGEST_SYLLABLE, len(text) - i), 0, -1):
            kana = _KANA_OF_ROMAJI.get(text[i : i + size])
            if kana is not None:
                out.append(kana)
                i += size
                break
        else:
            return None
    return "".join(out) or None


def _romaji_at(text: str, i: int, out: list[str]) -> tuple[str, int]:
    pair = text[i : i + 2]
    if pair in _DIGRAPHS:
        return _DIGRAPHS[pair], 2
    ch = text[i]
    if ch == "っ":
        return "っ", 1
    if ch == "ー":
        last = "".join(out)[-1:]
        return (last if last in ("a", "e", "i", "o", "u") else ""), 1
    if ch in "ゝゞ":
        return (out[-1] if out else ""), 1
    return _ROMAJI.get(ch, ""), 1


def _longest_first(stems: dict[str, tuple[str, ...]]) -> tuple[tuple[str, str], ...]:
    """Every (stem, value) of a table, longest stem first (ties in table order)."""
    candidates = [(stem, value) for value, group in stems.items() for stem in group]
    return tuple(sorted(candidates, key=lambda c: -len(c[0])))


# Sorted once: sorting them again for every name cost an entity page ~0.2 s
# (docs/ISSUES.md#entity-page-speed).
_REL_CANDIDATES = _longest_first(_REL_STEMS)
_LABEL_CANDIDATES = _longest_first(_LABEL_STEMS)


def _lookup(
    text: str, exact: dict[str, str], candidates: tuple[tuple[str, str], ...]
) -> str | None:
    key = "".join(text.split())
    if not key or key.isascii():
        return None
    if key in exact:
        return exact[key]
    for stem, value in candidates:
        if stem in key:
            return value
    return None


def _words(text: str) -> list[str]:
    """ASCII words of `text`: Latin kept, kana as romaji, kanji via Sudachi readings."""
    if any(is_kana(ch) or is_kanji(ch) for ch in text):
        tokens = token_readings(text)
        if tokens is not None:
            words: list[str] = []
            for surface, spoken in tokens:
                source = surface if surface.isascii() or has_kanji(spoken) else spoken
                words.extend(_plain_words(source))
            return words
    return _plain_words(text)


def _plain_words(text: str) -> list[str]:
    words: list[str] = []
    latin: list[str] = []
    kana: list[str] = []

    def flush() -> None:
        if latin:
            words.extend(_ASCII_WORD.findall("".join(latin)))
            latin.clear()
        if kana:
            spoken = romanize("".join(kana))
            if spoken:
                words.append(spoken)
            kana.clear()

    for ch in text:
        _route(ch, latin, kana, words, flush)
    flush()
    return words


def _route(
    ch: str, latin: list[str], kana: list[str], words: list[str], flush: Callable[[], None]
) -> None:
    """Send one character to the Latin run, the kana run, or out as its own U+hex word."""
    base = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
    if base.isascii() and base.isalnum():
        if kana:
            flush()
        latin.append(base)
    elif is_kana(ch) and not unicodedata.category(ch).startswith("P"):
        if latin:
            flush()
        kana.append(unicodedata.normalize("NFKC", ch))
    else:
        flush()
        if not ch.isascii() and (is_kanji(ch) or unicodedata.category(ch)[0] in "LNS"):
            words.append(f"U{ord(ch):04X}")


def _join_label(words: list[str]) -> str:
    """CamelCase join; a U+hex word is set off by "_" on both sides so it parses back."""
    out = ""
    for index, word in enumerate(words):
        apart = index and (_CODE_POINT.fullmatch(word) or _CODE_POINT.fullmatch(words[index - 1]))
        out += f"_{word}" if apart else word
    return out


def _camel(word: str) -> str:
    if _CODE_POINT.fullmatch(word):
        return word
    if not any(ch.islower() for ch in word) and sum(ch.isalpha() for ch in word) > 1:
        return word.capitalize()
    return word[:1].upper() + word[1:]


def _finish(candidate: str, default: str) -> str:
    text = re.sub(r"[^A-Za-z0-9_]+", "_", candidate)
    text = re.sub(r"_+", "_", text).strip("_")
    if not text:
        return default
    if text[0].isdigit():
        text = "_" + text
    return _truncate(text).rstrip("_") or default


def _truncate(text: str) -> str:
    """Cut to MAX_LENGTH, at the last "_" when the cut would split a word."""
    if len(text) <= MAX_LENGTH:
        return text
    cut = text[:MAX_LENGTH]
    if text[MAX_LENGTH] != "_" and cut.rfind("_") > 1:
        cut = cut[: cut.rfind("_")]
    return cut


def _check_default(default: str) -> None:
    if not IDENTIFIER.fullmatch(default) or len(default) > MAX_LENGTH:
        raise ValueError(f"default must be a safe identifier, got {default!r}")
