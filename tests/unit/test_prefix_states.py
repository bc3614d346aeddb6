"""A model state kept per prompt family (storygraph.llm.prefix_states), and the embedded server's
model applying it (storygraph.llm.llama_server.prefix_keeping). The model is a stand-in for
llama-cpp-python's `Llama` that holds tokens as its "state" (the model boundary)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from storygraph.llm.llama_server import KeptState, prefix_keeping
from storygraph.llm.prefix_states import PrefixStates, common_start

JA = list(range(1000, 1700))  # a language's fixed prefix: 700 tokens
EN = list(range(5000, 5700))
HEAD = [1, 2, 3]  # the chat template's start, shared by both


def prompt(prefix: list[int], question: int) -> list[int]:
    return HEAD + prefix + [question] * 40


def test_common_start() -> None:
    assert common_start([1, 2, 3], [1, 2, 4, 5]) == 2
    assert common_start([], [1]) == 0
    assert common_start([1, 2], [1, 2]) == 2


def test_questions_of_one_language_keep_nothing_and_restore_nothing() -> None:
    states: PrefixStates[str] = PrefixStates()
    plan = states.plan(prompt(JA, 7), prompt(JA, 6))
    assert not plan.keep and plan.restore is None


def test_a_switch_keeps_the_first_language_and_a_switch_back_restores_it() -> None:
    states: PrefixStates[str] = PrefixStates()
    ja_done = [*prompt(JA, 6), 9, 9]
    plan = states.plan(prompt(EN, 7), ja_done)
    assert plan.keep and plan.restore is None  # nothing kept for English yet: read it
    states.keep(ja_done, "ja-state")
    en_done = [*prompt(EN, 7), 8]
    plan = states.plan(prompt(JA, 10), en_done)
    assert plan.keep and plan.restore == "ja-state"
    states.keep(en_done, "en-state")
    # both kept: switching again keeps nothing more
    plan = states.plan(prompt(EN, 11), prompt(JA, 10))
    assert not plan.keep and plan.restore == "en-state"
    assert len(states) == 2


def test_a_short_context_is_not_kept_and_a_short_shared_start_not_restored() -> None:
    states: PrefixStates[str] = PrefixStates(min_prefix=256)
    assert not states.plan(prompt(EN, 7), HEAD + [5] * 100).keep
    states.keep(HEAD + JA[:200], "short")
    assert states.plan(HEAD + JA[:200] + [4], [*HEAD, 0]).restore is None


def test_the_least_recently_used_state_goes_first() -> None:
    states: PrefixStates[str] = PrefixStates(max_states=2)
    a, b, c = [[n] * 300 for n in (1, 2, 3)]
    states.keep(a, "a")
    states.keep(b, "b")
    assert states.plan([*a, 0], [9]).restore == "a"  # a used: b is now the oldest
    states.keep(c, "c")
    assert states.plan([*b, 0], [9]).restore is None
    assert states.plan([*a, 0], [9]).restore == "a"


class _TokensModel:
    """Stands in for `llama_cpp.Llama`: its state is the tokens it holds; `read` counts the
    tokens it had to read for each prompt (what the prefix cache did not cover)."""

    def __init__(self) -> None:
        self.held: list[int] = []
        self.read: list[int] = []

    @property
    def _input_ids(self) -> Any:
        return _Ids(self.held)

    def reset(self) -> None:
        self.held = []

    def generate(self, tokens: list[int], **_: Any) -> Iterator[int]:
        self.read.append(len(tokens) - common_start(self.held, tokens))
        self.held = list(tokens)
        yield 42


class _Ids(list[int]):
    def tolist(self) -> list[int]:
        return list(self)


def _capture(model: Any) -> KeptState:
    return KeptState(list(model.held), b"state")


def _restore(model: Any, state: KeptState) -> None:
    model.held = list(state.tokens)


def _refuse(model: Any, state: KeptState) -> None:
    raise RuntimeError("llama.cpp did not take the kept state")


def _ask(model: Any, *prompts: list[int]) -> None:
    for tokens in prompts:
        assert list(model.generate(tokens)) == [42]


def test_the_server_model_reads_a_language_s_prefix_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    model = prefix_keeping(_TokensModel, _capture, _restore)()
    # Japanese twice, English, back to Japanese (restored, not read), English again
    _ask(model, prompt(JA, 1), prompt(JA, 2), prompt(EN, 3), prompt(JA, 4), prompt(EN, 5))
    assert model.read == [743, 40, 740, 40, 40]
    assert len(model.prefix_states) == 2  # one per language
    log = capsys.readouterr().err
    assert "kept 743 tokens" in log and "restored 743 tokens" in log


def test_a_state_llama_cpp_refuses_means_reading_the_whole_prompt(
    capsys: pytest.CaptureFixture[str],
) -> None:
    model = prefix_keeping(_TokensModel, _capture, _refuse)()
    _ask(model, prompt(JA, 1), prompt(EN, 2), prompt(JA, 3))
    assert model.read == [743, 740, 743]
    assert "failed (llama.cpp did not take the kept state); reading the whole prompt" in (
        capsys.readouterr().err
    )
