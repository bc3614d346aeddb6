"""eval/self_check_replay.py's `--japanese-prompt`: which answers it asks again, and the messages
it asks with (made-up answers; no model)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from storygraph.qa.verify.evidence import Evidence

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def replay() -> ModuleType:
    spec = importlib.util.spec_from_file_location("scr", ROOT / "eval" / "self_check_replay.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_only_a_japanese_answer_over_japanese_sentences_is_asked_again(replay: ModuleType) -> None:
    told = ("猿が蟹に柿を投げつけました。",)
    assert replay.japanese(Evidence("猿は蟹に何を投げた？", "柿です。[1]", "柿", cited=told))
    assert not replay.japanese(Evidence("猿は蟹に何を投げた？", "柿です。", "柿"))  # cites none
    english = ("The monkey threw a persimmon at the crab.",)
    assert not replay.japanese(Evidence("What did the monkey throw?", "A persimmon.", "persimmon",
                                        cited=english))  # fmt: skip


def test_the_variant_prompt_is_filled_with_the_cited_sentences_and_the_bare_reply(
    replay: ModuleType,
) -> None:
    template = (ROOT / "eval" / "prompts" / "self_check_ja.txt").read_text(encoding="utf-8")
    evidence = Evidence(
        "猿は蟹に何を投げた？",
        "青い柿です。[1]",
        "青い柿",
        cited=("猿が蟹に青い柿を投げつけました。",),
    )
    system, user = replay.prompted(template)(evidence)
    assert "yes か no" in system.content
    assert "猿が蟹に青い柿を投げつけました。" in user.content
    assert "答えの案：青い柿です。" in user.content  # the reply without its source mark
    assert "{" not in user.content
