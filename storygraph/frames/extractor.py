"""`ParserExtractor`: extraction with no language model, from parser frames and the verb table.

Japanese goes through `storygraph.frames.ja` (GiNZA), English through `storygraph.frames.en`
when that reader is installed. Every fact whose predicate the verb table types becomes an
`ExtractedRelation` with its evidence sentence and `origin="parser"`; facts the table has no
type for are dropped here (no model picks one on this path) and counted in
`ChunkExtraction.untyped`, which the ingest report shows.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable
from typing import Any

from storygraph.errors import ModelError
from storygraph.frames import ProposedFact
from storygraph.models import Chunk, ChunkExtraction, ExtractedEntity, ExtractedRelation

GENERIC_TYPE = "Entity"
Reader = Callable[[str], list[ProposedFact]]

_READERS = {"ja": "storygraph.frames.ja", "en": "storygraph.frames.en"}


def reader_for(language: str) -> Reader:
    """The `read_facts` of the language's reader module; a ModelError naming a missing one."""
    module_name = _READERS.get(language)
    if module_name is None:
        raise ModelError(
            f"The parser-only extractor has no reader for language {language!r} "
            f"(it reads: {', '.join(sorted(_READERS))}).",
            "Configure a language model for this document (see .env.example).",
        )
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise ModelError(
            f"The parser-only extractor's {language} reader ({module_name}) is not installed.",
            "Configure a language model for this document (see .env.example).",
        ) from exc
    read: Reader = module.read_facts
    return read


def facts_to_extraction(chunk: Chunk, facts: list[ProposedFact]) -> ChunkExtraction:
    """Typed facts as relations (with evidence) and their ends as entities; untyped counted."""
    result = ChunkExtraction(chunk=chunk)
    typed = [f for f in facts if f.relation]
    result.untyped = len(facts) - len(typed)
    votes: dict[str, Counter[str]] = {}
    for fact in typed:
        votes.setdefault(fact.subject, Counter())[fact.subject_type] += 1
        votes.setdefault(fact.object, Counter())[fact.object_type] += 1
    kinds = {name: _entity_type(counter) for name, counter in votes.items()}
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


def _entity_type(votes: Counter[str]) -> str:
    """The most frequent specific type the facts gave a name, else the generic one."""
    specific = [(count, kind) for kind, count in votes.items() if kind != GENERIC_TYPE]
    return max(specific)[1] if specific else GENERIC_TYPE


class ParserExtractor:
    """Entities and relations from a syntactic parser and the verb table; no model call."""

    name = "parser"

    def extract(self, chunk: Chunk, language: str, callbacks: list[Any]) -> ChunkExtraction:
        return facts_to_extraction(chunk, reader_for(language)(chunk.text))
