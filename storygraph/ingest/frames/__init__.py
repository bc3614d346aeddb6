"""Parser-proposed facts: predicate-argument frames read off a dependency parse.

A syntactic parser (GiNZA for Japanese, spaCy for English) proposes who did what to whom;
the relation type comes from the project's one verb table (`storygraph.text.vocabulary`), so the
type extraction writes is the type retrieval reads. A small model may then only choose and
check (`storygraph.ingest.frames.check`), never invent.

This module holds the value types shared by the language readers; each reader lives in its
own module (`ja`, `en`) and returns `ProposedFact`s in text order (`read_facts`), or those and
the story's `AnimacyCue`s from the same parse (`read_document`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProposedFact:
    """One fact a parser read: `subject -[relation]-> object`, with where the text says it.

    `subject` and `object` are noun phrases as the story writes them (compounds kept, e.g.
    鬼の大将); `relation` is an UPPER_SNAKE type from the verb table, or "" when the table has no
    entry for `predicate` (a model may then pick one). `sentence` is the evidence sentence and
    `start` its character offset in the text that was parsed. `pattern` names the construction
    that produced the fact (e.g. "が-を", "passive:に-が", "nsubj-dobj"), for the trace and tests.
    """

    subject: str
    relation: str
    object: str
    predicate: str
    sentence: str
    start: int
    pattern: str
    subject_type: str = "Entity"
    object_type: str = "Entity"


@dataclass(frozen=True)
class AnimacyCue:
    """One sign, read off the grammar of one sentence, that a name is alive (`animate`) or is
    a thing: the subject of いる or of a verb of saying or feeling, a name called or spoken to,
    an honorific, an animal counter (or, for a thing: the subject of ある, a thing counter);
    in English, he / she / who referring to it, the subject of said or thought. `cue` names
    the sign (for the trace and tests), `start` is its sentence's offset in the text.
    `marked`: a grammatical mark of animacy (いる, a counter, an honorific or a plural suffix of
    beings, a name called, a speech by the verb's own subject; he, she, who, which), not a
    verb's meaning alone (feeling, or saying with a speaker filled in from the topic)."""

    name: str
    animate: bool
    cue: str
    start: int
    marked: bool = False


@dataclass
class DocumentReading:
    """What a reader reads off a whole text in one parse: its facts and its animacy cues."""

    facts: list[ProposedFact]
    cues: list[AnimacyCue]
