"""Finding the question's entities in the graph (design §5.1), behind one port.

An `EntityFinder` turns a question and the graph's names into start nodes, each with how it was
found (`ResolvedEntity.source`). Two finders:

- `ModelEntityFinder` (capable models): the LLM lists the names it sees (structured output; with
  relation types to choose from, the same call picks the types that fit), each resolved against
  the graph: exact → normalised → contains / contained-in → fuzzy; then the dictionary match.
- `LocalEntityFinder` (the small embedded model, and no model at all): no model call. Names of
  graph nodes found literally in the question after normalisation (dictionary), then English
  words that spell a Japanese name's reading (Momotaro → 桃太郎, "transliteration"), a
  capitalised English word that sounds like a katakana name (Craback → クラバック, Tok → トック,
  also "transliteration": `by_sound`), English
  names matched word by word with plural and possessive endings dropped (normalised), Japanese
  nouns of the question that are part of a longer name ("contained": 畑 → 畑のもの), then, when
  nothing was found, the nearest names by multilingual sentence embedding ("embedding"; a kana
  name also as a dictionary writes it, かに as 蟹, so "crab" finds it).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from pydantic import BaseModel, Field

from storygraph.llm.replies import reply_fields, string_list
from storygraph.models import ResolvedEntity
from storygraph.prompt_files import fill
from storygraph.text.embeddings import Embedder, cosine
from storygraph.text.language import is_japanese_text
from storygraph.text.name_index import MIN_ROMAJI_CHARS, name_index, resolve_name
from storygraph.text.normalize import (
    normalize_name,
    noun_spans,
    reading,
    readings,
    short_words,
    word_boundaries,
    written_form,
)
from storygraph.text.phonetic import english_keys, katakana_key, key_distance
from storygraph.text.sanitize import romanize
from storygraph.text.terms import (
    EN_STOP_WORDS,
    JA_QUESTION_KANJI,
    NAME_WORD,
    name_words,
    romaji_letters,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

EMBEDDING_THRESHOLD = 0.7
"""Lowest cosine between a question phrase and a name for an embedding match (USE-m3)."""
EMBEDDING_MARGIN = 0.05
"""The best name must beat the runner-up by this much, else the match is ambiguous."""
MAX_LISTED_TYPES = 200


class QuestionEntities(BaseModel):
    """Names of the characters, places and things a question is about."""

    names: list[str] = Field(default_factory=list, description="names as written in the question")


class QuestionAnalysis(BaseModel):
    """The names a question is about and the relation types that could answer it."""

    names: list[str] = Field(default_factory=list, description="names as written in the question")
    relation_types: list[str] = Field(
        default_factory=list, description="relation types from the list, spelled exactly"
    )


def analyse_question(
    question: str, relation_types: Sequence[str], llm: BaseChatModel, callbacks: list[Any]
) -> tuple[list[str], list[str]]:
    """One call for both the names and the fitting relation types (keeps a question at three
    calls with reranking: analysis, rerank, answer). Raises whatever the client raises, and
    UnexpectedReply for a reply of another shape."""
    structured = llm.with_structured_output(QuestionAnalysis, method="function_calling")
    listed = "\n".join(f"- {t}" for t in relation_types[:MAX_LISTED_TYPES]) or "(none)"
    result = structured.invoke(
        fill("question_analysis", question=question, types=listed),
        config={"callbacks": callbacks},
    )
    fields = reply_fields(result, QuestionAnalysis)
    return (
        string_list(fields.get("names"), "names"),
        string_list(fields.get("relation_types"), "relation types"),
    )


def llm_names(question: str, llm: BaseChatModel, callbacks: list[Any]) -> list[str]:
    """Names the model sees in the question; raises whatever the client raises, and
    UnexpectedReply for a reply of another shape."""
    structured = llm.with_structured_output(QuestionEntities, method="function_calling")
    result = structured.invoke(
        fill("question_entities", question=question), config={"callbacks": callbacks}
    )
    return string_list(reply_fields(result, QuestionEntities).get("names"), "names")


def dictionary_match(question: str, names: Sequence[dict[str, Any]]) -> list[ResolvedEntity]:
    """Graph node names that occur literally (after normalisation) in the question.

    A Japanese name counts only where it starts and ends on word boundaries of the question
    (Sudachi's shortest words, `word_boundaries`): 子 is not found in 子安貝, 心 not in 熱心,
    取 not in 竹取り, くら not in くらしていた (docs/ISSUES.md#entity-finder). Without Sudachi (the
    doctor reports it) a Japanese name counts anywhere. A name in Latin letters counts only as
    whole words, a plural's s or es allowed after it (`_whole_words`): "son" is not found in
    "season", "ass" not in "passed", "M" not in "them"; "fox" is in "foxes". A name contained in
    a longer matched name at the same place is dropped (鬼 inside 鬼ヶ島).
    """
    text = normalize_name(question)
    bounds = word_boundaries(text) if is_japanese_text(text) else None
    index = name_index(names)
    spans: list[tuple[int, int, str]] = []
    for start in range(len(text)):
        for end in range(start + 1, min(len(text), start + index.longest) + 1):
            node_ids = index.by_norm.get(text[start:end])
            if not node_ids:
                continue
            norm = text[start:end]
            if norm.isascii():
                if not _whole_words(text, start, end):
                    continue
            elif bounds is not None and not (start in bounds and end in bounds):
                continue
            spans.extend((start, end, node_id) for node_id in node_ids)
    spans.sort(key=lambda s: (-(s[1] - s[0]), s[0]))
    taken: list[tuple[int, int]] = []
    found: dict[str, ResolvedEntity] = {}
    for start, end, node_id in spans:
        if any(start >= a and end <= b for a, b in taken):
            continue
        taken.append((start, end))
        found.setdefault(node_id, ResolvedEntity(text[start:end], node_id, "dictionary", 1.0))
    return sorted(found.values(), key=lambda e: text.find(normalize_name(e.mention)))


_PLURAL_END = re.compile(r"e?s(?![A-Za-z0-9])")
PLURAL_MIN = 3
"""A name in Latin letters takes a plural's s or es after it from this length on ("fox" in
"foxes"; "I" is not in "is")."""


def _latin(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def _whole_words(text: str, start: int, end: int) -> bool:
    """Does `text[start:end]` (a name in Latin letters) start and end on word boundaries of
    `text` (a Latin letter or digit on both sides of a boundary joins them into one word), a
    plural's s or es allowed after a name of PLURAL_MIN letters or more?"""
    if start > 0 and _latin(text[start]) and _latin(text[start - 1]):
        return False
    if end < len(text) and _latin(text[end - 1]) and _latin(text[end]):
        return end - start >= PLURAL_MIN and _PLURAL_END.match(text, end) is not None
    return True


