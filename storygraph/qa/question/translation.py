"""A question in another language than its stories, brought into theirs (issue 27 item 4).

An English question over a Japanese story shares no word with it: sentence search matched only
the start entities' names (docs/ISSUES.md#crosslang-translation). The question's analysis
(storygraph.qa.question.analysis) asks a `QuestionTranslator` for a `Translation` when the stories
in the
question's scope are written in another language; the translation is a field of the analysis,
and the stages read it from there: entity finding adds the graph names the translated nouns
are, sentence search queries a story with the translation's terms in the story's language. The
original question stays what the answer is written in and shown with.

Translators:
- `DictionaryTranslator`: no model call. English → Japanese: each content word of the question
  (spaCy's lemma and part of speech; two adjacent words tried first as one phrase, "raccoon
  dog", "old woman") looked up in JMdict by its English gloss (storygraph.text.jmdict), a verb
  as "to …"; a verb's forms also as the stems its conjugations show (沈む → 沈ま 沈み 沈ん …).
  Japanese → English: Sudachi's dictionary forms of the question's content words, each with
  its first JMdict glosses.
- `ModelTranslator`: one call of the model (the small embedded one: a short prompt, a short
  reply) that writes the question in the other language.
- `FirstDictionaryTranslator`: the dictionary, then the model only when the dictionary left a
  content word without a Japanese form.
Every translation says how it was made (`method`); the trace shows it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from storygraph.llm.request_body import capped_body
from storygraph.prompt_files import fill
from storygraph.text.english import tagged_words
from storygraph.text.jmdict import MAX_ENTRIES, Dictionary, Entry, open_dictionary
from storygraph.text.normalize import word_lemmas

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

NO_TRANSLATOR = (
    "no translator for a question in another language than its stories (the jamdict-data "
    "package is not installed, or the setting asks for a model and there is none): it is searched "
    "by the names it shares with the graph and by meaning only"
)
TaggedWord = tuple[str, str, str]
"""(word as written, lemma, coarse part of speech: NOUN, VERB, ADJ, PROPN, …)."""
Lemmatizer = Callable[[str], list[TaggedWord]]
EN_CONTENT = frozenset({"NOUN", "VERB", "ADJ"})
JA_CONTENT = frozenset({"名詞", "動詞", "形容詞"})
EN_SKIPPED_LEMMAS = frozenset({"be", "have", "do", "happen", "name"})
"""Lemmas that carry no content a story's sentence would share ("What was the name of …")."""
GODAN_ROWS = {
    "う": "わいうえおっ",
    "く": "かきくけこい",
    "ぐ": "がぎぐげごい",
    "す": "さしすせそ",
    "つ": "たちつてとっ",
    "ぬ": "なにぬねのん",
    "ぶ": "ばびぶべぼん",
    "む": "まみむめもん",
    "る": "らりるれろっ",
}
"""A godan verb's last kana → the kana its conjugations put there (the stem's forms)."""


@dataclass(frozen=True)
class TranslatedWord:
    """One content word of the question and what it is in the other language."""

    source: str
    """The word (or two-word phrase) as the question has it, lemmatised."""
    forms: tuple[str, ...]
    """Its translations, best first (JMdict: each entry's written forms, then its reading)."""
    noun: bool
    search: tuple[str, ...] = ()
    """What sentence search looks for: the forms, a verb's also as its conjugation stems."""


@dataclass(frozen=True)
class Translation:
    """The question in its stories' language, and how that was made."""

    text: str
    """The translation as shown (the model's sentence; the dictionary's words, best form each)."""
    language: str
    method: str
    """"dictionary (JMdict)", "model", or "dictionary (JMdict), then model"."""
    words: tuple[TranslatedWord, ...] = ()
    missed: tuple[str, ...] = ()
    """Content words the dictionary has no translation for."""
    names: tuple[str, ...] = ()
    """Forms that may name a graph node (the dictionary's nouns' forms)."""
    sentence: str = ""
    """The model's translation, when a model wrote one."""

    @property
    def search_text(self) -> str:
        """What sentence search reads, terms apart by spaces: the words' search forms and the
        model's sentence."""
        terms = [s for w in self.words for s in (w.search or w.forms)]
        return " ".join([*terms, self.sentence]).strip()

    @property
    def word_forms(self) -> tuple[tuple[str, ...], ...]:
        """Each translated word's forms as a text in the other language may write them (its
        search forms: a verb's conjugation stems too), one tuple per word of the question."""
        return tuple(tuple(w.search or w.forms) for w in self.words)

    def detail(self) -> dict[str, Any]:
        """The trace's view (storygraph.qa.pipeline.trace)."""
        return {
            "text": self.text,
            "language": self.language,
            "method": self.method,
            "words": {w.source: list(w.forms) for w in self.words},
            "missed": list(self.missed),
        }


