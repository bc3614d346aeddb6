"""llama-cpp-python's OpenAI-compatible server: prompts reach the model as written, and a read
prompt prefix is kept per language.

`python -m storygraph.llm.llama_server ARGS` is `python -m llama_cpp.server ARGS` with three
changes, and two guards: Python's faulthandler is on, so a fatal signal leaves its name in the
log (storygraph.crashes reads it), and a llama.cpp built with AMX on a CPU with AMX loads the
model without extra buffer types (`guard_amx`; that build crashes at the first answer).

**Prompts as written.** The chat handler the embedded server runs (`chatml-function-calling`,
the one that honours tool calls; see `embedded_server.CHAT_FORMAT`) renders the conversation
with a Jinja environment built as `autoescape=select_autoescape(["html", "xml"])`, and for a
template made from a string that turns HTML escaping *on*: every ' " & < > of a prompt
reached the model as &#39; &#34; &amp; &lt; &gt; (llama-cpp-python 0.3.36). The model read
English stories' quotes and apostrophes as entities, and wrote them back: "The story&#39;s
sentences do not say." (docs/ISSUES.md#llama-autoescape). Here that module's `jinja2` is a
copy whose `select_autoescape` never escapes.

**A state per prompt family.** The model is `PrefixKeepingLlama`: before each prompt it keeps
and restores model states as `storygraph.llm.prefix_states` decides, so a question in the other
language than the last one restores that language's read instructions and examples instead of
reading them again (docs/ISSUES.md#prompt-prefix). Each keep and restore is a line in the
server's log.

**The written tokens' probabilities.** A streamed request that asks for `logprobs` gets each
written token's log probability, without loading the model with `logits_all`
(storygraph.llm.token_logprobs): the answer's confidence reads them (storygraph.qa.verify).
"""

from __future__ import annotations

import ctypes
import faulthandler
import runpy
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import jinja2

from storygraph.llm.cpu_features import build_has_amx, cpu_flags, has_amx
from storygraph.llm.prefix_states import PrefixStates
from storygraph.llm.token_logprobs import logprob_keeping


def _never_escape(*_args: Any, **_kwargs: Any) -> Any:
    """`jinja2.select_autoescape`'s stand-in: a chooser that escapes no template."""
    return lambda _template_name=None: False


def jinja2_without_html_escaping() -> SimpleNamespace:
    """The `jinja2` module as llama-cpp-python's chat handlers use it, minus the escaping."""
    names = {k: v for k, v in vars(jinja2).items() if not k.startswith("__")}
    return SimpleNamespace(**{**names, "select_autoescape": _never_escape})


