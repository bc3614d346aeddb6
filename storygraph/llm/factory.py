"""The chat model of every provider (design §6): a `langchain-openai` chat model for OpenAI,
Azure OpenAI and OpenAI-compatible servers; for the embedded llama.cpp server our own
`EmbeddedChatModel` (storygraph.llm.embedded_chat), which sends plain chat itself, with the
requests langchain-openai would send, and hands every other call to langchain-openai's client
(docs/ISSUES.md#embedded-chat-client)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from storygraph.errors import ConfigError
from storygraph.settings import Settings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from storygraph.llm.embedded_chat import EmbeddedChatModel
    from storygraph.llm.embedded_server import EmbeddedServer

EMBEDDED_MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
EMBEDDED_MAX_TOKENS = 1024


@dataclass(frozen=True)
class ModelInfo:
    """What is answering, for the UI badge, the trace and the doctor."""

    provider: str
    model: str
    capable: bool
    """True for models that handle batched scoring and long chunks; False for the small
    embedded model, which gets per-fact scoring and short chunks (design §6)."""

    @property
    def grammar_constrained(self) -> bool:
        """True when the model server enforces a GBNF grammar while decoding (llama.cpp, the
        embedded model): a constrained call can be held to a fixed answer space
        (storygraph.llm.grammar)."""
        return self.provider == "embedded"

    @property
    def label(self) -> str:
        return f"{self.model} ({self.provider})" if self.model else self.provider


def model_info(settings: Settings) -> ModelInfo:
    provider = settings.resolved_provider()
    if provider == "none":
        return ModelInfo("none", "", capable=False)
    if provider == "embedded":
        return ModelInfo("embedded", settings.llm_model or EMBEDDED_MODEL_NAME, capable=False)
    if provider == "azure":
        return ModelInfo("azure", settings.azure_openai_deployment or settings.llm_model, True)
    return ModelInfo(provider, settings.llm_model or DEFAULT_OPENAI_MODEL, capable=True)


def build_chat_model(
    settings: Settings,
    *,
    embedded_base_url: str | None = None,
    embedded_server: EmbeddedServer | None = None,
) -> BaseChatModel | None:
    """The configured chat model, or None in no-LLM mode. Builds a client, calls nothing.
    langchain-openai and the openai client are imported here, not with this module; for the
    embedded model only when a call needs them (storygraph.llm.embedded_chat)."""
    provider = settings.resolved_provider()
    if provider == "none":
        return None
    if provider == "embedded":
        if not embedded_base_url:
            raise ConfigError("The embedded model server is not running.", "Run `make model`.")
        chat = embedded_chat_model(settings, embedded_base_url)
        if embedded_server is not None:  # its crashes are named and counted (crashes.py)
            chat.server_fault = embedded_server.fault
            chat.on_answered = embedded_server.worked
        return chat  # type: ignore[return-value]
    return _langchain_chat_model(settings, provider)


def embedded_chat_model(settings: Settings, base_url: str) -> EmbeddedChatModel:
    """The embedded server's client: plain chat sent by our own `EmbeddedChatModel` (the same
    requests as LangChain's client below, without importing it), anything else through
    LangChain's, built on first use (`_embedded_langchain_model`)."""
    from storygraph.llm.embedded_chat import EmbeddedChatModel
    from storygraph.llm.model_queue import ModelQueue

    return EmbeddedChatModel(
        base_url=base_url,
        model=model_info(settings).model,
        temperature=settings.llm_temperature,
        timeout_s=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
        extra_body={"max_tokens": EMBEDDED_MAX_TOKENS},
        queue=ModelQueue.for_data_dir(settings.data_dir),
        langchain_client=functools.partial(_embedded_langchain_model, settings, base_url),
    )


def _common_options(settings: Settings) -> dict[str, Any]:
    from storygraph.llm.attempts import counting_http_clients

    return {
        "temperature": settings.llm_temperature,
        "timeout": settings.llm_timeout_s,
        "max_retries": settings.llm_max_retries,
        "stream_usage": True,  # token counts for streamed answers too
        **counting_http_clients(),  # a retried request counts as another LLM call
    }


def _embedded_langchain_model(settings: Settings, base_url: str) -> BaseChatModel:
    """LangChain's client for the embedded server (what `EmbeddedChatModel` hands the calls
    it does not send itself: `bind`, `with_structured_output`)."""
    from storygraph.llm.attempts import counting_http_clients
    from storygraph.llm.chat_openai import ToolCallingChatOpenAI
    from storygraph.llm.model_queue import ModelQueue

    # langchain-openai sends max_tokens as max_completion_tokens, which llama.cpp's server
    # ignores: a looping reply would run to the end of the context. extra_body reaches it.
    # one server reads one prompt at a time: requests wait their turn in the data dir's
    # queue before they are sent (storygraph.llm.model_queue)
    queued = counting_http_clients(ModelQueue.for_data_dir(settings.data_dir))
    return ToolCallingChatOpenAI(
        base_url=base_url,
        api_key="embedded",
        model=model_info(settings).model,
        extra_body={"max_tokens": EMBEDDED_MAX_TOKENS},
        **{**_common_options(settings), **queued},
    )


def _langchain_chat_model(settings: Settings, provider: str) -> BaseChatModel:
    """OpenAI, Azure OpenAI or another OpenAI-compatible server: LangChain's client."""
    from langchain_openai import AzureChatOpenAI, ChatOpenAI

    from storygraph.llm.chat_openai import ToolCallingChatOpenAI

    info = model_info(settings)
    if provider == "azure":
        if not (settings.azure_openai_deployment and settings.azure_openai_api_key):
            raise ConfigError(
                "Azure OpenAI needs a deployment and a key.",
                "Set AZURE_OPENAI_DEPLOYMENT and AZURE_OPENAI_API_KEY (see .env.example).",
            )
        return AzureChatOpenAI(
            azure_endpoint=settings.azure_openai_endpoint,
            azure_deployment=settings.azure_openai_deployment,
            api_version=settings.azure_openai_api_version,
            api_key=settings.azure_openai_api_key,
            **_common_options(settings),
        )
    if provider == "openai_compatible":
        if not settings.openai_base_url:
            raise ConfigError(
                "An OpenAI-compatible provider needs a base URL.",
                "Set OPENAI_BASE_URL, e.g. http://localhost:8000/v1 for vLLM.",
            )
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else ""
        return ToolCallingChatOpenAI(
            base_url=settings.openai_base_url,
            api_key=key or "not-needed",
            model=info.model,
            **_common_options(settings),
        )
    if settings.openai_api_key is None or not settings.openai_api_key.get_secret_value():
        raise ConfigError("OpenAI needs an API key.", "Set OPENAI_API_KEY (see .env.example).")
    return ChatOpenAI(
        api_key=settings.openai_api_key, model=info.model, **_common_options(settings)
    )
