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

A failed check's `candidates` hold what the frames and facts do put in the asked slot (the
question's own verb first), each with its sentence: the answer offers the first, marked as the
graph's candidate (storygraph.qa.verify.support_text). The parser is reached through an injected
`FrameReader` built in the composition root (storygraph.services): this module imports nothing
from storygraph.ingest.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Protocol

from storygraph.errors import ModelError
from storygraph.models import Candidate, Citation, Fact, Support
from storygraph.qa.generation.answer import REFUSALS
from storygraph.qa.generation.answer_core import (
    ENGLISH_LEAD,
    WRITTEN_COPULAS,
    answer_core,
    cited_numbers,
)
from storygraph.qa.generation.checks import says_unknown
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.entities import LocalEntityFinder
from storygraph.qa.question.question_structure import QuestionStructure
from storygraph.qa.question.question_type import PERSON_KINDS, Direction, who_from_roles
from storygraph.qa.question.relation_words import (
    mask_names,
    question_stems,
    related_stems,
    relation_words,
    type_stems,
    word_in,
)
from storygraph.qa.retrieval.context import MAX_SOURCE_CHARS
from storygraph.qa.retrieval.type_priors import PERSON_TYPES, PLACE_TYPES, THING_TYPES
from storygraph.qa.verify.support_kinds import asked_kind, given_as_name
from storygraph.qa.verify.support_quotes import (
    CHOICE,
    ORDER_SHARE,
    in_order_share,
    quote_misses,
)
from storygraph.qa.verify.support_slots import (
    AskedSlot,
    Clause,
    ClauseReader,
    asked_in_english,
    asked_in_japanese,
    fills,
    phrasal,
)
from storygraph.qa.verify.support_speech import speech_candidates, speech_support
from storygraph.text.embeddings import Embedder
from storygraph.text.language import is_kanji
from storygraph.text.normalize import holds_name, normalize_name, reading, same_entity
from storygraph.text.terms import english_words
from storygraph.text.vocabulary import CONVERSE_STEMS, words_by_stem

ROLE_KINDS = frozenset({"who_did", "who_was_done_to", "with_whom", "where", "who"})
"""Question kinds whose answer fills a slot of a relation: the role check applies."""
SLOT_KINDS = ROLE_KINDS | {"what"}
"""Kinds whose answer a source's clause can hold in the asked slot
(storygraph.qa.verify.support_slots)."""
MAX_CANDIDATES = 3
MAX_CACHED_FRAMES = 4096
"""Sentences whose frames a checker keeps (it is reused while the graph is unchanged)."""


class Frame(Protocol):
    """What the support check reads of a parser frame (storygraph.ingest.frames.ProposedFact
    has these fields): `subject -[relation]-> object` as the sentence writes them."""

    @property
    def subject(self) -> str: ...
    @property
    def relation(self) -> str: ...
    @property
    def object(self) -> str: ...
    @property
    def predicate(self) -> str: ...
    @property
    def pattern(self) -> str: ...
    @property
    def sentence(self) -> str: ...
    @property
    def start(self) -> int:
        """The frame's sentence's offset in the text read."""
        ...


FrameReader = Callable[[str, str], Sequence[Frame]]
"""(sentence, language) → the parser's frames of that sentence."""
NameFinder = Callable[[str, str], Sequence[tuple[str, str]]]
"""(an answer text, its language) → the graph entities it names, as (mention, node id)."""
ChunkText = Callable[[str], str]
StructureReader = Callable[[str, str], QuestionStructure | None]
"""(question, language) → its structure (storygraph.qa.question.question_structure), None for a
language whose structure is not read (English: the question's words are read as they are)."""
"""A chunk id → the chunk's text ("" when the store has none): the story around a source."""
SPEECH_ANCHOR = 8
"""Characters of a source's start and end it is found by in its chunk."""
CONTEXT_CHARS = 240
"""Characters of the story before a source the parser reads with it (from a sentence start):
enough for the paragraph's topic, which a Japanese sentence leaves unsaid."""


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


_SHORT_JA = 12
_QUESTION_WORD = re.compile(r"(誰|だれ|どこ|何|なに)(から|まで|より|へ|に|で|を|が|と)")
_KANJI_RUN = re.compile(r"[\u4e00-\u9fff々]+")
_CASE_PARTICLE = re.compile(r"(?:を|が|に|へ|で|と|から)")
_PARTICLE_TAIL = re.compile(r"(?:から|まで|より|へ|に|で|を|が|は|と|の)$")
_SHORT_EN = 5


