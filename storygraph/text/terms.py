"""The terms a text is compared by: one place for the tokenisers, the English stop words and the
Japanese question words that the question's analysis (storygraph.qa.question.analysis), the scorer
and
sentence search (storygraph.qa.retrieval.passages) use, and the evaluation's answer scoring.

- `english_words`: English content words, stemmed (-s, -es, -ed, -ing), stop words left out;
- `content_terms`: what a question and a sentence that answers it probably share (English word
  stems; Japanese kanji runs and kanji bigrams), question words left out;
- `passage_terms`: what sentence search indexes (English word stems; the character bigrams of
  normalised Japanese, kana and kanji alike, a Latin word within it as an English word stem, so
  that an English question searched in a Japanese story matches its English words whole, not
  by letter pairs such as "he" or "is"), question words left out.

(The entity finder matches names with a stemmer of its own, storygraph.qa.question.entities: it
keeps
possessives and plurals apart differently, and changing it changes which names are found.)
"""

from __future__ import annotations

import re
import unicodedata

from storygraph.text.language import is_japanese_char
from storygraph.text.normalize import normalize_name

_EN_TERM = re.compile(r"[a-z][a-z'-]+")
EN_STOP_WORDS = frozenset(
    """a an the of to in on at by for with from and or but is are was were be been being do does
    did done who whom whose what which where when why how many much that this these those it its
    he she they them his her their him there here as into out up down so not no yes one would
    could should can will shall may might has have had having about after before""".split()  # noqa: SIM905
)

JA_QUESTION_WORDS = (
    "どうして", "いくつ", "どちら", "どんな", "だれ", "なに", "なん", "どこ", "いつ", "どう",
    "なぜ", "どれ", "どの", "何故", "何処", "何時", "幾つ", "誰", "何",
)  # fmt: skip
"""Interrogatives (a closed class) left out of a Japanese query: the answer does not repeat them."""
JA_QUESTION_KANJI = frozenset({"誰", "何", "何故", "幾", "何処", "何時", "如何"})
"""The kanji interrogatives: not a term of a question's kanji runs, nor a noun of a name."""
_JA_QUESTION_RE = re.compile("|".join(JA_QUESTION_WORDS))


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_terms(text: str, language: str) -> tuple[str, ...]:
    """The comparable content terms of a text (see `QuestionAnalysis.terms`)."""
    folded = normalize_name(text)
    if language == "ja":
        runs = re.findall(r"[\u3400-\u9fff\u4e00-\u9fff々〆]+", folded)
        terms: list[str] = []
        for run in runs:
            terms.append(run)
            terms.extend(run[i : i + 2] for i in range(len(run) - 1))
        return tuple(t for t in dict.fromkeys(terms) if t not in JA_QUESTION_KANJI)
    return tuple(dict.fromkeys(english_words(folded)))


def english_words(text: str) -> list[str]:
    """The English content words of a text, stemmed, stop words left out, repeats kept."""
    words = [w.strip("'-") for w in _EN_TERM.findall(normalize_name(text))]
    return [_stem(w) for w in words if w and w not in EN_STOP_WORDS]


def name_words(text: str) -> list[str]:
    """The English words a name is matched by, in the text's order: lower case, a plural
    folded to its singular (wolves stays, foxes → fox, berries → berry, "'s" dropped), stop
    words left out. Names are matched whole, so this folds less than `english_words`."""
    stems = (_name_stem(_unmarked(m)) for m in NAME_WORD.findall(text))
    return [w for w in stems if w not in EN_STOP_WORDS]


_LATIN = "A-Za-zÀ-ÖØ-öø-ɏ"
NAME_WORD = re.compile(rf"[{_LATIN}][{_LATIN}\u0300-\u036f'-]*")
"""An English word as it may stand in a name (case kept), a romanised name's long-vowel marks
included (Momotarō)."""
_NOT_LETTER = re.compile(r"[^a-z]")


def romaji_letters(text: str) -> str:
    """The lower-case Latin letters of `text`, nothing else: how a romanised name's reading is
    compared with the words that spell it (Kaguya-hime, Kaguya hime → kaguyahime). A long
    vowel's mark is dropped, not its vowel (Momotarō, Issun-bôshi → momotaro, issunboshi)."""
    return _NOT_LETTER.sub("", _unmarked(text).lower())


def _unmarked(text: str) -> str:
    """`text` with its letters' accents and long-vowel marks dropped (ō → o, é → e)."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def _name_stem(word: str) -> str:
    word = word.lower().removesuffix("'s").removesuffix("'")
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def passage_terms(text: str, language: str) -> list[str]:
    """The terms a sentence (or a query) is indexed by, repeats kept (see the module doc)."""
    if language != "ja":
        return english_words(text)
    folded = _JA_QUESTION_RE.sub(" ", normalize_name(text))
    terms: list[str] = []
    run = ""
    latin = ""
    for ch in [*folded, " "]:
        if ch.isascii() and ch.isalpha():
            latin += ch  # a Latin word is a word, not letter pairs (below)
            continue
        if latin:
            terms.extend(english_words(latin))
            latin = ""
        if is_japanese_char(ch) or ch.isalnum():
            run += ch
            continue
        terms.extend(run[i : i + 2] for i in range(len(run) - 1))
        if len(run) == 1:
            terms.append(run)
        run = ""
    return terms
