"""The embedded server's own chat client (storygraph.llm.embedded_chat) sends what LangChain's
client sent: both are pointed at one recording OpenAI-compatible server and must send the same
JSON bodies, get the same replies and count the same calls and tokens, retries included."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from storygraph.errors import ModelError
from storygraph.ingest.llm_extraction import MODEL_CALL_ERRORS
from storygraph.llm.chat_openai import ToolCallingChatOpenAI
from storygraph.llm.embedded_chat import EmbeddedChatModel
from storygraph.llm.factory import EMBEDDED_MAX_TOKENS, _embedded_langchain_model, build_chat_model
from storygraph.llm.model_queue import ModelQueue
from storygraph.llm.usage import UsageCounter
from storygraph.models import Usage
from storygraph.qa.generation.answer import (
    LOGPROBS,
    WARM_MAX_TOKENS,
    chunk_logprobs,
    small_messages,
)
from storygraph.settings import Settings
from tests.helpers.flaky_openai_server import FlakyOpenAIServer

MESSAGES = [
    SystemMessage("sys"),
    HumanMessage("桃太郎の仲間は？"),
    AIMessage("犬です。"),
    HumanMessage("q"),
]
Call = Callable[[Any], str]


def _settings(tmp_path: Path, **values: Any) -> Settings:
    return Settings(  # type: ignore[call-arg]
        _env_file=None, data_dir=tmp_path, llm_provider="embedded", neo4j_uri=None, **values
    )


def _streamed(counter: UsageCounter) -> Call:
    def call(llm: Any) -> str:
        body = {"max_tokens": 120}
        chunks = llm.stream(MESSAGES, config={"callbacks": [counter]}, extra_body=body)
        return "".join(str(c.content) for c in chunks)

    return call


def _streamed_logprobs(counter: UsageCounter) -> Call:
    """The small model's answer request: it asks for the written tokens' log probabilities,
    which both clients hand over where the answerer reads them (qa.answer.chunk_logprobs)."""

    def call(llm: Any) -> str:
        body = {"max_tokens": 120, **LOGPROBS}
        chunks = list(llm.stream(MESSAGES, config={"callbacks": [counter]}, extra_body=body))
        said = [p for c in chunks for p in chunk_logprobs(c)]
        text = "".join(str(c.content) for c in chunks)
        assert [p for _, p in said] == [-0.5, -1.0]
        assert "".join(t for t, _ in said) == text  # each token's text with its probability
        return text

    return call


def _chosen(counter: UsageCounter) -> Call:
    def call(llm: Any) -> str:
        body = {"max_tokens": 8, "grammar": 'root ::= "犬" | "猿"'}
        return str(llm.invoke(MESSAGES, config={"callbacks": [counter]}, extra_body=body).content)

    return call


def _translated(counter: UsageCounter) -> Call:
    def call(llm: Any) -> str:
        reply = llm.invoke(
            "Who are Momotaro's companions?",
            config={"callbacks": [counter]},
            stop=["\n"],
            extra_body={"max_tokens": 60},
        )
        return str(reply.content)

    return call


def _plain(counter: UsageCounter) -> Call:
    def call(llm: Any) -> str:  # the client's own extra body (max_tokens 1024)
        return str(llm.invoke(MESSAGES, config={"callbacks": [counter]}).content)

    return call


def _warm(counter: UsageCounter) -> Call:
    def call(llm: Any) -> str:  # the read-ahead of the small model's prefix
        values = {"question": "", "sources": "(none)", "language": "Japanese"}
        body = {**llm.extra_body, "max_tokens": WARM_MAX_TOKENS}
        return str(llm.invoke(small_messages("ja", values), extra_body=body).content)

    return call


def _both(
    tmp_path: Path, make: Callable[[UsageCounter], Call], plan: list[Any] | None = None
) -> list[tuple[list[dict[str, Any]], str, Usage]]:
    """The requests, the reply and the usage of one call through each client."""
    found = []
    for which in ("langchain", "ours"):
        counter = UsageCounter()
        with FlakyOpenAIServer(list(plan or [])) as server:
            settings = _settings(tmp_path / which, llm_max_retries=2)
            if which == "ours":
                llm: Any = build_chat_model(settings, embedded_base_url=server.base_url)
                assert isinstance(llm, EmbeddedChatModel)
            else:
                llm = _embedded_langchain_model(settings, server.base_url)
                assert isinstance(llm, ToolCallingChatOpenAI)
            text = make(counter)(llm)
            found.append((server.requests, text, counter.snapshot()))
    return found


@pytest.mark.parametrize(
    "make", [_streamed, _streamed_logprobs, _chosen, _translated, _plain, _warm]
)
def test_the_same_request_body_reply_and_usage_as_langchains_client(
    tmp_path: Path, make: Callable[[UsageCounter], Call]
) -> None:
    (lc_requests, lc_text, lc_usage), (requests, text, usage) = _both(tmp_path, make)
    assert len(requests) == 1
    assert requests == lc_requests
    assert text == lc_text == "canned answer"
    assert usage == lc_usage


def test_the_streamed_body_and_the_grammar_as_sent() -> None:
    """What the model server reads, spelled out once (the comparison above is the guard)."""
    llm = EmbeddedChatModel(
        "http://127.0.0.1:9/v1",
        "m",
        0.0,
        1.0,
        0,
        {"max_tokens": 1024},
        None,
        lambda: None,  # type: ignore[arg-type,return-value]
    )
    body = llm._body(MESSAGES[:2], ["\n"], {"max_tokens": 8, "grammar": "g"}, stream=True)
    assert body == {
        "model": "m",
        "stream": True,
        "messages": [
            {"content": "sys", "role": "system"},
            {"content": "桃太郎の仲間は？", "role": "user"},
        ],
        "stop": ["\n"],
        "stream_options": {"include_usage": True},
        "temperature": 0.0,
        "max_tokens": 8,
        "grammar": "g",
    }
    assert llm._body(MESSAGES[:1], None, None, stream=False)["max_tokens"] == 1024


def test_retries_are_sent_and_counted_as_langchains_client_does(tmp_path: Path) -> None:
    (lc_requests, lc_text, lc_usage), (requests, text, usage) = _both(
        tmp_path, _streamed, plan=[503, 429]
    )
    assert len(requests) == len(lc_requests) == 3
    assert requests == lc_requests
    assert text == lc_text
    assert usage.calls == lc_usage.calls == 3


def test_an_error_status_past_the_retries_is_a_model_call_error(tmp_path: Path) -> None:
    with FlakyOpenAIServer([500, 500, 500]) as server:
        llm = build_chat_model(
            _settings(tmp_path, llm_max_retries=2), embedded_base_url=server.base_url
        )
        with pytest.raises(ModelError, match="HTTP 500") as raised:
            llm.invoke("q")  # type: ignore[union-attr]
        assert len(server.requests) == 3
    assert raised.value.status_code == 500  # type: ignore[attr-defined]
    assert isinstance(raised.value, MODEL_CALL_ERRORS)


def test_a_request_that_is_not_retried_fails_at_once(tmp_path: Path) -> None:
    with FlakyOpenAIServer([400]) as server:
        llm = build_chat_model(
            _settings(tmp_path, llm_max_retries=2), embedded_base_url=server.base_url
        )
        with pytest.raises(ModelError, match="HTTP 400"):
            list(llm.stream("q"))  # type: ignore[union-attr]
        assert len(server.requests) == 1


def test_a_server_that_is_gone_is_a_connection_error(tmp_path: Path) -> None:
    with FlakyOpenAIServer(["drop"]) as server:
        llm = build_chat_model(
            _settings(tmp_path, llm_max_retries=0), embedded_base_url=server.base_url
        )
        with pytest.raises(OSError) as raised:
            llm.invoke("q")  # type: ignore[union-attr]
    assert isinstance(raised.value, MODEL_CALL_ERRORS)
    assert ModelQueue.for_data_dir(tmp_path).tickets() == []  # its ticket given back


def test_other_calls_go_to_langchains_client_built_once(tmp_path: Path) -> None:
    class Pick(BaseModel):
        names: list[str]

    llm = build_chat_model(_settings(tmp_path), embedded_base_url="http://127.0.0.1:9/v1")
    assert isinstance(llm, EmbeddedChatModel)
    client = llm.langchain()
    assert isinstance(client, ToolCallingChatOpenAI)
    assert client.extra_body == {"max_tokens": EMBEDDED_MAX_TOKENS}
    assert llm.langchain() is client
    bound = llm.with_structured_output(Pick).first
    assert bound.kwargs["tool_choice"] == {"type": "function", "function": {"name": "Pick"}}
    assert llm.bind(extra_body={"max_tokens": 5}).kwargs == {"extra_body": {"max_tokens": 5}}


def test_a_message_that_is_not_plain_text_is_refused(tmp_path: Path) -> None:
    llm = build_chat_model(_settings(tmp_path), embedded_base_url="http://127.0.0.1:9/v1")
    call = AIMessage("", tool_calls=[{"name": "Pick", "args": {}, "id": "1"}])
    with pytest.raises(TypeError, match="plain text"):
        llm.invoke([HumanMessage("q"), call])  # type: ignore[union-attr]