@dataclass(frozen=True)
class _Link:
    """One relation the check can read: from a frame of a source, or a fact."""

    start: str
    relation: str
    end: str
    source: int | None
    sentence: str
    how: str
    pattern: str = ""
    """The frame's construction ("は-へ", "prep:to"); "" for a fact."""
    predicate: str = ""
    """The frame's verb as the sentence writes it (組みふせる); "" for a fact."""
    swapped: bool = False
    """Its ends are read swapped from the source's (`as_asked`): the source tells `end` then
    `start`."""

    def said_in(self, analysis: QuestionAnalysis) -> bool:
        """Does the question use this link's verb: the frame's predicate (its first two
        characters in Japanese, an English stem), else the words of the fact's type?"""
        folded = normalize_name(analysis.predicate) if analysis.predicate else analysis.folded
        if self.predicate:
            head = normalize_name(self.predicate)
            if head.isascii():
                return any(w.startswith(head[:4]) for w in analysis.words)
            return head[:2] in folded
        if any(word_in(w, folded) for w in relation_words(self.relation)):
            return True
        own = english_words(self.relation.replace("_", " "))  # a type the table lacks: WRAPS
        return any(a.startswith(w[:4]) for w in own for a in analysis.words if len(w) > 2)

    def verb(self) -> str:
        """The link's verb in words: its relation's (DEFEATS → defeats), else, for a frame
        whose verb the table lacks, the predicate as the sentence writes it (引き出し)."""
        return _verb_words(self.relation) or self.predicate or "is linked to"

    def told(self) -> str:
        """What the source says, in words and in its own order (鬼の酋長 surrenders to 桃太郎,
        also when the check reads the link swapped)."""
        first, last = (self.end, self.start) if self.swapped else (self.start, self.end)
        return f"{first} {self.verb()} {last}"

    def locative(self) -> bool:
        """Does it say where: a place particle or preposition, or a fact type of place?"""
        if self.how == "frame":
            return self.pattern.endswith(_PLACE_PARTICLES) or self.pattern.startswith("prep:")
        return bool(set(self.relation.upper().split("_")) & _PLACE_TOKENS)


_PLACE_PARTICLES = ("に", "へ", "で", "から", "まで")
_PLACE_TOKENS = frozenset({"TO", "IN", "AT", "FROM", "INTO", "ON", "LIVES", "GOES", "LOCATED"})
PREMISE_KINDS = frozenset({"who_did", "who_was_done_to", "who", "what"})
"""Kinds whose premise is checked: a doer or a thing of a verb. A partner or a place is asked
of relations the parser reads too sparsely to say that none exists."""


def as_asked(link: _Link, analysis: QuestionAnalysis) -> _Link:
    """`link` as the question's act reads it: a relation whose subject is the object of the
    asked act (鬼の酋長 -[SURRENDERS_TO]-> 桃太郎, asked who defeated whom: CONVERSE_STEMS) with
    its ends swapped; any other link, and any link for a question about that converse act
    itself (誰に降参した), as it is."""
    converse = type_stems(link.relation) & CONVERSE_STEMS
    if not converse or converse & analysis.stems or not analysis.stems:
        return link
    return replace(link, start=link.end, end=link.start, swapped=not link.swapped)


def cited_sources(answer: str, citations: Sequence[Citation]) -> list[Citation]:
    """The sources `answer` cites by number, in the citations' order."""
    numbers = cited_numbers(answer)
    return [c for c in citations if c.number in numbers]


def _core(answer: str) -> str:
    """The answer without its source marks, stop and copula (「猿です。[1]」 → 猿)."""
    text = answer_core(answer, copulas=WRITTEN_COPULAS, run=False, gap="")
    return ENGLISH_LEAD.sub("", text).strip(" 、,.。")


