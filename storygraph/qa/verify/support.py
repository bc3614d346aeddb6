"""The support check: does what the answer says stand in a source it cites (issue #27)?

The small model misreads roles: it names a character of the right sentence in the wrong slot
(「桃太郎を倒したのは誰？」 → 「猿です。[1]」, citing the sentence where the monkey bows). The
graph holds the structure that can check it: the parser's frames of each cited sentence (who is
the subject and who the object of which verb) and the typed facts with their sentences. A
`SupportChecker` reads the answer against them and returns a `Support`:

0. an answer that declines (the fixed reply, or the model's own 「わかりません」 / "not sure") is
   "declined", and nothing is checked; an empty one is "not checked";
1. what the answer names: the graph's entities found in it by the question's own entity finder
   (embeddings only when the answer's language is not the graph's: "the dog" finds 犬), less
   those the question names, and of those the ones of the asked kind by node type (a person
   for who, a place for where) when there are any; with none, a short answer's own words
   (「三にんの家」);
2. the name check: each named thing is in a source the answer cites, else in another the model
   read (the verdict names the one that holds it), and that source names a participant of the
   question, itself or through a frame or fact it tells (all participants for a question that
   asks for no slot, and one of the question's words beside them);
3. for a role question (who / whom / with whom / where / what, about a participant), the role
   check: a frame of a source read, or a fact with a source's sentence (or a kept fact), has the
   named thing in the asked slot and the participant in the other, and says the question's
   verb: its relation's stems meet the question's (widened to their field of meaning,
   storygraph.qa.question.relation_words), or, for a verb the table lacks, its own predicate is the
   question's word; partners also by coordination (おじいさんとおばあさんが…); node types keep a
   place out of a person's slot and a person out of a where's; with no frame or fact for it
   (an oblique case: 川上から; no participant the graph knows), a source's own parse with the
   answer in the asked slot of the question's predicate (storygraph.qa.verify.support_slots);
4. the premise, asked only of an answer that failed (who did / to whom / what, a verb the table
   knows, a definite direction): when no fact around the participant and no frame of the
   sources has the verb in the asked direction (no one is the subject of a 倒す with 桃太郎 as
   its object), and no source read uses the verb where the parser read no frame of it, the
   verdict is "no premise": the story does not say.

Before 1-3, a long answer that quotes a source read (`QUOTE_SHARE` of it word for word) naming
a participant and sharing a word of the question is supported by that source ("quote"): the
small model often answers with the story's own sentence, which has no slot of its own to misread.
Such a sentence must answer, too (storygraph.qa.verify.support_quotes): when it says the question's
asked verb, a phrase of it fills the asked slot (the words check asks the same of an answer
sentence), and it is not another clause of a source telling the asked act. A question asking
for a name is answered only by a name a source gives as one (storygraph.qa.verify.support_kinds);
the words check wants words the question does not say already, in a source's order.

The parser is reached through an injected
`FrameReader` built in the composition root (storygraph.services): this module imports nothing
from storygraph.ingest.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from storygraph.models import Citation, Fact, Support
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.asked_slot import ClauseReader
from storygraph.qa.question.checked import StructureReader
from storygraph.qa.question.entities import LocalEntityFinder
from storygraph.qa.question.question_type import PERSON_KINDS
from storygraph.qa.question.relation_words import mask_names
from storygraph.qa.verify.support_kinds import given_as_name
from storygraph.qa.verify.support_links import Link, beside, in_frame
from storygraph.qa.verify.support_quotes import (
    ORDER_SHARE,
    _quoted,
    in_order_share,
    quote_misses,
)
from storygraph.qa.verify.support_reading import ChunkText, FrameReader
from storygraph.qa.verify.support_roles import RoleChecks, _cloze, asks_role, in_slot
from storygraph.qa.verify.support_speech import asked_speaker_speaks, speech_support
from storygraph.qa.verify.support_words import (
    SHORT_EN,
    SHORT_JA,
    _core,
    _own_part,
    cited_sources,
    content,
    declines,
    joined,
    kana_pairs,
    on_topic,
    says_asked_case,
)
from storygraph.text.embeddings import Embedder
from storygraph.text.normalize import holds_name, normalize_name
from storygraph.text.terms import english_words


class SupportChecker(Protocol):
    """Checks an answer against the sources it cites, the frames and the facts."""

    def check(
        self,
        analysis: QuestionAnalysis,
        answer: str,
        citations: Sequence[Citation],
        facts: Sequence[Fact],
        read: Sequence[Citation],
        language: str | None = None,
    ) -> Support:
        """`facts`: every candidate of retrieval (kept ones marked); `read`: the citations the
        model read (the first ones); `language`: the answer's ("ja" / "en"), as the answer
        step read it; None: the question's reply language."""
        ...


