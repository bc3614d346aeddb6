"""A page for every entity: summary, relations both ways, mentions, history and timeline.

Memopedia's page per topic plus Graphiti's entity metadata, built on the provenance the graph
keeps:

- **summary**: composed from the entity's facts, or written by the model when the configured
  model is capable (`ModelInfo.capable`). It is stored on the node with `summary_updated_at`,
  `summary_method` and `summary_sources` (the document ids it was made from) and regenerated
  only when a document changed the entity (the write marks it `summary_stale`), never on a plain
  view. A stored composed summary is upgraded once to a model summary when a capable model opens
  the page;
- **relations** in both directions with their evidence sentences and citations (document, chunk);
- **lines**: what a character says (to whom, when the story names one): read off the chunks that
  mention it and from its SAYS relations (storygraph.text.speech);
- **mentions**: the documents and chunks that mention the entity;
- **history**: per document, whether it created, updated or only referenced the entity, and what
  changed (storygraph/store/history.py);
- **timeline**: the relations in story order (storygraph/store/story_time.py), superseded facts
  marked.

Within a reading position (storygraph.store.reading, `reading=`: the chat's "I have read up
to", `entity NAME --until N`) a page shows only what comes before it: an entity first named later
has no page (and is not listed or resolved); the relations, their sentences, the timeline and the
mentions are the read ones; the summary is composed from those facts (never the stored one, which
read the whole story; nothing is written back); the history (what each document's ingest changed,
later chapters included) and the aliases no read sentence writes are left out.

An entity belongs to one story (docs/ISSUES.md#entity-keys): a name several stories use has a page
per story (`pages("おじいさん")`), and a page is opened by its key or by `name@story` (the story's
document name or id).

Usable from a script: `EntityPages(services.store, services.llm(), services.info).page("桃太郎")`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from storygraph.library.relation_labels import relation_label
from storygraph.llm.factory import ModelInfo
from storygraph.prompt_files import fill
from storygraph.store import GraphStore
from storygraph.store.history import parse_history
from storygraph.store.plan import key_document
from storygraph.store.reading import EVERYTHING, Reading
from storygraph.store.story_time import parse_position
from storygraph.text.chapters import chapter_label
from storygraph.text.language import detect_language, is_japanese_text
from storygraph.text.name_index import resolve_name
from storygraph.text.normalize import same_entity
from storygraph.text.speech import quotes_in, read_speech
from storygraph.text.vocabulary import SAYS_TYPE

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

log = logging.getLogger(__name__)

MAX_LINES = 200
"""Lines of speech an entity page lists at most."""
SUMMARY_FACTS = 8
"""Facts a composed summary names before "and N more"."""
MODEL_SUMMARY_FACTS = 40
METHOD_FACTS = "facts"
METHOD_MODEL = "model"
METHOD_READ = "facts read so far"
"""The summary's method within a reading position: composed from the read facts, not stored."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def document_of_chunk(chunk_id: str) -> str:
    return chunk_id.rpartition(":")[0]


def chunk_index(chunk_id: str) -> int | None:
    tail = chunk_id.rpartition(":")[2]
    return int(tail) if tail.isdigit() else None


@dataclass
class Citation:
    chunk_id: str
    document_id: str
    document: str
    chunk: int | None
    evidence: str


@dataclass
class PageRelation:
    """One relation touching the entity, with its real direction."""

    start: str
    type: str
    end: str
    direction: str
    """"out" (the entity is the start) or "in"."""
    other: str
    citations: list[Citation] = field(default_factory=list)
    positions: list[str] = field(default_factory=list)
    story_order: str = ""
    story_order_last: str = ""
    invalid_at: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.start, self.type, self.end)

    def text(self) -> str:
        return f"{self.start} -[{self.type}]→ {self.end}"

    @property
    def evidence(self) -> str:
        return next((c.evidence for c in self.citations if c.evidence), "")

    @property
    def label(self) -> str:
        """The relation as people read it: the verb its sentence writes (比べる, not KURABERU)."""
        return relation_label(self.type, self.evidence)

    def words(self) -> str:
        """The relation in the reader's words: 桃太郎 → 家来になる → 犬."""
        return f"{self.start} → {self.label} → {self.end}"


