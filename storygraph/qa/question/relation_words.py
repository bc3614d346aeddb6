"""Relation words in a question, read from the one verb table (`storygraph.text.vocabulary`);
this module keeps no table of its own.

`vocabulary.words_by_stem()` maps a stem of relation-type tokens (DEFEATS → DEFEAT) to the
Japanese forms and English words that say it; the same rows give extraction its types, so a
question's words and the stored types meet in one vocabulary. What the table is, and how it
relates to this repository's evaluation sets, is said in `storygraph.text.vocabulary`.

`vocabulary.FIELDS` groups stems into fields of meaning (conflict, companionship, residence, …):
relation-type selection (storygraph.qa.retrieval.relation_types) widens a direct word match to its
field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from storygraph.text.normalize import word_boundaries
from storygraph.text.vocabulary import FIELDS, words_by_stem

_SUFFIXES = ("", "S", "ES", "D", "ED", "ING", "SHIP")


def _token_forms(token: str) -> set[str]:
    """A relation-type token and the stems it may come from (ACCOMPANIES → ACCOMPANY)."""
    forms = {token}
    if token.endswith("IES"):
        forms.add(token[:-3] + "Y")
    if token.endswith("ING"):
        forms.add(token[:-3] + "E")
    return forms


def type_stems(rel_type: str) -> set[str]:
    """The lexicon stems a relation type is made of (BECOMES_COMPANION_OF → {COMPANION})."""
    stems: set[str] = set()
    for token in rel_type.upper().split("_"):
        for form in _token_forms(token):
            for stem in words_by_stem():
                if form in {stem + suffix for suffix in _SUFFIXES}:
                    stems.add(stem)
    return stems


def relation_words(rel_type: str) -> set[str]:
    """Question words that suggest a relation type, from its tokens' stems."""
    words: set[str] = set()
    for stem in type_stems(rel_type):
        words.update(words_by_stem()[stem])
    return words


def word_in(word: str, text: str) -> bool:
    """Does a lexicon word occur in (lower-cased) text? Japanese: substring. English: at a word
    start; words of up to 3 letters only whole or with an inflection (go / goes, not good)."""
    word = word.lower()
    if not word.isascii():
        return word in text
    if len(word) <= 3:
        return re.search(rf"\b{re.escape(word)}(?:s|es|ed|d|ing|ne|n)?\b", text) is not None
    return re.search(rf"\b{re.escape(word)}", text) is not None


def mask_names(text: str, names: Iterable[str]) -> str:
    """The text with the given entity names blanked out, longest first, so words inside a name
    (大将 in 鬼の大将, chief in "chief of the devils") do not count as relation words."""
    masked = text
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        masked = re.sub(re.escape(name), " ", masked, flags=re.IGNORECASE)
    return masked


def question_stems(question: str) -> set[str]:
    """Stems whose words occur in the question (case-insensitive, see `word_in`); a word
    written in hiragana only counts where one of the question's words starts (くれ of
    「…がくれたもの」 is くれる, but not inside かくれた: GIVE was read in 「どこにかくれた？」)."""
    raw = question.lower()
    table = words_by_stem().items()
    starts: frozenset[int] | None = None
    if any(_is_hiragana(c) for c in raw):
        starts = word_boundaries(raw)

    def found(word: str) -> bool:
        if not word_in(word, raw):
            return False
        if starts is None or not all(_is_hiragana(c) for c in word):
            return True
        return any(m.start() in starts for m in re.finditer(re.escape(word), raw))

    return {stem for stem, vocab in table if any(found(w) for w in vocab)}


def _is_hiragana(char: str) -> bool:
    return "\u3041" <= char <= "\u309f"


def related_stems(stems: set[str]) -> set[str]:
    """The stems and every stem sharing a field of meaning with one of them."""
    related = set(stems)
    for field in FIELDS:
        if field & stems:
            related |= field
    return related
