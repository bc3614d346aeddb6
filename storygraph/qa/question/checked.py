"""The question as the premise check (storygraph.qa.verify.premise) reads it, read here so that
nothing outside qa/question re-reads the question (issue #43): the analysis with the question's
verb and roles read from its structure (`structured_view`), and its verb stems and participants'
roles completed from its words and mentions (`asked_view`).

The structure is GiNZA's parse read by the composition root's `StructureReader`
(storygraph.services.question_structure). A `QuestionParser` runs it lazily, when the check
first asks (an answer that never reaches the check costs no parse), and keeps it; the checker
holds one and asks it for the question's structure (`structure`) and for the analysis as the
check reads it (`checked`). When the parser is not installed (ModelError) it says why
(`problem`, which the checker reports as its own) and reads the question's words as they are
from then on.

`in_sources_language` is the question as the model answers it and the check reads it in its
sources' language (an English question over Japanese stories,
storygraph.qa.generation.answer_crosslang): each participant by the words the question writes it
with, its roles read by them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from storygraph.errors import ModelError
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.question_structure import QuestionStructure
from storygraph.qa.question.question_type import Direction, detect_question_type, who_from_roles
from storygraph.qa.question.relation_words import mask_names, question_stems, related_stems
from storygraph.text.terms import NAME_WORD, romaji_letters

StructureReader = Callable[[str, str], QuestionStructure | None]
"""(question, language) → its structure (storygraph.qa.question.question_structure), None for a
language whose structure is not read (English: the question's words are read as they are)."""
MAX_CACHED = 4096
"""Texts whose structure a `QuestionParser` keeps (the checker holding it lives per graph)."""
_WHO_WORDS = ("誰", "だれ", "どなた", "何者")
"""Cues of a who question whose kind the participants' directions decide (…のは誰？)."""


def _position(question: str, entity: Any) -> tuple[int, int]:
    """Where the question writes an entity (its mention, else its graph name): (start, end),
    (-1, -1) when it does not."""
    for written in (entity.mention, entity.node_id):
        at = question.find(written) if written else -1
        if at >= 0:
            return at, at + len(written)
    return -1, -1


def asked_view(analysis: QuestionAnalysis) -> QuestionAnalysis:
    """The analysis as the check reads it: the question's verb stems from its own words when
    the entity names hid them (家来 in 「桃太郎の家来は誰？」 is a node of the graph and a
    word of companionship), and each participant's role found by its mention when its graph
    name is not in the question (Momotaro → 桃太郎)."""
    roles = dict(analysis.qtype.roles)
    stems = analysis.stems
    if not stems:  # a relational noun the graph holds as a node (の家来): its stems
        nouns = [e.mention for e in analysis.entities if roles.get(e.node_id, "any") == "any"]
        stems = frozenset(s for noun in nouns for s in question_stems(noun))
    missing = [e for e in analysis.entities if e.node_id not in roles and e.mention]
    qtype = analysis.qtype
    by_mention = analysis.qtype_by_mention
    if missing and by_mention is not None:
        for e in missing:
            if e.mention in by_mention.roles:
                roles[e.node_id] = by_mention.roles[e.mention]
        kind = qtype.kind
        if kind in ("who", "unknown") and by_mention.kind != "unknown":
            kind = by_mention.kind
        qtype = replace(qtype, kind=kind, roles=roles)
    if stems == analysis.stems and qtype is analysis.qtype:
        return analysis
    return replace(analysis, stems=stems, related=frozenset(related_stems(set(stems))), qtype=qtype)


def structured_view(
    analysis: QuestionAnalysis, structure: QuestionStructure | None
) -> QuestionAnalysis:
    """The analysis with the question's verb and roles read from its structure, when it
    has an asked predicate: the stems of that predicate only (not of a clause of time
    before it), each participant's direction from its case on it in its voice (a
    causative passive's が does the act), a participant inside another clause no
    participant. A question asking what something is keeps its words' reading."""
    if structure is None:
        return analysis
    if not structure.predicate:
        # a question asking what something is: its words as they are (no act to read a
        # role from; support_roles `_premise` claims none for it)
        return replace(analysis, asked_case=structure.asked_case)
    mentions = [m for e in analysis.entities for m in (e.node_id, e.mention) if m]
    stems = frozenset(question_stems(mask_names(structure.words, mentions)))
    roles: dict[str, Direction] = {}
    for entity in analysis.entities:
        at, end = _position(analysis.question, entity)
        if at < 0:
            if entity.node_id in analysis.qtype.roles:
                roles[entity.node_id] = analysis.qtype.roles[entity.node_id]
            continue
        if structure.inside_other_clause(at, end):
            continue
        direction = structure.direction(at, end)
        if entity.node_id in analysis.qualifiers:
            direction = "any"  # 桃太郎 of 桃太郎のおじいさん says which one, takes no part
        roles[entity.node_id] = direction or "any"
    if not roles:
        # every participant stands in a clause of its own (舌を切られたすずめの名前は？): the
        # roles its words give, rather than none (with none, any name of a source passes)
        roles = dict(analysis.qtype.roles)
    qtype = replace(analysis.qtype, roles=roles)
    if qtype.cue in _WHO_WORDS and qtype.kind in ("who", "who_did", "who_was_done_to"):
        qtype = replace(qtype, kind=who_from_roles(roles, not structure.predicate))
    return replace(
        analysis,
        stems=stems,
        related=frozenset(related_stems(set(stems))),
        qtype=qtype,
        qtype_by_mention=None,
        predicate=structure.predicate,
        asked_case=structure.asked_case,
    )


class QuestionParser:
    """The question's structure, read lazily by `reader` and cached (module docstring); None:
    the question's words as the analysis read them."""

    def __init__(self, reader: StructureReader | None = None) -> None:
        self.reader = reader
        self.problem = ""
        """Why the structure could not be read ("" when it could)."""
        self._cache: dict[tuple[str, str], QuestionStructure | None] = {}

    def structure(self, text: str, language: str) -> QuestionStructure | None:
        """The structure of the question `text`, None when it is not read."""
        if self.reader is None:
            return None
        key = (text, language)
        if key not in self._cache:
            if len(self._cache) >= MAX_CACHED:
                self._cache.clear()
            try:
                self._cache[key] = self.reader(text, language)
            except ModelError as exc:  # the parser is not installed: the question's words
                self.problem = f"the question's structure could not be read: {exc.message}"
                self.reader = None
                return None
        return self._cache[key]

    def checked(self, analysis: QuestionAnalysis) -> QuestionAnalysis:
        """The analysis as the premise check reads it: `structured_view` of the question's
        structure, then `asked_view`."""
        structure = self.structure(analysis.question, analysis.language)
        return asked_view(structured_view(analysis, structure))


def in_sources_language(analysis: QuestionAnalysis, language: str) -> QuestionAnalysis:
    """The question as the check reads it in the sources' `language`: its language theirs
    (its terms already hold the translation's), and each participant's role read from the
    words the question writes it with (the turtle for かめ, found by translation; Urashima
    Taro for 浦島太郎, found by reading): the graph name is not in the English question, so
    its role was unknown and the role check had no participant to read. The answer written in
    the sources' language (storygraph.qa.generation.answer_crosslang) is checked with it too."""
    entities = tuple(
        replace(e, mention=_written_as(analysis, e.mention, e.source)) for e in analysis.entities
    )
    unroled = [e.mention for e in entities if e.node_id not in analysis.qtype.roles]
    by_mention = (
        detect_question_type(analysis.question, unroled, language=analysis.language)
        if unroled
        else analysis.qtype_by_mention
    )
    return replace(analysis, language=language, entities=entities, qtype_by_mention=by_mention)


def _written_as(analysis: QuestionAnalysis, mention: str, how: str) -> str:
    """The words the question writes a participant with: a translated noun's English word
    (turtle for かめ), a name found by reading as the question spells it (urashimataro →
    "Urashima Taro"); else the mention as found."""
    translation = analysis.translation
    if how == "translation" and translation is not None:
        for word in translation.words:
            if mention in word.forms and word.source in analysis.question.lower():
                return word.source
    if how == "transliteration":
        words = list(NAME_WORD.finditer(analysis.question))
        for i, first in enumerate(words):
            joined = ""
            for last in words[i:]:
                joined += romaji_letters(last.group(0))
                if joined == mention:
                    return analysis.question[first.start() : last.end()]
                if not mention.startswith(joined):
                    break
    return mention
