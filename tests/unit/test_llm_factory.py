"""Provider selection: every provider is a langchain-openai chat model built from settings."""

from __future__ import annotations

import pytest
from langchain_openai import AzureChatOpenAI, ChatOpenAI
from pydantic import BaseModel

from storygraph.errors import ConfigError
from storygraph.llm.chat_openai import ToolCallingChatOpenAI
from storygraph.llm.embedded_chat import EmbeddedChatModel
from storygraph.llm.factory import EMBEDDED_MAX_TOKENS, build_chat_model, model_info
from storygraph.settings import Settings


def _settings(**values: object) -> Settings:
    base: dict[str, object] = {
        "openai_api_key": None,
        "openai_base_url": None,
        "azure_openai_endpoint": None,
    }
    base.update(values)
    return Settings(**base)  # type: ignore[arg-type]


def test_embedded_model_uses_function_calling_and_a_reply_cap() -> None:
    model = build_chat_model(
        _settings(llm_provider="embedded"), embedded_base_url="http://127.0.0.1:9/v1"
    )
    # plain chat is sent by our own client (storygraph.llm.embedded_chat), the rest by LangChain's
    assert isinstance(model, EmbeddedChatModel)
    assert model.extra_body == {"max_tokens": EMBEDDED_MAX_TOKENS}
    assert isinstance(model.langchain(), ToolCallingChatOpenAI)
    assert model.langchain().extra_body == {"max_tokens": EMBEDDED_MAX_TOKENS}  # type: ignore[attr-defined]
    assert not model_info(_settings(llm_provider="embedded")).capable


def test_openai_compatible_server_gets_its_base_url() -> None:
    settings = _settings(openai_base_url="http://localhost:8000/v1", llm_model="qwen")
    model = build_chat_model(settings)
    assert isinstance(model, ToolCallingChatOpenAI)
    assert str(model.openai_api_base) == "http://localhost:8000/v1"
    assert model.model_name == "qwen"
    assert model_info(settings).capable


def test_openai_with_a_key_uses_plain_chat_openai() -> None:
    model = build_chat_model(_settings(openai_api_key="sk-test"))
    assert type(model) is ChatOpenAI
    assert model.model_name == "gpt-4o-mini"


def test_azure_needs_a_deployment_and_a_key() -> None:
    with pytest.raises(ConfigError, match="deployment"):
        build_chat_model(_settings(azure_openai_endpoint="https://x.openai.azure.com"))
    model = build_chat_model(
        _settings(
            azure_openai_endpoint="https://x.openai.azure.com",
            azure_openai_api_key="k",
            azure_openai_deployment="gpt-4o-mini",
        )
    )
    assert isinstance(model, AzureChatOpenAI)


def test_no_llm_builds_nothing_and_embedded_without_server_says_what_to_do() -> None:
    assert build_chat_model(_settings(no_llm=True)) is None
    with pytest.raises(ConfigError, match="make model"):
        build_chat_model(_settings(llm_provider="embedded"))


def test_structured_output_defaults_to_a_forced_tool_call() -> None:
    class Pick(BaseModel):
        names: list[str]

    model = ToolCallingChatOpenAI(base_url="http://127.0.0.1:9/v1", api_key="x", model="m")
    bound = model.with_structured_output(Pick).first  # type: ignore[attr-defined]
    assert bound.kwargs["tool_choice"] == {"type": "function", "function": {"name": "Pick"}}
    assert "response_format" not in bound.kwargs