@dataclass
class EntityFinding:
    entities: list[ResolvedEntity]
    warnings: list[str] = field(default_factory=list)
    relation_types: list[str] | None = None
    """The model's relation-type pick when it was asked for one (None: not asked or failed)."""


def find_entities(
    question: str,
    names: Sequence[dict[str, Any]],
    llm: BaseChatModel | None,
    callbacks: list[Any],
    *,
    relation_types: Sequence[str] | None = None,
) -> EntityFinding:
    """Start nodes for a question. With `relation_types`, the same model call also picks the
    types that fit the question (Phase 3), so no second call is needed."""
    finding = EntityFinding([])
    resolved: dict[str, ResolvedEntity] = {}
    if llm is not None:
        mentions: list[str] = []
        try:
            if relation_types is not None:
                mentions, finding.relation_types = analyse_question(
                    question, relation_types, llm, callbacks
                )
            else:
                mentions = llm_names(question, llm, callbacks)
        except Exception as exc:  # noqa: BLE001 - any model fault falls back to the dictionary
            finding.warnings.append(
                f"entity extraction by the model failed ({type(exc).__name__}: {exc})"[:300]
                + "; used dictionary matching only"
            )
        for mention in mentions:
            match = resolve_name(mention, names)
            if match and match.node_id not in resolved:
                resolved[match.node_id] = match
    for match in dictionary_match(question, names):
        resolved.setdefault(match.node_id, match)
    finding.entities = list(resolved.values())
    return finding


