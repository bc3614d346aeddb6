"""llama-cpp-python's OpenAI-compatible server, with prompts reaching the model as written.

`python -m storygraph.llm.llama_server ARGS` is `python -m llama_cpp.server ARGS` with one
fix. The chat handler the embedded server runs (`chatml-function-calling`, the one that honours
tool calls; see `embedded_server.CHAT_FORMAT`) renders the conversation with a Jinja
environment built as `autoescape=select_autoescape(["html", "xml"])`, and for a template made
from a string that turns HTML escaping *on*: every ' " & < > of a prompt reached the model as
&#39; &#34; &amp; &lt; &gt; (llama-cpp-python 0.3.36). The model read English stories' quotes
and apostrophes as entities, and wrote them back: "The story&#39;s sentences do not say."
(docs/ISSUES.md §22). Here that module's `jinja2` is a copy whose `select_autoescape` never
escapes; nothing else changes.
"""

from __future__ import annotations

import runpy
import sys
from types import SimpleNamespace
from typing import Any

import jinja2


def _never_escape(*_args: Any, **_kwargs: Any) -> Any:
    """`jinja2.select_autoescape`'s stand-in: a chooser that escapes no template."""
    return lambda _template_name=None: False


def jinja2_without_html_escaping() -> SimpleNamespace:
    """The `jinja2` module as llama-cpp-python's chat handlers use it, minus the escaping."""
    names = {k: v for k, v in vars(jinja2).items() if not k.startswith("__")}
    return SimpleNamespace(**{**names, "select_autoescape": _never_escape})


def main(argv: list[str]) -> None:
    from llama_cpp import llama_chat_format

    llama_chat_format.jinja2 = jinja2_without_html_escaping()  # type: ignore[assignment]
    sys.argv = ["llama_cpp.server", *argv]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
