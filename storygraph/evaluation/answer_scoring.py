"""Scoring a free-text answer against accepted answers: deterministic, documented, no model.

Two rules, both reported (docs/EVALUATION.md, "Scoring"). The **strict** rule (`score_strict`,
the headline since v15) reads the answer itself only; the **lenient** rule (`score_answer`,
every run up to v14) reads everything the user sees. The lenient rule:

1. Normalise both sides: NFKC, case folded, katakana as hiragana (`normalize_name`), brackets,
   quotes and punctuation removed, English articles dropped, runs of spaces collapsed.
2. Any `wrong` string contained in the answer makes it wrong, whatever else it says.
3. An accepted answer that is *short* (at most 4 English words, or at most 12 characters of
   Japanese) counts when it is contained in the answer. Japanese kana/kanji variants count too:
   the answer and the accepted string are also compared by their Sudachi readings (雉 / きじ).
   English word forms count too: a short English answer counts when its content words
   (`storygraph.text.terms.english_words`: stop words left out, regular suffixes -s/-es/-ed/-ing
   cut) appear in the answer's content words in the same order ("threw him in the stove" in "He
   threw him into the stove"; "listen to the three animals" in "listening to the three animals").
4. A *long* accepted answer (FairytaleQA's "why / how" phrases) counts when it is contained, or
   when the token-level ROUGE-L F1 between it and the answer reaches `LONG_F1_THRESHOLD` (0.4;
   English tokens are words, Japanese tokens are characters).

Citation marks ([1]) and the "Facts found in the graph" header of a no-model answer are plain
text here like any other: the score reads what the user reads, the closest sentence shown after
a refusal included (docs/ISSUES.md#strict-scoring: that sentence often holds the answer the model
did not give), and a one-kanji answer counts inside any word (犬 in 犬山).

The strict rule:

1. The answer itself (`answer_core`): the text before the closing lines the app appends (the
   closest sentence after a refusal, `qa.engine.CLOSEST_LEAD`; the sentence-search line of a
   no-model answer, `qa.answer.sentence_line`), citation marks removed, a closing copula or
   full stop cut (です, でした, だ, 。, .), then normalised as in rule 1 above; an accepted
   answer that itself ends so (野だ, a name; 何をしているのだ, a line) is looked for in the
   answer before the cut.
2. A refusal (`declines`: the app's "the sentences do not say", `qa.answer.UNKNOWN`, "could not
   find", "not sure", 分かりません …) is right for an unanswerable question and wrong for any
   other; an unanswerable question answered with anything else is wrong.
3. A `wrong` string on a word boundary of the answer itself makes it wrong (as rule 4 reads an
   accepted answer, but as a run of content words only when it has no stop word: "gave him
   one" is not matched by its "gave").
4. An accepted answer counts when the answer itself equals it or holds it on a word boundary:
   English on word boundaries (or its content words, stemmed, as one run of the answer's);
   Japanese of one or two characters as whole Sudachi words (`text.normalize.word_boundaries`,
   its middle units: 犬 in 犬と猿, not in 犬山 or 子犬) or as the stem a verb or adjective
   starts with (沈 in 沈んだ; a kana answer right after a particle also when the text from
   there starts with it: Sudachi reads おじいさんは|うす as はうす), written or by reading
   (雉 / きじ);
   longer Japanese contained anywhere. A long accepted answer (FairytaleQA's phrases) counts by
   containment or ROUGE-L F1 ≥ `LONG_F1_THRESHOLD` against the answer itself.
5. An answer written per story (several stories of a library fit the question equally;
   qa/scope/per_story.py) is read part by part: the answer itself is each part's, as in rule 1, the
   parts together, so a `wrong` string in any story's part makes it wrong.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from storygraph.models import CITATION_MARK, Citation
from storygraph.qa.generation.answer import CLOSEST_LEAD, REFUSALS, sentence_line
from storygraph.qa.generation.checks import says_unknown
from storygraph.qa.scope.per_story import split_by_story
from storygraph.text.language import is_japanese_text, is_kana
from storygraph.text.normalize import (
    normalize_name,
    short_words,
    token_readings,
    word_boundaries,
)
from storygraph.text.terms import english_words

LONG_F1_THRESHOLD = 0.4
SHORT_WORDS = 4
SHORT_JA_CHARS = 12
WHOLE_WORD_JA_CHARS = 2
"""A Japanese accepted answer (or `wrong` string) this short counts only as whole words."""
_INFLECTED = frozenset({"動詞", "形容詞"})
_PARTICLES = frozenset("はがをにのともへでや")
WORD_SPLIT = "B"
"""Sudachi's middle units: 子犬 and 犬山 are one word each, 犬|と|猿 three (mode C joins 犬と猿,
mode A cuts 子|犬)."""

_PUNCT = re.compile(r"[\[\]()（）「」『』【】\"'“”‘’.,!?;:、。！？・…―—\-]+")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


@dataclass(frozen=True)
class AnswerScore:
    correct: bool
    rule: str
    """"wrong:<string>", "contains:<accepted>", "reading:<accepted>", "words:<accepted>",
    "rouge:<f1>", "none"."""
    best_f1: float = 0.0


def normalise(text: str) -> str:
    """The comparable form of an answer or an accepted answer (rule 1)."""
    folded = CITATION_MARK.sub(" ", unicodedata.normalize("NFKC", text or ""))
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
    if is_japanese_text(text):
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
    if is_japanese_text(accepted):
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
        if is_japanese_text(key) and is_short(key):
            if spoken is None:
                spoken = _reading(said.replace(" ", "")) or ""
            target = _reading(key.replace(" ", ""))
            if spoken and target and len(target) >= 2 and target in spoken:
                return AnswerScore(True, f"reading:{good}")
        if not is_japanese_text(key) and is_short(key):
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


# --- the strict rule -----------------------------------------------------------------------------
def _closing_leads() -> tuple[str, ...]:
    """Where the app's closing lines start: the closest sentence after a refusal and the
    sentence-search line of a no-model answer, in both languages (read from the code that
    writes them, so the scorer cannot drift from the app)."""
    probe = [Citation(number=1, chunk_id="", document_name="", text="", kind="sentence")]
    lines = [
        sentence_line(probe, japanese=japanese)[0].removesuffix("[1]") for japanese in (True, False)
    ]
    return (*CLOSEST_LEAD.values(), *lines)


CLOSING_LEADS = _closing_leads()
_CLOSING_COPULA = re.compile(r"(?:です|でした|でしょう|である|だった|だ|[。.!！\s])+$")


def answer_core(answer: str, *, cut_copula: bool = True) -> str:
    """The answer itself, as the strict rule reads it (rule 1 of the strict rule): before the
    first closing line, citation marks removed, the closing copula and full stop cut (not with
    `cut_copula` False); of an answer written per story (qa/scope/per_story.py), each story's
    part so, one per line."""
    parts = [_part_core(part, cut_copula) for _, part in split_by_story(answer or "")]
    return "\n".join(part for part in parts if part)


def _part_core(answer: str, cut_copula: bool = True) -> str:
    text = unicodedata.normalize("NFKC", answer)
    cut = min(
        (i for lead in CLOSING_LEADS if (i := text.find(unicodedata.normalize("NFKC", lead))) >= 0),
        default=len(text),
    )
    text = CITATION_MARK.sub(" ", text[:cut]).strip()
    return _CLOSING_COPULA.sub("", text).strip() if cut_copula else text


def declines(answer: str) -> bool:
    """Does the answer itself say the story does not tell / the app does not know? An answer
    written per story (rule 5) declines when every story's part does: one story's answer
    beside another story's "does not say" is an answer."""
    parts = [_part_core(part).lower() for _, part in split_by_story(answer or "")]
    parts = [part for part in parts if part] or [""]
    return all(says_unknown(part) or any(marker in part for marker in REFUSALS) for part in parts)