# --- the port and its two finders ----------------------------------------------------------------
class EntityFinder(Protocol):
    """Finds a question's start nodes among the graph's names."""

    def find(
        self,
        question: str,
        names: Sequence[dict[str, Any]],
        callbacks: list[Any],
        relation_types: Sequence[str] | None = None,
    ) -> EntityFinding: ...


class ModelEntityFinder:
    """The model lists the names (and, given relation types, picks the fitting ones)."""

    def __init__(self, llm: BaseChatModel) -> None:
        self.llm = llm

    def find(
        self,
        question: str,
        names: Sequence[dict[str, Any]],
        callbacks: list[Any],
        relation_types: Sequence[str] | None = None,
    ) -> EntityFinding:
        return find_entities(question, names, self.llm, callbacks, relation_types=relation_types)


ROMAJI_CACHED = 1 << 19
"""Readings kept (about 100 MB when full): a graph's every name, so that the names index
rebuilt after a write reads only the new names (333,333 names: 11 s on two loaded cores)."""


@lru_cache(maxsize=ROMAJI_CACHED)
def _romaji(name: str) -> str:
    """A Japanese name as plain romaji without long vowels (桃太郎 → momotaro); "" if none."""
    if name.isascii():
        return ""
    return _plain_romaji(reading(name) or normalize_name(name))


@lru_cache(maxsize=ROMAJI_CACHED)
def _romaji_readings(name: str) -> tuple[str, ...]:
    """Every romaji a Japanese name is found by: its plain reading first, then the compound's
    sound changes at Sudachi's token boundaries (一寸法師: ichisunhoshi, issunboshi, …;
    storygraph.text.normalize.reading_variants); () if none."""
    if name.isascii():
        return ()
    spoken, variants = readings(name)  # one Sudachi pass for both (`_romaji` makes its own)
    plain = _plain_romaji(spoken or normalize_name(name))
    if not plain:
        return ()
    said = [_plain_romaji(variant) for variant in variants]
    return tuple(dict.fromkeys([plain, *(r for r in said if r)]))


def _plain_romaji(spoken: str) -> str:
    roman = romanize(spoken)
    if not roman or not roman.isascii():
        return ""
    for long_vowel, short in (("ou", "o"), ("oo", "o"), ("uu", "u"), ("aa", "a"), ("ii", "i")):
        roman = roman.replace(long_vowel, short)
    return roman


def name_reading(name: str) -> str:
    """A Japanese name's romaji as the entity finder reads it (桃太郎 → momotaro); "" if none."""
    return _romaji(name)


