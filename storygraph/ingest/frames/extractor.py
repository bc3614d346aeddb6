"""`ParserExtractor`: extraction with no language model, from parser frames and the verb table.

Japanese goes through `storygraph.ingest.frames.ja` (GiNZA), English through
`storygraph.ingest.frames.en`
when that reader is installed. Every fact whose predicate the verb table types becomes an
`ExtractedRelation` with its evidence sentence and `origin="parser"`, and so does every line of
speech said to someone (`SAYS`, speaker → listener, the quote's sentence as evidence:
`storygraph.text.speech`, `with_speech`); facts the table has no
type for are counted in `ChunkExtraction.untyped` (the ingest report shows it) and, by default,
kept under a type named after their own verb (`verb_types`), else dropped. With the whole
document read first (`begin_document`), every name gets one type for the whole story
(`entity_kinds`: what its facts say, and whether the story's grammar says it is alive).
"""

from __future__ import annotations

import hashlib
import importlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from storygraph.errors import ModelError
from storygraph.ingest.frames import AnimacyCue, DocumentReading, ProposedFact
from storygraph.models import Chunk, ChunkExtraction, ExtractedEntity, ExtractedRelation
from storygraph.text.sanitize import sanitize_rel_type
from storygraph.text.speech import SAYS, read_speech

GENERIC_TYPE = "Entity"
CHARACTER_TYPE = "Character"
Reader = Callable[[str], list[ProposedFact]]
DocumentReader = Callable[[str], DocumentReading]

_READERS = {"ja": "storygraph.ingest.frames.ja", "en": "storygraph.ingest.frames.en"}


def reader_for(language: str) -> Reader:
    """The `read_facts` of the language's reader module; a ModelError naming a missing one."""
    read: Reader = _reader_module(language).read_facts
    return read


def document_reader_for(language: str) -> DocumentReader:
    """The `read_document` (facts and animacy cues, one parse) of the language's reader."""
    read: DocumentReader = _reader_module(language).read_document
    return read


def _reader_module(language: str) -> Any:
    module_name = _READERS.get(language)
    if module_name is None:
        raise ModelError(
            f"The parser-only extractor has no reader for language {language!r} "
            f"(it reads: {', '.join(sorted(_READERS))}).",
            "Configure a language model for this document (see .env.example).",
        )
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise ModelError(
            f"The parser-only extractor's {language} reader ({module_name}) is not installed.",
            "Configure a language model for this document (see .env.example).",
        ) from exc


def facts_to_extraction(
    chunk: Chunk,
    facts: list[ProposedFact],
    *,
    verb_types: bool = False,
    story_kinds: dict[str, str] | None = None,
) -> ChunkExtraction:
    """Typed facts as relations (with evidence) and their ends as entities; untyped counted.

    With `verb_types`, a fact whose predicate the verb table lacks is kept under a type named
    after its own verb (流れる → NAGARERU, flow → FLOW, through the same sanitiser a model's
    relation names go through) instead of being dropped: its evidence sentence is what answers
    questions, and a type no question word maps to still ranks by that sentence.

    An entity's type is `story_kinds`' (see `entity_kinds`: one type per name in the whole
    story) when given, else what this chunk's facts say of it.
    """
    result = ChunkExtraction(chunk=chunk)
    result.untyped = sum(1 for f in facts if not f.relation)
    if verb_types:
        facts = [
            f if f.relation else replace(f, relation=sanitize_rel_type(f.predicate)) for f in facts
        ]
    typed = [f for f in facts if f.relation]
    kinds = entity_kinds(typed)
    if story_kinds is not None:
        kinds = {name: story_kinds.get(name, kind) for name, kind in kinds.items()}
    result.entities = [ExtractedEntity(n, k, chunk.id, origin="parser") for n, k in kinds.items()]
    seen_relations: set[tuple[str, str, str]] = set()
    for fact in typed:
        key = (fact.subject, fact.relation, fact.object)
        if key in seen_relations:
            continue
        seen_relations.add(key)
        result.relations.append(
            ExtractedRelation(
                source=fact.subject,
                source_type=kinds[fact.subject],
                type=fact.relation,
                target=fact.object,
                target_type=kinds[fact.object],
                chunk_id=chunk.id,
                evidence=fact.sentence,
                origin="parser",
            )
        )
    return result


