"""A katakana name and an English spelling of it folded to one sound key (クラバック and
Craback → krabak), so that an English question finds a Japanese story's loan-name.

Romaji (of a katakana name by `romanize`, or a Hepburn spelling in the question) and English
spelling are folded to a consonant-vowel string by shared rules: a doubled consonant counts once
(ッ: tokku → toku), l as r, v as b, a run of one vowel once (ー and ゲエル's エエ: geeru →
geru), ou and ei as o and e; then the vowel katakana adds to a consonant the word does not have
is dropped: u after a consonant not before a vowel (ku-ra → kra, final -ku/-gu/-pu/-ru), o after
t or d before r or at the end (ドラ, ト of スト), a final i after ch, sh or j (ッチ). English
spelling first gets its own rules: c as k (s before e, i, y), ck, q and x, an opening sch as
sh, ph as f, th as s, tch as ch, ae/ai/ay/ei/ey as e, a final silent e dropped (Rappe → rap),
y between or after consonants as i.

`english_keys(word)` gives the keys a word of the question may mean (its English spelling's, and
its own as romaji: Kurabakku); `katakana_key(name)` the key of a katakana name (None for any
other name). `key_distance` is the Levenshtein distance of two keys (for a near match).
"""

from __future__ import annotations

import re

from rapidfuzz.distance import Levenshtein

from storygraph.text.sanitize import romanize

_KATAKANA_NAME = re.compile(r"[ァ-ヺー・]+")
_VOWELS = "aeiou"

_ENGLISH_RULES: tuple[tuple[str, str], ...] = (
    (r"tch", "ch"),
    (r"^sch", "sh"),
    (r"ck", "k"),
    (r"^ch(?=[rl])", "k"),
    (r"ch", "\x01"),
    (r"sh", "\x02"),
    (r"ph", "f"),
    (r"th", "s"),
    (r"wh", "w"),
    (r"c(?=[eiy])", "s"),
    (r"c", "k"),
    (r"qu", "kw"),
    (r"q", "k"),
    (r"x", "ks"),
    (r"(?<=[^aeiou])e$", ""),  # silent final e (applied only to a word with another vowel)
    (r"(?:ae|ai|ay|ei|ey)", "e"),
    (r"(?<=[^aeiou])y(?=[^aeiou]|$)", "i"),
    (r"y", "i"),
    (r"\x01", "ch"),
    (r"\x02", "sh"),
)

_SHARED_RULES: tuple[tuple[str, str], ...] = (
    (r"l", "r"),
    (r"v", "b"),
    (r"tch", "ch"),  # ッチ as romanize writes it (matchi)
    (r"([^aeiou])\1+", r"\1"),
    (r"(?<=[^aeiou])u(?![aeiou])", ""),
    (r"([aeiou])\1+", r"\1"),
    (r"ou", "o"),
    (r"ei", "e"),
    (r"(?<=[td])o(?=r|$)", ""),
    (r"(?<=ch|sh)i$|(?<=j)i$", ""),
)


def _shared(text: str) -> str:
    for pattern, replacement in _SHARED_RULES:
        text = re.sub(pattern, replacement, text)
    return text


def romaji_key(romaji: str) -> str:
    """The key of a romaji spelling (kurabakku → krabak)."""
    return _shared(romaji.lower())


def english_key(word: str) -> str:
    """The key of an English spelling of a loan-name (Craback → krabak, Gael → ger)."""
    text = word.lower()
    for pattern, replacement in _ENGLISH_RULES:
        if replacement == "" and not re.search(r"[aeiouy].*[^aeiou]e$", text):
            continue  # the silent e: only after another vowel (Rappe, not Pe)
        text = re.sub(pattern, replacement, text)
    return _shared(text)


def english_keys(word: str) -> set[str]:
    """The keys an ASCII word may stand for: as English spelling and as romaji."""
    if not word.isascii() or not word.isalpha():
        return set()
    return {english_key(word), romaji_key(word)} - {""}


def katakana_key(name: str) -> str | None:
    """The key of a name written wholly in katakana (クラバック → krabak); None otherwise."""
    if not _KATAKANA_NAME.fullmatch(name):
        return None
    roman = romanize(name.replace("・", ""))
    if not roman.isascii() or not roman.isalpha():
        return None
    return romaji_key(roman) or None


def key_distance(a: str, b: str) -> int:
    """Levenshtein distance of two keys."""
    return int(Levenshtein.distance(a, b))
