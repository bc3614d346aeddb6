"""Scripted chat models that misbehave in the ways real model servers do.

Each one is a `ScriptedChatModel` (so the real LLMGraphTransformer parsing, merge and Cypher run)
whose reply for some request kinds is replaced by a faulty one:

- `ReplyFaultModel(replies={"extract": "invalid_json"})`: a tool call whose arguments are not
  JSON; `"wrong_schema"`: a tool call with the wrong fields; `"text_json"`: the graph as plain
  text instead of a tool call; `"empty"`: a tool call with no nodes. (The base class's
  `faults={"extract": "garbage"}` gives a reply that is neither JSON nor a tool call.)
- `FlakyModel(fail_times={"extract": 1}, error=...)`: raises for the first N calls of a kind,
  then answers normally (a transient fault that the retry absorbs).
- `CountingFaultModel(fail_on={"extract": 3}, error=...)`: raises from the N-th call of a kind
  on (a fault in the middle of a document).
- `EnglishAnswerModel`: answers every question in English, whatever its language.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from tests.helpers.scripted_logic import Script, extract
from tests.helpers.scripted_model import ScriptedChatModel, _prompt_text, request_kind

_ids = itertools.count(1)

REPLY_FAULTS = ("invalid_json", "wrong_schema", "text_json", "empty")


def _kind(kwargs: dict[str, Any]) -> str:
    return request_kind(kwargs.get("tools") or [])


def _result(message: AIMessage) -> ChatResult:
    return ChatResult(generations=[ChatGeneration(message=message)])


class ReplyFaultModel(ScriptedChatModel):
    """Replies with a malformed answer for the request kinds listed in `replies`."""

    replies: dict[str, str] = Field(default_factory=dict)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        kind = _kind(kwargs)
        fault = self.replies.get(kind)
        if fault is None:
            return super()._generate(messages, stop, run_manager, **kwargs)
        self.calls.append(kind)
        call_id = f"fault_{next(_ids)}"
        if fault == "invalid_json":
            return _result(
                AIMessage(
                    content="",
                    invalid_tool_calls=[
                        {
                            "type": "invalid_tool_call",
                            "name": "DynamicGraph",
                            "args": '{"nodes": [{"id": "桃太郎", "type": ',
                            "id": call_id,
                            "error": "Function DynamicGraph arguments are not valid JSON",
                        }
                    ],
                )
            )
        if fault == "wrong_schema":
            return _result(
                AIMessage(
                    content="",
                    tool_calls=[
                        {
                            "name": "DynamicGraph",
                            "args": {"entities": ["桃太郎"], "facts": "桃太郎 defeats 鬼"},
                            "id": call_id,
                            "type": "tool_call",
                        }
                    ],
                )
            )
        if fault == "text_json":
            graph = extract(self.script, _prompt_text(messages))
            return _result(AIMessage(content=json.dumps(graph, ensure_ascii=False)))
        if fault == "empty":
            return _result(
                AIMessage(
                    content="",
                    tool_calls=[
                        {
                            "name": "DynamicGraph",
                            "args": {"nodes": [], "relationships": []},
                            "id": call_id,
                            "type": "tool_call",
                        }
                    ],
                )
            )
        raise ValueError(f"unknown reply fault {fault!r}")


class _CallCountFaultModel(ScriptedChatModel):
    """Counts the calls of each request kind and raises `error` on the calls `_fails` picks."""

    error: Any = None
    seen: dict[str, int] = Field(default_factory=dict)

    def _fails(self, kind: str, nth: int) -> bool:
        raise NotImplementedError

    def _default_error(self) -> Exception:
        raise NotImplementedError

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        kind = _kind(kwargs)
        self.seen[kind] = self.seen.get(kind, 0) + 1
        if self._fails(kind, self.seen[kind]):
            raise self.error or self._default_error()
        return super()._generate(messages, stop, run_manager, **kwargs)


class FlakyModel(_CallCountFaultModel):
    """Raises `error` for the first `fail_times[kind]` calls of a kind, then answers."""

    fail_times: dict[str, int] = Field(default_factory=dict)

    def _fails(self, kind: str, nth: int) -> bool:
        return nth <= self.fail_times.get(kind, 0)

    def _default_error(self) -> Exception:
        return TimeoutError("the model server is busy")


class CountingFaultModel(_CallCountFaultModel):
    """Raises `error` on every call of a kind from the `fail_on[kind]`-th call on."""

    fail_on: dict[str, int] = Field(default_factory=dict)

    def _fails(self, kind: str, nth: int) -> bool:
        limit = self.fail_on.get(kind)
        return limit is not None and nth >= limit

    def _default_error(self) -> Exception:
        return ConnectionError("the model server went away")


class EnglishAnswerModel(ScriptedChatModel):
    """Answers in English even when the question is Japanese (a wrong-language model)."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if _kind(kwargs) != "answer":
            return super()._generate(messages, stop, run_manager, **kwargs)
        self.calls.append("answer")
        return _result(AIMessage(content="Momotaro defeated the ogres with his companions. [1]"))


def nasty_script(triples: list[tuple[str, str, str, str, str]]) -> Script:
    """A script whose extraction returns exactly these (hostile) triples when named."""
    return Script(triples=tuple(triples))
