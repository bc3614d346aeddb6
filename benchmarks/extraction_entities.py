"""The entities extraction stores, per story: how many are junk, and whether their types agree.

Each story's chunk extractions are merged as ingest merges them (`storygraph.ingest.merge.
build_plan`, into an empty store), and the merged entities are checked:

- `isolated`: entities that take part in no stored fact;
- `word class`: entities whose head word names no thing. The name is tokenised alone by the
  language's parser and its last word that is not a suffix is read: in Japanese (Sudachi's
  classes through GiNZA) an interjection (感動詞), adverb (副詞), adjectival noun (形状詞),
  adverbial noun (名詞-普通名詞-副詞可能), pronoun (代名詞), number (名詞-数詞), pre-noun
  (連体詞), conjunction, particle, auxiliary, verb or adjective; in English (spaCy, the name read
  after "the") a head that is not tagged as a noun;
- `wrong only` (gold passages only): entities that no gold triple names and whose every
  extracted fact matches no gold triple: they are in the graph only through wrong facts.

`junk` counts the entities with any of these marks (once each). Types:

- `mixed votes`: entities whose chunks gave them more than one type (ingest keeps the most
  frequent, so the story's other chunks disagree with what is stored);
- `actors not Character`: entities that are the doer of a stored fact whose type is one of
  `storygraph.text.vocabulary.CHARACTER_RELATIONS` (meets, talks to, follows, fights, …) but
  are not stored as Character.

This is a measure of the parser's output, not a word list: no story's names are listed here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from benchmarks.common import REPO, STORIES, Table
from storygraph.ingest.merge import build_plan
from storygraph.models import ChunkExtraction
from storygraph.text.vocabulary import CHARACTER_RELATIONS

CHARACTER = "Character"
_JA_NON_THING = (
    "感動詞",
    "副詞",
    "形状詞",
    "名詞-普通名詞-副詞可能",
    "代名詞",
    "名詞-数詞",
    "連体詞",
    "接続詞",
    "助詞",
    "助動詞",
    "動詞",
    "形容詞",
)
FRESH_SETS = ("ja_fresh.jsonl", "en_fresh.jsonl")
"""The held-out-style question sets; their stories are the 'fresh' ones (eval/e2e/README.md)."""


@dataclass
class EntityAudit:
    story: str
    language: str
    group: str
    """"gold" (a passage of eval/gold), "fresh" (a story of a *_fresh set), "in-sample"."""
    entities: int = 0
    facts: int = 0
    isolated: list[str] = field(default_factory=list)
    word_class: list[str] = field(default_factory=list)
    wrong_only: list[str] = field(default_factory=list)
    mixed: list[str] = field(default_factory=list)
    actors_not_character: list[str] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def junk(self) -> list[str]:
        return sorted({*self.isolated, *self.word_class, *self.wrong_only})

    def to_json(self) -> dict[str, Any]:
        data = dict(vars(self))
        data["junk"] = self.junk
        return data


def audit(
    story: str,
    language: str,
    group: str,
    extractions: Sequence[ChunkExtraction],
    correct: Callable[[str, str, str], bool] | None = None,
    gold_names: Iterable[str] = (),
    key: Callable[[str], str] = str,
) -> EntityAudit:
    """The audit of one story's extractions, merged as ingest merges them.

    With `correct` (is this (source, type, target) a gold fact?) and the gold's entity names
    (compared through `key`), `wrong_only` is filled too."""
    plan = build_plan(extractions, lambda _norms, _keys, _document: [])
    result = EntityAudit(story, language, group, len(plan.entities), len(plan.relations))
    in_facts: dict[str, list[tuple[str, str, str]]] = {}
    for rel in plan.relations:
        for end in (rel.source, rel.target):
            in_facts.setdefault(end, []).append((rel.source, rel.type, rel.target))
    actors = {r.source for r in plan.relations if r.type in CHARACTER_RELATIONS}
    named = {key(n) for n in gold_names}
    for entity in plan.entities:
        name = entity.id
        result.labels[name] = entity.label
        if name not in in_facts:
            result.isolated.append(name)
        if not names_a_thing(name, language):
            result.word_class.append(name)
        if len(set(entity.type_votes)) > 1:
            result.mixed.append(name)
        if name in actors and entity.label != CHARACTER:
            result.actors_not_character.append(name)
        supported = correct is not None and any(correct(*f) for f in in_facts.get(name, []))
        if correct is not None and key(name) not in named and not supported:
            result.wrong_only.append(name)
    return result


@lru_cache(maxsize=4096)
def names_a_thing(name: str, language: str) -> bool:
    """Does the name's head word (its last word that is no suffix, tokenised alone) name a
    thing? See the module docstring for the classes that do not."""
    if language == "ja":
        from storygraph.ingest.frames.ja import parser

        tokens = [t for t in parser().tokenizer(name) if not t.tag_.startswith("接尾辞")]
        if not tokens:
            return False
        tag = tokens[-1].tag_
        return not any(tag.startswith(c) or c in tag for c in _JA_NON_THING)
    from storygraph.text.english import pipeline

    doc = pipeline()(f"the {name}")  # a noun phrase, so that "cook" is read as a noun
    return len(doc) > 1 and doc[-1].tag_.startswith("NN")


@lru_cache(maxsize=1)
def fresh_stories() -> frozenset[str]:
    """The story paths (relative to ../shared/stories) of the fresh question sets."""
    stories = set()
    for name in FRESH_SETS:
        path = REPO / "eval" / "e2e" / name
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                stories.add(str(json.loads(line)["story"]))
    return frozenset(stories)


def story_files() -> list[tuple[str, str]]:
    """(path relative to ../shared/stories, language) of every story there, in order."""
    found = []
    for language in ("ja", "en"):
        for path in sorted((STORIES / language).glob("*.txt")):
            found.append((f"{language}/{path.name}", language))
    return found


def _names(items: list[str], limit: int = 6) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", … (+{len(items) - limit})" if len(items) > limit else "")


def entity_table(audits: Sequence[EntityAudit], title: str) -> Table:
    """Per story: entities and facts stored, junk (each kind) and type agreement."""
    gold = any(a.group == "gold" for a in audits)
    columns = ["story", "group", "entities", "facts", "junk", "isolated", "word class"]
    columns += ["wrong only"] if gold else []
    columns += ["mixed votes", "actors not Character", "junk names", "type disagreements"]
    out = Table(title, columns)
    for a in audits:
        row: list[Any] = [a.story, a.group, a.entities, a.facts, len(a.junk)]
        row += [len(a.isolated), len(a.word_class)]
        row += [len(a.wrong_only)] if gold else []
        row += [len(a.mixed), len(a.actors_not_character)]
        row += [_names(a.junk), _names(sorted({*a.mixed, *a.actors_not_character}))]
        out.add(*row)
    for group in dict.fromkeys(a.group for a in audits):
        items = [a for a in audits if a.group == group]
        total = sum(a.entities for a in items)
        junk = sum(len(a.junk) for a in items)
        disagree = sum(len({*a.mixed, *a.actors_not_character}) for a in items)
        out.notes.append(
            f"{group}: {len(items)} stories, {total} entities, junk {junk} "
            f"({junk / max(total, 1):.1%}), type disagreements {disagree}."
        )
    out.notes.append(
        "Definitions (benchmarks/extraction_entities.py): isolated = in no stored fact; word "
        "class = the head word is an interjection, adverb, adjectival or adverbial noun, "
        "pronoun, number, verb or adjective (Sudachi / spaCy tags of the name alone); wrong "
        "only = named by no gold triple and in no fact that matches one; junk = any of these. "
        "Mixed votes = the story's chunks typed it differently; actors not Character = the "
        "doer of a stored meets / talks-to / follows / fights … fact (CHARACTER_RELATIONS) "
        "not stored as Character."
    )
    return out