class GraphSupportChecker(RoleChecks):
    """The support check of the module docstring, over injected frames and names."""

    def _named(self, analysis: QuestionAnalysis, answer: str, language: str) -> list[str]:
        """What the answer (written in `language`) names (module docstring, step 1): the
        graph's names, else a short answer's own words."""
        return self._graph_names(analysis, answer, language) or self._own_words(analysis, answer)

    def _graph_names(self, analysis: QuestionAnalysis, answer: str, language: str) -> list[str]:
        """The graph's names in the answer, less the question's (of the asked kind when any)."""
        in_question = {e.node_id for e in analysis.entities}
        question = analysis.folded
        found: list[str] = []
        unnamed = mask_names(answer, [m for e in analysis.entities for m in (e.node_id, e.mention)])
        for mention, node in self.names(unnamed, language):
            if node in in_question or normalize_name(mention) in question:
                continue
            if node not in found and not any(holds_name(other, node) for other in found):
                found.append(node)
        if found:
            # a sentence answer names more than the asked thing (犬はきびだんごを…): the names
            # of the asked kind are its answer, when there are any
            fitting = [n for n in found if self._asked_kind(analysis, n)]
            return fitting or found
        return []

    def _own_words(self, analysis: QuestionAnalysis, answer: str) -> list[str]:
        """A short answer's own words (「三にんの家」), less what it repeats of the question."""
        core = _core(answer)
        if analysis.language == "ja":
            core = _own_part(core, analysis.folded)
            return [core] if core and len(core) <= SHORT_JA else []
        asked = set(analysis.words)
        asked |= {w for e in analysis.entities for w in english_words(e.mention)}
        own = [w for w in re.findall(r"[A-Za-z][A-Za-z'-]*", core) if english_words(w)]
        own = [w for w in own if english_words(w)[0] not in asked]
        return [" ".join(own)] if own and len(own) <= SHORT_EN else []

    # --- the check ----------------------------------------------------------------------------
    def check(
        self,
        analysis: QuestionAnalysis,
        answer: str,
        citations: Sequence[Citation],
        facts: Sequence[Fact],
        read: Sequence[Citation],
        language: str | None = None,
    ) -> Support:
        if not answer.strip():
            return Support("not checked", reason="no answer was written")
        analysis = self._checked(analysis)
        answer_language = language or analysis.reply_language
        if declines(answer):
            return self._declined(analysis, read or citations, citations, facts)
        cited = cited_sources(answer, citations)
        shown = list(read or citations)
        # the sources it cites first, then the others it read: a right name under a wrong
        # number is supported by the source that holds it (the verdict names that one)
        sources = cited + [c for c in shown if c not in cited]
        cites = "cites or read" if cited else "read (it cites none)"
        participants = [e for e in analysis.entities if e.node_id]
        links = self._links(analysis, shown, citations, facts)
        role = asks_role(analysis)

        def fail(reason: str, check: str, named: Sequence[str] = ()) -> Support:
            # a failed answer to a question whose premise nothing in the story supports:
            # "the story does not say", not "not sure"
            premise = self._premise(analysis, links, facts, shown) if role else None
            if premise is not None:
                return Support("no premise", None, tuple(named), premise, "premise")
            return Support("not supported", None, tuple(named), reason, check)

        spoken = speech_support(analysis, _core(answer), sources, facts, self._spoken)
        if spoken is not None:
            # a line of speech decides it (storygraph.qa.verify.support_speech); another one's
            # line says nothing of the premise (someone did say something)
            if spoken.supported:
                return spoken
            return Support("not supported", None, (), spoken.reason, spoken.check)
        unnamed = self._not_a_name(analysis, answer, answer_language, sources)
        if unnamed is not None:
            # a place for a name, the one the name is of (docs/ISSUES.md#support-quotes)
            return fail(unnamed, "kind")
        quoted = _quoted(analysis, answer, sources, links)
        if quoted is not None and not self._names_asked_kind(analysis, answer, answer_language):
            quoted = None
        if quoted is not None and self._quote_misses(analysis, answer, quoted):
            # a sentence about the participant that does not answer (docs/ISSUES.md#support-quotes)
            quoted = None
        if quoted is not None and not says_asked_case(analysis, answer):
            # 「…と思って、火をきった」 for 何で火をきった: the quote says the question's event
            # but has no phrase in the question word's case (で: with what); the words check
            # below says so too
            quoted = None
        if quoted is not None:
            # the answer is the story's own sentence (most of it word for word), about the
            # question's participant and on its topic: no slot of the model's to misread
            return Support(
                "supported",
                source=quoted.number,
                reason=f"the answer quotes [{quoted.number}]",
                check="quote",
            )
        # the graph's names in the answer, else (who / where) its own words; a what / how
        # answer naming nothing of the graph (「噛み殺そうとした」, "He fell fast asleep.") is
        # checked by its words, as a sentence answer is: the role check reads names
        named = self._graph_names(analysis, answer, answer_language)
        if analysis.qtype.kind == "with_whom" and len(named) > 1:
            # 「おじいさんとおばあさんは、桃太郎を育てました」 for with whom おじいさん lives:
            # the partner is the one the answer joins to him, not whoever else it names
            named = joined(answer, named, participants) or named
        if not named and analysis.qtype.kind in PERSON_KINDS | {"where"}:
            named = self._own_words(analysis, answer)
        if not named:
            if analysis.qtype.kind in PERSON_KINDS | {"where"} and analysis.stems:
                return fail("the answer names no character, place or thing of the story", "name")
            own = self._own_words(analysis, answer) if role else []
            filled = [self._fills(analysis, n, links) for n in own]
            if own and all(filled) and filled[0] is not None:
                # a thing the graph has no node for, in the asked slot of a frame of a source
                # read (おじいさん makes うす)
                link = filled[0]
                return Support(
                    "supported",
                    source=link.source,
                    named=tuple(own),
                    reason=f"{link.told()} in [{link.source}]",
                    check="role",
                )
            return self._words_check(analysis, answer, sources, cites, links, fail)
        if analysis.qtype.kind in PERSON_KINDS | {"where"} and not role:
            # no participant of the story in the question: the asked predicate's own slot in
            # a source's parse can still confirm it (親がにを殺したのは: the subject of 殺す)
            slotted = self._slot_source(analysis, named[0], sources) if len(named) == 1 else None
            if slotted is not None:
                return in_slot(named, slotted)
            return fail("the question names no one of the story to check the answer by", "role")
        # the name check
        holding: dict[str, list[Citation]] = {}
        for name in named:
            holding[name] = [
                c
                for c in sources
                if (holds_name(c.text, name) or in_frame(c, name, links))
                and beside(c, participants, role, links)
                and (role or on_topic(c.text, analysis))
            ]
            if not holding[name]:
                where = (" or " if role else " and ").join(e.node_id for e in participants)
                told = f" beside {where}" if where else ""
                return fail(
                    f"the sentences the answer {cites} do not name {name}{told}", "name", named
                )
        if not role:
            first = holding[named[0]][0]
            return Support(
                "supported",
                source=first.number,
                named=tuple(named),
                reason=f"{named[0]} is in [{first.number}]",
                check="name",
            )
        # the role check
        source: int | None = None
        said: list[str] = []
        for name in named:
            link = self._fills(analysis, name, links)
            if link is None:
                cloze = _cloze(analysis, name, holding[name], lambda c: self._around(c)[1])
                if cloze is not None:
                    # no frame or fact has the slot (a から-phrase the parser reads as no
                    # argument), but the source says the question with the answer in its place
                    cited_source, phrase = cloze
                    source = source or cited_source.number
                    said.append(f"「{phrase}」")
                    continue
                slotted = self._slot_source(analysis, name, sources)
                if slotted is not None:
                    # no frame or fact has the slot (an oblique case: 川上から), but the
                    # source's parse has the answer in the asked case of the question's verb
                    source = source or slotted.number
                    said.append(f"{name} fills the asked slot of the question's verb")
                    continue
                slot = self._slot_words(analysis)
                return fail(f"the sentences name {name} but not as {slot}", "role", named)
            source = source or link.source or holding[name][0].number
            said.append(link.told())
        return Support(
            "supported",
            source=source,
            named=tuple(named),
            reason=f"{'; '.join(said)} in [{source}]",
            check="role",
        )

    def _declined(
        self,
        analysis: QuestionAnalysis,
        read: Sequence[Citation],
        citations: Sequence[Citation],
        facts: Sequence[Fact],
    ) -> Support:
        spoken = asked_speaker_speaks(analysis, facts, read or citations, self._spoken)
        if not spoken and asks_role(analysis):
            links = self._links(analysis, read, citations, facts)
            premise = self._premise(analysis, links, facts, read)
            if premise is not None:
                return Support("no premise", reason=premise, check="premise")
        return Support("declined", reason="the answer says the story's sentences do not say")

    def _words_check(
        self,
        analysis: QuestionAnalysis,
        answer: str,
        sources: Sequence[Citation],
        cites: str,
        links: Sequence[Link],
        fail: Callable[..., Support],
    ) -> Support:
        """A what / how / why answer in a sentence of its own: most of its content words
        stand in one source that also names the question's participants."""
        language = "ja" if analysis.language == "ja" else "en"
        core = _core(answer)
        own_part = _own_part(core, analysis.folded) if language == "ja" else core
        words = content(own_part, language)
        question = set(content(analysis.folded, language)) | kana_pairs(analysis.folded, language)
        own = [w for w in words if w not in question]
        if words and not own:
            if not analysis.offers_choice:
                # 「子安貝です」 for what the thing taken for a 子安貝 was: nothing the question
                # does not say already (docs/ISSUES.md#support-quotes); a choice question names its
                # answer
                return fail("the answer only repeats what the question says", "words")
            own = words
        if not own:
            return Support("not checked", reason="the answer has no words to check")
        missed = self._quote_misses(analysis, answer)
        if missed is not None:
            # a sentence saying the asked act with nothing in the asked slot
            # (docs/ISSUES.md#support-quotes)
            return fail(missed, "words")
        if not says_asked_case(analysis, answer):
            # its words may all be in a source (the asked event) without the asked thing
            return fail(
                f"the answer has no phrase in the question word's case ({analysis.asked_case})",
                "words",
            )
        best: tuple[float, Citation | None] = (0.0, None)
        taking_part = [e for e in analysis.entities if e.node_id not in analysis.qualifiers]
        for c in sources:
            if not beside(c, taking_part, False, links) or not self._topical(c, analysis):
                continue
            held = set(content(c.text, language)) | kana_pairs(c.text, language)
            share = sum(w in held for w in own) / len(own)
            if in_order_share(own_part, c.text, language) < ORDER_SHARE:
                # the source's words in another order say something else
                # (docs/ISSUES.md#support-quotes)
                continue
            if share > best[0]:
                best = (share, c)
        share, citation = best
        if citation is None or share < 0.5:
            return fail(f"the sentences the answer {cites} do not say what it says", "words")
        return Support(
            "supported",
            source=citation.number,
            reason=f"its words are in [{citation.number}]",
            check="name",
        )

    def _topical(self, source: Citation, analysis: QuestionAnalysis) -> bool:
        """Is a source on the question's topic: it shares a term of the question, or, in
        English, the story just before it does ("I was not then born." answers why the Lamb
        could not have insulted the Wolf last year, said in the sentence before)?"""
        if on_topic(source.text, analysis):
            return True
        return analysis.language != "ja" and on_topic(self._around(source)[0], analysis)

    def _not_a_name(
        self, analysis: QuestionAnalysis, answer: str, language: str, sources: Sequence[Citation]
    ) -> str | None:
        """Why the answer to a question asking for a name is not one a source gives
        (storygraph.qa.verify.support_kinds), or None (also for a question asking for no name)."""
        if analysis.asked_kind != "name":
            return None
        core = _core(answer)
        words = [core, *self._graph_names(analysis, answer, language)]
        words += self._own_words(analysis, answer)
        texts = [c.text + self._around(c)[1] for c in sources]
        if given_as_name(analysis.name_owner, words, texts):
            return None
        return f"no source gives {core} as the name asked for"

    def _quote_misses(
        self, analysis: QuestionAnalysis, answer: str, quoted: Citation | None = None
    ) -> str | None:
        """Why an answer's sentence (a quote of `quoted`) does not answer the question
        (storygraph.qa.verify.support_quotes), or None."""
        question = self._structure(analysis.question, analysis.language)
        source = quoted.text if quoted is not None else ""
        return quote_misses(analysis, question, _core(answer), self._structure, source)

    def _names_asked_kind(self, analysis: QuestionAnalysis, answer: str, language: str) -> bool:
        """Does a who / where answer name someone (somewhere) of the story of the asked kind?
        Other questions: yes."""
        if analysis.qtype.kind not in PERSON_KINDS | {"where"}:
            return True
        return any(self._asked_kind(analysis, n) for n in self._named(analysis, answer, language))