@dataclass(frozen=True)
class StrictScore:
    correct: bool
    rule: str
    """"declined", "declined:answerable", "answered:unanswerable", "wrong:<string>",
    "equals:<accepted>", "word:<accepted>", "reading:<accepted>", "words:<accepted>",
    "contains:<accepted>", "rouge:<f1>", "none"."""
    declined: bool
    core: str


def _ja_spans(core: str, key: str) -> bool:
    """Does `key` occur in `core` as whole Sudachi words (start and end on word boundaries),
    or as the stem a verb or adjective starts with (沈 of 沈んだ, 燃や of 燃やし)? Without
    Sudachi a short key never counts (strict: no guess)."""
    words = short_words(core, WORD_SPLIT)
    if words is None:
        return False
    bounds = {0, len(core)} | {a for a, _, _ in words} | {b for _, b, _ in words}
    inflected = {a: b for a, b, kind in words if kind in _INFLECTED}
    start = core.find(key)
    while start >= 0:
        end = start + len(key)
        if start in bounds and (end in bounds or inflected.get(start, 0) > end):
            return True
        if _kana_after_particle(core, key, start):
            return True
        start = core.find(key, start + 1)
    return False


def _kana_after_particle(core: str, key: str, start: int) -> bool:
    """Sudachi sometimes joins a particle to the kana word after it (おじいさんは|うす|を read
    as はうす, "house"): a kana `key` right after a particle counts when the text from there
    starts with it as a whole word (or a verb or adjective stem)."""
    if not all(is_kana(ch) for ch in key) or (start and core[start - 1] not in _PARTICLES):
        return False
    words = short_words(core[start:], WORD_SPLIT)
    if not words:
        return False
    first_start, first_end, kind = words[0]
    return first_start == 0 and (
        first_end == len(key) or (kind in _INFLECTED and first_end > len(key))
    )


