"""What an extractor is: the protocols the ingest pipeline (storygraph.ingest.pipeline) calls.

Their own module so that the pipeline, the job runner and the app's job list import no model
client: storygraph.ingest.llm_extraction (LangChain's transformer, the openai client's errors)
loads only where a model extracts (docs/ISSUES.md#startup-imports).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from storygraph.models import Chunk, ChunkExtraction


class Extractor(Protocol):
    """Anything that turns one chunk into entities and relations.

    `version` changes whenever the same chunk could come out differently (code or prompt):
    the extraction cache keys saved chunks by name and version.
    """

    name: str
    version: str

    def extract(self, chunk: Chunk, language: str, callbacks: list[Any]) -> ChunkExtraction: ...


@runtime_checkable
class DocumentReader(Protocol):
    """An extractor that reads the whole document before its chunks (a parser: a pronoun's
    antecedent or a sentence's topic may lie in the chunk before)."""

    def begin_document(self, text: str, language: str) -> None: ...
