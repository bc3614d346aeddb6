"""Sentence search: the story's own sentences that best match the question, as sources beside
the graph's facts (the text units of a local search; docs/ISSUES.md#sentence-search).

One-hop retrieval finds nothing when the fact that answers a question does not touch the entity
the question names, or when extraction missed it; the sentence is still in the story. A
`PassageFinder` returns the best few sentences, each with its chunk (its citation) and how it
scored; the engine gives them to the answerer after the facts' own sentences.

`SentenceSearch` (the one implementation):
1. documents: the ready documents whose chunks mention the question's start entities, or every
   ready document when the question names none;
2. their sentences (split as chunking splits them, each once although chunks overlap), indexed
   once per document version (id, name, sha256, chunk count) in a process-wide cache;
3. BM25 (the IDF squared: `IDF_POWER`; the document frequency pooled over the stories searched
   in one language: `pooled_frequency`) over terms that need no tokenizer: English word stems
   without stop words, and the character bigrams of normalised Japanese text (kana and kanji
   alike), with the question words (誰, どこ, …) left out. The query is the question; for a
   question in another language than the document, its translation
   (`QuestionAnalysis.translation`) and its start entities' graph names too, read in the
   document's language, a single kanji as the document's bigrams holding it
   (`widen_single_kanji`), so an English question over a Japanese story matches the sentences
   naming 桃太郎 and the ones saying what it asks about; a sentence's words score is half its
   own BM25 and half its scene's, the sentence with its neighbours as one bag (`SCENE_WEIGHT`,
   `scene_terms`);
4. the best `POOL` sentences by BM25 are re-scored with the embedding cosine to the question
   when an embedder is installed: score = BM25 / best BM25 + `EMBEDDING_WEIGHT` × cosine
   (`EMBEDDING_WEIGHT_ACROSS` for a sentence in another language than the question's);
5. when no sentence shares a single term with the query (a question in another language that
   names no one the graph knows), the sentences nearest by embedding alone, each marked
   `found_by` = `BY_MEANING_ONLY` (the trace shows it).
"""

from __future__ import annotations

import math
import threading
import unicodedata
from collections import Counter, OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.store import GraphStore
from storygraph.store.reading import EVERYTHING, Reading
from storygraph.store.runner import Row
from storygraph.text.chunking import split_sentences
from storygraph.text.embeddings import Embedder, cosine
from storygraph.text.language import is_japanese_text, is_kanji
from storygraph.text.terms import passage_terms

POOL = 24
"""Sentences (best by BM25) that the embedder re-scores: ~2 ms each the first time."""
EMBEDDING_WEIGHT = 1.0
EMBEDDING_WEIGHT_ACROSS = 3.0
"""The embedding's weight for a question asked in another language than the sentences: its
BM25 terms are a dictionary's translation and the graph's names, a noisier match than a
question's own words (chosen on dev: docs/ISSUES.md#sentence-search)."""
WINDOW = 1
"""Neighbouring sentences a passage brings on each side of the one that matched (1 measured
better than 0 on both e2e sets: docs/ISSUES.md#sentence-search)."""
MAX_PASSAGE_CHARS = 300
MIN_SENTENCE_CHARS = 4
BY_MEANING_ONLY = "meaning only: no sentence shares a word with the question"
MAX_HEADING_CHARS = 40
"""A line this short or shorter with no punctuation at all is a heading (see `is_heading`)."""
MAX_INDEXED_DOCUMENTS = 64
MAX_SEARCHED_STORIES = MAX_INDEXED_DOCUMENTS
"""A question that names no one reads every story in its scope; in a library of more stories
than this sentence search reads none (a minute a question at 1,000 stories: every story indexed
again, the cache holds MAX_INDEXED_DOCUMENTS) and the answer asks the user to name someone or
pick stories (`unsearched_warning`; docs/ISSUES.md#library-speed)."""
SCENE_WEIGHT = 0.5
"""A sentence's words score: (1 - w) x its own BM25 + w x its scene's (`scene_terms`): a question
about a book paraphrases a scene spread over two or three sentences, while dozens of sentences
hold its names and one verb (chosen on dev: docs/EVALUATION.md, "Novels")."""
BM25_K1 = 1.2
BM25_B = 0.75
IDF_POWER = 2.0
"""A query term's BM25 weight is its inverse document frequency to this power: in a long book
the question's words many sentences hold (a name, kana bigrams of grammar: した, のは) must not
outweigh the one rare word the answering sentence shares (docs/ISSUES.md#sentence-search)."""