def _own_part(core: str, folded: str) -> str:
    """A Japanese answer without the tail it repeats from the question (`folded`: the
    analysis's), and the particle before that tail: 「川上から流れて来た」 for 「どこから流れて
    来た？」 names 川上 (the English branch drops the question's words the same way)."""
    for start in range(len(core) - 1):
        tail = core[start:]
        if len(tail) >= 2 and normalize_name(tail) in folded:
            own = _PARTICLE_TAIL.sub("", core[:start]).strip(" 、,")
            return own or core
    # the question's verb in another form (こしらえました for こしらえた): the words before
    # the particle it follows, less a topic the question names (おじいさんは)
    for found in _CASE_PARTICLE.finditer(core):
        rest = normalize_name(core[found.end() :])
        head = rest[:2] if rest and is_kanji(rest[0]) else rest[:3]
        if len(head) >= 2 and head in folded:
            own = core[: found.start()]
            topic = own.split("は", 1)
            if len(topic) == 2 and topic[0] and normalize_name(topic[0]) in folded:
                own = topic[1]
            return own.strip(" 、,") or core
    return core


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
    the phrase found."""
    if analysis.language != "ja":
        return None
    asked = _QUESTION_WORD.search(analysis.question)
    if asked is None:
        return None
    rest = analysis.question[asked.end() :]
    for entity in analysis.entities:
        rest = rest.replace(entity.mention, "").replace(entity.node_id, "")
    verb = _KANJI_RUN.search(rest)
    if verb is None:
        return None
    phrase = name + asked.group(2)
    filled = normalize_name(phrase)
    for source in sources:
        if (
            filled in normalize_name(source.text)
            and verb.group(0) in source.text + after(source)
            and all(holds_name(source.text, e.node_id) for e in analysis.entities if e.node_id)
        ):
            return source, phrase
    return None


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


def _joined(answer: str, named: Sequence[str], participants: Sequence[Any]) -> list[str]:
    """The names the answer coordinates with a participant of the question (AとB, A and B)."""
    folded = normalize_name(answer)
    own = {normalize_name(m) for e in participants for m in (e.node_id, e.mention) if m}
    joined = []
    for name in named:
        key = normalize_name(name)
        pairs = [(p, key) for p in own] + [(key, p) for p in own]
        if any(f"{a}と{b}" in folded or f"{a} and {b}" in folded for a, b in pairs):
            joined.append(name)
    return joined


def _same(phrase: str, name: str) -> bool:
    """Is a frame's noun phrase (or a fact's end) the named thing? Same entity, or the phrase
    is the name with an owner or a title before it (おじいさんの桃太郎 ≠; "old woman" = woman)."""
    if not phrase or not name:
        return False
    if same_entity(phrase, name):
        return True
    a, b = normalize_name(phrase), normalize_name(name)
    return a.endswith(" " + b) or b.endswith(" " + a)


class GraphSupportChecker:
    """The support check of the module docstring, over injected frames and names."""

    def __init__(
        self,
        names: NameFinder,
        frames: FrameReader | None = None,
        types: Mapping[str, str] | None = None,
        chunks: ChunkText | None = None,
        questions: StructureReader | None = None,
        clauses: ClauseReader | None = None,
    ) -> None:
        self.names = names
        self.clauses = clauses
        """Reads a source's clauses (storygraph.qa.verify.support_slots): an answer in the asked
        slot of the question's predicate there is supported when no frame or fact has it."""
        self.frames = frames
        self.chunks = chunks
        self.questions = questions
        """Reads the question's structure (its asked predicate, its participants' cases on
        it); None: the question's words as the analysis read them."""
        """The story around a source: its frames are read with the text before it, so a zero
        subject gets its paragraph's topic as at ingest (None: each source alone)."""
        self.types = {normalize_name(k): v.lower() for k, v in (types or {}).items()}
        """Node types by normalised name: a person question is not answered by a place, nor
        a where question by a person."""
        self.problem = ""
        """Why the frames could not be read ("" when they could): the check then reads the
        facts only, and the engine names that in the trace."""
        self._frame_cache: dict[tuple[str, str], tuple[Frame, ...]] = {}
        self._chunk_cache: dict[str, str] = {}
        self._structure_cache: dict[tuple[str, str], QuestionStructure | None] = {}
        self._clause_cache: dict[tuple[str, str], tuple[Clause, ...]] = {}

    # --- reading ------------------------------------------------------------------------------
    def _frames_of(self, text: str, language: str) -> tuple[Frame, ...]:
        if self.frames is None or not text:
            return ()
        key = (text, language)
        if key not in self._frame_cache:
            if len(self._frame_cache) >= MAX_CACHED_FRAMES:  # the checker lives per graph
                self._frame_cache.clear()
            try:
                self._frame_cache[key] = tuple(self.frames(text, language))
            except ModelError as exc:  # the parser is not installed: the facts only
                self.problem = f"the parser's frames could not be read: {exc.message}"
                self.frames = None
                return ()
        return self._frame_cache[key]

    def _around(self, source: Citation) -> tuple[str, str]:
        """The story's text just before a source in its chunk (`text_around`), ("", "") when
        the chunk does not hold the source as written."""
        chunk = self._chunk(source)
        return text_around(chunk, source.text) if chunk else ("", "")

    def _chunk(self, source: Citation) -> str:
        """The text of a source's chunk ("" when the checker reads no chunks)."""
        if self.chunks is None or not source.chunk_id:
            return ""
        chunk = self._chunk_cache.get(source.chunk_id)
        if chunk is None:
            if len(self._chunk_cache) >= MAX_CACHED_FRAMES:
                self._chunk_cache.clear()
            chunk = self._chunk_cache[source.chunk_id] = self.chunks(source.chunk_id)
        return chunk

    def _structure(self, question: str, language: str) -> QuestionStructure | None:
        if self.questions is None:
            return None
        key = (question, language)
        if key not in self._structure_cache:
            if len(self._structure_cache) >= MAX_CACHED_FRAMES:
                self._structure_cache.clear()
            try:
                self._structure_cache[key] = self.questions(question, language)
            except ModelError as exc:  # the parser is not installed: the question's words
                self.problem = f"the question's structure could not be read: {exc.message}"
                self.questions = None
                return None
        return self._structure_cache[key]

    def _clauses_of(self, text: str, language: str) -> tuple[Clause, ...]:
        if self.clauses is None or not text:
            return ()
        key = (text, language)
        if key not in self._clause_cache:
            if len(self._clause_cache) >= MAX_CACHED_FRAMES:
                self._clause_cache.clear()
            try:
                self._clause_cache[key] = tuple(self.clauses(text, language))
            except ModelError as exc:  # the parser is not installed: frames and facts only
                self.problem = f"the sources' clauses could not be read: {exc.message}"
                self.clauses = None
                return ()
        return self._clause_cache[key]

    def _asked_slot(self, analysis: QuestionAnalysis) -> AskedSlot | None:
        """What the question asks of its predicate (storygraph.qa.verify.support_slots)."""
        kind = analysis.qtype.kind
        if analysis.language == "ja":
            structure = self._structure(analysis.question, "ja")
            return asked_in_japanese(structure, analysis.question, kind) if structure else None
        return asked_in_english(self._clauses_of(analysis.question, "en"), kind)

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

    def _spoken(self, source: Citation) -> str:
        """A source with the story just before it and the rest of its sentence: a line's
        attribution before its quote (…こう言いました。⏎「…」) or after it."""
        before, after = self._around(source)
        return before + source.text + after + self._after_speech(source)

    def _after_speech(self, source: Citation) -> str:
        """The rest of the sentence after a source that ends with a speech its sentence goes
        on from (「…」と流れて来ました), found in its chunk by the source's first and last
        words (a source joins the story's lines); "" otherwise."""
        text = source.text.strip()
        chunk = self._chunk(source) if text.endswith("」") else ""
        tail = text[-SPEECH_ANCHOR:]
        at = chunk.find(text[:SPEECH_ANCHOR])
        end = chunk.find(tail, at) if at >= 0 else -1
        if end < 0:
            return ""
        end += len(tail)
        rest = chunk[end : end + CONTEXT_CHARS].lstrip(" 　\n")
        if not rest.startswith(("と", "って")):
            return ""
        return re.sub(r"\s+", "", _rest_of_sentence(rest))

    def _structured(self, analysis: QuestionAnalysis) -> QuestionAnalysis:
        """The analysis with the question's verb and roles read from its structure, when it
        has an asked predicate: the stems of that predicate only (not of a clause of time
        before it), each participant's direction from its case on it in its voice (a
        causative passive's が does the act), a participant inside another clause no
        participant. A question asking what something is keeps its words' reading."""
        structure = self._structure(analysis.question, analysis.language)
        if structure is None:
            return analysis
        if not structure.predicate:
            # a question asking what something is: its words as they are (no act to read a
            # role from; `_premise` claims none for it)
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

    def _links(
        self,
        analysis: QuestionAnalysis,
        read: Sequence[Citation],
        citations: Sequence[Citation],
        facts: Sequence[Fact],
    ) -> list[_Link]:
        """The relations of the frames of the sources read, then of the facts some source
        tells (and the kept facts): what the role and premise checks read."""
        language = "ja" if analysis.language == "ja" else "en"
        links: list[_Link] = []
        for c in read:
            if c.kind == "graph":
                continue
            before, after = self._around(c)
            for f in self._frames_of(before + c.text + after, c.language or language):
                if f.start + len(f.sentence) <= len(before) or f.start >= len(before + c.text):
                    continue  # a frame of the story around the source, not of the source
                links.append(
                    _Link(
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
                _Link(
                    fact.start,
                    fact.type,
                    fact.end,
                    citation.number if citation else None,
                    citation.text if citation else (fact.evidence or fact.text()),
                    "fact",
                )
            )
        return [as_asked(link, analysis) for link in links]

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
            return [core] if core and len(core) <= _SHORT_JA else []
        asked = set(analysis.words)
        asked |= {w for e in analysis.entities for w in english_words(e.mention)}
        own = [w for w in re.findall(r"[A-Za-z][A-Za-z'-]*", core) if english_words(w)]
        own = [w for w in own if english_words(w)[0] not in asked]
        return [" ".join(own)] if own and len(own) <= _SHORT_EN else []

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
        analysis = _asked(self._structured(analysis))
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
        role = _asks_role(analysis)
        candidates = speech_candidates(analysis, facts, shown, self._spoken) or (
            tuple(self._candidates(analysis, links)) if role else ()
        )

        def fail(reason: str, check: str, named: Sequence[str] = ()) -> Support:
            # a failed answer to a question whose premise nothing in the story supports:
            # "the story does not say", not "not sure"
            premise = self._premise(analysis, links, facts, shown) if role else None
            offered = tuple(c for c in candidates if not any(_same(c.name, n) for n in named))
            if premise is not None:
                return Support("no premise", None, tuple(named), premise, "premise", offered)
            return Support("not supported", None, tuple(named), reason, check, offered)

        spoken = speech_support(analysis, _core(answer), sources, facts, self._spoken)
        if spoken is not None:
            # a line of speech decides it (storygraph.qa.verify.support_speech); another one's
            # line says nothing of the premise (someone did say something)
            if spoken.supported:
                return spoken
            return Support("not supported", None, (), spoken.reason, spoken.check, candidates)
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
        if quoted is not None and not _says_asked_case(analysis, answer):
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
            named = _joined(answer, named, participants) or named
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
                return _in_slot(named, slotted)
            return fail("the question names no one of the story to check the answer by", "role")
        # the name check
        holding: dict[str, list[Citation]] = {}
        for name in named:
            holding[name] = [
                c
                for c in sources
                if (holds_name(c.text, name) or _in_frame(c, name, links))
                and _beside(c, participants, role, links)
                and (role or _on_topic(c.text, analysis))
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
        offered = speech_candidates(analysis, facts, read or citations, self._spoken)
        if not offered and _asks_role(analysis):
            links = self._links(analysis, read, citations, facts)
            premise = self._premise(analysis, links, facts, read)
            if premise is not None:
                return Support("no premise", reason=premise, check="premise")
            # what the frames and facts put in the asked slot: the candidate step
            # (storygraph.qa.generation.candidate_answer) may offer one where the model declined
            offered = tuple(self._candidates(analysis, links))
        return Support(
            "declined",
            reason="the answer says the story's sentences do not say",
            candidates=offered,
        )

    def _words_check(
        self,
        analysis: QuestionAnalysis,
        answer: str,
        sources: Sequence[Citation],
        cites: str,
        links: Sequence[_Link],
        fail: Callable[..., Support],
    ) -> Support:
        """A what / how / why answer in a sentence of its own: most of its content words
        stand in one source that also names the question's participants."""
        language = "ja" if analysis.language == "ja" else "en"
        core = _core(answer)
        own_part = _own_part(core, analysis.folded) if language == "ja" else core
        words = _content(own_part, language)
        question = set(_content(analysis.folded, language)) | _kana_pairs(analysis.folded, language)
        own = [w for w in words if w not in question]
        if words and not own:
            if not CHOICE.search(analysis.question):
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
        if not _says_asked_case(analysis, answer):
            # its words may all be in a source (the asked event) without the asked thing
            return fail(
                f"the answer has no phrase in the question word's case ({analysis.asked_case})",
                "words",
            )
        best: tuple[float, Citation | None] = (0.0, None)
        taking_part = [e for e in analysis.entities if e.node_id not in analysis.qualifiers]
        for c in sources:
            if not _beside(c, taking_part, False, links) or not self._topical(c, analysis):
                continue
            held = set(_content(c.text, language)) | _kana_pairs(c.text, language)
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
        if _on_topic(source.text, analysis):
            return True
        return analysis.language != "ja" and _on_topic(self._around(source)[0], analysis)

    def _not_a_name(
        self, analysis: QuestionAnalysis, answer: str, language: str, sources: Sequence[Citation]
    ) -> str | None:
        """Why the answer to a question asking for a name is not one a source gives
        (storygraph.qa.verify.support_kinds), or None (also for a question asking for no name)."""
        if asked_kind(analysis.question) != "name":
            return None
        core = _core(answer)
        words = [core, *self._graph_names(analysis, answer, language)]
        words += self._own_words(analysis, answer)
        texts = [c.text + self._around(c)[1] for c in sources]
        if given_as_name(analysis.question, words, texts):
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

    def _names_asked_kind(self, analysis: QuestionAnalysis, answer: str, language: str) -> bool:
        """Does a who / where answer name someone (somewhere) of the story of the asked kind?
        Other questions: yes."""
        if analysis.qtype.kind not in PERSON_KINDS | {"where"}:
            return True
        return any(self._asked_kind(analysis, n) for n in self._named(analysis, answer, language))

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

    def _relation_fits(self, analysis: QuestionAnalysis, link: _Link) -> bool:
        """Does the link say what the question asks about: a relation of the question's verb
        (or its field of meaning); for a question whose verb the table lacks, a link whose
        own verb the question uses."""
        if not analysis.stems:
            return link.said_in(analysis)
        return bool(type_stems(link.relation) & (analysis.related or analysis.stems))

    def _fills(self, analysis: QuestionAnalysis, name: str, links: Sequence[_Link]) -> _Link | None:
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
                if slot in ("start", "any") and _same(link.start, name) and _same(link.end, entity):
                    return link
                if slot in ("end", "any") and _same(link.end, name) and _same(link.start, entity):
                    return link
        if kind != "with_whom":
            return None
        for link in (x for x in links if x.how == "frame" and _same(x.start, name)):
            for other in links:
                if (
                    other.source == link.source
                    and other.relation == link.relation
                    and _same(other.end, link.end)
                    and any(_same(other.start, e) for e, _ in self._wanted(analysis))
                ):
                    return link
        return None

    def _candidates(self, analysis: QuestionAnalysis, links: Sequence[_Link]) -> list[Candidate]:
        """What the frames and facts put in the asked slot (sourced ones first)."""
        found: list[Candidate] = []
        participants = [e for e, _ in self._wanted(analysis)]
        ordered = sorted(
            links,
            key=lambda link: (
                not type_stems(link.relation) & analysis.stems,  # the question's own verb first
                link.source is None,
                link.how != "frame",
            ),
        )
        for link in ordered:
            if not analysis.stems or not self._relation_fits(analysis, link):
                continue
            for entity, slot in self._wanted(analysis):
                other = ""
                if slot in ("start", "any") and _same(link.end, entity):
                    other = link.start
                elif slot in ("end", "any") and _same(link.start, entity):
                    other = link.end
                if not other or any(_same(other, p) for p in participants):
                    continue
                if not self._kind_fits(analysis, other):
                    continue
                if any(_same(other, c.name) for c in found):
                    continue
                direct = bool(type_stems(link.relation) & analysis.stems)
                kind = self.types.get(normalize_name(other), "")
                said = (link.source, link.sentence, link.how, link.relation)
                found.append(Candidate(other, *said, direct, kind, link.locative()))
        return found[:MAX_CANDIDATES]

    def _premise(
        self,
        analysis: QuestionAnalysis,
        links: Sequence[_Link],
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
        told = (_Link(f.start, f.type, f.end, None, f.evidence, "fact") for f in facts)
        every = [*links, *(as_asked(link, analysis) for link in told)]
        for link in every:
            if not type_stems(link.relation) & (analysis.related or analysis.stems):
                continue
            for entity, slot in wanted:
                if slot == "start" and _same(link.end, entity):
                    return None
                if slot == "end" and _same(link.start, entity):
                    return None
        if self._unread_verb(analysis, links, read):
            return None
        entity, slot = wanted[0]
        verb = "/".join(sorted(analysis.stems)).lower()
        if slot == "start":
            return f"no fact or sentence has anyone {verb} {entity}"
        return f"no fact or sentence has {entity} {verb} anyone"

    def _unread_verb(
        self, analysis: QuestionAnalysis, links: Sequence[_Link], read: Sequence[Citation]
    ) -> bool:
        """Does a source read name a participant and use a word of the question's verb with no
        frame of that verb read from it?"""
        words = [w for stem in analysis.stems for w in words_by_stem().get(stem, ())]
        for c in read:
            if not any(_names_participant(c.text, e) for e in analysis.entities):
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
        verb = " / ".join(_verb_words(s) for s in sorted(analysis.stems)) or "is linked to"
        parts = []
        for entity, slot in self._wanted(analysis):
            if slot == "start":
                parts.append(f"the one who {verb} {entity}")
            elif slot == "end":
                parts.append(f"the one {entity} {verb}")
            else:
                parts.append(f"the one linked to {entity} by {verb}")
        return " or ".join(parts) or "the one asked for"


def _in_slot(named: Sequence[str], source: Citation) -> Support:
    return Support(
        "supported",
        source=source.number,
        named=tuple(named),
        reason=f"{named[0]} fills the asked slot of the question's verb in [{source.number}]",
        check="role",
    )


def declines(answer: str) -> bool:
    """Does the answer decline (the fixed reply, or the model's own words for it)? Nothing
    is named then, and nothing to check."""
    folded = normalize_name(answer)
    return says_unknown(answer) or any(r in folded for r in REFUSALS)


def _asked(analysis: QuestionAnalysis) -> QuestionAnalysis:
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


def _asks_role(analysis: QuestionAnalysis) -> bool:
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


def _on_topic(text: str, analysis: QuestionAnalysis) -> bool:
    """Does a source share a content term of the question beyond its entities (the verb's
    kanji, an English word stem)? A question without such terms: yes."""
    if not analysis.terms:
        return True
    language = "ja" if analysis.language == "ja" else "en"
    held = normalize_name(text) if language == "ja" else " ".join(english_words(text))
    if language == "ja":
        return any(term in held or _in_kana(term, held) for term in analysis.terms)
    words = set(held.split())
    return any(w.startswith(t) or t.startswith(w) for t in analysis.terms for w in words)


MIN_KANA_READING = 3
"""A kanji term's reading shorter than this (木: き, 火: ひ) is not looked for in a source's
kana: it stands inside too many other words."""


@lru_cache(maxsize=4096)
def _kana_reading(term: str) -> str:
    """A kanji term's hiragana reading (景色: けしき), "" when it is too short to look for or
    cannot be read (no Sudachi)."""
    spoken = reading(term) or ""
    return spoken if len(spoken) >= MIN_KANA_READING else ""


def _in_kana(term: str, held: str) -> bool:
    """Does a (normalised) source write a question's kanji term in kana (景色 as けしき)? The
    stories for children spell many words in kana that a question writes in kanji."""
    spoken = _kana_reading(term)
    return bool(spoken) and spoken in held


def _beside(
    source: Citation, participants: Sequence[Any], role: bool, links: Sequence[_Link]
) -> bool:
    """Does a source name the question's participants, itself or through a fact or frame it
    tells ("He wrapped his cloak": the parser's traveler)? All of them for a what / how
    question (the words are the only check), one for a role question (the role check then
    wants that one in the other slot: 家来 in 「桃太郎の家来は誰？」 is a word of the
    question, not a participant the sentence must name)."""
    if not participants:
        return True
    ends = [end for link in links if link.source == source.number for end in (link.start, link.end)]
    named = [
        _names_participant(source.text, e) or any(_same(end, e.node_id) for end in ends)
        for e in participants
    ]
    return any(named) if role else all(named)


def _in_frame(source: Citation, name: str, links: Sequence[_Link]) -> bool:
    """Does a frame of the source have the name in a slot: a subject the sentence leaves
    unsaid and its paragraph's topic gives (「そして、桃太郎のあとから、ついて行きました」
    after 「犬は…」)?"""
    return any(
        link.how == "frame"
        and link.source == source.number
        and (_same(link.start, name) or _same(link.end, name))
        for link in links
    )


def _names_participant(text: str, entity: Any) -> bool:
    """Does a source name a participant of the question, by its graph name or its mention?"""
    return holds_name(text, entity.node_id) or holds_name(text, entity.mention)


def _verb_words(relation: str) -> str:
    """A relation type or stem as words of a sentence: DEFEAT → defeats, FOLLOWS → follows,
    BECOMES_COMPANION_OF → becomes companion of."""
    words = relation.lower().replace("_", " ").strip()
    if not words or " " in words or words.endswith("s"):
        return words
    if words.endswith(("sh", "ch", "x")):
        return words + "es"
    if words.endswith("y") and words[-2:-1] not in "aeiou":
        return words[:-1] + "ies"
    return words + "s"


QUOTE_SHARE = 0.8
"""Share of an answer's character pairs (English: content words) one source must hold for the
answer to count as a quote of it."""


def _quoted(
    analysis: QuestionAnalysis,
    answer: str,
    sources: Sequence[Citation],
    links: Sequence[_Link],
) -> Citation | None:
    """The source a long answer quotes (`QUOTE_SHARE` of it word for word), when that source
    names a participant of the question and shares a word of it; None for a short answer (a
    name: the role check reads it) and for anything else."""
    core = _core(answer)
    if analysis.language == "ja":
        if len(core) <= _SHORT_JA:
            return None
        mine = _pairs(core)
    else:
        mine = english_words(core)
        if len(core.split()) <= _SHORT_EN:
            return None
        # "The Hare made fun of the short feet…" for "What did the Hare make fun of?": the
        # words it repeats of the question say the question, not what it quotes
        asked = set(english_words(analysis.question))
        own = [w for w in mine if w not in asked]
        mine = own if len(own) >= MIN_QUOTED_WORDS else mine
    if not mine:
        return None
    if analysis.qtype.kind in PERSON_KINDS | {"where"} and not _on_topic(core, analysis):
        # a quote answering who / where must itself say the question's terms (its verb): a
        # sentence beside the asked event (「…ながめながら」 for who rescued the hare) names
        # someone, not the one asked for
        return None
    for c in sources:
        held = set(_pairs(c.text)) if analysis.language == "ja" else set(english_words(c.text))
        share = sum(x in held for x in mine) / len(mine)
        if (
            share >= QUOTE_SHARE
            and (_beside(c, analysis.entities, True, links) or _holds_quoted(c.text, analysis))
            and (_on_topic(c.text, analysis) or _says_asked_verb(c.text, analysis))
        ):
            return c
    return None


MIN_QUOTED_WORDS = 3
"""An English answer's own words (those the question does not say) a quote is read by, at
least: fewer, and the whole answer is."""


def _says_asked_verb(text: str, analysis: QuestionAnalysis) -> bool:
    """Does a source say the question's verb by a word of the verb table's row for it
    (storygraph.text.vocabulary: "ridiculed" for "make fun of", 退治 for 倒した)? Then it is on
    the question's topic though it shares no term with it."""
    folded = text.lower()
    table = words_by_stem()
    return any(word_in(w, folded) for stem in analysis.stems for w in table.get(stem, ()))


MIN_QUOTED_PHRASE = 5
"""A phrase the question quotes this long or longer is the story's own words (「人間のいちばん
だいじなたから」, a speech), not a title or a name (「桃太郎」)."""


def _holds_quoted(text: str, analysis: QuestionAnalysis) -> bool:
    """Does a source hold a phrase the question quotes from the story, word for word? Then it
    tells what the question is about, whether or not it names a participant (the thing the
    phrase describes, 玉手箱, stands in a clause of its own)."""
    held = normalize_name(text)
    return any(len(q) >= MIN_QUOTED_PHRASE and q in held for q in analysis.quoted)


def _says_asked_case(analysis: QuestionAnalysis, answer: str) -> bool:
    """Does a Japanese answer have a phrase in the question word's case (何で → Xで, どこへ →
    Xへ, 誰と → Xと), one the question does not hold itself, or is it a bare noun phrase? Yes
    when the question's structure gave no such case."""
    case = analysis.asked_case
    if analysis.language != "ja" or not case:
        return True
    core = normalize_name(_core(answer))
    if len(core) <= _SHORT_JA and not _CASE_PARTICLE.search(core):
        return True  # a bare noun phrase (ぬい針です) is the asked thing itself
    for found in re.finditer(re.escape(case), core):
        before = core[max(0, found.start() - 2) : found.start()]
        if before and not _CASE_PARTICLE.fullmatch(before[-1]) and before not in analysis.folded:
            return True
    return False


def _pairs(text: str) -> list[str]:
    """Character pairs of a Japanese text, punctuation and spaces left out."""
    flat = re.sub(r"[\s、。，．・「」『』（）()！？!?\[\]0-9]+", "", normalize_name(text))
    return [flat[i : i + 2] for i in range(len(flat) - 1)]


def _kana_pairs(text: str, language: str) -> set[str]:
    """A Japanese text's character pairs (what a kana answer's words are compared with)."""
    return set(_pairs(text)) if language == "ja" else set()


def _content(text: str, language: str) -> list[str]:
    """The words an answer and a source are compared by: English content words; Japanese
    kanji and katakana runs as pairs, else (an answer in kana alone, 「うすをこしらえました」)
    the character pairs of the whole text."""
    if language == "ja":
        runs = re.findall(r"[\u3400-\u9fff々〆\u30a0-\u30ff]{1,}", normalize_name(text))
        return [r[i : i + 2] for r in runs for i in range(max(1, len(r) - 1))] or _pairs(text)
    return english_words(text)


_SENTENCE_END = re.compile(r"[。！？!?」\n]|\.\s")
_CLOSED = re.compile(r"[。！？!?.」]$")


def text_around(chunk: str, source: str) -> tuple[str, str]:
    """The text before `source` in `chunk` (its last `CONTEXT_CHARS` characters, starting after
    a sentence end so that no sentence is read from its middle) and, when the source stops
    inside a sentence (「川上から、大きな桃が一つ、」 before a speech), the rest of that sentence
    (「…」と流れて来ました。); ("", "") when `source` is not in the chunk (`source_span`)."""
    span = source_span(chunk, source)
    if span is None:
        return "", ""
    at, end = span
    window = chunk[max(0, at - CONTEXT_CHARS) : at]
    if at > CONTEXT_CHARS:
        cut = _SENTENCE_END.search(window)
        window = window[cut.end() :] if cut else ""
    after = ""
    if not _CLOSED.search(source.rstrip()):
        after = _rest_of_sentence(chunk[end : end + CONTEXT_CHARS])
    return window, after


def source_span(chunk: str, source: str) -> tuple[int, int] | None:
    """Where `source` stands in `chunk` (start, end), its spaces and line breaks aside: a source
    is the story's text with other whitespace between its words and sentences than the chunk
    keeps (sentence search joins a passage's sentences side by side in Japanese and with one
    space in English, storygraph.qa.retrieval.passages, where the chunk has a line break and an
    indent;
    the English parser reads a line break as a space); None when it is not in the chunk."""
    at = chunk.find(source) if source else -1
    if at >= 0:
        return at, at + len(source)
    kept = [i for i, ch in enumerate(chunk) if not ch.isspace()]
    bare = "".join(chunk[i] for i in kept)
    wanted = "".join(ch for ch in source if not ch.isspace())
    at = bare.find(wanted) if wanted else -1
    if at < 0:
        return None
    return kept[at], kept[at + len(wanted) - 1] + 1


def _rest_of_sentence(text: str) -> str:
    """`text` up to its first sentence end outside speech 「…」 ("" when there is none)."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "「":
            depth += 1
        elif ch == "」":
            depth = max(0, depth - 1)
        elif depth == 0 and ch in "。！？!?.":
            return text[: i + 1]
    return ""


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
