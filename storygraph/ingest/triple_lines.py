"""Extraction for the small embedded model: plain "subject | RELATION | object" lines.

Measured (docs/EMBEDDED_MODEL.md): through `LLMGraphTransformer`'s function-calling schema the
1.5B embedded model turns Japanese into garbage, while a short triple prompt with instructions
and a one-shot example in the story's language gets the main relations right. This extractor
asks for that format, parses it itself and builds the same LangChain `Node` / `Relationship`
objects the transformer returns, then converts them with `to_chunk_extraction`, so evidence
sentences, sanitising and merging downstream are identical. Only the embedded model uses it
(`Services.extractor`); every capable model keeps `LLMGraphTransformer`.

The prompt is four messages: instructions (system), example text (user), example triples
(assistant), then the chunk (user). The first three never change, so llama.cpp's prefix cache
reuses them from one chunk to the next; the variable text comes last.

Unreadable lines are skipped (a reply with no triple at all is an empty extraction, not an
error: the small model often has nothing to say about a line of dialogue). A client exception
is retried once, then reported as a ModelError naming the chunk, like `TransformerExtractor`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_neo4j.graphs.graph_document import Node, Relationship

from storygraph.ingest.llm_extraction import to_chunk_extraction, with_retries
from storygraph.models import Chunk, ChunkExtraction
from storygraph.prompt_files import load_prompt, prompt_digest

SECTION = re.compile(r"^---\s*$", re.MULTILINE)
_SEPARATORS = re.compile(r"\s*[|｜]\s*")
_TYPED = re.compile(r"^(?P<name>.+?)\s*[(（]\s*(?P<type>[^()（）]*?)\s*[)）]\s*$")
_BULLET = re.compile(r"^\s*(?:[-*・•]|\d+[.)．、])\s*")
_QUOTES = "「」『』\"'`“”‘’*"
MAX_NAME_CHARS = 40
MAX_JA_NAME_CHARS = 16
_SENTENCE_MARKS = re.compile(r"[。、！？!?「」『』\n]")
MAX_TRIPLES = 30


@dataclass(frozen=True)
class TriplePrompt:
    """The fixed part of the prompt: instructions and a one-shot example."""

    instructions: str
    example_text: str
    example_triples: str

    def messages(self, text: str) -> list[BaseMessage]:
        return [
            SystemMessage(self.instructions),
            HumanMessage(self.example_text),
            AIMessage(self.example_triples),
            HumanMessage(text.strip()),
        ]


@lru_cache(maxsize=4)
def triple_prompt(language: str) -> TriplePrompt:
    """`prompts/triples_<ja|en>.txt`: instructions, example text, example triples, split by ---."""
    name = "triples_ja" if language == "ja" else "triples_en"
    parts = [p.strip() for p in SECTION.split(load_prompt(name))]
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"prompt {name!r} needs three sections separated by '---' lines")
    return TriplePrompt(*parts)


def _clean_name(raw: str) -> str:
    """The name without quotes; "" for what is a sentence or a phrase rather than a name."""
    name = raw.strip().strip(_QUOTES).strip()
    limit = MAX_NAME_CHARS if name.isascii() else MAX_JA_NAME_CHARS
    if not 0 < len(name) <= limit or _SENTENCE_MARKS.search(name):
        return ""
    return name


def _node(raw: str, text: str) -> Node | None:
    match = _TYPED.match(raw.strip())
    name, kind = (match["name"], match["type"]) if match else (raw, "")
    cleaned = _clean_name(name)
    if cleaned and text and not _english_in(cleaned, text):
        cleaned = ground(cleaned, text)
    if not cleaned:
        return None
    return Node(id=cleaned, type=kind.strip() or "Entity")


def _english_in(name: str, text: str) -> bool:
    """An ASCII name counts as mentioned when each of its words occurs in the text."""
    if not name.isascii():
        return False
    lowered = text.lower()
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w not in ("the", "a", "an")]
    return bool(words) and all(w in lowered for w in words)


def _relation_type(raw: str) -> str:
    text = raw.strip().strip(_QUOTES).strip()
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9_ \-]*", text):
        return re.sub(r"[\s\-]+", "_", text).upper()
    return text  # Japanese verbs are mapped by storygraph.text.sanitize later


_PARTICLES = "はがをへ"


def ground(name: str, text: str) -> str:
    """`name` as the text writes it, or "" when the text does not mention it.

    The small model copies names from the one-shot example, glues particles on ("赤さんは")
    and miswrites a kanji now and then ("鬟が島" for "鬼が島"). A trailing は / が / を / へ is
    dropped (names of three characters or more); a name is kept when the text contains it,
    or (three characters or more) contains a same-length span that differs in one character,
    which replaces it.
    """
    if len(name) >= 3 and name[-1] in _PARTICLES and name[:-1] in text:
        return name[:-1]
    if not text or name in text:
        return name
    if len(name) >= 3 and not name.isascii():
        for start in range(len(text) - len(name) + 1):
            span = text[start : start + len(name)]
            if sum(a != b for a, b in zip(span, name, strict=True)) == 1:
                return span
    if name.isascii() and name.lower() in text.lower():
        return name
    return ""


def parse_triples(reply: str, text: str = "") -> tuple[list[Node], list[Relationship]]:
    """Nodes and relationships from "subject (Type) | RELATION | object (Type)" lines.

    Lines that do not have exactly three fields, or whose fields are empty or too long, are
    skipped; so are duplicates and self-loops. With `text`, names the text does not mention
    are dropped (see `ground`); English names are matched case-insensitively, word by word.
    """
    nodes: dict[str, Node] = {}
    relationships: list[Relationship] = []
    seen: set[tuple[str, str, str]] = set()
    for line in reply.splitlines():
        fields = _SEPARATORS.split(_BULLET.sub("", line.strip()).strip("|｜ "))
        if len(fields) != 3:
            continue
        source, target = _node(fields[0], text), _node(fields[2], text)
        rel_type = _relation_type(fields[1])
        if source is None or target is None or not rel_type or source.id == target.id:
            continue
        if len(rel_type) > MAX_NAME_CHARS:
            continue
        key = (source.id, rel_type, target.id)
        if key in seen:
            continue
        seen.add(key)
        source = nodes.setdefault(source.id, source)
        target = nodes.setdefault(target.id, target)
        relationships.append(Relationship(source=source, target=target, type=rel_type))
        if len(relationships) >= MAX_TRIPLES:
            break
    return list(nodes.values()), relationships


def reply_text(message: Any) -> str:
    content = getattr(message, "content", message)
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return str(content or "")


class SmallModelExtractor:
    """Triple-line extraction for the small embedded model (same GraphDocuments as LangChain's)."""

    name = "SmallModelExtractor"

    def __init__(self, llm: BaseChatModel, *, attempts: int = 2, max_tokens: int = 256) -> None:
        self.llm = llm
        self.attempts = attempts
        self.max_tokens = max_tokens
        self.version = f"1+{prompt_digest('triples_ja', 'triples_en')}+max{max_tokens}"

    def _bound(self) -> Any:
        # langchain-openai sends `max_tokens` as `max_completion_tokens`, which llama.cpp's
        # server ignores: a looping reply then runs to the end of the context (minutes).
        # `max_tokens` in the request body is what it reads.
        return self.llm.bind(extra_body={"max_tokens": self.max_tokens})

    def extract(self, chunk: Chunk, language: str, callbacks: list[Any]) -> ChunkExtraction:
        messages = triple_prompt(language).messages(chunk.text)
        reply = with_retries(
            lambda: self._bound().invoke(messages, config={"callbacks": list(callbacks)}),
            self.attempts,
            chunk,
        )
        nodes, relationships = parse_triples(reply_text(reply), chunk.text)
        return to_chunk_extraction(chunk, nodes, relationships)