def _ja_reading_spans(core: str, key: str) -> bool:
    """Does a run of whole words of `core` read as `key` does (雉 / きじ)?"""
    target = _reading(key)
    bounds = word_boundaries(core, WORD_SPLIT)
    if not target or len(target) < 2 or bounds is None:
        return False
    ordered = sorted(bounds)
    limit = len(key) + 4
    for i, start in enumerate(ordered):
        for end in ordered[i + 1 :]:
            if end - start > limit:
                break
            if _reading(core[start:end]) == target:
                return True
    return False


def _on_word_boundary(core: str, key: str) -> str | None:
    """How `key` (normalised) occurs in `core` (normalised) under the strict rule, or None."""
    if core == key:
        return "equals"
    if is_japanese_text(key):
        flat, target = core.replace(" ", ""), key.replace(" ", "")
        if len(target) <= WHOLE_WORD_JA_CHARS:
            if _ja_spans(flat, target):
                return "word"
            return "reading" if _ja_reading_spans(flat, target) else None
        if target in flat:
            return "contains"
        if is_short(key) and _ja_reading_spans(flat, target):
            return "reading"
        return None
    if re.search(rf"(?<!\w){re.escape(key)}(?!\w)", core):
        return "word"
    wanted, said = english_words(key), english_words(core)
    if wanted and any(
        said[i : i + len(wanted)] == wanted for i in range(len(said) - len(wanted) + 1)
    ):
        return "words"
    return None


def _wrong_in(core: str, key: str) -> bool:
    """Does a `wrong` string (normalised) occur in `core` under the strict rule? As an accepted
    answer does, except as a run of its content words when that drops a word of it: "gave him
    one" is wrong by its "one", and its one content word "gave" is in the right "gave the dog
    half" too."""
    how = _on_word_boundary(core, key)
    if how != "words":
        return how is not None
    return len(english_words(key)) == len(re.findall(r"[a-z0-9']+", key))


def score_strict(
    answer: str,
    accepted: Sequence[str],
    wrong: Sequence[str] = (),
    *,
    unanswerable: bool = False,
) -> StrictScore:
    """Is `answer` right by the strict rule (the module docstring states it)?"""
    raw_core = answer_core(answer)
    core = normalise(raw_core)
    declined = declines(answer)
    if unanswerable:
        rule = "declined" if declined else "answered:unanswerable"
        return StrictScore(declined, rule, declined, raw_core)
    if declined:
        return StrictScore(False, "declined:answerable", True, raw_core)
    for bad in wrong:
        key = normalise(bad)
        if key and _wrong_in(core, key):
            return StrictScore(False, f"wrong:{bad}", False, raw_core)
    best = 0.0
    uncut: str | None = None
    for good in accepted:
        key = normalise(good)
        if not key:
            continue
        how = _on_word_boundary(core, key)
        if how is None and _CLOSING_COPULA.search(good.strip()):
            # an accepted answer ending in what the copula cut takes (a name ending in だ, a
            # line ending in のだ): looked for in the answer before the cut
            uncut = normalise(answer_core(answer, cut_copula=False)) if uncut is None else uncut
            how = _on_word_boundary(uncut, key)
        if how is not None:
            return StrictScore(True, f"{how}:{good}", False, raw_core)
        if not is_short(key):
            best = max(best, rouge_l_f1(core, key))
    if best >= LONG_F1_THRESHOLD:
        return StrictScore(True, f"rouge:{best:.2f}", False, raw_core)
    return StrictScore(False, "none", False, raw_core)


def score_lenient(
    answer: str, accepted: Sequence[str], wrong: Sequence[str] = (), *, unanswerable: bool = False
) -> AnswerScore:
    """The lenient rule (`score_answer`, every run to v14); an unanswerable question, which it
    never had, is right when the answer declines anywhere in what the user reads."""
    if unanswerable:
        folded = unicodedata.normalize("NFKC", answer or "").lower()
        said = says_unknown(folded) or any(m in folded for m in REFUSALS)
        return AnswerScore(said, "declined" if said else "answered:unanswerable")
    return score_answer(answer, accepted, wrong)
