"""The OpenAI-protocol chat model StoryGraph builds for llama.cpp and OpenAI-compatible servers.

Its own module so that importing the model factory (storygraph.llm.factory, which the CLI and the
question path read `ModelInfo` from) does not import langchain-openai and the openai client
(~1 s): they load when a chat model is built.
"""

from __future__ import annotations

from typing import Any

from langchain_openai import ChatOpenAI


class ToolCallingChatOpenAI(ChatOpenAI):
    """ChatOpenAI whose structured output defaults to function calling.

    langchain-openai defaults `with_structured_output` to JSON-schema mode, which llama.cpp's
    server answers with HTTP 500 and several OpenAI-compatible servers lack; named function
    calling works on llama.cpp, vLLM, Ollama and LM Studio. LLMGraphTransformer calls
    `with_structured_output(schema, include_raw=True)` without a method, so the default matters.
    """

    def with_structured_output(  # type: ignore[override]
        self, schema: Any = None, *, method: str = "function_calling", **kwargs: Any
    ) -> Any:
        return super().with_structured_output(schema, method=method, **kwargs)  # type: ignore[arg-type]
