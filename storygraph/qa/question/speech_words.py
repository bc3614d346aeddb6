"""What a question about a line of speech asks, read off the question's own words: its words
without its names and asking words (which a line it asks about should hold), its topic words,
and its quotes (storygraph.qa.verify.support_speech compares them with the story's lines; the
question is read here, once, not in the verify room)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from storygraph.text.normalize import normalize_name
from storygraph.text.speech import quotes_in
from storygraph.text.terms import english_words

if TYPE_CHECKING:
    from storygraph.qa.question.analysis import QuestionAnalysis

_ASKED_WORDS_EN = frozenset(
    {"what", "who", "did", "does", "do", "say", "said", "tell", "told", "to", "the", "a",
     "ask", "asked", "reply", "replied", "answer", "answered", "shout", "shouted", "scream",
     "screamed", "cry", "cried", "whisper", "whispered", "that", "when", "at", "him", "her"}
)


def asked_words(analysis: QuestionAnalysis) -> list[str]:
    """The question's own words (English stems; Japanese character pairs) without its asking
    words and names: what a line it asks about should hold."""
    text = analysis.question
    for entity in analysis.entities:
        text = text.replace(entity.mention, " ") if entity.mention else text
    if analysis.language == "ja":
        asking = r"(?:誰|だれ|どなた)|(?:と|って)?(?:言|い)っ?た?の?は?"
        return char_pairs(re.sub(asking, " ", text))
    words = [w for w in re.findall(r"[a-z']+", text.lower()) if w not in _ASKED_WORDS_EN]
    return english_words(" ".join(words))


def char_pairs(text: str) -> list[str]:
    """Character pairs of a Japanese text's words (punctuation and spaces out)."""
    folded = re.sub(r"[\s、。！？!?,.「」『』…]+", "", normalize_name(text))
    return [folded[i : i + 2] for i in range(len(folded) - 1)]


_JA_TOPIC = re.compile(r"[\u4e00-\u9fff\u30a0-\u30ff々]{2,}")
_JA_ASKING = ("何", "誰", "言", "答", "叫", "尋", "聞", "話", "申")


def topic_words(analysis: QuestionAnalysis) -> list[str]:
    """The question's own words beside its names and asking words: kanji / katakana runs of
    two or more (ja), word stems (en)."""
    text = analysis.question
    for entity in analysis.entities:
        for written in (entity.mention, entity.node_id):
            text = text.replace(written, " ") if written else text
    if analysis.language == "ja":
        return [w for w in _JA_TOPIC.findall(text) if not w.startswith(_JA_ASKING)]
    return asked_words(replace(analysis, question=text))


def question_quotes(analysis: QuestionAnalysis) -> list[str]:
    """What the question quotes, in any quotation marks (“Thief!”, 「…」, "…"), normalised."""
    return [normalize_name(q) for q in quotes_in(analysis.question)]


def question_pairs(analysis: QuestionAnalysis) -> list[str]:
    """The question's character pairs (`char_pairs`): what an answer's own words leave out."""
    return char_pairs(analysis.question)
