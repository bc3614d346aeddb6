"""The label people see for a relation: the story's own verb, not the graph's type.

A relation's type is a safe Cypher identifier (storygraph.text.sanitize): the verb table's type
(退治する → DEFEATS) or, for a verb the table lacks, its reading in romaji (比べる → KURABERU).
Both stay internal. A reader sees the verb as the story writes it, found again in the
relation's own evidence sentence: the shortest run of words there (the last one in its
dictionary form) that the extractor would turn into the same type, through the same two
functions it uses (`relation_type_for`, then `sanitize_rel_type`). When a Japanese sentence
does not say it in so many words (a model's fact), the verb table's first form of the type
that is a whole word (話す for TALKS_TO; 家来にな + る for BECOMES_COMPANION_OF); for a type
the table lacks, the reading it was made from, in hiragana (SOROERU → そろえる). Otherwise
(an English story, or no sentence) the type reads as lower-case words (TALKS_TO → "talks to").

`relation_label` is the one function every view uses: entity pages, timelines, graph drawings
and the answer's details.
"""

from __future__ import annotations

from functools import lru_cache

from storygraph.text.language import is_japanese_text
from storygraph.text.normalize import word_lemmas
from storygraph.text.sanitize import kana_from_romaji, sanitize_rel_type
from storygraph.text.vocabulary import japanese_forms, relation_type_for

MAX_WORDS = 3
"""The longest run of words tried as one verb (家来 + に + する)."""
_WORD_KINDS = ("動詞", "形容詞", "名詞")
MAX_SENTENCE = 400
"""Only this much of an evidence text is searched (a chunk-long evidence is cut)."""


def type_words(rel_type: str) -> str:
    """A type as plain words: TALKS_TO → "talks to" (the label when no sentence says it)."""
    return rel_type.lower().replace("_", " ").strip()


def relation_label(rel_type: str, evidence: str = "") -> str:
    """What a reader sees for a relation of type `rel_type` stated by `evidence`."""
    if evidence and is_japanese_text(evidence[:MAX_SENTENCE]):
        found = (
            _verb_in(rel_type, evidence[:MAX_SENTENCE])
            or _table_word(rel_type)
            or _reading(rel_type)
        )
        if found:
            return found
    return type_words(rel_type)


@lru_cache(maxsize=512)
def _reading(rel_type: str) -> str:
    """A type the verb table lacks was made from the verb's reading (そろえる → SOROERU): in a
    Japanese story that reading, in hiragana, is the verb (never the romaji); "" otherwise."""
    if japanese_forms().get(rel_type):
        return ""
    return kana_from_romaji(rel_type) or ""


@lru_cache(maxsize=512)
def _table_word(rel_type: str) -> str:
    """The first Japanese form of the type in the verb table that is a whole word: a verb,
    adjective or two-character noun as a dictionary writes it (話す, 家来), else a verb's
    conjugation stem that る completes (捕まえ → 捕まえる); "" when none is."""
    forms = japanese_forms().get(rel_type, ())
    for form in forms:
        words = word_lemmas(form)
        if words and len(form) >= 2 and _whole(words[-1]):
            return form
    for form in forms:
        words = word_lemmas(form)
        if words and words[-1][2] == "動詞" and word_lemmas(form + "る") == [
            *words[:-1],
            (form_end := words[-1][0] + "る", form_end, "動詞"),
        ]:
            return form + "る"
    return ""


def _whole(word: tuple[str, str, str]) -> bool:
    surface, lemma, kind = word
    return surface == lemma and kind in _WORD_KINDS and (kind != "名詞" or len(surface) >= 2)


@lru_cache(maxsize=4096)
def _verb_in(rel_type: str, sentence: str) -> str:
    words = word_lemmas(sentence)
    if not words:
        return ""
    best: tuple[int, int, str] | None = None
    for start in range(len(words)):
        for size in range(1, MAX_WORDS + 1):
            span = words[start : start + size]
            if len(span) < size:
                break
            text = "".join(w[0] for w in span[:-1]) + span[-1][1]
            if not _says(text, rel_type):
                continue
            # a run that ends in a verb (退治する) before a bare noun (退治); then the shortest
            rank = (0 if span[-1][2] == "動詞" else 1, size, text)
            if best is None or rank < best:
                best = rank
    return best[2] if best else ""


def _says(text: str, rel_type: str) -> bool:
    said = _type_said(text)
    return said is not None and said == rel_type


@lru_cache(maxsize=16384)
def _type_said(text: str) -> str | None:
    """The relation type a run of words says (None: not Japanese). Kept per text: a sentence's
    runs are checked against every type of an entity's relations, and the table lookup is the
    most of the time an entity page takes (`entity NAME`, docs/ISSUES.md#entity-page-speed)."""
    if not is_japanese_text(text):
        return None
    return relation_type_for(text, "ja") or sanitize_rel_type(text)
