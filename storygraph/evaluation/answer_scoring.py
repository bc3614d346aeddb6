"""Scoring a free-text answer against accepted answers: deterministic, documented, no model.

The rule (docs/EVALUATION.md):

1. Normalise both sides: NFKC, case folded, katakana as hiragana (`normalize_name`), brackets,
   quotes and punctuation removed, English articles dropped, runs of spaces collapsed.
2. Any `wrong` string contained in the answer makes it wrong, whatever else it says.
3. An accepted answer that is *short* (at most 4 English words, or at most 12 characters of
   Japanese) counts when it is contained in the answer. Japanese kana/kanji variants count too:
   the answer and the accepted string are also compared by their Sudachi readings (雉 / きじ).
   English word forms count too: a short English answer counts when its content words
   (`analysis.english_words`: stop words left out, regular suffixes -s/-es/-ed/-ing cut) appear
   in the answer's content words in the same order ("threw him in the stove" in "He threw him
   into the stove"; "listen to the three animals" in "listening to the three animals").
4. A *long* accepted answer (FairytaleQA's "why / how" phrases) counts when it is contained, or
   when the token-level ROUGE-L F1 between it and the answer reaches `LONG_F1_THRESHOLD` (0.4;
   English tokens are words, Japanese tokens are characters).

Citation marks ([1]) and the "Facts found in the graph" header of a no-model answer are plain
text here like any other: the score reads what the user reads.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from storygraph.qa.analysis import english_words
from storygraph.text.language import is_japanese_char
from storygraph.text.normalize import normalize_name, token_readings

LONG_F1_THRESHOLD = 0.4
SHORT_WORDS = 4
SHORT_JA_CHARS = 12

_PUNCT = re.compile(r"[\[\]()（）「」『』【】\"'“”‘’.,!?;:、。！？・…―—\-]+")
_CITATION = re.compile(r"\[\d+\]")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


@dataclass(frozen=True)
class AnswerScore:
    correct: bool
    rule: str
    """"wrong:<string>", "contains:<accepted>", "reading:<accepted>", "words:<accepted>",
    "rouge:<f1>", "none"."""
    best_f1: float = 0.0


def _is_japanese(text: str) -> bool:
    return any(is_japanese_char(ch) for ch in text)


def normalise(text: str) -> str:
    """The comparable form of an answer or an accepted answer (rule 1)."""
    folded = _CITATION.sub(" ", unicodedata.normalize("NFKC", text or ""))
    folded = normalize_name(folded)
    folded = _PUNCT.sub(" ", folded)
    folded = _ARTICLES.sub(" ", folded)
    return " ".join(folded.split())


@lru_cache(maxsize=4096)
def _reading(text: str) -> str | None:
    """The hiragana reading of Japanese text without spaces (None without Sudachi)."""
    tokens = token_readings(text)
    if tokens is None:
        return None
    return "".join(spoken for _, spoken in tokens).replace(" ", "")


def _tokens(text: str) -> list[str]:
    if _is_japanese(text):
        return [ch for ch in text if not ch.isspace()]
    return text.split()


def rouge_l_f1(candidate: str, reference: str) -> float:
    """Token-level ROUGE-L F1 of two normalised strings."""
    a, b = _tokens(candidate), _tokens(reference)
    if not a or not b:
        return 0.0
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    lcs = previous[-1]
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(a), lcs / len(b)
    return 2 * precision * recall / (precision + recall)


def _in_order(needles: Sequence[str], haystack: Sequence[str]) -> bool:
    """Are `needles` a subsequence of `haystack`?"""
    rest = iter(haystack)
    return all(any(word == seen for seen in rest) for word in needles)


def is_short(accepted: str) -> bool:
    if _is_japanese(accepted):
        return len(accepted.replace(" ", "")) <= SHORT_JA_CHARS
    return len(accepted.split()) <= SHORT_WORDS


def score_answer(answer: str, accepted: Sequence[str], wrong: Sequence[str] = ()) -> AnswerScore:
    """Is `answer` right? (the module docstring states the rule)."""
    said = normalise(answer)
    for bad in wrong:
        key = normalise(bad)
        if key and key in said:
            return AnswerScore(False, f"wrong:{bad}")
    spoken: str | None = None
    said_words: list[str] | None = None
    best = 0.0
    for good in accepted:
        key = normalise(good)
        if not key:
            continue
        if key in said:
            return AnswerScore(True, f"contains:{good}")
        if _is_japanese(key) and is_short(key):
            if spoken is None:
                spoken = _reading(said.replace(" ", "")) or ""
            target = _reading(key.replace(" ", ""))
            if spoken and target and len(target) >= 2 and target in spoken:
                return AnswerScore(True, f"reading:{good}")
        if not _is_japanese(key) and is_short(key):
            wanted = english_words(key)
            if said_words is None:
                said_words = english_words(said)
            if wanted and _in_order(wanted, said_words):
                return AnswerScore(True, f"words:{good}")
        if not is_short(key):
            best = max(best, rouge_l_f1(said, key))
    if best >= LONG_F1_THRESHOLD:
        return AnswerScore(True, f"rouge:{best:.2f}", best)
    return AnswerScore(False, "none", best)


def evidence_found(
    kept_sentences: Sequence[str], evidence: Sequence[str], accepted: Sequence[str]
) -> bool | None:
    """Did any sentence the answer was written from (`kept_sentences`: the sources it read)
    hold the gold evidence or an accepted answer?

    A kept sentence matches a gold evidence string when either contains the other after
    normalisation (gold evidence is a sentence for our sets, a paragraph for FairytaleQA); it
    matches an accepted answer when it contains it. None when there is nothing to look for.
    """
    gold = [normalise(e) for e in evidence if normalise(e)]
    goods = [normalise(a) for a in accepted if normalise(a)]
    if not gold and not goods:
        return None
    for raw in kept_sentences:
        sentence = normalise(raw)
        if not sentence:
            continue
        if any(sentence in g or g in sentence for g in gold):
            return True
        if any(a in sentence for a in goods):
            return True
    return False