@dataclass
class Mention:
    document_id: str
    document: str
    chunks: list[int]


@dataclass
class HistoryItem:
    document_id: str
    document: str
    kind: str
    changes: list[str]
    at: str


@dataclass
class TimelineEntry:
    position: str
    document: str
    chunk: int | None
    offset: int | None
    relation: str
    evidence: str
    label: str = ""
    """The relation's label people see (`PageRelation.label`): the story's verb, no type."""
    words: str = ""
    """The relation in the reader's words (`PageRelation.words`): 桃太郎 → 家来になる → 犬."""
    first: bool = True
    """The statement the relation's story order stands at (False: stated again here)."""
    said: bool = False
    """Stated in a character's quoted speech, not in the narration."""
    statements: int = 1
    """How many places of the story state the relation in all."""
    superseded_at: str = ""
    """The position of the later fact that replaced it (exclusive relations), else ""."""


@dataclass
class SpokenLine:
    """One line the entity says: a quote of one of its SAYS relations (storygraph.text.speech),
    the one it is said to, and the sentence and place of the story that say it."""

    quote: str
    listener: str
    sentence: str
    document: str
    chunk: int | None


@dataclass
class EntityPage:
    id: str
    key: str
    """The entity's store key (its story + its name)."""
    document_id: str
    document: str
    """The story (document name) it belongs to; '' for an import of no document."""
    twins: list[str]
    """Keys of other stories' entities a user said are the same one (SAME_AS)."""
    type: str
    aliases: list[str]
    summary: str
    summary_method: str
    summary_updated_at: str
    summary_sources: list[str]
    """Names of the documents the summary was made from."""
    relations: list[PageRelation]
    mentions: list[Mention]
    history: list[HistoryItem]
    timeline: list[TimelineEntry]
    """Its relations in story order, each at the first place the story states it."""
    statements: list[TimelineEntry]
    """Every place the story states one of its relations, in story order."""
    unplaced: list[str]
    """Relations without a story position (imported without one), as text."""
    spoken: list[SpokenLine] = field(default_factory=list)
    """Its lines read off the chunks that mention it (`EntityPages.spoken`): those said to no
    one named too, which no SAYS relation holds."""
    chapters: dict[int, str] = field(default_factory=dict)
    """Its story's chunk index → the chapter that chunk is in, as a reader names it
    (「第三章」, "Chapter 3"; storygraph.text.chapters.chapter_label); a chunk before the first
    heading, or of a story stored before chapters were read, is not in it."""

    def place(self, chunk: int | None) -> str:
        """Where in its story a chunk is: "第三章 #12", "#12" without a chapter, "" for none."""
        if chunk is None:
            return ""
        chapter = self.chapters.get(chunk, "")
        return f"{chapter} #{chunk}" if chapter else f"#{chunk}"

    @property
    def outgoing(self) -> list[PageRelation]:
        return [r for r in self.relations if r.direction == "out"]

    @property
    def incoming(self) -> list[PageRelation]:
        return [r for r in self.relations if r.direction == "in"]

    @property
    def lines(self) -> list[SpokenLine]:
        """What it says (to whom, when the story names one), in story order: its lines read
        off the story (`spoken`) and its SAYS relations' quotes, each quote once."""
        stored = [
            SpokenLine(quote, rel.end, c.evidence, c.document, c.chunk)
            for rel in self.outgoing
            if rel.type == SAYS_TYPE
            for c in rel.citations
            for quote in quotes_in(c.evidence)
        ]
        found: dict[str, SpokenLine] = {}
        for line in [*self.spoken, *stored]:
            kept = found.get(line.quote)
            if kept is None or (not kept.listener and line.listener):
                found[line.quote] = line
        return sorted(found.values(), key=lambda line: (line.document, line.chunk or 0))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for rel, raw in zip(self.relations, data["relations"], strict=True):
            raw["text"] = rel.text()
            raw["evidence"] = rel.evidence
        data["lines"] = [asdict(line) for line in self.lines]
        return data


@dataclass
class EntityListItem:
    id: str
    key: str
    document: str
    """The story it belongs to (document name; '' for an import of no document)."""
    type: str
    aliases: list[str]
    summary: str
    relations: int


