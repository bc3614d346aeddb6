"""`ScriptedChatModel`: a LangChain chat model answering from `scripted_logic`.

It implements `bind_tools`, so `with_structured_output(..., method="function_calling")` and
LLMGraphTransformer take their real tool-calling path and parse real tool calls. Faults can be
injected per request kind to test fallbacks: `faults={"extract": TimeoutError("slow")}`,
`faults={"rerank": "garbage"}` (a reply that is not a tool call),
`faults={"answer": "text:犬です。[2]"}` (that exact text as the reply), etc. With `logprobs=True`
a text reply carries token probabilities where langchain-openai puts them (one "token" per
character, each of probability 0.9; a yes / no reply lists the other side at 0.1), as the
embedded server sends them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

from tests.helpers.scripted_logic import Script, respond

_KIND_BY_TOOL = {
    "DynamicGraph": "extract",
    "QuestionEntities": "entities",
    "QuestionAnalysis": "entities",
    "FactScores": "rerank",
    "SingleScore": "rerank",
}
_ids = itertools.count(1)


def request_kind(tools: Sequence[dict[str, Any]]) -> str:
    """extract / entities / rerank from the bound tool's name; a request without tools: answer."""
    names = [t.get("function", {}).get("name", "") for t in tools]
    return next((_KIND_BY_TOOL[n] for n in names if n in _KIND_BY_TOOL), "answer")


def _prompt_text(messages: Sequence[BaseMessage]) -> str:
    return "\n".join(m.content if isinstance(m.content, str) else str(m.content) for m in messages)


class ScriptedChatModel(BaseChatModel):
    """Deterministic chat model for tests; see module docstring."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: Script = Field(default_factory=Script)
    faults: dict[str, Any] = Field(default_factory=dict)
    on_call: Callable[[str], None] | None = None
    calls: list[str] = Field(default_factory=list)
    logprobs: bool = False

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, BaseMessage]:
        formatted = [convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=formatted, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        prompt = _prompt_text(messages)
        tools = kwargs.get("tools") or []
        kind = request_kind(tools)
        self.calls.append(kind)
        if self.on_call is not None:
            self.on_call(kind)
        fault = self.faults.get(kind)
        if isinstance(fault, BaseException):
            raise fault
        usage = {"input_tokens": len(prompt) // 3 + 1, "output_tokens": 20, "total_tokens": 0}
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        if fault == "garbage":
            message = AIMessage(content="{not json, no tool call", usage_metadata=usage)
        elif isinstance(fault, str) and fault.startswith("text:"):
            message = AIMessage(content=fault.removeprefix("text:"), usage_metadata=usage)
        else:
            reply = respond(self.script, prompt, tools)
            if "tool" in reply:
                message = AIMessage(
                    content="",
                    tool_calls=[
                        {
                            "name": reply["tool"],
                            "args": reply["args"],
                            "id": f"call_{next(_ids)}",
                            "type": "tool_call",
                        }
                    ],
                    usage_metadata=usage,
                )
            else:
                meta = {"logprobs": _logprobs(reply["content"])} if self.logprobs else {}
                message = AIMessage(
                    content=reply["content"], usage_metadata=usage, response_metadata=meta
                )
        return ChatResult(generations=[ChatGeneration(message=message)])


def _logprobs(text: str) -> dict[str, Any]:
    """Token probabilities for `text` in the chat format (module doc)."""
    likely, other = math.log(0.9), math.log(0.1)
    content = []
    for token in text:
        top = [{"token": token, "logprob": likely}]
        if text in ("yes", "no"):
            token = text
            top = [{"token": text, "logprob": likely}]
            top.append({"token": "no" if text == "yes" else "yes", "logprob": other})
            content.append({"token": token, "logprob": likely, "top_logprobs": top})
            break
        content.append({"token": token, "logprob": likely, "top_logprobs": top})
    return {"content": content}