def _log(message: str) -> None:
    print(f"storygraph prefix states: {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class KeptState:
    """A model's state after reading `tokens`: llama.cpp's own bytes (the KV cache of those
    tokens, ~15 MB for 500; the last logits). Not llama-cpp-python's `LlamaState`: saving that
    copies the model's whole logits table (512 rows of 151,936 floats, ~1.1 s on two cores) and
    restoring it writes it all back, where a restored state re-reads its last token anyway."""

    tokens: list[int]
    data: bytes


def capture_state(llama: Any) -> KeptState:
    """The state `llama` (llama-cpp-python's `Llama`) holds now."""
    import llama_cpp

    size = llama_cpp.llama_state_get_size(llama._ctx.ctx)
    buffer = (ctypes.c_uint8 * int(size))()
    written = int(llama_cpp.llama_state_get_data(llama._ctx.ctx, buffer, size))
    if written > size:
        raise RuntimeError("llama.cpp wrote more state than it said it would")
    return KeptState(llama._input_ids.tolist(), ctypes.string_at(buffer, written))


def restore_state(llama: Any, state: KeptState) -> None:
    """Give `llama` the state kept in `state`; its next prompt re-reads the last kept token (as
    after llama-cpp-python's own `load_state`), which sets the logits afresh."""
    import llama_cpp

    buffer = (ctypes.c_uint8 * len(state.data)).from_buffer_copy(state.data)
    if llama_cpp.llama_state_set_data(llama._ctx.ctx, buffer, len(state.data)) != len(state.data):
        raise RuntimeError("llama.cpp did not take the kept state")
    llama.input_ids[: len(state.tokens)] = state.tokens
    llama.n_tokens = len(state.tokens)
    llama._requires_eval = True


def prefix_keeping(
    llama_class: type,
    capture: Callable[[Any], KeptState] = capture_state,
    restore: Callable[[Any, KeptState], None] = restore_state,
) -> type:
    """`llama_class` (llama-cpp-python's `Llama`) whose `generate` first applies a
    `PrefixStates` plan: keep the state it holds (`capture`), restore a kept one (`restore`)."""

    class PrefixKeepingLlama(llama_class):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.prefix_states: PrefixStates[KeptState] = PrefixStates()

        def generate(self, tokens: Any, *args: Any, **kwargs: Any) -> Iterator[int]:
            tokens = list(tokens)
            current = self._input_ids.tolist()
            plan = self.prefix_states.plan(tokens, current)
            try:
                if plan.keep:
                    started = time.perf_counter()
                    self.prefix_states.keep(current, capture(self))
                    _log(f"kept {len(current)} tokens ({time.perf_counter() - started:.2f} s)")
                if plan.restore is not None:
                    started = time.perf_counter()
                    restore(self, plan.restore)
                    _log(
                        f"restored {len(plan.restore.tokens)} tokens "
                        f"({time.perf_counter() - started:.2f} s)"
                    )
            except RuntimeError as exc:  # llama.cpp refused the state: read the prompt whole
                self.reset()
                _log(f"failed ({exc}); reading the whole prompt")
            return super().generate(tokens, *args, **kwargs)  # type: ignore[no-any-return]

    PrefixKeepingLlama.__name__ = PrefixKeepingLlama.__qualname__ = "PrefixKeepingLlama"
    return PrefixKeepingLlama


def without_amx_buffers(llama_cpp_module: Any) -> None:
    """Have every model loaded from now on keep its weights in the plain CPU buffer
    (`use_extra_bufts` off): no AMX buffer, and no repacked one either (slower)."""
    default_params = llama_cpp_module.llama_model_default_params

    def params() -> Any:
        chosen = default_params()
        chosen.use_extra_bufts = False
        return chosen

    llama_cpp_module.llama_model_default_params = params


def guard_amx(system_info: str, flags: frozenset[str], llama_cpp_module: Any) -> bool:
    """A llama.cpp built with AMX on a CPU with AMX crashes at the first answer (module
    storygraph.llm.cpu_features): load the model without the extra buffers, and say so in the
    log. True when it did. (`make model` rebuilds such an install without AMX.)"""
    if not (build_has_amx(system_info) and has_amx(flags)):
        return False
    without_amx_buffers(llama_cpp_module)
    print(
        "storygraph: this llama.cpp was built with AMX, which crashes on this CPU; loading the "
        "model without extra buffer types (slower). `make model` rebuilds it without AMX.",
        file=sys.stderr,
        flush=True,
    )
    return True


def main(argv: list[str]) -> None:
    faulthandler.enable()  # a fatal signal leaves its name in the log (storygraph.crashes)
    import llama_cpp
    import llama_cpp.llama_cpp as llama_cpp_lib
    from llama_cpp import llama_chat_format

    guard_amx(llama_cpp.llama_print_system_info().decode(), cpu_flags(), llama_cpp_lib)

    llama_chat_format.jinja2 = jinja2_without_html_escaping()  # type: ignore[assignment]
    # llama_cpp.server.model builds its model as `llama_cpp.Llama(...)`, looked up at load time
    llama_cpp.Llama = logprob_keeping(prefix_keeping(llama_cpp.Llama))  # type: ignore[misc]
    sys.argv = ["llama_cpp.server", *argv]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
