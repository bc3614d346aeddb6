"""The graph's names indexed for finding them in a question, built once per names list.

`dictionary_match` and the local finder's word match used to walk every name of the graph for
every question: over 333,333 names that was 0.35 s for the dictionary step alone, and the word
match recomputed each Japanese name's romaji reading (a cache of 8,192) every time (issue 30,
docs/ISSUES.md §43). The index turns both into look-ups of the question's own substrings:

- `by_norm`: normalised name → node ids (in the order the names came), with the longest name's
  length, so a question of n characters costs at most n × longest dictionary look-ups;
- `by_romaji` (built on the first question with ASCII words): romaji reading (four letters or
  more) → positions of the Japanese names that read so;
- `by_first_word`: first content word of an ASCII name → (position, the name's content words).

`name_index(names)` keeps the index of the last names list it was given and returns it while
the same list comes back (`GraphStore.entity_names` returns one list until the graph changes),
so a question on an unchanged graph builds nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

MIN_ROMAJI_CHARS = 4


@dataclass
class NameIndex:
    ids: list[str]
    by_norm: dict[str, list[str]]
    longest: int
    _words: tuple[dict[str, list[int]], dict[str, list[tuple[int, list[str]]]]] | None = field(
        default=None, repr=False
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def word_tables(
        self, romaji: Callable[[str], str], content_words: Callable[[str], list[str]]
    ) -> tuple[dict[str, list[int]], dict[str, list[tuple[int, list[str]]]]]:
        """(romaji → name positions, first word → (position, words) of ASCII names), built on
        first use with the finder's own `romaji` and `content_words`."""
        with self._lock:
            if self._words is None:
                by_romaji: dict[str, list[int]] = {}
                by_first_word: dict[str, list[tuple[int, list[str]]]] = {}
                for position, name in enumerate(self.ids):
                    roman = romaji(name)
                    if len(roman) >= MIN_ROMAJI_CHARS:
                        by_romaji.setdefault(roman, []).append(position)
                        continue
                    if not name.isascii():
                        continue
                    words = content_words(name)
                    if words:
                        by_first_word.setdefault(words[0], []).append((position, words))
                self._words = (by_romaji, by_first_word)
            return self._words


_last: tuple[Sequence[dict[str, Any]], NameIndex] | None = None
_last_lock = threading.Lock()


def name_index(names: Sequence[dict[str, Any]]) -> NameIndex:
    """The index of `names` (the last one built, when `names` is the same list)."""
    global _last
    cached = _last
    if cached is not None and cached[0] is names:
        return cached[1]
    with _last_lock:
        if _last is not None and _last[0] is names:
            return _last[1]
        ids = [str(row["id"]) for row in names]
        by_norm: dict[str, list[str]] = {}
        for row, node_id in zip(names, ids, strict=True):
            norm = row.get("norm") or ""
            if norm:
                by_norm.setdefault(norm, []).append(node_id)
        index = NameIndex(ids, by_norm, max(map(len, by_norm), default=0))
        _last = (names, index)
        return index
