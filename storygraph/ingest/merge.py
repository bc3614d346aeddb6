"""Merging extracted entities and relations into write-ready records (design §3, MiniRAG rule).

- One node per normalised name within a story (document): the same name in two documents is two
  nodes (design §3, docs/ISSUES.md#entity-keys), so candidates are looked up in the document only.
  Names are normalised with NFKC + case + whitespace + kana, and a kana-only name joins the one
  kanji name whose reading it spells (きじ / キジ / 雉); two different kanji names with the same
  reading stay apart (神 / 紙).
- A node's type is the most frequent type voted by the chunks that mention it.
- One edge per (source, type, target); `chunk_ids` lists the chunks that stated it and
  `evidence` the sentence each of them gave (aligned by index), so weight = len(chunk_ids).
- An extracted entity that takes part in no fact (a model's list of names, the end of a
  self-loop) is not stored: the plan lists it in `unlinked`.
- Labels and relation types are sanitised here, before anything reaches Cypher.

FalkorDB does not show a SET to later rows of the same UNWIND (docs/ISSUES.md#falkordb-same-query),
so every record produced here is unique per node / edge: the store can write each batch with one
MERGE per key.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from storygraph.models import ChunkExtraction
from storygraph.store.plan import EntityRecord, MergePlan, RelationRecord
from storygraph.store.story_time import evidence_offset, is_speech, parse_position, position
from storygraph.text.normalize import is_kana_only, normalize_name, reading
from storygraph.text.sanitize import (
    IDENTIFIER,
    RESERVED_LABELS,
    RESERVED_REL_TYPES,
    sanitize_label,
    sanitize_rel_type,
)
from storygraph.text.vocabulary import SAYS_TYPE

CandidateLookup = Callable[[Sequence[str], Sequence[str], str], list[dict[str, Any]]]
"""(norms, reading keys, document id) → the document's stored entities that may match."""


@dataclass
class _Mention:
    name: str
    label: str
    chunk_id: str


@dataclass
class _Cluster:
    norm: str
    kana: bool
    rkey: str | None
    mentions: list[_Mention] = field(default_factory=list)

    def names(self) -> list[str]:
        return [m.name for m in self.mentions]


def clean_name(raw: object) -> str:
    """Trim a model-given name; collapse inner whitespace (newlines included)."""
    return " ".join(str(raw or "").split())


def reading_key(name: str, norm: str, kana: bool) -> str | None:
    if kana:
        return norm
    value = reading(name)
    return normalize_name(value) if value else None


def _cluster(mentions: Iterable[_Mention]) -> list[_Cluster]:
    by_norm: dict[str, _Cluster] = {}
    for mention in mentions:
        norm = normalize_name(mention.name)
        if not norm:
            continue
        cluster = by_norm.get(norm)
        if cluster is None:
            kana = is_kana_only(mention.name)
            cluster = _Cluster(norm=norm, kana=kana, rkey=reading_key(mention.name, norm, kana))
            by_norm[norm] = cluster
        cluster.mentions.append(mention)
    # A kana-only cluster joins the single kanji cluster whose reading it spells.
    kanji_by_reading: dict[str, list[_Cluster]] = {}
    for cluster in by_norm.values():
        if not cluster.kana and cluster.rkey:
            kanji_by_reading.setdefault(cluster.rkey, []).append(cluster)
    merged: list[_Cluster] = []
    for cluster in by_norm.values():
        targets = kanji_by_reading.get(cluster.norm, []) if cluster.kana else []
        if len(targets) == 1:
            targets[0].mentions.extend(cluster.mentions)
        else:
            merged.append(cluster)
    return merged


def _match_existing(
    cluster: _Cluster, candidates: Sequence[dict[str, Any]]
) -> dict[str, Any] | None:
    same = [c for c in candidates if c.get("norm") == cluster.norm]
    if same:
        return same[0]
    if cluster.kana:
        kanji = [c for c in candidates if not c.get("kana") and c.get("rkey") == cluster.norm]
        return kanji[0] if len(kanji) == 1 else None
    if cluster.rkey:
        kana = [c for c in candidates if c.get("kana") and c.get("norm") == cluster.rkey]
        return kana[0] if len(kana) == 1 else None
    return None