class QuestionTranslator(Protocol):
    """Brings a question into another language (None: it could not)."""

    name: str

    def translate(
        self, question: str, source: str, target: str, callbacks: list[Any]
    ) -> Translation | None: ...


class DictionaryTranslator:
    """JMdict, word by word (module doc); no model call."""

    name = "dictionary (JMdict)"

    def __init__(
        self,
        dictionary: Dictionary,
        english_words: Lemmatizer = tagged_words,
        entries: int = MAX_ENTRIES,
    ) -> None:
        self.dictionary = dictionary
        self.english_words = english_words
        self.entries = entries
        """JMdict entries kept per word (storygraph.text.jmdict.MAX_ENTRIES for a question)."""

    def translate(
        self, question: str, source: str, target: str, callbacks: list[Any]
    ) -> Translation | None:
        if source == "en" and target == "ja":
            return self._to_japanese(question)
        if source == "ja" and target == "en":
            return self._to_english(question)
        return None

    def _to_japanese(self, question: str) -> Translation | None:
        tagged = [
            (lemma.lower(), _content_pos(word, pos))
            for word, lemma, pos in self.english_words(question)
            if _content_pos(word, pos) in EN_CONTENT and lemma.lower() not in EN_SKIPPED_LEMMAS
        ]
        words: list[TranslatedWord] = []
        missed: list[str] = []
        i = 0
        while i < len(tagged):
            lemma, pos = tagged[i]
            if i + 1 < len(tagged) and pos != "VERB" and tagged[i + 1][1] == "NOUN":
                phrase = f"{lemma} {tagged[i + 1][0]}"
                entries = self.dictionary.japanese_for(phrase, limit=self.entries)
                if entries:
                    words.append(_word(phrase, entries, noun=True))
                    i += 2
                    continue
            verb = pos == "VERB"
            # the tagger's part of speech is a guess on a question: the other one when JMdict
            # has no entry for it ("lick" tagged a noun)
            entries = self.dictionary.japanese_for(
                lemma, verb=verb, limit=self.entries
            ) or self.dictionary.japanese_for(lemma, verb=not verb, limit=self.entries)
            if entries:
                words.append(_word(lemma, entries, noun=pos == "NOUN"))
            else:
                missed.append(lemma)
            i += 1
        return self._made(words, missed, "ja")

    def noun(self, word: str) -> TranslatedWord | None:
        """One English word looked up as a noun, whatever the tagger calls it ("oni." alone is
        an interjection to it); None when JMdict has no entry glossed so."""
        lemma = word.lower()
        entries = self.dictionary.japanese_for(lemma, limit=self.entries)
        return _word(lemma, entries, noun=True) if entries else None

    def _to_english(self, question: str) -> Translation | None:
        lemmas = word_lemmas(question) or []
        words: list[TranslatedWord] = []
        missed: list[str] = []
        for _, lemma, pos in lemmas:
            if pos not in JA_CONTENT or len(lemma) < 1:
                continue
            glosses = self.dictionary.english_for(lemma)
            if glosses:
                words.append(TranslatedWord(lemma, tuple(glosses), noun=pos == "名詞"))
            else:
                missed.append(lemma)
        return self._made(words, missed, "en")

    def _made(
        self, words: Sequence[TranslatedWord], missed: Sequence[str], language: str
    ) -> Translation | None:
        """The translation of the words found (None: no word was)."""
        if not words:
            return None
        return Translation(
            text=" ".join(w.forms[0] for w in words),
            language=language,
            method=self.name,
            words=tuple(words),
            missed=tuple(missed),
            names=tuple(f for w in words if w.noun for f in w.forms),
        )


def _content_pos(word: str, pos: str) -> str:
    """A proper noun written in lower case is a common noun to look up (spaCy's small English
    model tags "sparrow" in "did the sparrow lick" PROPN); a capitalised one is a name, which
    the entity finder reads (Momotaro → 桃太郎)."""
    if pos == "PROPN" and word[:1].islower():
        return "NOUN"
    return pos


