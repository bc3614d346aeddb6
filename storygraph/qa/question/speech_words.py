"""What a question about a line of speech asks, read off the question's own words: its words
without its names and asking words (which a line it asks about should hold), its topic words,
and its quotes (storygraph.qa.verify.support_speech compares them with the story's lines; the
question is read here, once, not in the verify room)."""

from __future__ import annotations

import re
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


def question_quotes(analysis: QuestionAnalysis) -> list[str]:
    """What the question quotes, in any quotation marks (“Thief!”, 「…」, "…"), normalised."""
    return [normalize_name(q) for q in quotes_in(analysis.question)]


def question_pairs(analysis: QuestionAnalysis) -> list[str]:
    """The question's character pairs (`char_pairs`): what an answer's own words leave out."""
    return char_pairs(analysis.question)
