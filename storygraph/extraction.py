"""Entity and relation extraction: the only import of LangChain's `LLMGraphTransformer`.

Instructions go in through `additional_instructions` in the story's language, never as a
replacement prompt (a custom prompt broke the transformer's parser on a vLLM model; see
docs/ISSUES.md). Each chunk is one call; a chunk whose call fails is retried once, and a second
failure aborts the document (nothing has been written yet, so nothing is lost).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from langchain_core.documents import Document as LCDocument
from langchain_core.language_models import BaseChatModel
from langchain_neo4j.graph_transformers.llm import LLMGraphTransformer

from storygraph.errors import ModelError
from storygraph.models import Chunk, ChunkExtraction, ExtractedEntity, ExtractedRelation
from storygraph.prompt_files import load_prompt
from storygraph.text.chunking import evidence_sentence


class Extractor(Protocol):
    """Anything that turns one chunk into entities and relations."""

    name: str

    def extract(self, chunk: Chunk, language: str, callbacks: list[Any]) -> ChunkExtraction: ...


def extraction_instructions(language: str) -> str:
    return load_prompt("extraction_ja" if language == "ja" else "extraction_en")


class TransformerExtractor:
    """Extraction through `LLMGraphTransformer` (every capable model uses this)."""

    name = "LLMGraphTransformer"

    def __init__(self, llm: BaseChatModel, *, attempts: int = 2) -> None:
        self.llm = llm
        self.attempts = attempts
        self._transformers: dict[str, LLMGraphTransformer] = {}

    def _transformer(self, language: str) -> LLMGraphTransformer:
        if language not in self._transformers:
            self._transformers[language] = LLMGraphTransformer(
                llm=self.llm, additional_instructions=extraction_instructions(language)
            )
        return self._transformers[language]

    def extract(self, chunk: Chunk, language: str, callbacks: list[Any]) -> ChunkExtraction:
        transformer = self._transformer(language)
        source = LCDocument(page_content=chunk.text, metadata={"chunk_id": chunk.id})
        last: Exception | None = None
        for _ in range(self.attempts):
            try:
                graph_doc = transformer.process_response(source, config={"callbacks": callbacks})
                break
            except Exception as exc:  # noqa: BLE001 - any client error: retry, then report
                last = exc
        else:
            raise ModelError(
                f"The model failed on chunk {chunk.index + 1}: {type(last).__name__}: {last}",
                "Check the model server (python -m storygraph doctor); the document was not "
                "stored, so you can simply upload it again.",
            ) from last
        return to_chunk_extraction(chunk, graph_doc.nodes, graph_doc.relationships)


def to_chunk_extraction(
    chunk: Chunk, nodes: list[Any], relationships: list[Any]
) -> ChunkExtraction:
    """Convert LangChain graph nodes / relationships to our records, with evidence sentences."""
    result = ChunkExtraction(chunk=chunk)
    for node in nodes:
        name = str(node.id or "").strip()
        if name:
            result.entities.append(ExtractedEntity(name, str(node.type or ""), chunk.id))
    for rel in relationships:
        source, target = str(rel.source.id or "").strip(), str(rel.target.id or "").strip()
        if not (source and target and rel.type):
            continue
        result.relations.append(
            ExtractedRelation(
                source=source,
                source_type=str(rel.source.type or ""),
                type=str(rel.type),
                target=target,
                target_type=str(rel.target.type or ""),
                chunk_id=chunk.id,
                evidence=evidence_sentence(chunk.text, [source, target]),
            )
        )
    return result


ExtractorFactory = Callable[[], Extractor]