def _most_common(values: Sequence[str], prefer: str | None = None) -> str:
    counts = Counter(values)
    best = max(counts.values())
    if prefer is not None and counts.get(prefer) == best:
        return prefer
    return next(v for v in values if counts[v] == best)


def _resolve(
    clusters: Sequence[_Cluster], candidates: Sequence[dict[str, Any]]
) -> list[tuple[dict[str, Any] | None, list[_Cluster]]]:
    """Match clusters to stored nodes and group the clusters that end on the same node.

    A stored kana node joins a kanji spelling of its reading only when exactly one cluster of
    the batch claims it that way (神 and 紙 must not both become かみ); clusters that resolve to
    the same stored node are merged into one record, so every record stays unique per node.
    """
    matches = [_match_existing(c, candidates) for c in clusters]
    by_reading = Counter(
        m["id"] for c, m in zip(clusters, matches, strict=True)
        if m and m.get("kana") and m.get("norm") != c.norm
    )  # fmt: skip
    groups: dict[str, tuple[dict[str, Any] | None, list[_Cluster]]] = {}
    for cluster, match in zip(clusters, matches, strict=True):
        if match and match.get("kana") and match.get("norm") != cluster.norm:
            match = match if by_reading[match["id"]] == 1 else None
        key = f"existing:{match['id']}" if match else f"new:{cluster.norm}"
        groups.setdefault(key, (match, []))[1].append(cluster)
    return list(groups.values())


def _entity_record(
    node_id: str,
    label: str,
    names: Iterable[str],
    chunk_ids: list[str],
    type_votes: list[str],
    existing: dict[str, Any] | None,
    existing_label: str | None,
    document_id: str,
) -> EntityRecord:
    """One merged entity of a story: its name's normal form and reading, its other names."""
    norm = normalize_name(node_id)
    return EntityRecord(
        id=node_id,
        label=label,
        norm=norm,
        rkey=reading_key(node_id, norm, is_kana_only(node_id)),
        kana=is_kana_only(node_id),
        chunk_ids=chunk_ids,
        type_votes=type_votes,
        aliases=sorted({n for n in names if n != node_id}),
        existing=existing is not None,
        existing_label=existing_label,
        document_id=document_id,
    )


def build_plan(extractions: Sequence[ChunkExtraction], lookup: CandidateLookup) -> MergePlan:
    """Turn one document's per-chunk extractions into unique entity and relation records.

    Only names that end a fact are merged: a name listed without one, or whose every fact
    turns out a self-loop, is left out before the names are clustered (and the clustering run
    again without it), so that the stored graph, exported and imported again, merges the same
    way (a kana name joins a kanji one only when no other kanji name has its reading).
    """
    documents = {e.chunk.document_id for e in extractions}
    if len(documents) > 1:
        raise ValueError(f"one plan is one document's, got chunks of {sorted(documents)}")
    document_id = documents.pop() if documents else ""
    mentions: list[_Mention] = []
    for extraction in extractions:
        chunk_id = extraction.chunk.id
        for entity in extraction.entities:
            mentions.append(
                _Mention(clean_name(entity.name), sanitize_label(entity.type), chunk_id)
            )
        for rel in extraction.relations:
            mentions.append(
                _Mention(clean_name(rel.source), sanitize_label(rel.source_type), chunk_id)
            )
            mentions.append(
                _Mention(clean_name(rel.target), sanitize_label(rel.target_type), chunk_id)
            )
    ends = {
        normalize_name(clean_name(name))
        for extraction in extractions
        for rel in extraction.relations
        for name in (rel.source, rel.target)
    }
    first: MergePlan | None = None
    while True:
        kept = [m for m in mentions if m.name and normalize_name(m.name) in ends]
        plan = _plan(extractions, kept, lookup, document_id)
        first = first or plan
        unlinked = [e for e in plan.entities if e.id in plan.unlinked]
        if not unlinked:
            break
        ends -= {normalize_name(n) for e in unlinked for n in (e.id, *e.aliases)}
    plan.dropped = first.dropped  # said of every fact as first read (a self-loop is one)
    plan.unlinked = list(
        dict.fromkeys(m.name for m in mentions if m.name and normalize_name(m.name) not in ends)
    )
    return plan


