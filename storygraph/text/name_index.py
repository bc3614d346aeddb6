"""The graph's names indexed for finding them in a question, built once per names list.

`dictionary_match` and the local finder's word match used to walk every name of the graph for
every question: over 333,333 names that was 0.35 s for the dictionary step alone, and the word
match recomputed each Japanese name's romaji reading (a cache of 8,192) every time (issue 30,
docs/ISSUES.md#names-cache). The index turns both into look-ups of the question's own substrings:

- `by_norm`: normalised name → node ids (in the order the names came), with the longest name's
  length, so a question of n characters costs at most n × longest dictionary look-ups;
- for `resolve_name` (a model's mention, the capable models' path): the first position of each
  id and of each normalised name, the normalised names in order, and (built on first use) all
  of them joined in one string, so the names holding a mention are found by `str.find`;
- `by_romaji` (built on the first question with ASCII words): romaji reading (four letters or
  more; a compound's sound-changed readings too) → positions of the Japanese names that read so;
- `by_first_word`: first content word of an ASCII name → (position, the name's content words);
- `sound_table` (built on the first question with a capitalised English word): the sound key of
  a katakana name (クラバック → krabak, storygraph.text.phonetic) → its positions.

`name_index(names)` keeps the index of the last names list it was given and returns it while
the same list comes back (`GraphStore.entity_names` returns one list until the graph changes),
so a question on an unchanged graph builds nothing. When the new list is the last one with rows
added at its end (another session's document, read alone: storygraph.store.change_log), the
index is extended with those rows instead of built again: the lookups are copied (the last
index stays as it was, for questions still using it) and only the new names are read, also for
the word tables when the last index had them (1.7 s to build at 333,333 names,
docs/ISSUES.md#names-cache); the joined string of `holding` is built again on its first use.
"""

from __future__ import annotations

import bisect
import operator
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz, process

from storygraph.models import ResolvedEntity
from storygraph.text.normalize import normalize_name

MIN_ROMAJI_CHARS = 4
_SEPARATOR = "\x00"
_WordTables = tuple[dict[str, list[int]], dict[str, list[tuple[int, list[str]]]]]


def _append_own(table: dict[str, list[Any]], own: set[str], key: str, value: Any) -> None:
    """Append `value` to `table[key]`, copying the list first when it is still the extended
    index's (`key` not yet in `own`): the base index's tables stay as they were."""
    if key not in own:
        table[key] = list(table.get(key, ()))
        own.add(key)
    table[key].append(value)