@dataclass(frozen=True)
class Passage:
    """One sentence of a story, found for a question."""

    chunk_id: str
    document_id: str
    document_name: str
    text: str
    score: float
    lexical: float
    """BM25 over the question's terms (0 when the sentence shares none)."""
    semantic: float | None
    """Embedding cosine to the question; None when no embedder re-scored it."""
    found_by: str = "words"
    """"words": BM25 found it (re-scored by meaning when an embedder is installed);
    `BY_MEANING_ONLY`: no sentence shared a term with the question, it is among the nearest by
    embedding."""
    language: str = ""
    """The language of the sentence's document, as stored at ingest ("ja" / "en")."""
    chapter: int | None = None
    """Its chunk's chapter (storygraph.text.chapters); None for a story stored before chapters
    were read."""
    chapter_title: str = ""
    sentence: str = ""
    """The sentence that matched, without its neighbours ("" when it is the whole text)."""


class PassageFinder(Protocol):
    """Finds the story sentences that best match a question."""

    name: str

    def find(
        self, analysis: QuestionAnalysis, limit: int, reading: Reading = EVERYTHING
    ) -> list[Passage]:
        """The best `limit` passages of the sentences `reading` allows."""
        ...


@dataclass(frozen=True)
class _Sentence:
    chunk_id: str
    document_id: str
    document_name: str
    text: str
    terms: Counter[str]
    language: str
    chapter: int | None = None
    chapter_title: str = ""


@dataclass(frozen=True)
class _DocumentIndex:
    sentences: tuple[_Sentence, ...]
    document_frequency: Counter[str]
    scenes: tuple[_Sentence, ...]
    """Each sentence with its scene's terms (`scene_terms`; within its chapter, so the reading
    position, whole chapters, reads a scene whole or not at all)."""


