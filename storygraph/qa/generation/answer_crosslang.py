"""An English question over Japanese stories answered in the stories' language, shown in the
question's (issue 27 item 4, docs/ISSUES.md#crosslang-answer).

The small model read Japanese sentences and wrote English: it mistranslated (きね → "a fire",
"kiibadan-gu"), answered in Japanese anyway (「とんとん麦.」), and the cross-language check
(storygraph.qa.verify.support_crosslang) had to read its English back into Japanese. Its strong
case is
a Japanese answer over Japanese sentences. So, when the question was asked across languages (its
analysis carries a `translation` into the sources' language, storygraph.qa.question.translation):

- `asked`: the question as the model answers it: as asked, in English, with the reply asked in
  Japanese (the answer prompt, its worked examples and the reply checks of
  storygraph.qa.generation.checks
  are the Japanese ones): one call, as before. (Measured and not kept: the question translated
  by the model first, a second call; the model then named the question's own participant more
  often, docs/ISSUES.md#crosslang-answer.)
- the support check reads the Japanese answer against the Japanese sources as for a Japanese
  question (`in_sources_language`, storygraph.qa.question.checked: the question's participants
  by the words it writes them with).
- `shown`: what the English reader sees: the checked Japanese answer rendered in English (each
  content word the question does not hold: a name by its reading, 桃太郎 → Momotaro, when
  JMdict has no gloss for it; a word by its first JMdict gloss, きね → mallet), the Japanese in
  brackets, and the answer's source marks: "Mallet (きね) [2]". A replaced answer ("not sure",
  "the story does not say", the model's own refusal) is shown with the English fixed replies.
  The Japanese answer stays in the trace's support step (`answer_in_sources_language`).
  A checked answer with more of its own content words than `RENDERED_WORDS` is a sentence of
  the story, not a word or a phrase: rendered word by word it reads as a list that says
  something else ("Cats and dogs, article, three" for 「桃太郎は犬と猿と、きじと…」), so it is
  shown as the story's sentence, quoted ("In the story's words: 「…」 [2]"), its verdict the
  verifier's. (Until 2026-12-06 such an answer was withheld as "not sure"; the verifier had
  passed 9 of the 11 on dev, 7 of them right: docs/ISSUES.md#crosslang-answer.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from storygraph.qa.generation.answer import UNKNOWN
from storygraph.qa.generation.answer_core import SOURCE_MARK, answer_core
from storygraph.qa.generation.checks import closest_sentence
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.checked import in_sources_language
from storygraph.qa.question.entities import name_reading
from storygraph.qa.retrieval.context import Sources
from storygraph.qa.verify.support_text import SupportStep, support_reply
from storygraph.qa.verify.support_words import declines
from storygraph.text.jmdict import Dictionary
from storygraph.text.normalize import normalize_name, word_lemmas, written_form

SOURCES_LANGUAGE = "ja"
"""The stories' language this path answers in (JMdict glosses Japanese in English)."""
RENDERED_WORDS = 3
"""Content words of the Japanese answer rendered in English, at most (its answer is a word or a
short phrase; a sentence's other words are the question's, left out)."""
QUOTED = "In the story's words: "
"""Leads a checked answer shown as the story's sentence, not rendered (module doc)."""
SHOWN_AS_SENTENCE = (
    "the story's sentence, quoted: a whole sentence, which a word-by-word English rendering "
    "would misread"
)
"""The trace's note (`shown_as`) on an answer shown quoted (module doc)."""
GLOSS_WORDS = 3
"""A gloss longer than this is a definition, not a word to show."""
COMPOUND_NOUNS = 3
"""Adjacent nouns tried as one JMdict word, at most."""
NOUNS = frozenset({"名詞"})
ADJECTIVES = frozenset({"形容詞"})
VERBS = frozenset({"動詞"})
_NOTE = re.compile(r"^\([^)]*\)\s*")
"""A gloss's leading note: "(common) millet"."""