def graph_support_checker(
    names: Sequence[dict[str, Any]],
    embedder: Embedder | None,
    frames: FrameReader | None,
    language: str,
    chunks: ChunkText | None = None,
    questions: StructureReader | None = None,
    clauses: ClauseReader | None = None,
) -> GraphSupportChecker:
    """The check over a graph's name rows (id, norm, type), whose names are written in
    `language` (`names_language`): the answer's names found by the question's entity finder,
    with embeddings only when the answer is in another language ("the dog" finds 犬); each
    source's frames read with the story around it when `chunks` gives its chunk's text; the
    question's structure read by `questions` when given. The factory builds it once per names
    list (storygraph.qa.pipeline.factory)."""
    local = LocalEntityFinder(None)
    across = LocalEntityFinder(embedder)

    def named(text: str, written_in: str) -> list[tuple[str, str]]:
        finder = local if written_in == language else across
        return [(e.mention, e.node_id) for e in finder.find(text, names, []).entities]

    types = {str(r["id"]): str(r.get("type") or "") for r in names}
    return GraphSupportChecker(named, frames, types, chunks, questions, clauses)


def names_language(names: Sequence[dict[str, Any]], documents: Mapping[str, str]) -> str:
    """The language most of the graph's names are written in: that of their documents
    (`documents`: document id → its language, as stored at ingest); "en" for no names."""
    counts = Counter(documents.get(str(r.get("document_id") or ""), "") for r in names)
    counts.pop("", None)
    return counts.most_common(1)[0][0] if counts else "en"
