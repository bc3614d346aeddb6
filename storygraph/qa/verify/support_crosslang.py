"""The support check for an answer written in another language than its sources (issue 27 item 4).

An English question over a Japanese story is answered in English ("Momotaro gave the dog half of
it. [1]"), but its sources are Japanese: the graph's check (storygraph.qa.verify.support) read the
answer's English words against Japanese sentences, so "half", "kibidango", "barley" were "not
sure" though the sources say 半分, きびだんご, 麦 (docs/ISSUES.md#crosslang-answer).

`CrossLanguageChecker` wraps the graph's check. The answer is checked as written first; when that
fails and the question was asked across languages (its analysis carries the question's
`translation` into the stories' language, storygraph.qa.question.translation), the answer is read
in the
sources' language by the means the question was, and checked again by the same check:

- the answer's content words (not the question's own: those are its premise, not its answer)
  looked up in JMdict as the question's words are (`DictionaryTranslator`: lemma and part of
  speech, two words as one phrase first, a verb as "to …"; `ANSWER_ENTRIES` entries a word),
  each written in the form a source the model read uses (half → 五分 / 半 / 半分: 半分 when a
  source says 半分), else its first form;
- the graph's names the answer spells by reading (kibidango → きびだんご, Urashima → 浦島,
  the entity finder's transliteration);
- Japanese the answer already holds (熊 in "熊 became Kintaro's retainer") kept as written.

The rendered answer (「半分です。[1]」) goes through the same check with the question read in the
sources' language by the question room (`in_sources_language`, storygraph.qa.question.checked:
`QuestionAnalysis.language` theirs; its terms already hold the translation's): the
name, role and premise checks run on the translated terms, the words check on Japanese words.
The verdict says how the answer was read ("read in ja as 「半分」"). Numbers are not looked up:
"gave him one" is not 一つ of 「一つはやられぬ」 (a negation the words check cannot see).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from storygraph.models import Citation, Fact, Support
from storygraph.qa.generation.answer_core import SOURCE_MARK, without_marks
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.checked import in_sources_language
from storygraph.qa.question.translation import DictionaryTranslator, TranslatedWord
from storygraph.qa.verify.support import GraphSupportChecker, SupportChecker
from storygraph.qa.verify.support_reading import NameFinder
from storygraph.qa.verify.support_words import declines
from storygraph.text.jmdict import Dictionary, open_dictionary
from storygraph.text.language import is_kanji
from storygraph.text.normalize import normalize_name, word_lemmas
from storygraph.text.terms import name_words

ANSWER_ENTRIES = 8
"""JMdict entries read per answer word (the question's translation keeps 3): the sources read
pick among their forms, and the form an answer means may be a later entry (軽い is the sixth
entry glossed "light", after 明かり, 光, 淡い, 明るい, 灯)."""
RECHECKED = frozenset({"not supported", "no premise", "not checked"})
"""Verdicts on the answer as written that the reading in the sources' language may change
("not checked": the words check found no English word to compare in a Japanese answer, きね)."""
_JAPANESE_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff々〆ー]+")


@dataclass(frozen=True)
class Rendering:
    """An answer read in its sources' language."""

    text: str
    """The answer's own words in that language, apart by 、 (「きびだんご、団子」)."""
    marks: str
    """The answer's source marks ("[1] [2]"), kept so the check reads the sources it cites."""
    words: tuple[str, ...]
    """How each word was read, for the verdict ("half → 半分", "kibidango → きびだんご")."""

    @property
    def answer(self) -> str:
        return f"{self.text}です。{self.marks}".strip()


class CrossLanguageChecker:
    """The graph's check, and for an answer across languages the same check on its reading in
    the sources' language (module doc)."""

    def __init__(
        self,
        inner: SupportChecker,
        dictionary: Dictionary,
        language: str,
        names: NameFinder,
        translator: DictionaryTranslator | None = None,
    ) -> None:
        self.inner = inner
        self.language = "ja" if language == "ja" else "en"
        """The language the graph's names and sources are written in."""
        self.names = names
        """The graph's names found in a text (the entity finder: transliteration by reading)."""
        self.translator = translator or DictionaryTranslator(dictionary, entries=ANSWER_ENTRIES)

    @property
    def problem(self) -> str:
        """Why the graph's check reads the facts only ("" when it reads the frames too): the
        support step names it in the answer's warnings (storygraph.qa.verify.support_text)."""
        return str(getattr(self.inner, "problem", ""))

    def check(
        self,
        analysis: QuestionAnalysis,
        answer: str,
        citations: Sequence[Citation],
        facts: Sequence[Fact],
        read: Sequence[Citation],
        language: str | None = None,
    ) -> Support:
        first = self.inner.check(analysis, answer, citations, facts, read, language)
        if first.verdict not in RECHECKED or not self.applies(analysis) or declines(answer):
            return first
        rendering = self.render(analysis, answer, read or citations)
        if rendering is None:
            return first
        view = self.in_sources_language(analysis)
        second = self.inner.check(view, rendering.answer, citations, facts, read, self.language)
        how = ", ".join(rendering.words) or "as written"
        return replace(
            second,
            reason=f"{second.reason} (read in {self.language} as 「{rendering.text}」: {how})",
        )

    def in_sources_language(self, analysis: QuestionAnalysis) -> QuestionAnalysis:
        return in_sources_language(analysis, self.language)

    def applies(self, analysis: QuestionAnalysis) -> bool:
        """Was the question asked across languages, and brought into the sources' one?"""
        translation = analysis.translation
        return (
            translation is not None
            and translation.language == self.language
            and (analysis.reply_language != self.language)
        )

    def render(
        self, analysis: QuestionAnalysis, answer: str, sources: Sequence[Citation]
    ) -> Rendering | None:
        """The answer's own words in the sources' language (module doc); None when it has none."""
        marks = " ".join(SOURCE_MARK.findall(answer))
        core = without_marks(answer).strip()
        held = [_Held.of(c.text) for c in sources]
        parts = list(_JAPANESE_RUN.findall(core))
        how: list[str] = []
        latin = _JAPANESE_RUN.sub(" ", core)
        asked = _question_words(analysis)
        for word in self._words(latin, analysis.reply_language):
            if word.source in asked or set(word.forms) & asked:
                continue
            form = next((f for f in sorted(word.forms, key=len, reverse=True) if _in(f, held)), "")
            form = form or word.forms[0]
            parts.append(form)
            how.append(f"{word.source} → {form}")
        in_question = {e.node_id for e in analysis.entities}
        for mention, node in self.names(latin, self.language):
            if node in in_question or node in parts:
                continue
            parts.append(node)
            how.append(f"{mention} → {node}")
        parts = list(dict.fromkeys(p for p in parts if p))
        if not parts:
            return None
        return Rendering("、".join(parts), marks, tuple(how))

    def _words(self, text: str, language: str) -> list[TranslatedWord]:
        """The content words of the answer's own language part, with their forms in the
        sources' language; a short answer whose words the tagger calls no content word ("oni."
        is an interjection to it) has each word looked up as a noun, but a number ("Two.")."""
        found = self.translator.translate(text, language, self.language, [])
        if found is not None and found.words:
            return list(found.words)
        if language != "en":
            return []
        numbers = {w.lower() for w, _, pos in self.translator.english_words(text) if pos == "NUM"}
        words = [w for w in name_words(text) if len(w) > 1 and w not in numbers]
        if not words or len(words) > SHORT_ANSWER_WORDS:
            return []
        looked_up = (self.translator.noun(w) for w in words)
        return [w for w in looked_up if w is not None]


SHORT_ANSWER_WORDS = 3
"""An answer of at most this many words is a name or a noun phrase: each word is looked up."""


@dataclass(frozen=True)
class _Held:
    """A source as forms are found in it: its text, and its words (Sudachi's surfaces and
    dictionary forms), so that a short kana or one-kanji form counts only as a whole word
    (いし is not in おいしい; 麦 is in 麦をついて)."""

    text: str
    words: frozenset[str]

    @classmethod
    def of(cls, text: str) -> _Held:
        tokens = word_lemmas(text) or []
        words = frozenset(normalize_name(w) for t in tokens for w in t[:2])
        return cls(normalize_name(text), words)


def _in(form: str, held: Sequence[_Held]) -> bool:
    """Does a source hold the form: as a word, or, for a form of two or more characters
    holding a kanji, anywhere in its text (半分 in 半分やろう)?"""
    key = normalize_name(form)
    if not key:
        return False
    inside = len(key) >= 2 and any(is_kanji(ch) for ch in key)
    return any(key in h.words or (inside and key in h.text) for h in held)


def _question_words(analysis: QuestionAnalysis) -> set[str]:
    """The question's own words as its translation read them, and their forms."""
    translation = analysis.translation
    if translation is None:
        return set()
    return {w.source for w in translation.words} | {f for w in translation.words for f in w.forms}


def across_languages(inner: GraphSupportChecker, language: str) -> SupportChecker:
    """The graph's check, reading answers across languages when JMdict is installed (the
    `jamdict-data` package); without it, the graph's check alone: such a question has then no
    dictionary translation either (storygraph.qa.question.translation.NO_TRANSLATOR names that)."""
    dictionary = open_dictionary()
    if dictionary is None:
        return inner
    return CrossLanguageChecker(inner, dictionary, language, inner.names)
