"""JMdict, the Japanese-English dictionary, read from the `jamdict-data` package's SQLite file
(pinned in requirements.txt; nothing is fetched at run time), with the standard library's sqlite3,
read-only.

- `Dictionary.japanese_for(phrase, verb=...)`: the Japanese words whose English gloss is the
  phrase ("raccoon dog" → 狸, "to throw" → 投げる), the entries with a frequency mark first
  (JMdict's ichi1 / news1 / spec1 …), then by how early the gloss comes in its entry;
- `Dictionary.english_for(word)`: the first glosses of a Japanese word's first sense
  (投げる → throw, fling).

`open_dictionary()` is None when the package is not installed: the caller names that fallback
(storygraph.qa.question.translation.NO_DICTIONARY).
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

MAX_ENTRIES = 3
"""Entries kept per English phrase: the best-ranked; more bring in rarer words' bigrams."""
MAX_GLOSSES = 2
PRIORITY_MARKS = ("ichi1", "news1", "spec1", "spec2", "ichi2", "news2", "gai1")
"""JMdict's marks of common words (its frequency lists)."""
KANA_ALONE = "word usually written using kana alone"

_GLOSS_ENTRIES = """
SELECT s.idseq, s.ID, g.text,
       (SELECT COUNT(*) FROM SenseGloss h WHERE h.sid = g.sid AND h.rowid < g.rowid)
FROM SenseGloss g JOIN Sense s ON s.ID = g.sid
WHERE g.text = ? OR g.text GLOB ?
"""
_GLOSS_ENDING = """
SELECT s.idseq, s.ID, g.text,
       (SELECT COUNT(*) FROM SenseGloss h WHERE h.sid = g.sid AND h.rowid < g.rowid)
FROM SenseGloss g JOIN Sense s ON s.ID = g.sid
WHERE g.text GLOB ? OR g.text GLOB ?
"""
_FIRST_SENSE = "SELECT MIN(ID) FROM Sense WHERE idseq = ?"
_KANJI = """
SELECT k.text, (SELECT COUNT(*) FROM KJP p WHERE p.kid = k.ID AND p.text IN ({marks}))
FROM Kanji k WHERE k.idseq = ? ORDER BY k.ID
"""
_KANA = """
SELECT k.text, (SELECT COUNT(*) FROM KNP p WHERE p.kid = k.ID AND p.text IN ({marks}))
FROM Kana k WHERE k.idseq = ? ORDER BY k.ID
"""
_POS = "SELECT text FROM pos WHERE sid = ?"
_MISC = "SELECT text FROM misc WHERE sid = ?"
_ENTRIES_WRITTEN = """
SELECT idseq FROM Kanji WHERE text = ? UNION SELECT idseq FROM Kana WHERE text = ?
"""
# `+g.lang`: no index on the language (every gloss is 'eng'): with it SQLite read every gloss
# of the dictionary for each word, 0.1-0.16 s a word of a question translated into English
_GLOSSES = """
SELECT g.text FROM Sense s JOIN SenseGloss g ON g.sid = s.ID
WHERE s.idseq = ? AND +g.lang = 'eng' ORDER BY s.ID, g.rowid
"""


@dataclass(frozen=True)
class Entry:
    """One JMdict entry found for a phrase: its written forms (the common ones first), its
    readings, whether it is a verb (and which conjugation), and whether it is usually written
    in kana."""

    idseq: int
    kanji: tuple[str, ...]
    kana: tuple[str, ...]
    pos: tuple[str, ...]
    kana_alone: bool
    common: int
    """How many of `PRIORITY_MARKS` its most marked form carries (0: not a common word)."""

    @property
    def forms(self) -> tuple[str, ...]:
        """The forms a story would write: kana first for a word usually written in kana."""
        written = (
            (*self.kana[:1], *self.kanji) if self.kana_alone else (*self.kanji, *self.kana[:1])
        )
        return tuple(dict.fromkeys(f for f in written if f))

    @property
    def conjugation(self) -> str:
        """ "ichidan", "godan" or "" (not a verb JMdict conjugates this way)."""
        for pos in self.pos:
            if pos.startswith("Ichidan verb"):
                return "ichidan"
            if pos.startswith("Godan verb"):
                return "godan"
        return ""