@dataclass
class NameIndex:
    ids: list[str]
    norms: list[str]
    by_norm: dict[str, list[str]]
    longest: int
    first_by_id: dict[str, int]
    first_by_norm: dict[str, int]
    _joined: tuple[str, list[int]] | None = field(default=None, repr=False)
    _words: _WordTables | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _base_words: tuple[_WordTables, int] | None = field(default=None, repr=False)
    """The word tables of the index this one extends, and how many names they cover."""
    _sounds: dict[str, list[int]] | None = field(default=None, repr=False)
    _base_sounds: tuple[dict[str, list[int]], int] | None = field(default=None, repr=False)
    """The sound table of the index this one extends, and how many names it covers."""

    def sound_table(self, key: Callable[[str], str | None]) -> dict[str, list[int]]:
        """Sound key → positions of the names that have one (`key`, the finder's: katakana
        names, storygraph.text.phonetic), built on first use (from the extended index's table,
        when it had one, reading only the added names)."""
        with self._lock:
            if self._sounds is None:
                table: dict[str, list[int]] = {}
                start = 0
                if self._base_sounds is not None:
                    table, start = dict(self._base_sounds[0]), self._base_sounds[1]
                own: set[str] = set()
                for position in range(start, len(self.ids)):
                    sound = key(self.ids[position])
                    if sound:
                        _append_own(table, own, sound, position)
                self._sounds = table
                self._base_sounds = None
            return self._sounds

    def word_tables(
        self, romaji: Callable[[str], Sequence[str]], content_words: Callable[[str], list[str]]
    ) -> _WordTables:
        """(romaji → name positions, first word → (position, words) of ASCII names), built on
        first use with the finder's own `romaji` (every reading a name is found by) and
        `content_words` (from the extended index's tables, when it had them, reading only the
        added names)."""
        with self._lock:
            if self._words is None:
                if self._base_words is not None:
                    (romaji_base, first_base), start = self._base_words
                    by_romaji, by_first_word = dict(romaji_base), dict(first_base)
                else:
                    by_romaji, by_first_word, start = {}, {}, 0
                own_romaji: set[str] = set()
                own_first: set[str] = set()
                for position in range(start, len(self.ids)):
                    name = self.ids[position]
                    readings = [r for r in romaji(name) if len(r) >= MIN_ROMAJI_CHARS]
                    for roman in readings:
                        _append_own(by_romaji, own_romaji, roman, position)
                    if readings:
                        continue
                    if not name.isascii():
                        continue
                    words = content_words(name)
                    if words:
                        _append_own(by_first_word, own_first, words[0], (position, words))
                self._words = (by_romaji, by_first_word)
                self._base_words = None
            return self._words

    def extended(self, rows: Sequence[dict[str, Any]]) -> NameIndex:
        """The index of this index's names followed by `rows`; this one is left unchanged."""
        start = len(self.ids)
        ids = self.ids + [str(row["id"]) for row in rows]
        norms = self.norms + [str(row.get("norm") or "") for row in rows]
        by_norm = dict(self.by_norm)
        first_by_id, first_by_norm = dict(self.first_by_id), dict(self.first_by_norm)
        for position in range(start, len(ids)):
            node_id, norm = ids[position], norms[position]
            first_by_id.setdefault(node_id, position)
            if norm:
                by_norm[norm] = [*by_norm.get(norm, ()), node_id]
                first_by_norm.setdefault(norm, position)
        longest = max([self.longest, *(len(n) for n in norms[start:])])
        index = NameIndex(ids, norms, by_norm, longest, first_by_id, first_by_norm)
        with self._lock:
            if self._words is not None:
                index._base_words = (self._words, start)
            if self._sounds is not None:
                index._base_sounds = (self._sounds, start)
        return index

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


def _appended_to(names: Sequence[dict[str, Any]], last: Sequence[dict[str, Any]]) -> bool:
    """Whether `names` is `last` (the very rows, in order) with rows added at its end."""
    return len(names) > len(last) and all(map(operator.is_, last, names))


def name_index(names: Sequence[dict[str, Any]]) -> NameIndex:
    """The index of `names` (the last one built, when `names` is the same list; the last one
    extended, when `names` is that list with rows added at its end)."""
    global _last
    cached = _last
    if cached is not None and cached[0] is names:
        return cached[1]
    with _last_lock:
        if _last is not None and _last[0] is names:
            return _last[1]
        if _last is not None and _appended_to(names, _last[0]):
            index = _last[1].extended(names[len(_last[0]) :])
            _last = (names, index)
            return index
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


FUZZY_THRESHOLD = 85.0
MIN_CONTAINS_CHARS = 2


def resolve_name(mention: str, names: Sequence[dict[str, Any]]) -> ResolvedEntity | None:
    """Match one mention to a graph node: exact, normalised, contains, then fuzzy (each the
    first name in the graph's order that fits, looked up in the names index)."""
    index = name_index(names)
    if mention in index.first_by_id:
        return ResolvedEntity(mention, mention, "llm", 1.0)
    norm = normalize_name(mention)
    if not norm:
        return None
    if norm in index.first_by_norm:
        return ResolvedEntity(mention, index.ids[index.first_by_norm[norm]], "llm", 1.0)
    if len(norm) >= MIN_CONTAINS_CHARS:
        # names inside the mention (its substrings; of equal names the first is enough, it
        # wins every tie) and names holding the mention
        inside = {
            index.first_by_norm[part]
            for start in range(len(norm))
            for end in range(start + MIN_CONTAINS_CHARS, len(norm) + 1)
            if (part := norm[start:end]) in index.first_by_norm
        }
        contained = sorted(inside | set(index.holding(norm)))
        if contained:
            best = min(contained, key=lambda p: abs(len(index.norms[p]) - len(norm)))
            return ResolvedEntity(mention, index.ids[best], "fuzzy", 0.9)
    match = process.extractOne(norm, index.norms, scorer=fuzz.ratio, score_cutoff=FUZZY_THRESHOLD)
    if match:
        return ResolvedEntity(mention, index.ids[match[2]], "fuzzy", float(match[1]) / 100)
    return None