def _plan(
    extractions: Sequence[ChunkExtraction],
    mentions: Sequence[_Mention],
    lookup: CandidateLookup,
    document_id: str,
) -> MergePlan:
    """One merge of `mentions`; `entities` holds every record, `unlinked` the ids of those that
    end no fact (build_plan leaves them out and merges again)."""
    dropped: list[str] = []
    clusters = _cluster(mentions)

    norms = [c.norm for c in clusters]
    rkeys = sorted({c.rkey for c in clusters if c.rkey} | {c.norm for c in clusters if c.kana})
    candidates = lookup(norms, rkeys, document_id) if clusters else []

    records: list[EntityRecord] = []
    id_of_norm: dict[str, str] = {}
    for existing, group in _resolve(clusters, candidates):
        names = [name for cluster in group for name in cluster.names()]
        node_id = existing["id"] if existing else _most_common(names)
        cluster = _Cluster(group[0].norm, group[0].kana, group[0].rkey)
        cluster.mentions = [m for c in group for m in c.mentions]
        votes_by_chunk: dict[str, str] = {}
        for mention in cluster.mentions:
            votes_by_chunk.setdefault(mention.chunk_id, mention.label)
        chunk_ids = list(votes_by_chunk)
        new_votes = [votes_by_chunk[c] for c in chunk_ids]
        old_votes = list(existing.get("type_votes") or []) if existing else []
        existing_label = (existing.get("type") or None) if existing else None
        label = _most_common(old_votes + new_votes, prefer=existing_label)
        records.append(
            _entity_record(
                node_id, label, names, chunk_ids, new_votes, existing, existing_label, document_id
            )
        )
        for name in names:
            id_of_norm[normalize_name(name)] = node_id

    relations: dict[tuple[str, str, str], RelationRecord] = {}
    for extraction in extractions:
        chunk_id = extraction.chunk.id
        for rel in extraction.relations:
            source = id_of_norm.get(normalize_name(clean_name(rel.source)))
            target = id_of_norm.get(normalize_name(clean_name(rel.target)))
            if not source or not target:
                dropped.append(f"{rel.source} -[{rel.type}]-> {rel.target}: empty name")
                continue
            if source == target:
                dropped.append(f"{rel.source} -[{rel.type}]-> {rel.target}: self-loop")
                continue
            key = (source, sanitize_rel_type(rel.type), target)
            record = relations.setdefault(
                key, RelationRecord(source, key[1], target, document_id=document_id)
            )
            if chunk_id not in record.chunk_ids:
                record.chunk_ids.append(chunk_id)
                record.evidence.append(rel.evidence or "")
            chunk = extraction.chunk
            at = position(
                chunk.document_id,
                evidence_offset(chunk.text, chunk.start, rel.evidence),
                chunk.index,
                # a line's SAYS is the narration's (the speaking happens), not a thing said
                said=is_speech(rel.evidence) and key[1] != SAYS_TYPE,
            )
            if at not in record.positions:
                record.positions.append(at)
    linked = {end for key in relations for end in (key[0], key[2])}
    return MergePlan(
        entities=records,
        relations=list(relations.values()),
        dropped=dropped,
        unlinked=[r.id for r in records if r.id not in linked],
    )


def imported_rel_type(raw: str) -> str:
    """An imported relation type: kept when already a safe UPPER_SNAKE type, else sanitised.

    An export of ours carries sanitised types; sanitising them again must not change them
    (`sanitize_rel_type("U1F351")` gives `U1_F351`), or a re-import would double every edge.
    """
    safe = IDENTIFIER.fullmatch(raw) and len(raw) <= 64 and raw == raw.upper()
    if safe and raw not in RESERVED_REL_TYPES:
        return raw
    return sanitize_rel_type(raw)


def imported_label(raw: str) -> str:
    """An imported label: kept when already a safe identifier, else sanitised."""
    reserved = {name.casefold() for name in RESERVED_LABELS}
    if IDENTIFIER.fullmatch(raw) and raw.casefold() not in reserved and len(raw) <= 64:
        return raw
    return sanitize_label(raw)