class Dictionary:
    """JMdict lookups over one read-only connection (one thread at a time)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        self._lock = threading.Lock()
        marks = ",".join(f"'{m}'" for m in PRIORITY_MARKS)
        self._kanji = _KANJI.format(marks=marks)
        self._kana = _KANA.format(marks=marks)

    def japanese_for(
        self, phrase: str, *, verb: bool = False, limit: int = MAX_ENTRIES
    ) -> list[Entry]:
        """The best `limit` entries glossed as `phrase` ("to " + phrase for a verb), a gloss
        with a parenthesised note counting too ("monkey (esp. the Japanese macaque)").

        Ranked by `_rank`: the gloss in the entry's first sense first, then common words (the
        most JMdict frequency marks on one form), a native word before a katakana loanword (a
        story writes 猿, not モンキー), the gloss itself before a gloss with a note, its place
        in the sense."""
        gloss = f"to {phrase}" if verb else phrase
        with self._lock:
            rows = self._db.execute(_GLOSS_ENTRIES, (gloss, f"{gloss} (*")).fetchall()
            if not rows and not verb:
                # a kind of it: "tree sparrow (Passer montanus)" for sparrow
                ending = (f"* {phrase}", f"* {phrase} (*")
                rows = self._db.execute(_GLOSS_ENDING, ending).fetchall()
            best: dict[int, tuple[int, int, bool, int]] = {}
            for idseq, sense_id, text, place in rows:
                first = self._db.execute(_FIRST_SENSE, (idseq,)).fetchone()[0]
                found = (sense_id, sense_id - first, text != gloss, place)
                if idseq not in best or found[1:] < best[idseq][1:]:
                    best[idseq] = found
            entries = {idseq: self._entry(idseq, found[0]) for idseq, found in best.items()}
        ranked = sorted(entries.values(), key=lambda e: _rank(e, best[e.idseq]))
        return ranked[:limit]

    def english_for(self, word: str) -> list[str]:
        """The first `MAX_GLOSSES` English glosses of the first entry written `word` (its
        parenthesised notes and a verb's "to " dropped); [] when JMdict has no such word."""
        with self._lock:
            found = self._db.execute(_ENTRIES_WRITTEN, (word, word)).fetchall()
            if not found:
                return []
            idseq = min(row[0] for row in found)
            glosses = [row[0] for row in self._db.execute(_GLOSSES, (idseq,)).fetchall()]
        cleaned = [g.split(" (")[0].removeprefix("to ").strip() for g in glosses]
        return list(dict.fromkeys(g for g in cleaned if g))[:MAX_GLOSSES]

    def _entry(self, idseq: int, sense_id: int) -> Entry:
        kanji = self._db.execute(self._kanji, (idseq,)).fetchall()
        kana = self._db.execute(self._kana, (idseq,)).fetchall()
        pos = tuple(r[0] for r in self._db.execute(_POS, (sense_id,)).fetchall())
        misc = {r[0] for r in self._db.execute(_MISC, (sense_id,)).fetchall()}
        # every written form, the marked ones first: an old story writes the rarer one (舟 of 船)
        written = [t for t, marks in kanji if marks] + [t for t, marks in kanji if not marks]
        return Entry(
            idseq,
            tuple(written),
            tuple(t for t, _ in kana),
            pos,
            KANA_ALONE in misc,
            max((m for _, m in [*kanji, *kana]), default=0),
        )


def _rank(entry: Entry, found: tuple[int, int, bool, int]) -> tuple[object, ...]:
    _, sense_order, noted, place = found
    loanword = all(_is_katakana(form) for form in entry.forms)
    return (sense_order > 0, -entry.common, loanword, noted, place, sense_order, entry.idseq)


def _is_katakana(text: str) -> bool:
    return all("\u30a0" <= ch <= "\u30ff" for ch in text)


_OPENING = threading.Lock()


def open_dictionary() -> Dictionary | None:
    """The installed JMdict (the `jamdict-data` package's database), opened once; None when the
    package is not installed (a named fallback for the caller)."""
    with _OPENING:
        return _open()


@lru_cache(maxsize=1)
def _open() -> Dictionary | None:
    try:
        import jamdict_data  # type: ignore[import-untyped]
    except ImportError:
        return None
    path = Path(jamdict_data.JAMDICT_DB_PATH)
    if not path.is_file():
        return None
    return Dictionary(path)
