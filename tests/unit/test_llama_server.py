"""The embedded server's launcher: llama-cpp-python's tool-calling chat handler HTML-escaped
every prompt (' became &#39;); through `storygraph.llm.llama_server` the model reads the text
as written (docs/ISSUES.md#llama-autoescape). The handler is the real one; only the model is a
stand-in that keeps the prompt it is given."""

from __future__ import annotations

from typing import Any

import pytest

from storygraph.llm.embedded_server import CHAT_FORMAT
from storygraph.llm.llama_server import jinja2_without_html_escaping

llama_chat_format = pytest.importorskip("llama_cpp.llama_chat_format")

TEXT = 'The story\'s fox said "Tom & Jerry" <twice>.'


class _Prompted(Exception):
    pass


class _KeepsPrompt:
    """Stands in for `llama_cpp.Llama`: the handler renders the prompt and hands it here."""

    def __init__(self) -> None:
        self.prompt = ""

    def create_completion(self, prompt: str, **_: Any) -> Any:
        self.prompt = prompt
        raise _Prompted


def _rendered(messages: list[dict[str, str]]) -> str:
    registry = llama_chat_format.LlamaChatCompletionHandlerRegistry()
    handler = registry.get_chat_completion_handler_by_name(CHAT_FORMAT)
    llama = _KeepsPrompt()
    with pytest.raises(_Prompted):
        handler(llama=llama, messages=messages)
    return llama.prompt


def test_the_tool_calling_handler_escapes_html_unless_launched_through_ours(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    messages = [{"role": "system", "content": "Answer."}, {"role": "user", "content": TEXT}]
    assert "&#39;" in _rendered(messages)  # the library as it is: the bug this launcher fixes
    monkeypatch.setattr(llama_chat_format, "jinja2", jinja2_without_html_escaping())
    prompt = _rendered(messages)
    assert TEXT in prompt
    assert "&#39;" not in prompt and "&#34;" not in prompt and "&amp;" not in prompt