@dataclass(frozen=True)
class Rendering:
    """A Japanese answer as the English reader is shown it."""

    text: str
    words: tuple[str, ...]
    """How each word was rendered ("きね → mallet", "桃太郎 → Momotaro")."""


class SourcesLanguageAnswer:
    """The hook the engine calls around its answer and support steps (module doc)."""

    def __init__(self, dictionary: Dictionary) -> None:
        self.dictionary = dictionary

    def applies(self, analysis: QuestionAnalysis) -> bool:
        """Asked in English over Japanese stories, and brought into theirs."""
        translation = analysis.translation
        return (
            translation is not None
            and translation.language == SOURCES_LANGUAGE
            and analysis.reply_language != SOURCES_LANGUAGE
        )

    def asked(self, analysis: QuestionAnalysis) -> QuestionAnalysis | None:
        """The question as the model answers it and the check reads it: in the sources'
        language (`in_sources_language`; the question's text as asked); None when it is not
        asked across languages."""
        if not self.applies(analysis):
            return None
        return in_sources_language(analysis, SOURCES_LANGUAGE)

    def shown(
        self,
        analysis: QuestionAnalysis,
        checked: SupportStep,
        written: str,
        method: str,
        sources: Sources,
    ) -> SupportStep:
        """The checked Japanese answer as the English reader sees it (module doc); the trace's
        support step keeps the Japanese answer and how it was rendered. The model's answer
        only (`method` "llm…"): a facts list (the model failed) is shown as written."""
        if not method.startswith("llm"):
            return checked
        detail = {**checked.detail, "answer_in_sources_language": written}
        if checked.text != written:
            # the check replaced it: its reply again in the question's language
            text = support_reply(checked.support, analysis, sources.citations, written)
            return replace(checked, text=text or checked.text, detail=detail)
        if declines(written):
            text = UNKNOWN[analysis.reply_language] + closest_sentence(
                sources, analysis.reply_language
            )
            return replace(checked, text=text, detail=detail)
        core = _core(written)
        words = self._answer_words(analysis, core)
        if len(words) > RENDERED_WORDS:
            # a sentence, not a word or a phrase: more content words than a rendering shows
            detail["shown_as"] = SHOWN_AS_SENTENCE
            text = f"{QUOTED}「{core}」 {_marks(written)}".strip()
            return replace(checked, text=text, detail=detail)
        rendering = self._rendering(analysis, written, core, words)
        detail["rendered"] = list(rendering.words)
        return replace(checked, text=rendering.text, detail=detail)

    def render(self, analysis: QuestionAnalysis, answer: str) -> Rendering:
        """The answer as shown, "Mallet (きね) [2]": its own content words in English, the
        Japanese answer in brackets, its source marks (module doc)."""
        core = _core(answer)
        return self._rendering(analysis, answer, core, self._answer_words(analysis, core))

    def _rendering(
        self, analysis: QuestionAnalysis, answer: str, core: str, words: list[str]
    ) -> Rendering:
        """`render` of an answer whose core (`_core`) and own content words are read."""
        english: list[str] = []
        how: list[str] = []
        asked = analysis.question.lower()
        for word in words:
            glosses = self._glosses(word)
            if any(_holds(asked, g.lower()) for g in glosses):
                continue  # the question's own word in other words (おばあさん: old woman)
            gloss = _short(glosses)
            if gloss and gloss.lower() not in (e.lower() for e in english):
                english.append(gloss)
                how.append(f"{word} → {gloss}")
            if len(english) == RENDERED_WORDS:
                break
        said = ", ".join(english)
        said = said[:1].upper() + said[1:]
        text = f"{said} ({core})" if said else core
        return Rendering(f"{text} {_marks(answer)}".strip(), tuple(how))

    def _answer_words(self, analysis: QuestionAnalysis, core: str) -> list[str]:
        """The answer's content words the question does not hold (its nouns and adjectives; its
        verbs when it has neither), graph names whole (足柄山, not 足柄 + 山)."""
        asked = _question_words(analysis)
        names = sorted(
            (n for n in analysis.graph_names if len(n) > 1 and n in core), key=len, reverse=True
        )
        found: list[tuple[int, str]] = []
        rest = core
        for name in names:
            at = rest.find(name)
            if at < 0:
                continue
            if normalize_name(name) not in asked:
                found.append((at, name))
            rest = rest[:at] + "\u3000" * len(name) + rest[at + len(name) :]
        nouns: list[tuple[int, str]] = []
        others: list[tuple[int, str]] = []
        at = 0
        for surface, lemma, pos in self._compounds(word_lemmas(rest) or []):
            start = rest.find(surface, at)
            at = start + len(surface) if start >= 0 else at
            if normalize_name(lemma) in asked or normalize_name(surface) in asked:
                continue
            if (pos in NOUNS and surface.strip("\u3000")) or pos in ADJECTIVES:
                nouns.append((start, lemma))
            elif pos in VERBS:
                others.append((start, lemma))
        words = sorted([*found, *nouns]) or sorted(others)
        return list(dict.fromkeys(w for _, w in words))

    def _compounds(self, tokens: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
        """Sudachi's tokens, adjacent nouns joined when JMdict has the joined word (きび +
        だんご → きびだんご, "millet dumplings", not "millet, dango")."""
        joined: list[tuple[str, str, str]] = []
        i = 0
        while i < len(tokens):
            for size in range(min(COMPOUND_NOUNS, len(tokens) - i), 1, -1):
                run = tokens[i : i + size]
                word = "".join(t[0] for t in run)
                if all(t[2] in NOUNS for t in run) and self.dictionary.english_for(word):
                    joined.append((word, word, "名詞"))
                    i += size
                    break
            else:
                joined.append(tokens[i])
                i += 1
        return joined

    def _glosses(self, word: str) -> list[str]:
        """A word's JMdict glosses, best first (by its dictionary spelling first: のり → 糊),
        else a name's reading (足柄山 → Ashigarayama); [] when it has neither."""
        for form in (written_form(word), word):
            if form:
                glosses = self.dictionary.english_for(form)
                if glosses:
                    return glosses
        roman = name_reading(word)
        return [roman[:1].upper() + roman[1:]] if roman else []


def _core(answer: str) -> str:
    """An answer without its source marks and closing copula / punctuation."""
    return answer_core(answer)


def _marks(answer: str) -> str:
    """The answer's source marks as shown after it ("[2]", "[1] [3]")."""
    return " ".join(SOURCE_MARK.findall(answer))


def _short(glosses: list[str]) -> str:
    """The first gloss of at most `GLOSS_WORDS` words (a long one is a definition, cut at its
    note: "sweet dumpling made with mochi flour and" before "millet dumplings"), else the
    first; "" for none."""
    cleaned = [_NOTE.sub("", g).strip() for g in glosses]
    short = (g for g in cleaned if g and len(g.split()) <= GLOSS_WORDS)
    return next(short, cleaned[0] if cleaned else "")


def _holds(text: str, phrase: str) -> bool:
    """Is `phrase` in `text` on word boundaries?"""
    return len(phrase) > 2 and re.search(rf"\b{re.escape(phrase)}\b", text) is not None


def _question_words(analysis: QuestionAnalysis) -> set[str]:
    """The question's own words in the sources' language (its translation's forms and its
    participants' graph names), normalised: an answer's words that are not these are its own."""
    words = {normalize_name(e.node_id) for e in analysis.entities}
    translation = analysis.translation
    if translation is not None:
        words |= {normalize_name(f) for w in translation.words for f in w.forms}
    return {w for w in words if w}


def sources_language_answer(dictionary: Dictionary | None) -> SourcesLanguageAnswer | None:
    """The hook for `crosslang_answer` "sources"; None without JMdict (the `jamdict-data`
    package): the question is then not translated either, and is answered in its own language
    (storygraph.qa.question.translation.NO_TRANSLATOR names that)."""
    if dictionary is None:
        return None
    return SourcesLanguageAnswer(dictionary)
