"""The role and premise checks of the support check (storygraph.qa.verify.support, steps 3
and 4 of its docstring): whether the question asks a role (`asks_role`; the question as the
check reads it: storygraph.qa.question.checked), the relations its sources' frames and its
facts give, a link or a source's clause with the answer in the asked slot, and whether the
question's premise stands.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from storygraph.models import Citation, Fact, Support
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.question_type import PERSON_KINDS
from storygraph.qa.question.relation_words import type_stems, word_in
from storygraph.qa.retrieval.context import MAX_SOURCE_CHARS
from storygraph.qa.retrieval.type_priors import PERSON_TYPES, PLACE_TYPES, THING_TYPES
from storygraph.qa.verify.support_links import (
    Link,
    as_asked,
    names_participant,
    same,
    verb_words,
)
from storygraph.qa.verify.support_reading import SourceReading
from storygraph.qa.verify.support_slots import fills, phrasal
from storygraph.text.normalize import holds_name, normalize_name
from storygraph.text.vocabulary import words_by_stem

ROLE_KINDS = frozenset({"who_did", "who_was_done_to", "with_whom", "where", "who"})
"""Question kinds whose answer fills a slot of a relation: the role check applies."""
SLOT_KINDS = ROLE_KINDS | {"what"}
"""Kinds whose answer a source's clause can hold in the asked slot
(storygraph.qa.verify.support_slots)."""
PREMISE_KINDS = frozenset({"who_did", "who_was_done_to", "who", "what"})
"""Kinds whose premise is checked: a doer or a thing of a verb. A partner or a place is asked
of relations the parser reads too sparsely to say that none exists."""


def _cloze(
    analysis: QuestionAnalysis,
    name: str,
    sources: Sequence[Citation],
    after: Callable[[Citation], str] = lambda c: "",
) -> tuple[Citation, str] | None:
    """A source that says the Japanese question with the answer in the question word's place:
    the answer with the question word's particle (川上から for どこから), the question's
    participants, and its predicate's first kanji (流 of 流れて来た), in the source or the rest
    of its sentence (`rest`: 「…」と流れて来ました after a source stopping at a speech); with
    the phrase found. The particle and the kanji are the question room's
    (`QuestionAnalysis.cloze_cue`, storygraph.qa.question.question_words)."""
    if analysis.language != "ja":
        return None
    cue = analysis.cloze_cue
    if cue is None:
        return None
    particle, verb = cue
    phrase = name + particle
    filled = normalize_name(phrase)
    for source in sources:
        if (
            filled in normalize_name(source.text)
            and verb in source.text + after(source)
            and all(holds_name(source.text, e.node_id) for e in analysis.entities if e.node_id)
        ):
            return source, phrase
    return None


def in_slot(named: Sequence[str], source: Citation) -> Support:
    return Support(
        "supported",
        source=source.number,
        named=tuple(named),
        reason=f"{named[0]} fills the asked slot of the question's verb in [{source.number}]",
        check="role",
    )


def asks_role(analysis: QuestionAnalysis) -> bool:
    """A role question: a who / whom / with-whom / where question about a participant (with
    no verb, any relation between the two), or a what question whose verb and participant's
    role are known (「おじいさんは何を見つけた」); also one of no known kind whose verb and a
    participant's direction are (「かにが川のそばで拾ったものは？」: the thing かに picks up),
    the verb also as the question's structure writes it when the table lacks it (ぬった)."""
    kind = analysis.qtype.kind
    if kind == "unknown":
        directed = any(d in ("in", "out") for d in analysis.qtype.roles.values())
        return bool(analysis.stems or analysis.predicate) and directed
    return kind in ROLE_KINDS | {"what"} and bool(analysis.qtype.roles)