def compose_summary(entity_id: str, entity_type: str, relations: Sequence[PageRelation]) -> str:
    """A summary made from the facts alone (no model), in story order."""
    ordered = sorted(relations, key=lambda r: (r.story_order == "", r.story_order, r.text()))
    parts: list[str] = []
    for rel in ordered[:SUMMARY_FACTS]:
        if is_japanese_text(rel.label):  # 比べる → 子供: no English word order for a verb
            said = rel.words()
        elif rel.direction == "out":
            said = f"{rel.label} {rel.end}"
        else:
            said = f"{rel.start} {rel.label} {entity_id}"
        parts.append(f"{said} (at first; later no longer)" if rel.invalid_at else said)
    head = f"{entity_id} ({entity_type or 'entity'})"
    if not parts:
        return f"{head}: no relations recorded."
    more = len(ordered) - SUMMARY_FACTS
    tail = f"; and {more} more" if more > 0 else ""
    return f"{head}: " + "; ".join(parts) + tail + "."


def _fact_lines(relations: Sequence[PageRelation]) -> str:
    ordered = sorted(relations, key=lambda r: (r.story_order == "", r.story_order, r.text()))
    lines = []
    for rel in ordered[:MODEL_SUMMARY_FACTS]:
        mark = " (superseded)" if rel.invalid_at else ""
        evidence = f" — {rel.evidence}" if rel.evidence else ""
        lines.append(f"- {rel.start} -[{rel.type}]-> {rel.end}{mark}{evidence}")
    return "\n".join(lines) or "(none)"


