"""Entity and relation extraction: the only import of LangChain's `LLMGraphTransformer`.

Instructions go in through `additional_instructions` in the story's language, never as a
replacement prompt (a custom prompt broke the transformer's parser on a vLLM model; see
docs/ISSUES.md#transformer-empty-graphs). Each chunk is one call; a chunk whose call fails is
retried once, and a second failure aborts the document (nothing has been written yet, so nothing is
lost). Only the errors a model call can raise (`MODEL_CALL_ERRORS`) count as the model failing:
anything else is a bug of ours and propagates at once, unretried, as itself. A reply that
carries no readable graph (garbage text, a tool call with invalid JSON or the wrong fields, no
tool call at all) counts as a failed call: LLMGraphTransformer itself would silently turn it into
an empty extraction, and the document would be stored without its facts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

import httpx
import openai
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document as LCDocument

from storygraph.errors import ModelError
from storygraph.ingest.extractor_protocol import (  # noqa: F401 (re-exported for callers)
    DocumentReader,
    Extractor,
)
from storygraph.ingest.frames.extractor import speech_version, with_speech_lines
from storygraph.models import Chunk, ChunkExtraction, ExtractedEntity, ExtractedRelation
from storygraph.prompt_files import load_prompt, prompt_digest
from storygraph.text.chunking import evidence_sentence

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_neo4j.graph_transformers.llm import LLMGraphTransformer

T = TypeVar("T")


def extraction_instructions(language: str) -> str:
    return load_prompt("extraction_ja" if language == "ja" else "extraction_en")


class TransformerExtractor:
    """Extraction through `LLMGraphTransformer` (every capable model uses this)."""

    name = "LLMGraphTransformer"

    def __init__(self, llm: BaseChatModel, *, attempts: int = 2) -> None:
        self.llm = llm
        self.attempts = attempts
        self.version = (
            "1+" + prompt_digest("extraction_ja", "extraction_en") + "+said-" + speech_version()
        )
        self._transformers: dict[str, LLMGraphTransformer] = {}

    def _transformer(self, language: str) -> LLMGraphTransformer:
        # langchain-neo4j pulls in the Neo4j driver and neo4j-graphrag (~2 s of imports): only a
        # model that extracts through the transformer pays for them, on its first chunk.
        from langchain_neo4j.graph_transformers.llm import LLMGraphTransformer

        if language not in self._transformers:
            self._transformers[language] = LLMGraphTransformer(
                llm=self.llm, additional_instructions=extraction_instructions(language)
            )
        return self._transformers[language]

    def extract(self, chunk: Chunk, language: str, callbacks: list[Any]) -> ChunkExtraction:
        transformer = self._transformer(language)
        source = LCDocument(page_content=chunk.text, metadata={"chunk_id": chunk.id})

        def call() -> Any:
            probe = _ReplyProbe()
            graph_doc = transformer.process_response(
                source, config={"callbacks": [*callbacks, probe]}
            )
            if probe.unreadable and not (graph_doc.nodes or graph_doc.relationships):
                raise UnreadableReply(probe.describe())
            return graph_doc

        graph_doc = with_retries(call, self.attempts, chunk)
        extraction = to_chunk_extraction(chunk, graph_doc.nodes, graph_doc.relationships)
        return with_speech_lines(extraction)  # who said what: read off the text, no model


class UnreadableReply(ValueError):
    """The model answered, but not with a graph the transformer could read."""


class _ReplyProbe(BaseCallbackHandler):
    """Sees the structured-output chain's result: `parsed` is None when the reply was unusable."""

    def __init__(self) -> None:
        self.unreadable = False
        self.error = ""

    def on_chain_end(
        self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        top_level = parent_run_id is None and isinstance(outputs, dict)
        if top_level and "parsed" in outputs and outputs.get("parsed") is None:
            self.unreadable = True
            error = outputs.get("parsing_error")
            self.error = f"{type(error).__name__}: {error}"[:200] if error else ""

    def describe(self) -> str:
        base = "the reply held no readable graph (no tool call, invalid JSON or wrong fields)"
        return f"{base}; {self.error}" if self.error else base


_NEXT_STEP = (
    "the document was not stored, so you can simply upload it again once the model answers."
)


def _names(exc: BaseException) -> str:
    return " ".join(cls.__name__ for cls in type(exc).__mro__)


MODEL_CALL_ERRORS: tuple[type[Exception], ...] = (
    openai.APIError,  # every HTTP status, connection and timeout error of the client
    httpx.HTTPError,  # transport errors below the client
    OSError,  # ConnectionError, TimeoutError, socket errors
    ValueError,  # unreadable replies: UnreadableReply, output parsers, JSON, pydantic
    ModelError,
)
"""What a model call may raise because of the model or its server. A TypeError, KeyError,
AttributeError, RuntimeError … is a bug of ours, not the model's: it is not retried."""


def with_retries(call: Callable[[], T], attempts: int, chunk: Chunk) -> T:
    """Run one model call for a chunk; retry on a model-call error, then raise a ModelError
    naming it. Any other exception propagates unchanged at once."""
    last: Exception | None = None
    for _ in range(max(1, attempts)):
        try:
            return call()
        except MODEL_CALL_ERRORS as exc:
            last = exc
    assert last is not None
    raise model_failure(last, chunk.index + 1) from last


def model_failure(exc: BaseException, chunk_number: int) -> ModelError:
    """A ModelError that names what went wrong with the model call and what to do next."""
    detail = f"{type(exc).__name__}: {exc}"[:300]
    status = getattr(exc, "status_code", None)
    names = _names(exc)
    if isinstance(exc, UnreadableReply):
        what = "answered without the structured graph the extractor needs"
        hint = (
            "Use a model with tool calling / JSON output (see .env.example), or run "
            f"`python -m storygraph doctor`; {_NEXT_STEP}"
        )
    elif isinstance(exc, TimeoutError) or "Timeout" in names:
        what = "timed out"
        hint = (
            "Raise STORYGRAPH_LLM_TIMEOUT_S, use shorter chunks (STORYGRAPH_CHUNK_SIZE) or a "
            f"faster model; {_NEXT_STEP}"
        )
    elif status == 429:
        what = "refused the request as rate-limited (HTTP 429)"
        hint = f"Wait a minute or raise STORYGRAPH_LLM_MAX_RETRIES; {_NEXT_STEP}"
    elif status in (401, 403):
        what = f"refused the credentials (HTTP {status})"
        hint = f"Check OPENAI_API_KEY / AZURE_OPENAI_API_KEY; {_NEXT_STEP}"
    elif isinstance(status, int) and status >= 500:
        what = f"answered with a server error (HTTP {status})"
        hint = f"Check the model server's log (python -m storygraph doctor); {_NEXT_STEP}"
    elif isinstance(exc, ConnectionError | OSError) or "Connect" in names:
        what = "could not be reached"
        hint = (
            "Check that the model server is running and OPENAI_BASE_URL is right "
            f"(python -m storygraph doctor); {_NEXT_STEP}"
        )
    else:
        what = "failed"
        hint = f"Check the model server (python -m storygraph doctor); {_NEXT_STEP}"
    return ModelError(f"The model {what} on chunk {chunk_number} ({detail}).", hint)


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
