"""The question, analysed once: everything later stages need, computed at the start and passed
down (retrieval, scoring and answering never re-parse the question).

`QuestionAnalysis` holds the language, the start entities (and how each was found), the question
type with each start entity's preferred edge direction, the relation-word stems the question
names (entity names masked, so 大将 inside 鬼の大将 does not count), the model's relation-type
pick when one was asked for, and the question's content terms for lexical overlap.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from storygraph.models import ResolvedEntity
from storygraph.qa.entities import EntityFinder
from storygraph.qa.question_type import QuestionType, detect_question_type
from storygraph.qa.relation_words import mask_names, question_stems, related_stems
from storygraph.qa.scope import Scope, names_in_scope, narrow
from storygraph.text.language import detect_language, is_kanji
from storygraph.text.normalize import normalize_name

_EN_TERM = re.compile(r"[a-z][a-z'-]+")
_EN_STOP = frozenset(
    """a an the of to in on at by for with from and or but is are was were be been being do does
    did done who whom whose what which where when why how many much that this these those it its
    he she they them his her their him there here as into out up down so not no yes one would
    could should can will shall may might has have had having about after before""".split()  # noqa: SIM905
)


_JA_QUESTION_WORDS = frozenset({"誰", "何", "何故", "幾", "何処", "何時", "如何"})


@dataclass(frozen=True)
class QuestionAnalysis:
    question: str
    language: str
    entities: tuple[ResolvedEntity, ...]
    qtype: QuestionType
    stems: frozenset[str]
    """Relation stems the question's words name (DEFEAT for 倒した / defeated)."""
    related: frozenset[str]
    """`stems` widened to their fields of meaning (companions → meeting, following)."""
    terms: tuple[str, ...]
    """Content terms outside the entity names: English word stems, Japanese kanji runs and
    kanji bigrams (what a sentence that answers the question probably shares with it)."""
    relation_pick: tuple[str, ...] | None = None
    """The model's relation-type pick, when the entity finder was asked for one."""
    warnings: tuple[str, ...] = field(default_factory=tuple)
    scope: Scope = field(default_factory=Scope)
    """The stories the answer may cite and the start entities' keys (storygraph.qa.scope)."""

    @property
    def ids(self) -> list[str]:
        return [e.node_id for e in self.entities]


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_terms(text: str, language: str) -> tuple[str, ...]:
    """The comparable content terms of a text (see `QuestionAnalysis.terms`)."""
    folded = normalize_name(text)
    if language == "ja":
        runs = re.findall(r"[\u3400-\u9fff\u4e00-\u9fff々〆]+", folded)
        terms: list[str] = []
        for run in runs:
            terms.append(run)
            terms.extend(run[i : i + 2] for i in range(len(run) - 1))
        return tuple(t for t in dict.fromkeys(terms) if t not in _JA_QUESTION_WORDS)
    return tuple(dict.fromkeys(english_words(folded)))


def english_words(text: str) -> list[str]:
    """The English content words of a text, stemmed, stop words left out, repeats kept."""
    words = [w.strip("'-") for w in _EN_TERM.findall(normalize_name(text))]
    return [_stem(w) for w in words if w and w not in _EN_STOP]


def has_kanji_term(terms: Sequence[str]) -> bool:
    return any(is_kanji(ch) for term in terms for ch in term)


def analyse(
    question: str,
    names: Sequence[dict[str, Any]],
    finder: EntityFinder,
    callbacks: list[Any],
    *,
    relation_types: Sequence[str] | None = None,
    start_entities: Sequence[str] | None = None,
    stories: Sequence[str] = (),
) -> QuestionAnalysis:
    """Analyse a question once. `start_entities` skips entity finding (the eval's gold);
    `stories`: the document ids the user chose (empty: every story)."""
    question = question.strip()
    names = names_in_scope(names, stories)
    warnings: list[str] = []
    pick: tuple[str, ...] | None = None
    if start_entities:
        entities = tuple(ResolvedEntity(n, n, "given") for n in start_entities)
    else:
        finding = finder.find(question, names, callbacks, relation_types)
        entities = tuple(finding.entities)
        warnings.extend(finding.warnings)
        if finding.relation_types is not None:
            pick = tuple(finding.relation_types)
    ids = [e.node_id for e in entities]
    mentions = [*ids, *(e.mention for e in entities)]
    unnamed = mask_names(question, mentions)
    stems = frozenset(question_stems(unnamed))
    language = detect_language(question)
    terms = content_terms(unnamed, language)
    scope = narrow(ids, names, stories, terms)
    return QuestionAnalysis(
        question=question,
        language=language,
        entities=entities,
        qtype=detect_question_type(question, ids),
        stems=stems,
        related=frozenset(related_stems(set(stems))),
        terms=terms,
        relation_pick=pick,
        warnings=tuple(warnings),
        scope=scope,
    )