class LocalEntityFinder:
    """No model call: dictionary, transliteration, word match, then embeddings (module doc)."""

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.embedder = embedder

    def find(
        self,
        question: str,
        names: Sequence[dict[str, Any]],
        callbacks: list[Any],
        relation_types: Sequence[str] | None = None,
    ) -> EntityFinding:
        found: dict[str, ResolvedEntity] = {m.node_id: m for m in dictionary_match(question, names)}
        words = name_words(question)
        if words:
            for match in self._by_words(question, words, names):
                found.setdefault(match.node_id, match)
            explained = {normalize_name(m.mention) for m in found.values()}
            for match in by_sound(question, names, explained):
                found.setdefault(match.node_id, match)
        for match in _by_containing_name(question, list(found.values()), names):
            found.setdefault(match.node_id, match)
        finding = EntityFinding(list(found.values()))
        if not found and self.embedder is not None and names:
            finding.entities = self._by_embedding(question, words, names)
        return finding

    @staticmethod
    def _by_words(
        question: str, words: list[str], names: Sequence[dict[str, Any]]
    ) -> list[ResolvedEntity]:
        # letters only: a romanised name may be written with hyphens between its parts
        # (Kaguya-hime, Issun-boshi) or with a possessive (Momotaro's), its reading has neither
        joined = romaji_letters("".join(NAME_WORD.findall(question)))
        index = name_index(names)
        by_romaji, by_first_word = index.word_tables(_romaji_readings, name_words)
        found: dict[int, ResolvedEntity] = {}
        # a reading found among the question's words, or across them (momo taro)
        for start in range(len(joined)):
            for end in range(start + MIN_ROMAJI_CHARS, len(joined) + 1):
                roman = joined[start:end]
                for position in by_romaji.get(roman, ()):
                    found.setdefault(
                        position,
                        ResolvedEntity(roman, index.ids[position], "transliteration", 0.95),
                    )
        wordset = set(words)
        for word in wordset:
            for position, of_name in by_first_word.get(word, ()):
                if all(w in wordset for w in of_name):
                    found[position] = ResolvedEntity(
                        " ".join(of_name), index.ids[position], "normalised", 0.95
                    )
        matches = [found[position] for position in sorted(found)]
        # A name inside a longer matched name (devil inside "chief of the devils") gives way.
        return [
            m
            for m in matches
            if not any(
                o is not m and len(o.mention) > len(m.mention) and m.mention in o.mention
                for o in matches
            )
        ]

    def _by_embedding(
        self, question: str, words: list[str], names: Sequence[dict[str, Any]]
    ) -> list[ResolvedEntity]:
        assert self.embedder is not None
        ids = [str(r["id"]) for r in names]
        phrases = _phrases(question, words)
        # each name also as the dictionary writes it: the encoder knows 蟹 where the story
        # writes かに ("crab" finds かに)
        forms = [(i, form) for i, name in enumerate(ids) for form in _name_forms(name)]
        form_vectors = self.embedder.embed([form for _, form in forms])
        owner = np.array([i for i, _ in forms])
        keys = [str(r.get("norm") or normalize_name(str(r["id"]))) for r in names]
        found: dict[str, ResolvedEntity] = {}
        for phrase, vector in zip(phrases, self.embedder.embed(phrases), strict=True):
            sims = np.full(len(ids), -1.0)
            np.maximum.at(sims, owner, cosine(vector, form_vectors))
            order = sims.argsort()[::-1]
            best = float(sims[order[0]])
            # the margin is over other names, not over variants of the best one (猿 / お猿)
            runner_up = next(
                (
                    float(sims[j])
                    for j in order[1:]
                    if keys[j] not in keys[order[0]] and keys[order[0]] not in keys[j]
                ),
                0.0,
            )
            if best >= EMBEDDING_THRESHOLD and best - runner_up >= EMBEDDING_MARGIN:
                node = ids[int(order[0])]
                if node not in found or found[node].score < best:
                    found[node] = ResolvedEntity(phrase, node, "embedding", round(best, 3))
        return sorted(found.values(), key=lambda e: -e.score)[:2]


MIN_SOUND_KEY = 3
"""Shortest sound key matched (Tok → tok); shorter ones (The → se) never."""
MIN_NEAR_SOUND_KEY = 6
"""Shortest sound key matched at one letter from a name's (Crabuck → krabak); the letter
changed, not dropped or added (Kintaro is not キンタル), and not the first (Dormouse, drmos, is
not デイモス, demos)."""
_SENTENCE_END = re.compile(r"(?:^|[.!?:;\"“‘(]\s*)$")


def by_sound(
    question: str, names: Sequence[dict[str, Any]], explained: Iterable[str] = ()
) -> list[ResolvedEntity]:
    """Katakana names of the graph that a capitalised English word of the question spells
    (Craback → クラバック, Tok → トック, Gael → ゲエル, Kurabakku → クラバック), by their sound keys
    (storygraph.text.phonetic). Precision first: a word opening a sentence, a stop word, a word
    of under three letters or one already `explained` (a part of a normalised mention another
    match found: March of "march hare", Taro of urashimataro) is not read; a word's keys must
    equal the key of one name (its every node) and no other, or, for a key of six letters or
    more with no name equal, be one changed letter from one name's only."""
    mentions = tuple(explained)
    words: dict[str, str] = {}
    for found in NAME_WORD.finditer(question):
        word = re.sub(r"'s?$", "", found.group(0))
        if (
            len(word) < MIN_SOUND_KEY
            or not (word[0].isupper() and word[1:].islower())
            or word.lower() in EN_STOP_WORDS
            or any(normalize_name(word) in mention for mention in mentions)
            or _SENTENCE_END.search(question[: found.start()])
        ):
            continue
        words.setdefault(word.lower(), word)
    if not words:
        return []
    index = name_index(names)
    table = index.sound_table(_sound_key)
    matches: list[ResolvedEntity] = []
    for mention, word in words.items():
        keys = {k for k in english_keys(word) if len(k) >= MIN_SOUND_KEY}
        positions = [p for k in keys for p in table.get(k, ())]
        score = 0.9
        if not positions:
            near = [
                key
                for k in keys
                if len(k) >= MIN_NEAR_SOUND_KEY
                for key in table
                if len(key) == len(k) and key[0] == k[0] and key_distance(k, key) <= 1
            ]
            positions = [p for key in set(near) for p in table[key]]
            score = 0.85
        spelled = {index.ids[p] for p in positions}
        if len(spelled) != 1:
            continue  # no name, or several: not this path's to choose
        for node_id in dict.fromkeys(index.ids[p] for p in sorted(positions)):
            matches.append(ResolvedEntity(mention, node_id, "transliteration", score))
    return matches


