"""The answer's words as the support check (storygraph.qa.verify.support) reads them: the
sources it cites, whether it declines, its core and the part of it the question does not
say, the names it joins to a participant, and the character pairs and content words an
answer and a source are compared by; whether a source is on the question's topic (by the
question's terms and their kana readings, read in the question room: QuestionAnalysis.terms,
storygraph.qa.question.question_words.kana_reading).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from storygraph.models import Citation
from storygraph.qa.generation.answer import REFUSALS
from storygraph.qa.generation.answer_core import (
    ENGLISH_LEAD,
    WRITTEN_COPULAS,
    answer_core,
    cited_numbers,
)
from storygraph.qa.generation.checks import says_unknown
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.question_words import kana_reading
from storygraph.text.language import is_kanji
from storygraph.text.normalize import normalize_name
from storygraph.text.terms import english_words

SHORT_JA = 12
_CASE_PARTICLE = re.compile(r"(?:を|が|に|へ|で|と|から)")
_PARTICLE_TAIL = re.compile(r"(?:から|まで|より|へ|に|で|を|が|は|と|の)$")
SHORT_EN = 5


def cited_sources(answer: str, citations: Sequence[Citation]) -> list[Citation]:
    """The sources `answer` cites by number, in the citations' order."""
    numbers = cited_numbers(answer)
    return [c for c in citations if c.number in numbers]


def declines(answer: str) -> bool:
    """Does the answer decline (the fixed reply, or the model's own words for it)? Nothing
    is named then, and nothing to check."""
    folded = normalize_name(answer)
    return says_unknown(answer) or any(r in folded for r in REFUSALS)


def _core(answer: str) -> str:
    """The answer without its source marks, stop and copula (「猿です。[1]」 → 猿)."""
    text = answer_core(answer, copulas=WRITTEN_COPULAS, run=False, gap="")
    return ENGLISH_LEAD.sub("", text).strip(" 、,.。")


def _own_part(core: str, folded: str) -> str:
    """A Japanese answer without the tail it repeats from the question (`folded`: the
    analysis's), and the particle before that tail: 「川上から流れて来た」 for 「どこから流れて
    来た？」 names 川上 (the English branch drops the question's words the same way)."""
    for start in range(len(core) - 1):
        tail = core[start:]
        if len(tail) >= 2 and normalize_name(tail) in folded:
            own = _PARTICLE_TAIL.sub("", core[:start]).strip(" 、,")
            return own or core
    # the question's verb in another form (こしらえました for こしらえた): the words before
    # the particle it follows, less a topic the question names (おじいさんは)
    for found in _CASE_PARTICLE.finditer(core):
        rest = normalize_name(core[found.end() :])
        head = rest[:2] if rest and is_kanji(rest[0]) else rest[:3]
        if len(head) >= 2 and head in folded:
            own = core[: found.start()]
            topic = own.split("は", 1)
            if len(topic) == 2 and topic[0] and normalize_name(topic[0]) in folded:
                own = topic[1]
            return own.strip(" 、,") or core
    return core


def joined(answer: str, named: Sequence[str], participants: Sequence[Any]) -> list[str]:
    """The names the answer coordinates with a participant of the question (AとB, A and B)."""
    folded = normalize_name(answer)
    own = {normalize_name(m) for e in participants for m in (e.node_id, e.mention) if m}
    joined = []
    for name in named:
        key = normalize_name(name)
        pairs = [(p, key) for p in own] + [(key, p) for p in own]
        if any(f"{a}と{b}" in folded or f"{a} and {b}" in folded for a, b in pairs):
            joined.append(name)
    return joined


def on_topic(text: str, analysis: QuestionAnalysis) -> bool:
    """Does a source share a content term of the question beyond its entities (the verb's
    kanji, an English word stem)? A question without such terms: yes."""
    if not analysis.terms:
        return True
    language = "ja" if analysis.language == "ja" else "en"
    held = normalize_name(text) if language == "ja" else " ".join(english_words(text))
    if language == "ja":
        return any(term in held or _in_kana(term, held) for term in analysis.terms)
    words = set(held.split())
    return any(w.startswith(t) or t.startswith(w) for t in analysis.terms for w in words)


def _in_kana(term: str, held: str) -> bool:
    """Does a (normalised) source write a question's kanji term in kana (景色 as けしき)? The
    stories for children spell many words in kana that a question writes in kanji."""
    spoken = kana_reading(term)
    return bool(spoken) and spoken in held


def says_asked_case(analysis: QuestionAnalysis, answer: str) -> bool:
    """Does a Japanese answer have a phrase in the question word's case (何で → Xで, どこへ →
    Xへ, 誰と → Xと), one the question does not hold itself, or is it a bare noun phrase? Yes
    when the question's structure gave no such case."""
    case = analysis.asked_case
    if analysis.language != "ja" or not case:
        return True
    core = normalize_name(_core(answer))
    if len(core) <= SHORT_JA and not _CASE_PARTICLE.search(core):
        return True  # a bare noun phrase (ぬい針です) is the asked thing itself
    for found in re.finditer(re.escape(case), core):
        before = core[max(0, found.start() - 2) : found.start()]
        if before and not _CASE_PARTICLE.fullmatch(before[-1]) and before not in analysis.folded:
            return True
    return False


def pairs(text: str) -> list[str]:
    """Character pairs of a Japanese text, punctuation and spaces left out."""
    flat = re.sub(r"[\s、。，．・「」『』（）()！？!?\[\]0-9]+", "", normalize_name(text))
    return [flat[i : i + 2] for i in range(len(flat) - 1)]


def kana_pairs(text: str, language: str) -> set[str]:
    """A Japanese text's character pairs (what a kana answer's words are compared with)."""
    return set(pairs(text)) if language == "ja" else set()


def content(text: str, language: str) -> list[str]:
    """The words an answer and a source are compared by: English content words; Japanese
    kanji and katakana runs as pairs, else (an answer in kana alone, 「うすをこしらえました」)
    the character pairs of the whole text."""
    if language == "ja":
        runs = re.findall(r"[\u3400-\u9fff々〆\u30a0-\u30ff]{1,}", normalize_name(text))
        return [r[i : i + 2] for r in runs for i in range(max(1, len(r) - 1))] or pairs(text)
    return english_words(text)