class RoleChecks(SourceReading):
    """The checks that read the question's roles against the frames and facts."""

    def _slot_source(
        self, analysis: QuestionAnalysis, name: str, sources: Sequence[Citation]
    ) -> Citation | None:
        """The first source whose parse has `name` in the question's asked slot of its
        predicate (`support_slots.fills`), read to its sentence's end (a source stopping at a
        speech: 「…」と流れて来ました)."""
        if analysis.qtype.kind not in SLOT_KINDS:
            return None  # how / why / when: no noun slot to fill
        asked = self._asked_slot(analysis)
        if asked is None:
            return None
        language = "ja" if analysis.language == "ja" else "en"
        for c in sources:
            if c.kind == "graph" or not holds_name(c.text, name):
                continue
            text = c.text + self._around(c)[1] + self._after_speech(c)
            clauses = self._clauses_of(text, c.language or language)
            if fills(asked, clauses, name, c.text) is not None:
                return c
        return None

    def _links(
        self,
        analysis: QuestionAnalysis,
        read: Sequence[Citation],
        citations: Sequence[Citation],
        facts: Sequence[Fact],
    ) -> list[Link]:
        """The relations of the frames of the sources read, then of the facts some source
        tells (and the kept facts): what the role and premise checks read."""
        language = "ja" if analysis.language == "ja" else "en"
        links: list[Link] = []
        for c in read:
            if c.kind == "graph":
                continue
            before, after = self._around(c)
            for f in self._frames_of(before + c.text + after, c.language or language):
                if f.start + len(f.sentence) <= len(before) or f.start >= len(before + c.text):
                    continue  # a frame of the story around the source, not of the source
                links.append(
                    Link(
                        f.subject,
                        f.relation,
                        f.object,
                        c.number,
                        c.text,
                        "frame",
                        f.pattern,
                        f.predicate,
                    )
                )
        by_text = {normalize_name(c.text): c for c in citations}
        for fact in facts:
            evidence = fact.evidence[:MAX_SOURCE_CHARS]
            told = by_text.get(normalize_name(evidence)) if evidence else None
            graph = by_text.get(normalize_name(fact.text()))
            citation = told or graph
            if citation is None and not fact.kept:
                continue
            links.append(
                Link(
                    fact.start,
                    fact.type,
                    fact.end,
                    citation.number if citation else None,
                    citation.text if citation else (fact.evidence or fact.text()),
                    "fact",
                )
            )
        return [as_asked(link, analysis) for link in links]

    # --- slots --------------------------------------------------------------------------------
    def _wanted(self, analysis: QuestionAnalysis) -> list[tuple[str, str]]:
        """(participant, the slot the answer takes beside it: "start" / "end" / "any")."""
        slots: list[tuple[str, str]] = []
        for entity, direction in analysis.qtype.roles.items():
            if direction == "in":
                slots.append((entity, "start"))
            elif direction == "out":
                slots.append((entity, "end"))
            else:
                slots.append((entity, "any"))
        return slots

    def _asked_kind(self, analysis: QuestionAnalysis, name: str) -> bool:
        """Is the node of the kind the question asks for, by its type (a person for who, a
        place for where; any other question, or an untyped node: yes)?"""
        kind = self.types.get(normalize_name(name), "")
        if analysis.qtype.kind in PERSON_KINDS:
            return kind not in PLACE_TYPES | THING_TYPES
        if analysis.qtype.kind == "where":
            return kind not in PERSON_TYPES | THING_TYPES
        return True

    def _kind_fits(self, analysis: QuestionAnalysis, name: str) -> bool:
        """Is the named thing of a kind the question asks for, as far as its node type says?"""
        kind = self.types.get(normalize_name(name), "")
        if analysis.qtype.kind in PERSON_KINDS:
            return kind not in PLACE_TYPES
        if analysis.qtype.kind == "where":
            return kind not in PERSON_TYPES
        return True

    def _relation_fits(self, analysis: QuestionAnalysis, link: Link) -> bool:
        """Does the link say what the question asks about: a relation of the question's verb
        (or its field of meaning); for a question whose verb the table lacks, a link whose
        own verb the question uses."""
        if not analysis.stems:
            return link.said_in(analysis)
        return bool(type_stems(link.relation) & (analysis.related or analysis.stems))

    def _fills(self, analysis: QuestionAnalysis, name: str, links: Sequence[Link]) -> Link | None:
        """A link with `name` in the asked slot and a participant in the other; for a with
        whom question also two links of one sentence that share their relation and other end
        (おじいさんとおばあさんが…: coordinated subjects are partners)."""
        kind = analysis.qtype.kind
        fitting = [
            link
            for link in links
            if self._relation_fits(analysis, link)
            and (kind != "where" or analysis.stems or link.locative())
        ]
        if not self._kind_fits(analysis, name):
            return None
        for link in fitting:
            for entity, slot in self._wanted(analysis):
                if slot in ("start", "any") and same(link.start, name) and same(link.end, entity):
                    return link
                if slot in ("end", "any") and same(link.end, name) and same(link.start, entity):
                    return link
        if kind != "with_whom":
            return None
        for link in (x for x in links if x.how == "frame" and same(x.start, name)):
            for other in links:
                if (
                    other.source == link.source
                    and other.relation == link.relation
                    and same(other.end, link.end)
                    and any(same(other.start, e) for e, _ in self._wanted(analysis))
                ):
                    return link
        return None

    def _premise(
        self,
        analysis: QuestionAnalysis,
        links: Sequence[Link],
        facts: Sequence[Fact],
        read: Sequence[Citation],
    ) -> str | None:
        """Why the question's premise is unsupported, or None: its verb (or a verb of the same
        field of meaning) has no relation around its participants in the asked direction, in
        any fact retrieval found or any frame of the sources read; and no source read that
        names a participant uses the question's verb without the parser reading a frame of it
        there (then the parser may have missed it: not sure, but no claim that the story does
        not say)."""
        if not analysis.stems or analysis.qtype.kind not in PREMISE_KINDS:
            return None
        structure = self._structure(analysis.question, analysis.language)
        if structure is not None and (not structure.predicate or structure.requested):
            # 「玉手箱に入っていた…とは何だった？」 asks what a thing is: the verb of its relative
            # clause says which thing, no act the story must hold; nor must it hold an act
            # someone is asked to do (こしらえておくよう頼んだ)
            return None
        if analysis.language != "ja" and phrasal(self._asked_slot(analysis)):
            return None  # "make fun of": the verb's stems do not name the act
        wanted = [(e, s) for e, s in self._wanted(analysis) if s != "any"]
        if not wanted:
            return None
        told = (Link(f.start, f.type, f.end, None, f.evidence, "fact") for f in facts)
        every = [*links, *(as_asked(link, analysis) for link in told)]
        for link in every:
            if not type_stems(link.relation) & (analysis.related or analysis.stems):
                continue
            for entity, slot in wanted:
                if slot == "start" and same(link.end, entity):
                    return None
                if slot == "end" and same(link.start, entity):
                    return None
        if self._unread_verb(analysis, links, read):
            return None
        entity, slot = wanted[0]
        verb = "/".join(sorted(analysis.stems)).lower()
        if slot == "start":
            return f"no fact or sentence has anyone {verb} {entity}"
        return f"no fact or sentence has {entity} {verb} anyone"

    def _unread_verb(
        self, analysis: QuestionAnalysis, links: Sequence[Link], read: Sequence[Citation]
    ) -> bool:
        """Does a source read name a participant and use a word of the question's verb with no
        frame of that verb read from it?"""
        words = [w for stem in analysis.stems for w in words_by_stem().get(stem, ())]
        for c in read:
            if not any(names_participant(c.text, e) for e in analysis.entities):
                continue
            if not any(word_in(w, c.text.lower()) for w in words):
                continue
            framed = any(
                link.source == c.number
                and link.how == "frame"
                and type_stems(link.relation) & analysis.stems
                for link in links
            )
            if not framed:
                return True
        return False

    def _slot_words(self, analysis: QuestionAnalysis) -> str:
        """The asked slot in words: "the one who defeats 桃太郎"."""
        verb = " / ".join(verb_words(s) for s in sorted(analysis.stems)) or "is linked to"
        parts = []
        for entity, slot in self._wanted(analysis):
            if slot == "start":
                parts.append(f"the one who {verb} {entity}")
            elif slot == "end":
                parts.append(f"the one {entity} {verb}")
            else:
                parts.append(f"the one linked to {entity} by {verb}")
        return " or ".join(parts) or "the one asked for"
