"""The stories a question names by their document's name (issue #28, docs/ISSUES.md#story-scope).

A question may name its story rather than a character: "In Akutagawa's story, …",
「芥川の「桃太郎」で…」, "Why did the fox fail to get the grapes?" asked of "The Fox and the
Grapes". The document's file name holds those words (momotaro_akutagawa.txt,
aesop__the_fox_and_the_grapes.txt), so a document's name is a name of its story too: its words
(split at anything not a letter, stop words and the words for a story itself left out) are
matched against the question's words, a Japanese question's by their reading in plain romaji
(芥川 → akutagawa, 浦島|太郎 → urashimataro, long vowels folded on both sides: じじい and
jijii meet as jiji). A title word of fewer than MIN_JOINED letters must be one of the
question's words whole; a longer one may be up to MAX_JOINED words joined (猿|か|に →
sarukani), never a part of one. Without Sudachi a Japanese question's kanji have no reading
and name no title.

`titled` counts, per story, the words of its name the question holds; qa/scope/scope.py counts them
with the question's proper names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

from storygraph.text.language import is_japanese_text
from storygraph.text.normalize import token_readings
from storygraph.text.sanitize import romanize
from storygraph.text.terms import EN_STOP_WORDS, name_words

STORY_WORDS = frozenset({"story", "stories", "tale", "tales", "fable", "fables", "version"})
"""English words a question uses for a story itself ("in Akutagawa's story"): not a title's."""
JA_STORY_WORDS = frozenset({"物語", "話", "お話", "昔話", "童話", "昔", "むかし", "はなし"})
"""Their Japanese counterparts (a question's 「この物語で」 names no 竹取物語)."""
MIN_JOINED = 5
"""Letters a title word needs to be matched by several of the question's words joined."""
MAX_JOINED = 3
"""The most question words joined to match one title word."""

_LETTERS = re.compile(r"[a-z]+")
_LONG_VOWELS = (("ou", "o"), ("oo", "o"), ("uu", "u"), ("aa", "a"), ("ii", "i"), ("ee", "e"))


def _folded(word: str) -> str:
    for long_vowel, short in _LONG_VOWELS:
        word = word.replace(long_vowel, short)
    return word


@lru_cache(maxsize=4096)
def title_words(name: str) -> tuple[str, ...]:
    """The words a document's name names its story by (momotaro_akutagawa.txt → momotaro,
    akutagawa), folded as the question's are (kept for the last 4,096 names: a library's
    every name is read for every question)."""
    stem = name.rsplit(".", 1)[0] if "." in name else name
    words = name_words(" ".join(_LETTERS.findall(stem.lower())))
    kept = (w for w in words if len(w) >= 3 and w not in STORY_WORDS and w not in EN_STOP_WORDS)
    return tuple(dict.fromkeys(_folded(w) for w in kept))


def question_words(question: str) -> list[str]:
    """The question's words in order as plain folded romaji ("" where a story word, a symbol
    or a word without a reading stands: nothing is joined across it)."""
    if not is_japanese_text(question):
        return [_folded(w) for w in name_words(question) if w not in STORY_WORDS]
    tokens = token_readings(question)
    if tokens is None:  # no Sudachi: the Latin words only
        return [_folded(w) for w in name_words(question) if w not in STORY_WORDS]
    words: list[str] = []
    for surface, spoken in tokens:
        if surface.isascii():
            latin = name_words(surface)
            words.extend(_folded(w) if w not in STORY_WORDS else "" for w in latin or [""])
            continue
        roman = romanize(spoken) if surface not in JA_STORY_WORDS else ""
        words.append(_folded(roman) if roman.isascii() else "")
    return words


def _spans(words: list[str]) -> tuple[set[str], set[str]]:
    """The question's words whole, and its words joined by 2 to MAX_JOINED."""
    whole = {w for w in words if w}
    joined: set[str] = set()
    for start in range(len(words)):
        for size in range(2, MAX_JOINED + 1):
            run = words[start : start + size]
            if len(run) == size and all(run):
                joined.add("".join(run))
    return whole, joined


def titled(question: str, documents: Mapping[str, str]) -> dict[str, int]:
    """Per document id (of `documents`: id → file name), how many of its name's words the
    question holds; the documents it names none of are left out."""
    if not documents:
        return {}
    whole, joined = _spans(question_words(question))
    if not whole:
        return {}
    counts: dict[str, int] = {}
    for document, name in documents.items():
        hits = sum(
            w in whole or (len(w) >= MIN_JOINED and w in joined) for w in title_words(name)
        )
        if hits:
            counts[document] = hits
    return counts