def plan_from_graph(
    nodes: Sequence[dict[str, Any]],
    relationships: Sequence[dict[str, Any]],
    lookup: CandidateLookup,
) -> MergePlan:
    """A plan for an imported graph (seed_graph.json format), merged by the same rules.

    Imported facts carry the `chunk_ids` / `evidence` of the file when it has them (an export
    of ours does), and none otherwise: they belong to no document and no delete removes them.
    Nodes and relationships carry their story as `document_id` in an export of ours; each
    story's part is merged on its own (one without is the part of no document, '').
    """
    documents = sorted(
        {str(n.get("document_id") or "") for n in nodes}
        | {str(r.get("document_id") or "") for r in relationships}
    )
    plans = [
        _plan_from_graph_part(
            [n for n in nodes if str(n.get("document_id") or "") == document_id],
            [r for r in relationships if str(r.get("document_id") or "") == document_id],
            lookup,
            document_id,
        )
        for document_id in documents
    ]
    return MergePlan(
        entities=[e for plan in plans for e in plan.entities],
        relations=[r for plan in plans for r in plan.relations],
        dropped=[d for plan in plans for d in plan.dropped],
    )


def _plan_from_graph_part(
    nodes: Sequence[dict[str, Any]],
    relationships: Sequence[dict[str, Any]],
    lookup: CandidateLookup,
    document_id: str,
) -> MergePlan:
    mentions = [
        _Mention(clean_name(n.get("id")), imported_label(str(n.get("type") or "")), "")
        for n in nodes
    ]
    types_by_norm = {normalize_name(m.name): m.label for m in mentions if m.name}
    for rel in relationships:
        for end in ("source", "target"):
            name = clean_name(rel.get(end))
            if name and normalize_name(name) not in types_by_norm:
                mentions.append(_Mention(name, sanitize_label(""), ""))
                types_by_norm[normalize_name(name)] = sanitize_label("")
    clusters = _cluster(m for m in mentions if m.name)
    norms = [c.norm for c in clusters]
    rkeys = sorted({c.rkey for c in clusters if c.rkey} | {c.norm for c in clusters if c.kana})
    candidates = lookup(norms, rkeys, document_id) if clusters else []
    chunks_of = {
        normalize_name(clean_name(n.get("id"))): [str(c) for c in n.get("chunk_ids") or []]
        for n in nodes
    }
    records: list[EntityRecord] = []
    id_of_norm: dict[str, str] = {}
    for cluster in clusters:
        existing = _match_existing(cluster, candidates)
        names = cluster.names()
        node_id = existing["id"] if existing else names[0]
        existing_label = (existing.get("type") or None) if existing else None
        label = existing_label or cluster.mentions[0].label
        chunk_ids = [] if existing else chunks_of.get(cluster.norm, [])
        records.append(
            _entity_record(
                node_id,
                label,
                names,
                chunk_ids,
                [label] * len(chunk_ids),
                existing,
                existing_label,
                document_id,
            )
        )
        for name in names:
            id_of_norm[normalize_name(name)] = node_id
    relations: dict[tuple[str, str, str], RelationRecord] = {}
    dropped: list[str] = []
    for rel in relationships:
        source = id_of_norm.get(normalize_name(clean_name(rel.get("source"))))
        target = id_of_norm.get(normalize_name(clean_name(rel.get("target"))))
        if not source or not target:
            dropped.append(f"{rel!r}: missing source or target")
            continue
        key = (source, imported_rel_type(str(rel.get("type") or "")), target)
        record = relations.setdefault(
            key, RelationRecord(source, key[1], target, document_id=document_id)
        )
        chunk_ids = [str(c) for c in rel.get("chunk_ids") or []]
        evidence = [str(e) for e in rel.get("evidence") or []]
        for i, chunk_id in enumerate(chunk_ids):
            if chunk_id not in record.chunk_ids:
                record.chunk_ids.append(chunk_id)
                record.evidence.append(evidence[i] if i < len(evidence) else "")
        for at in rel.get("positions") or []:
            if isinstance(at, str) and parse_position(at) and at not in record.positions:
                record.positions.append(at)
    return MergePlan(entities=records, relations=list(relations.values()), dropped=dropped)