class EntityPages:
    """Builds entity pages from a GraphStore; writes summaries back only when they are due."""

    def __init__(
        self,
        store: GraphStore,
        llm: BaseChatModel | None = None,
        info: ModelInfo | None = None,
    ) -> None:
        self.store = store
        self.llm = llm
        self.info = info

    @property
    def model_writes_summaries(self) -> bool:
        return self.llm is not None and self.info is not None and self.info.capable

    # --- finding entities --------------------------------------------------------------------
    def resolve(self, name: str, reading: Reading = EVERYTHING) -> list[str]:
        """The keys of the entities called `name` (exact, normalised, contained, then fuzzy),
        one per story that has it; `name@story` (a document name or id) or a key picks one.
        `reading`: only the entities read so far."""
        name = name.strip()
        if not name:
            return []
        names = reading.names(self.store.entity_names())
        if any(r.get("key") == name for r in names):
            return [name]
        base, at, story = name.rpartition("@")
        if at and base and story:
            wanted = {d.id for d in self.store.list_documents() if story in (d.id, d.name)}
            if wanted:
                names = [r for r in names if r.get("document_id") in wanted]
                name = base
        found = resolve_name(name, names)
        if found is None:
            return []
        return sorted(str(r["key"]) for r in names if r["id"] == found.node_id and r.get("key"))

    def list(
        self,
        search: str = "",
        limit: int = 200,
        documents: Sequence[str] = (),
        reading: Reading = EVERYTHING,
    ) -> list[EntityListItem]:
        """Entities (best connected first, one per story that has a name) with their summaries,
        refreshed if due; `documents` limits them to those stories.

        The list never calls the model: due summaries are composed from the facts here and a
        capable model rewrites them when their page is opened. `reading`: the entities read so
        far, each with its read relations counted and its summary composed from them.
        """
        rows = self.store.entity_list(search, limit, documents)
        if reading.limited:
            rows = [r for r in rows if reading.knows(str(r["key"]))]
            held = [str(r["key"]) for r in rows if _held(reading, r.get("document_id"))]
            read = _read_relations(reading, self.store.entity_relations(held)) if held else []
            for key in held:
                relations = _page_relations(key, read, {})
                row = next(r for r in rows if r["key"] == key)
                row["degree"] = len(relations)
                row["summary"] = compose_summary(_name_of(key), row.get("type") or "", relations)
                row["summary_stale"] = False
        due = [r["key"] for r in rows if r.get("summary") is None or r.get("summary_stale")]
        fresh = self.refresh_summaries(due, allow_model=False) if due else {}
        return [
            EntityListItem(
                id=r["id"],
                key=r["key"],
                document=r.get("document") or "",
                type=r.get("type") or "",
                aliases=list(r.get("aliases") or []),
                summary=fresh.get(r["key"], r.get("summary") or ""),
                relations=int(r.get("degree") or 0),
            )
            for r in rows
        ]

    # --- summaries ---------------------------------------------------------------------------
    def _due(self, node: dict[str, Any], allow_model: bool) -> bool:
        if node.get("summary") is None or node.get("summary_stale"):
            return True
        upgrade = allow_model and self.model_writes_summaries
        return upgrade and node.get("summary_method") == METHOD_FACTS

    def refresh_summaries(
        self, keys: Sequence[str], *, allow_model: bool = True
    ) -> dict[str, str]:
        """(Re)write the summaries of these entities (by key); returns key → new summary."""
        if not keys:
            return {}
        rows = self.store.entity_relations(keys)
        types = self.store.entity_types_by_key(keys)
        documents = {d.id for d in self.store.list_documents()}
        written: dict[str, str] = {}
        stored: list[dict[str, Any]] = []
        for key in keys:
            relations = _page_relations(key, rows, {})
            entity_id = _name_of(key)
            entity_type = types.get(key, "")
            summary, method = self._summary(entity_id, entity_type, relations, allow_model)
            sources = sorted(
                {document_of_chunk(c.chunk_id) for r in relations for c in r.citations} & documents
            )
            written[key] = summary
            stored.append(
                {
                    "key": key,
                    "summary": summary,
                    "method": method,
                    "updated_at": _now(),
                    "sources": sources,
                }
            )
        self.store.set_entity_summaries(stored)
        return written

    def _summary(
        self, entity_id: str, entity_type: str, relations: Sequence[PageRelation], allow_model: bool
    ) -> tuple[str, str]:
        composed = compose_summary(entity_id, entity_type, relations)
        if not (allow_model and self.model_writes_summaries and relations):
            return composed, METHOD_FACTS
        assert self.llm is not None
        sample = " ".join([entity_id, *(r.evidence for r in relations[:5])])
        language = "Japanese" if detect_language(sample) == "ja" else "English"
        prompt = fill(
            "entity_summary",
            entity=entity_id,
            type=entity_type or "entity",
            facts=_fact_lines(relations),
            language=language,
        )
        try:
            message = self.llm.invoke(prompt)
            text = message.content if isinstance(message.content, str) else str(message.content)
            text = text.strip()
            if not text:
                raise ValueError("empty summary")
        except Exception as exc:  # noqa: BLE001 - any model fault: the composed summary, named
            log.warning("model summary of %s failed: %s", entity_id, exc)
            return composed, f"{METHOD_FACTS} (the model failed: {type(exc).__name__})"
        return text, METHOD_MODEL

    # --- the page ----------------------------------------------------------------------------
    def pages(
        self, name: str, *, allow_model: bool = True, reading: Reading = EVERYTHING
    ) -> list[EntityPage]:
        """The pages of the entities called `name`, one per story that has it; `reading`: of
        the entities read so far, with only what was read (module doc)."""
        found = [self._page(key, allow_model, reading) for key in self.resolve(name, reading)]
        return [page for page in found if page is not None]

    def page(
        self, name: str, *, allow_model: bool = True, reading: Reading = EVERYTHING
    ) -> EntityPage | None:
        """The page of the entity called `name` (the first story's when several have it: use
        `pages`, a key or `name@story` to choose); None when no entity matches (or, within
        `reading`, none read so far does)."""
        keys = self.resolve(name, reading)
        return self._page(keys[0], allow_model, reading) if keys else None

    def _page(
        self, key: str, allow_model: bool, reading: Reading = EVERYTHING
    ) -> EntityPage | None:
        if not reading.knows(key):
            return None  # first named past the reading position
        node = self.store.entity_page_node(key)
        if node is None:
            return None
        limited = _held(reading, node.get("document_id"))
        if self._due(node, allow_model) and not limited:
            self.refresh_summaries([key], allow_model=allow_model)
            node = self.store.entity_page_node(key) or node
        entity_id = str(node["id"])
        docs = self.store.list_documents()
        names = {d.id: d.name for d in docs}
        order = {d.id: i for i, d in enumerate(docs)}
        rows = self.store.entity_relations([key])
        relations = _page_relations(key, _read_relations(reading, rows), names)
        relations.sort(key=lambda r: (r.direction != "out", r.type, r.other))
        timeline, unplaced = _timeline(relations, names, order)
        statements, _ = _timeline(relations, names, order, every=True)
        chunk_ids = [c for c in node.get("chunk_ids") or [] if reading.shows(c)]
        aliases = list(node.get("aliases") or [])
        summary = {
            "summary": node.get("summary") or "",
            "method": node.get("summary_method") or "",
            "at": node.get("summary_updated_at") or "",
            "sources": [names.get(d, d) for d in node.get("summary_sources") or []],
        }
        history = _history(node.get("history") or [], names, order)
        if limited:
            said = [c.evidence for r in relations for c in r.citations if c.evidence]
            aliases = [a for a in aliases if any(a in sentence for sentence in said)]
            summary = {
                "summary": compose_summary(entity_id, node.get("type") or "", relations),
                "method": METHOD_READ,
                "at": "",
                "sources": sorted({c.document for r in relations for c in r.citations}),
            }
            history = []  # an ingest's changes name later chapters' too
        return EntityPage(
            id=entity_id,
            key=key,
            document_id=node.get("document_id") or "",
            document=node.get("document") or "",
            twins=sorted(str(t) for t in node.get("twins") or []),
            type=node.get("type") or "",
            aliases=aliases,
            summary=summary["summary"],
            summary_method=summary["method"],
            summary_updated_at=summary["at"],
            summary_sources=summary["sources"],
            relations=relations,
            mentions=_mentions(chunk_ids, names, order),
            history=history,
            timeline=timeline,
            statements=statements,
            unplaced=unplaced,
            spoken=self.spoken(entity_id, node.get("document_id") or "", chunk_ids),
            chapters=self._chapters(node.get("document_id") or "", docs),
        )

    def _chapters(self, document_id: str, docs: Sequence[Any]) -> dict[int, str]:
        """The story's chunk index → its chapter's label (`EntityPage.chapters`)."""
        if not document_id:
            return {}
        language = next((d.language for d in docs if d.id == document_id), "")
        chapters: dict[int, str] = {}
        for row in self.store.readable_chunks(None, [document_id]):
            label = chapter_label(row.get("chapter"), language or "en")
            if label:
                chapters[int(str(row["id"]).rsplit(":", 1)[1])] = label
        return chapters

    def spoken(
        self, entity_id: str, document_id: str, chunk_ids: Sequence[str] | None
    ) -> list[SpokenLine]:
        """The entity's lines in the chunks that mention it, read off their text with the
        story's names (storygraph.text.speech), in story order, at most `MAX_LINES`."""
        if not chunk_ids:
            return []
        names = [str(r["id"]) for r in self.store.entity_names()
                 if r.get("document_id") == document_id]
        rows = sorted(self.store.chunks(list(chunk_ids)).values(), key=lambda r: r["index"])
        found: list[SpokenLine] = []
        for row in rows:
            for line in read_speech(row.get("text") or "", names):
                if same_entity(line.speaker, entity_id):
                    chunk = row.get("index")
                    found.append(
                        SpokenLine(line.quote, line.listener, line.sentence, row["document"], chunk)
                    )
        return found[:MAX_LINES]

    def all_keys(self) -> list[str]:
        return sorted(str(r["key"]) for r in self.store.entity_names())