def is_heading(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]` is a heading, not a sentence of the story: a line of its own,
    at most `MAX_HEADING_CHARS` long, without a single punctuation mark (a title such as "The
    Hare and the Tortoise", a chapter's number). Read as a source it answered questions with the
    story's title ("The Hare and the Tortoise." for who fixed the race's goal)."""
    body = text[start:end].strip()
    if len(body) > MAX_HEADING_CHARS:
        return False
    before = text[:start].rstrip(" \t\u3000")
    after = text[end:].lstrip(" \t\u3000")
    if (before and not before.endswith("\n")) or (after and not after.startswith("\n")):
        return False
    return not any(unicodedata.category(ch).startswith("P") for ch in body)


def index_document(rows: Sequence[Row], language: str) -> _DocumentIndex:
    """The sentences of one document's chunks (in order), each once, with their terms;
    headings left out."""
    seen: set[str] = set()
    sentences: list[_Sentence] = []
    frequency: Counter[str] = Counter()
    for row in rows:
        text = str(row.get("text") or "")
        for start, end in split_sentences(text):
            sentence = text[start:end].strip()
            if len(sentence) < MIN_SENTENCE_CHARS or sentence in seen:
                continue
            if is_heading(text, start, end):
                continue
            seen.add(sentence)
            terms = Counter(passage_terms(sentence, language))
            if not terms:
                continue
            frequency.update(terms.keys())
            sentences.append(
                _Sentence(
                    str(row["id"]),
                    str(row.get("document_id") or ""),
                    str(row.get("document") or ""),
                    sentence,
                    terms,
                    language,
                    None if row.get("chapter") is None else int(row["chapter"]),
                    str(row.get("chapter_title") or ""),
                )
            )
    scenes = tuple(replace(s, terms=scene_terms(sentences, i)) for i, s in enumerate(sentences))
    return _DocumentIndex(tuple(sentences), frequency, scenes)


class _IndexCache:
    """Process-wide: one index per document version, the least recently used dropped first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[str, str, str, int], _DocumentIndex] = OrderedDict()

    def get(self, key: tuple[str, str, str, int]) -> _DocumentIndex | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[str, str, str, int], index: _DocumentIndex) -> None:
        with self._lock:
            self._items[key] = index
            while len(self._items) > MAX_INDEXED_DOCUMENTS:
                self._items.popitem(last=False)


_CACHE = _IndexCache()


def bm25(
    query: Sequence[str],
    sentences: Sequence[_Sentence],
    frequency: Counter[str],
    same_word: Mapping[str, str] | None = None,
    synonyms: Sequence[Sequence[Sequence[str]]] = (),
) -> list[float]:
    """Okapi BM25 of each sentence for the (deduplicated) query terms, the IDF to `IDF_POWER`.

    One query word is counted once, however many terms stand for it:
    - `same_word`: terms that are one word's spellings (a kanji widened to its bigrams,
      `widen_single_kanji`): their document frequency is the number of sentences holding any
      of them, and a sentence adds the best of them;
    - `synonyms`: a translated word's forms (each form its terms: 尋ねる, 問う, 伺う for "ask"):
      a sentence adds the best of the forms it holds whole, not every form's terms (the える
      of 衰える is no match in 見える) (`translated_forms`)."""
    if not sentences:
        return []
    count = len(sentences)
    average = sum(sum(s.terms.values()) for s in sentences) / count
    words = same_word or {}
    held = (
        Counter(w for s in sentences for w in {words[t] for t in s.terms if t in words})
        if words
        else Counter()
    )
    in_forms = [t for word in synonyms for form in word for t in form]
    weights = {
        t: idf(held[words[t]] if t in words else frequency[t], count)
        for t in dict.fromkeys([*query, *in_forms])
        if frequency[t]
    }
    flat = [t for t in dict.fromkeys(query) if t in weights]
    scores: list[float] = []
    for sentence in sentences:
        length = sum(sentence.terms.values())
        norm = BM25_K1 * (1 - BM25_B + BM25_B * length / average)
        value = {
            t: weight * tf * (BM25_K1 + 1) / (tf + norm)
            for t, weight in weights.items()
            if (tf := sentence.terms.get(t, 0))
        }
        by_word: dict[str, float] = {}
        for term in flat:
            word = words.get(term, term)
            by_word[word] = max(by_word.get(word, 0.0), value.get(term, 0.0))
        total = sum(by_word.values())
        for word_forms in synonyms:
            total += max(
                (
                    sum(value[t] for t in dict.fromkeys(form))
                    for form in word_forms
                    if all(t in value for t in form)
                ),
                default=0.0,
            )
        scores.append(total)
    return scores


def scene_terms(sentences: Sequence[_Sentence], i: int) -> Counter[str]:
    """The terms of sentence `i` with those of its neighbours (one on each side) from its own
    document and chapter: the scene it is part of, as one bag."""
    terms = Counter(sentences[i].terms)
    for j in (i - 1, i + 1):
        if not 0 <= j < len(sentences):
            continue
        other = sentences[j]
        if other.document_id == sentences[i].document_id and other.chapter == sentences[i].chapter:
            terms.update(other.terms)
    return terms


def scene_scored(
    query: Sequence[str],
    sentences: Sequence[_Sentence],
    scenes: Sequence[_Sentence],
    frequency: Counter[str],
    same_word: Mapping[str, str] | None = None,
    synonyms: Sequence[Sequence[Sequence[str]]] = (),
) -> list[float]:
    """Each sentence's words score: its own BM25, and with `SCENE_WEIGHT` its scene's (`scenes`,
    the same sentences with `scene_terms`; the document frequency stays the sentences')."""
    own = bm25(query, sentences, frequency, same_word, synonyms)
    if SCENE_WEIGHT <= 0 or not sentences:
        return own
    scene = bm25(query, scenes, frequency, same_word, synonyms)
    return [(1 - SCENE_WEIGHT) * a + SCENE_WEIGHT * b for a, b in zip(own, scene, strict=True)]


def idf(df: int, count: int) -> float:
    """BM25's inverse document frequency of a term `df` of `count` sentences hold, to
    `IDF_POWER`."""
    return math.log(1 + (count - df + 0.5) / (df + 0.5)) ** IDF_POWER


def is_one_kanji(term: str) -> bool:
    return len(term) == 1 and is_kanji(term)


def bigrams_holding(kanji: str, frequency: Counter[str]) -> list[str]:
    """The story's bigrams that hold `kanji` (の猿, 猿は …): how the index holds a word written
    with that one kanji."""
    return [t for t in frequency if len(t) == 2 and kanji in t]


def widen_single_kanji(query: Sequence[str], frequency: Counter[str]) -> list[str]:
    """A one-kanji term (猿, 頭: a name or a translated word standing alone) as the story's
    bigrams that hold it (の猿, 猿は, 頭を …): the index holds bigrams, so the kanji alone
    matches nothing. `widened_words` tells which kanji each such bigram stands for."""
    widened: list[str] = []
    for term in query:
        if is_one_kanji(term):
            widened.extend(bigrams_holding(term, frequency))
        else:
            widened.append(term)
    return widened


def widened_forms(forms: Sequence[Sequence[str]], frequency: Counter[str]) -> list[list[str]]:
    """A translated word's forms with a one-kanji form (家) as one form per bigram holding it
    (家の, 家に …: each a way the word is written in a sentence)."""
    widened: list[list[str]] = []
    for form in forms:
        if len(form) == 1 and is_one_kanji(form[0]):
            widened.extend([t] for t in bigrams_holding(form[0], frequency))
        else:
            widened.append(list(form))
    return widened


def widened_words(query: Sequence[str], frequency: Counter[str]) -> dict[str, str]:
    """Each bigram `widen_single_kanji` puts in for a one-kanji term, mapped to that kanji
    (`bm25`'s `same_word`)."""
    words: dict[str, str] = {}
    for term in query:
        if is_one_kanji(term):
            words.update(dict.fromkeys(bigrams_holding(term, frequency), term))
    return words


def by_language(
    indexes: Sequence[tuple[str, _DocumentIndex]],
) -> dict[str, list[_DocumentIndex]]:
    """The documents' indexes grouped by their language, in the order given."""
    groups: dict[str, list[_DocumentIndex]] = {}
    for language, index in indexes:
        groups.setdefault(language, []).append(index)
    return groups


def pooled_frequency(group: Sequence[_DocumentIndex]) -> Counter[str]:
    """The document frequency of each term over every sentence of the stories searched in one
    language. Scored one story at a time, each story's own frequencies made a word that is rare
    in the wrong story (and weighed more there, the more with `IDF_POWER`) outrank the right
    story's sentences in a library; over the stories together a word weighs the same wherever
    it is found, and a name held by one story only is the rare word that tells it."""
    if len(group) == 1:
        return group[0].document_frequency
    pooled: Counter[str] = Counter()
    for index in group:
        pooled.update(index.document_frequency)
    return pooled


class SentenceSearch:
    """BM25 over the stories' sentences, re-scored by embeddings (see the module doc)."""

    def __init__(self, store: GraphStore, embedder: Embedder | None = None) -> None:
        self.store = store
        self.embedder = embedder

    @property
    def name(self) -> str:
        return "bm25+embedding" if self.embedder is not None else "bm25"

    def _indexes(
        self, entity_keys: Sequence[str], scope: Sequence[str]
    ) -> list[tuple[str, _DocumentIndex]]:
        """The sentence indexes of the documents mentioning the start entities, else of the
        question's stories (`scope`; every story when empty)."""
        documents = self.store.passage_documents(entity_keys) if entity_keys else []
        if not documents:
            documents = self.store.passage_documents([], scope)
            if len(documents) > MAX_SEARCHED_STORIES:
                return []  # named in the answer's warnings: `unsearched_warning`
        # The name is part of the version: the same text uploaded under another name (in
        # another store of this process) must not cite the first name.
        keys = {
            str(d["id"]): (
                str(d["id"]),
                str(d.get("name") or ""),
                str(d.get("sha256") or ""),
                int(d.get("chunks") or 0),
            )
            for d in documents
        }
        languages = {str(d["id"]): str(d.get("language") or "en") for d in documents}
        missing = [doc for doc, key in keys.items() if _CACHE.get(key) is None]
        rows_by_document: dict[str, list[Row]] = {doc: [] for doc in missing}
        for row in self.store.document_chunks(missing):
            rows_by_document[str(row["document_id"])].append(row)
        for doc in missing:
            _CACHE.put(keys[doc], index_document(rows_by_document[doc], languages[doc]))
        found: list[tuple[str, _DocumentIndex]] = []
        for doc, key in sorted(keys.items()):
            index = _CACHE.get(key)
            if index is not None:
                found.append((languages[doc], index))
        return found

    def find(
        self, analysis: QuestionAnalysis, limit: int, reading: Reading = EVERYTHING
    ) -> list[Passage]:
        if limit <= 0:
            return []
        indexes = self._indexes(analysis.scope.keys, analysis.scope.documents)
        sentences: list[_Sentence] = []
        lexical: list[float] = []
        for language, group in by_language(indexes).items():
            # one corpus per language: the stories searched are scored with one document
            # frequency, so a word rare in one story but common in another weighs the same
            # in both (`pooled_frequency`)
            frequency = pooled_frequency(group)
            query = analysis.index_terms(language)
            same_word: dict[str, str] = {}
            synonyms: list[list[list[str]]] = []
            if analysis.language != language:
                # A question in another language shares no words with the story: its start
                # entities' graph names (in the story's language) and its translation
                # (`index_terms`) are the query's terms, each translated word's forms one
                # word (`translated_forms`).
                for name in analysis.ids:
                    query += passage_terms(name, language)
                forms = analysis.translated_forms(language)
                in_forms = list(dict.fromkeys(t for word in forms for form in word for t in form))
                held = set(in_forms)
                query = [t for t in query if t not in held]
                same_word = widened_words([*query, *in_forms], frequency)
                query = widen_single_kanji(query, frequency)
                synonyms = [widened_forms(word, frequency) for word in forms]
            # the reading position's one filter: only the sentences read are scored, and a
            # passage's neighbours are among them (store/reading.py)
            pairs = ((s, c) for i in group for s, c in zip(i.sentences, i.scenes, strict=True))
            read = [(s, c) for s, c in pairs if reading.allows(s.chunk_id)]
            own, scenes = [s for s, _ in read], [c for _, c in read]
            sentences.extend(own)
            lexical.extend(scene_scored(query, own, scenes, frequency, same_word, synonyms))
        best = max(lexical, default=0.0)
        if best <= 0:
            return self._nearest_by_meaning(analysis, sentences, limit)
        pool = sorted(range(len(sentences)), key=lambda i: -lexical[i])[:POOL]
        pool = [i for i in pool if lexical[i] > 0]
        semantic: dict[int, float] = {}
        if self.embedder is not None:
            vectors = self.embedder.embed([analysis.question, *(sentences[i].text for i in pool)])
            similarity = cosine(vectors[0], vectors[1:])
            semantic = {i: float(s) for i, s in zip(pool, np.atleast_1d(similarity), strict=True)}
        combined = {
            i: lexical[i] / best
            + embedding_weight(analysis.language, sentences[i].language) * semantic.get(i, 0.0)
            for i in pool
        }
        scored = sorted(pool, key=lambda i: -combined[i])
        return _passages(sentences, scored, combined, lexical, semantic, limit, "words")

    def _nearest_by_meaning(
        self, analysis: QuestionAnalysis, sentences: Sequence[_Sentence], limit: int
    ) -> list[Passage]:
        """No sentence shares a term with the question (an English question over a Japanese
        story that names no one the graph knows: "What was the name of the honest old couple's
        dog?"): the sentences nearest to it by embedding, every sentence of the documents
        compared (~2 ms each the first time: 900 Japanese sentences in 1.9 s on two cores; then
        cached). None without an embedder."""
        if self.embedder is None or not sentences:
            return []
        vectors = self.embedder.embed([analysis.question, *(s.text for s in sentences)])
        similarity = np.atleast_1d(cosine(vectors[0], vectors[1:]))
        semantic = {i: float(v) for i, v in enumerate(similarity)}
        scored = sorted(semantic, key=lambda i: -semantic[i])[:POOL]
        lexical = [0.0] * len(sentences)
        return _passages(sentences, scored, semantic, lexical, semantic, limit, BY_MEANING_ONLY)


def embedding_weight(question_language: str, sentence_language: str) -> float:
    """How much the embedding cosine counts beside the normalised BM25 (module doc, step 4)."""
    if question_language and sentence_language and question_language != sentence_language:
        return EMBEDDING_WEIGHT_ACROSS
    return EMBEDDING_WEIGHT


def unsearched_warning(analysis: QuestionAnalysis, stories: int) -> list[str]:
    """The warning for a question sentence search did not read: it names no one, and its scope
    holds more than MAX_SEARCHED_STORIES of the library's `stories`."""
    scope = analysis.scope
    if scope.keys or not 0 < MAX_SEARCHED_STORIES < (len(scope.documents) or stories):
        return []
    return [
        f"sentence search reads at most {MAX_SEARCHED_STORIES} stories for a question that "
        f"names no one, and {len(scope.documents) or stories} are in scope: name a character "
        "or a place of the story, or pick the stories to ask about."
    ]


def _passages(
    sentences: Sequence[_Sentence],
    scored: Sequence[int],
    combined: dict[int, float],
    lexical: Sequence[float],
    semantic: dict[int, float],
    limit: int,
    found_by: str,
) -> list[Passage]:
    """The best `limit` passages: each scored sentence (best first) with its window of
    neighbours, one not already inside an earlier passage's window."""
    found: list[Passage] = []
    covered: set[int] = set()
    for i in scored:
        if len(found) == limit:
            break
        if i in covered:
            continue  # already inside an earlier passage's window
        span = _window(sentences, i, WINDOW)
        covered.update(span)
        text = _joined([sentences[j].text for j in span])
        found.append(
            Passage(
                chunk_id=sentences[i].chunk_id,
                document_id=sentences[i].document_id,
                document_name=sentences[i].document_name,
                text=text,
                score=round(combined[i], 4),
                lexical=round(lexical[i], 4),
                semantic=round(semantic[i], 4) if i in semantic else None,
                found_by=found_by,
                language=sentences[i].language,
                chapter=sentences[i].chapter,
                chapter_title=sentences[i].chapter_title,
                sentence="" if len(span) == 1 else sentences[i].text,
            )
        )
    return found


def _window(sentences: Sequence[_Sentence], i: int, width: int) -> list[int]:
    """The sentence `i` with up to `width` neighbours on each side from its own document and
    chapter (a passage is cited with one chapter), within `MAX_PASSAGE_CHARS` (the farther ones
    dropped first, the following before the preceding)."""
    span = [i]
    total = len(sentences[i].text)
    for step in range(1, width + 1):
        for j in (i - step, i + step):
            if not 0 <= j < len(sentences):
                continue
            if sentences[j].document_id != sentences[i].document_id:
                continue
            if sentences[j].chapter != sentences[i].chapter:
                continue
            if total + len(sentences[j].text) > MAX_PASSAGE_CHARS:
                continue
            span.append(j)
            total += len(sentences[j].text)
    return sorted(span)


def _joined(texts: Sequence[str]) -> str:
    """Sentences in order: Japanese ones side by side, others with a space."""
    if any(is_japanese_text(text) for text in texts):
        return "".join(texts)
    return " ".join(texts)