def entity_kinds(facts: list[ProposedFact], cues: Iterable[AnimacyCue] = ()) -> dict[str, str]:
    """One type per name the facts mention: Character when any fact has it act as one (a name,
    an honorific, the doer of a meeting, a talk, a fight: the dog that follows and the monkey
    that talks are both characters, even where another sentence has them just take a
    dumpling), or when the story's grammar says it is alive (`animate`; acting on a direct
    object in `ACTING_SENTENCES` sentences is one weak cue there, never enough alone: a tree
    bears fruit and spreads its branches); else the most frequent specific type the facts gave
    it (a tie goes to Place, then Object: a castle attacked is still where the oni live); else
    "Entity"."""
    votes: dict[str, Counter[str]] = {}
    acts: set[str] = set()
    transitive: dict[str, set[int]] = {}
    for fact in facts:
        votes.setdefault(fact.subject, Counter())[fact.subject_type] += 1
        votes.setdefault(fact.object, Counter())[fact.object_type] += 1
        if fact.subject_type == CHARACTER_TYPE:
            acts.add(fact.subject)
        if fact.pattern.endswith(DIRECT_OBJECT_PATTERNS):
            transitive.setdefault(fact.subject, set()).add(fact.start)
    acting = [
        AnimacyCue(name, True, "acts on objects", _ACTING_SENTENCE)
        for name, starts in transitive.items()
        if len(starts) >= ACTING_SENTENCES
    ]
    alive = animate([*cues, *acting])
    return {
        name: CHARACTER_TYPE if name in acts or name in alive else _entity_type(counter)
        for name, counter in votes.items()
    }


ACTING_SENTENCES = 2
"""In how many sentences a name must act on a direct object for that to count as one weak
animacy cue (`entity_kinds`)."""
DIRECT_OBJECT_PATTERNS = ("-を", "nsubj-dobj")
"""The readers' patterns (`ProposedFact.pattern`) of a doer acting on a direct object."""
_ACTING_SENTENCE = -1
"""The `start` of the acting cue: a sentence of its own, so that it adds to the story's cues."""


def animate(cues: Iterable[AnimacyCue]) -> set[str]:
    """The names the story's grammar says are alive: their sentences with a cue for alive
    weigh at least `ALIVE_WEIGHT`, and more than those with a cue for a thing. A sentence weighs
    2 when one of its cues is a grammatical mark (`AnimacyCue.marked`: 山に鬼がいました,
    すずめが一羽, 桃太郎さん, 犬は「…」とたずねました, "the Lamb, who"), else 1 (the subject of
    a verb of feeling, of saying with a speaker filled in from the topic, acting on objects): a
    verb's meaning alone must be seen in two sentences (白もなついていました … 白は苦しがって),
    as one is often a story's figure of speech or a misparse."""
    weights: dict[tuple[str, bool], dict[int, int]] = {}
    for cue in cues:
        sentences = weights.setdefault((cue.name, cue.animate), {})
        sentences[cue.start] = max(sentences.get(cue.start, 0), 2 if cue.marked else 1)
    alive = set()
    for (name, is_alive), sentences in weights.items():
        if not is_alive:
            continue
        weight = sum(sentences.values())
        if weight >= ALIVE_WEIGHT and weight > sum(weights.get((name, False), {}).values()):
            alive.add(name)
    return alive


ALIVE_WEIGHT = 2
"""How much a name's cues for alive must weigh (`animate`): one grammatical mark, or a verb of
saying or feeling in two sentences."""


_TIE_ORDER = ("Place", "Object", CHARACTER_TYPE)


def _entity_type(votes: Counter[str]) -> str:
    """The most frequent specific type the votes give, else the generic one."""
    specific = [
        (count, -_TIE_ORDER.index(kind) if kind in _TIE_ORDER else -len(_TIE_ORDER), kind)
        for kind, count in votes.items()
        if kind != GENERIC_TYPE
    ]
    return max(specific)[2] if specific else GENERIC_TYPE


