"""The graph's names indexed for finding them in a question, built once per names list.

`dictionary_match` and the local finder's word match used to walk every name of the graph for
every question: over 333,333 names that was 0.35 s for the dictionary step alone, and the word
match recomputed each Japanese name's romaji reading (a cache of 8,192) every time (issue 30,
docs/ISSUES.md §43). The index turns both into look-ups of the question's own substrings:

- `by_norm`: normalised name → node ids (in the order the names came), with the longest name's
  length, so a question of n characters costs at most n × longest dictionary look-ups;
- for `resolve_name` (a model's mention, the capable models' path): the first position of each
  id and of each normalised name, the normalised names in order, and (built on first use) all
  of them joined in one string, so the names holding a mention are found by `str.find`;
- `by_romaji` (built on the first question with ASCII words): romaji reading (four letters or
  more) → positions of the Japanese names that read so;
- `by_first_word`: first content word of an ASCII name → (position, the name's content words).

`name_index(names)` keeps the index of the last names list it was given and returns it while
the same list comes back (`GraphStore.entity_names` returns one list until the graph changes),
so a question on an unchanged graph builds nothing.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

MIN_ROMAJI_CHARS = 4
_SEPARATOR = "\x00"


@dataclass
class NameIndex:
    ids: list[str]
    norms: list[str]
    by_norm: dict[str, list[str]]
    longest: int
    first_by_id: dict[str, int]
    first_by_norm: dict[str, int]
    _joined: tuple[str, list[int]] | None = field(default=None, repr=False)
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

    def holding(self, part: str) -> Iterator[int]:
        """Positions of the names whose normalised form contains `part`, in order (a name
        holding it twice once)."""
        with self._lock:
            if self._joined is None:
                starts, offset = [], 0
                for norm in self.norms:
                    starts.append(offset)
                    offset += len(norm) + 1
                self._joined = (_SEPARATOR.join(self.norms), starts)
        joined, starts = self._joined
        if not part or _SEPARATOR in part:
            return
        last = -1
        found = joined.find(part)
        while found != -1:
            position = bisect.bisect_right(starts, found) - 1
            if position != last:
                yield position
                last = position
            found = joined.find(part, found + 1)


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
        norms = [str(row.get("norm") or "") for row in names]
        by_norm: dict[str, list[str]] = {}
        first_by_id: dict[str, int] = {}
        first_by_norm: dict[str, int] = {}
        for position, (node_id, norm) in enumerate(zip(ids, norms, strict=True)):
            first_by_id.setdefault(node_id, position)
            if norm:
                by_norm.setdefault(norm, []).append(node_id)
                first_by_norm.setdefault(norm, position)
        longest = max(map(len, by_norm), default=0)
        index = NameIndex(ids, norms, by_norm, longest, first_by_id, first_by_norm)
        _last = (names, index)
        return index