def _held(reading: Reading, document_id: object) -> bool:
    """Does the reading position hold this story's pages (a position in it, or in every
    story)?"""
    return reading.limited and (not reading.stories or str(document_id or "") in reading.stories)


def _read_relations(
    reading: Reading, rows: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The relation rows with only what was read (`Reading.relation`), the unread ones gone."""
    if not reading.limited:
        return list(rows)
    return [kept for row in rows if (kept := reading.relation(row)) is not None]


def _name_of(key: str) -> str:
    return key[len(key_document(key)) + 1 :]


def _page_relations(
    key: str, rows: Sequence[dict[str, Any]], names: dict[str, str]
) -> list[PageRelation]:
    relations: list[PageRelation] = []
    seen: set[tuple[str, str, str]] = set()
    for row in rows:
        if key not in (row["start_key"], row["end_key"]):
            continue
        triple = (row["start"], row["type"], row["end"])
        if triple in seen:
            continue
        seen.add(triple)
        evidence = list(row.get("evidence") or [])
        citations = [
            Citation(
                chunk_id=c,
                document_id=document_of_chunk(c),
                document=names.get(document_of_chunk(c), document_of_chunk(c)),
                chunk=chunk_index(c),
                evidence=evidence[i] if i < len(evidence) else "",
            )
            for i, c in enumerate(row.get("chunk_ids") or [])
        ]
        out = row["start_key"] == key
        relations.append(
            PageRelation(
                start=row["start"],
                type=row["type"],
                end=row["end"],
                direction="out" if out else "in",
                other=row["end"] if out else row["start"],
                citations=citations,
                positions=sorted(row.get("positions") or []),
                story_order=row.get("story_order") or "",
                story_order_last=row.get("story_order_last") or "",
                invalid_at=row.get("invalid_at") or "",
            )
        )
    return relations


def _history(
    stored: Sequence[str], names: dict[str, str], order: dict[str, int]
) -> list[HistoryItem]:
    """History entries, documents in upload order (an entry names its document as written)."""
    items = []
    for value in stored:
        entry = parse_history(value)
        if entry is None:
            continue
        items.append(
            HistoryItem(
                document_id=entry["document_id"],
                document=names.get(entry["document_id"], entry["document_name"]),
                kind=entry["kind"],
                changes=entry["changes"],
                at=entry["at"],
            )
        )
    return sorted(items, key=lambda h: (order.get(h.document_id, 1 << 30), h.at))


def _mentions(
    chunk_ids: Sequence[str], names: dict[str, str], order: dict[str, int]
) -> list[Mention]:
    by_document: dict[str, set[int]] = {}
    for chunk_id in chunk_ids:
        index = chunk_index(chunk_id)
        chunks = by_document.setdefault(document_of_chunk(chunk_id), set())
        if index is not None:
            chunks.add(index)
    return [
        Mention(document_id=d, document=names.get(d, d), chunks=sorted(chunks))
        for d, chunks in sorted(by_document.items(), key=lambda i: (order.get(i[0], 1 << 30), i[0]))
    ]


def _timeline(
    relations: Sequence[PageRelation],
    names: dict[str, str],
    order: dict[str, int],
    *,
    every: bool = False,
) -> tuple[list[TimelineEntry], list[str]]:
    """The relations in story order (documents in upload order), each at its first statement;
    `every`: every place the story states one, a repeat right after itself in the same
    document listed once (a journey announced early and made late shows at both places)."""
    entries: list[tuple[tuple[int, str], TimelineEntry]] = []
    unplaced: list[str] = []
    for rel in relations:
        placed = [(p, w) for p in rel.positions if (w := parse_position(p)) is not None]
        first = [(p, w) for p, w in placed if p == rel.story_order] or placed[:1]
        if not placed:
            unplaced.append(rel.text())
            continue
        evidence_of = {c.chunk: c.evidence for c in rel.citations if c.evidence}
        for value, where in placed if every else first:
            entry = TimelineEntry(
                position=value,
                document=names.get(where.document_id, where.document_id),
                chunk=where.chunk_index,
                offset=where.offset,
                relation=rel.text(),
                evidence=evidence_of.get(where.chunk_index, rel.evidence),
                label=rel.label,
                words=rel.words(),
                first=value == first[0][0],
                said=where.said,
                statements=len(placed),
                superseded_at=rel.invalid_at,
            )
            entries.append(((order.get(where.document_id, 1 << 30), value), entry))
    entries.sort(key=lambda item: item[0])
    timeline: list[TimelineEntry] = []
    for _, entry in entries:
        last = timeline[-1] if timeline else None
        if last and (last.relation, last.document) == (entry.relation, entry.document):
            continue
        timeline.append(entry)
    return timeline, sorted(unplaced)