class ParserExtractor:
    """Entities and relations from a syntactic parser and the verb table; no model call.

    `verb_types` (the default) keeps facts whose verb the table lacks, typed by their verb (see
    `facts_to_extraction`); False drops them. The name says which, for reports and caches.
    """

    def __init__(self, *, verb_types: bool = True) -> None:
        # changes whenever what it reads could change, so that saved chunk extractions of an
        # older reader are never served (see `reader_version`)
        self.version = reader_version()
        self.verb_types = verb_types
        self.name = "parser+verbs" if verb_types else "parser"
        self._document: tuple[str, str, list[ProposedFact]] | None = None
        self._kinds: dict[str, str] = {}

    def begin_document(self, text: str, language: str) -> None:
        """Parse the whole document once: each chunk then gets the facts whose sentence starts
        inside it, read with the story around it (topics and pronouns carry across chunks),
        and every entity the type the whole story gives it (`entity_kinds`, with the story's
        animacy cues)."""
        reading = document_reader_for(language)(text)
        facts = with_speech(text, reading.facts, (cue.name for cue in reading.cues))
        self._document = (text, language, facts)
        kept = [f for f in facts if f.relation or self.verb_types]
        self._kinds = entity_kinds(kept, reading.cues)

    def extract(self, chunk: Chunk, language: str, callbacks: list[Any]) -> ChunkExtraction:
        document = self._document
        if document is not None and document[1] == language and _inside(chunk, document[0]):
            facts = [f for f in document[2] if chunk.start <= f.start < chunk.end]
            return facts_to_extraction(
                chunk, facts, verb_types=self.verb_types, story_kinds=self._kinds
            )
        facts = with_speech(chunk.text, reader_for(language)(chunk.text))
        return facts_to_extraction(chunk, facts, verb_types=self.verb_types)


def with_speech(
    text: str, facts: list[ProposedFact], more_names: Iterable[str] = ()
) -> list[ProposedFact]:
    """The reader's facts and the text's lines of speech (`SAYS`, speaker → listener, with the
    quote's sentence; storygraph.text.speech), in text order; the lines' names are written as
    the reader's facts (and `more_names`: the animacy cues' names, the subjects of verbs of
    saying among them) write them."""
    names = {name for fact in facts for name in (fact.subject, fact.object)} | set(more_names)
    lines = speech_facts(text, names)
    return sorted([*facts, *lines], key=lambda f: f.start) if lines else facts


def with_speech_lines(result: ChunkExtraction) -> ChunkExtraction:
    """A model's extraction of a chunk with the chunk's lines of speech added (`SAYS`, as the
    parser's extraction has them: `with_speech`), their names written as the model's entities
    write them; a line's speaker or listener the model did not name becomes a Character."""
    chunk = result.chunk
    names = {e.name for e in result.entities}
    known = {(r.source, r.type, r.target) for r in result.relations}
    for fact in speech_facts(chunk.text, names):
        if (fact.subject, SAYS, fact.object) in known:
            continue
        known.add((fact.subject, SAYS, fact.object))
        for name in (fact.subject, fact.object):
            if name not in names:
                names.add(name)
                result.entities.append(
                    ExtractedEntity(name, CHARACTER_TYPE, chunk.id, origin="parser")
                )
        result.relations.append(
            ExtractedRelation(
                source=fact.subject,
                source_type=CHARACTER_TYPE,
                type=SAYS,
                target=fact.object,
                target_type=CHARACTER_TYPE,
                chunk_id=chunk.id,
                evidence=fact.sentence,
                origin="parser",
            )
        )
    return result


@lru_cache(maxsize=1)
def speech_version() -> str:
    """A hash of the speech reader's source: a model extraction's saved chunks are served only
    to the speech reader that added their lines."""
    path = Path(__file__).resolve().parents[2] / "text" / "speech.py"
    return hashlib.sha256(path.read_bytes()).hexdigest()[:8]


def speech_facts(text: str, names: Iterable[str] = ()) -> list[ProposedFact]:
    """The lines of `text` said to someone as `SAYS` facts (speaker → listener, the line's
    sentence as evidence), for the ingest; a line with no listener gives no fact (a fact joins
    two names), its sentence stays in sentence search."""
    facts = []
    for line in read_speech(text, names):
        if not line.listener:
            continue
        facts.append(
            ProposedFact(
                subject=line.speaker,
                relation=SAYS,
                object=line.listener,
                predicate="say",
                sentence=line.sentence,
                start=line.start,
                pattern=f"speech:{line.pattern}",
                subject_type="Character",
                object_type="Character",
            )
        )
    return facts



_PARSER_PACKAGES = ("ginza", "ja-ginza", "spacy", "SudachiPy", "sudachidict-core")


@lru_cache(maxsize=1)
def reader_version() -> str:
    """A hash of the readers' and the verb table's source and of the parser packages' versions."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    text = package.parents[1] / "text"
    for path in sorted([*package.glob("*.py"), text / "vocabulary.py", text / "speech.py"]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    for name in _PARSER_PACKAGES:
        try:
            digest.update(f"{name}={metadata.version(name)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name}=-".encode())
    return "2-" + digest.hexdigest()[:12]


def _inside(chunk: Chunk, text: str) -> bool:
    """Is the chunk a piece of this document at its offsets?"""
    return text[chunk.start : chunk.end] == chunk.text