def _word(source: str, entries: Sequence[Entry], *, noun: bool) -> TranslatedWord:
    forms = tuple(dict.fromkeys(f for e in entries for f in e.forms))
    search: list[str] = []
    for entry in entries:
        for form in entry.forms:
            search.extend(conjugation_stems(form, entry.conjugation))
    return TranslatedWord(source, forms, noun, tuple(dict.fromkeys(search)))


def conjugation_stems(form: str, conjugation: str) -> list[str]:
    """A verb's dictionary form and the stems its conjugations show in a text: ichidan 投げる →
    投げる, 投げ; godan 沈む → 沈む, 沈ま, 沈み, 沈め, 沈も, 沈ん. Other words: the form."""
    if conjugation == "ichidan" and form.endswith("る") and len(form) > 1:
        return [form, form[:-1]]
    if conjugation == "godan" and form[-1:] in GODAN_ROWS and len(form) > 1:
        stem = form[:-1]
        return [form, *(stem + kana for kana in GODAN_ROWS[form[-1]])]
    return [form]


class ModelTranslator:
    """One model call writes the question in the other language (prompts/question_translation_*)."""

    name = "model"

    def __init__(self, llm: BaseChatModel) -> None:
        self.llm = llm

    def translate(
        self, question: str, source: str, target: str, callbacks: list[Any]
    ) -> Translation | None:
        """Raises whatever the client raises (the analysis names the fallback)."""
        if {source, target} != {"en", "ja"}:
            return None
        prompt = fill(f"question_translation_{target}", question=question)
        body = capped_body(self.llm, MAX_TOKENS)
        reply = self.llm.invoke(
            prompt, config={"callbacks": callbacks}, stop=["\n"], extra_body=body
        )
        content = reply.content if isinstance(reply.content, str) else str(reply.content)
        text = _first_line(content)
        if not text:
            return None
        return Translation(text=text, language=target, method=self.name, sentence=text)


MAX_TOKENS = 60
"""A question is one line: the model stops at the line's end, after 60 tokens at most (llama.cpp's
server reads max_tokens from the request's body, storygraph.llm.request_body)."""


def _first_line(text: str) -> str:
    """The reply's first line, without quotes or the prompt's label ("Japanese:") around it."""
    for line in text.strip().splitlines():
        for label in ("Japanese:", "English:", "日本語:", "日本語："):
            line = line.strip().removeprefix(label)
        line = line.strip().strip("「」\"'")
        if line:
            return line
    return ""


class FirstDictionaryTranslator:
    """The dictionary; the model only when the dictionary missed a content word (or found none)."""

    def __init__(self, dictionary: DictionaryTranslator, model: ModelTranslator) -> None:
        self.dictionary = dictionary
        self.model = model
        self.name = f"{dictionary.name}, then {model.name}"

    def translate(
        self, question: str, source: str, target: str, callbacks: list[Any]
    ) -> Translation | None:
        found = self.dictionary.translate(question, source, target, callbacks)
        if found is not None and not found.missed:
            return found
        by_model = self.model.translate(question, source, target, callbacks)
        if by_model is None:
            return found
        if found is None:
            return by_model
        return Translation(
            text=by_model.text,
            language=target,
            method=self.name,
            words=found.words,
            missed=found.missed,
            names=found.names,
            sentence=by_model.text,
        )


class NoTranslation:
    """Translation switched off (`QAOptions.translation` "off"): the question is searched as
    asked."""

    name = "off"

    def translate(
        self, question: str, source: str, target: str, callbacks: list[Any]
    ) -> Translation | None:
        return None


def translator_for(choice: str, llm: BaseChatModel | None) -> QuestionTranslator | None:
    """The translator `choice` names ("dictionary", "model", "dictionary+model", "off"); None
    when what it needs is missing (no JMdict installed, no model): the analysis names that
    fallback. "dictionary+model" without a model is the dictionary alone."""
    if choice == "off":
        return NoTranslation()
    dictionary = open_dictionary()
    by_dictionary = DictionaryTranslator(dictionary) if dictionary is not None else None
    by_model = ModelTranslator(llm) if llm is not None else None
    if choice == "model":
        return by_model
    if choice == "dictionary+model" and by_dictionary is not None and by_model is not None:
        return FirstDictionaryTranslator(by_dictionary, by_model)
    return by_dictionary