@lru_cache(maxsize=ROMAJI_CACHED)
def _sound_key(name: str) -> str | None:
    return katakana_key(name)


def _name_forms(name: str) -> list[str]:
    """A graph name and, when it differs, its dictionary spelling (`written_form`)."""
    written = written_form(name)
    return [name, written] if written else [name]


_KANJI_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff々〆ヶ]+")
MAX_CONTAINED_PER_TERM = 2


def _by_containing_name(
    question: str, found: Sequence[ResolvedEntity], names: Sequence[dict[str, Any]]
) -> list[ResolvedEntity]:
    """Japanese nouns of the question (Sudachi's, written with a kanji, outside the names
    already found) that are a word of a longer graph name: 畑 in おじいさんの畑を荒らしたのは
    何？ finds 畑のもの, 職人 finds 上手の玉職人. Not a verb's or an adjective's kanji (出 of
    出た, 小 of 小さな), and not a name that holds the noun inside one of its own words (中 is
    not a word of 空中). The shortest such names, at most two per noun. Without Sudachi
    (the doctor reports it), none."""
    text = normalize_name(question)
    nouns = noun_spans(text)
    if nouns is None:
        return []
    taken = [
        (start, start + len(mention))
        for mention in (normalize_name(m.mention) for m in found)
        if mention
        for start in _occurrences(text, mention)
    ]
    matches: list[ResolvedEntity] = []
    terms = [
        text[start:end] for start, end in nouns if not any(start < b and end > a for a, b in taken)
    ]
    for term in dict.fromkeys(terms):
        if not _KANJI_RUN.search(term) or term[0] in JA_QUESTION_KANJI or term in JA_QUESTION_KANJI:
            continue
        holders = [
            row
            for row in names
            if (row.get("norm") or "") != term and _holds_word(row.get("norm") or "", term)
        ]
        holders.sort(key=lambda r: len(r.get("norm") or ""))
        for row in holders[:MAX_CONTAINED_PER_TERM]:
            matches.append(ResolvedEntity(term, str(row["id"]), "contained", 0.8))
    return matches


def _occurrences(text: str, part: str) -> list[int]:
    found: list[int] = []
    start = text.find(part)
    while start != -1:
        found.append(start)
        start = text.find(part, start + 1)
    return found


def _holds_word(name: str, term: str) -> bool:
    """`term` is one or more whole words of `name` (Sudachi's shortest words), the first of
    them not a prefix: 職人 of 上手の玉職人, not 玉 of 鬼の目玉 nor 中 of 中納言."""
    if term not in name:
        return False
    words = short_words(name)
    if words is None:
        return False
    starts = {a for a, _, kind in words if kind != "接頭辞"}
    ends = {b for _, b, _ in words}
    return any(start in starts and start + len(term) in ends for start in _occurrences(name, term))


def _phrases(question: str, words: list[str]) -> list[str]:
    """Candidate name phrases of a question: its content words and adjacent pairs (English), or
    the question itself (Japanese, whose names the dictionary match already tried)."""
    if not words:
        return [question]
    pairs = [f"{a} {b}" for a, b in itertools.pairwise(words)]
    return list(dict.fromkeys([*pairs, *words]))
