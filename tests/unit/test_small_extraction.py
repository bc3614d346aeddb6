"""SmallModelExtractor: triple-line prompting and parsing, with a tiny replying model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, Field

from storygraph.errors import ModelError
from storygraph.ingest.triple_lines import (
    SmallModelExtractor,
    ground,
    parse_triples,
    triple_prompt,
)
from storygraph.models import Chunk

TEXT = "桃太郎は犬にきびだんごをやりました。犬は桃太郎の家来になりました。"


class LineModel(BaseChatModel):
    """Answers every call with `reply(messages)`; records the messages it saw."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    reply: Callable[[list[BaseMessage]], str | Exception]
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    kwargs: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "lines"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:  # fmt: skip
        self.seen.append(messages)
        self.kwargs.append(kwargs)
        out = self.reply(messages)
        if isinstance(out, Exception):
            raise out
        return ChatResult(generations=[ChatGeneration(message=AIMessage(out))])


def chunk(text: str = TEXT, index: int = 0) -> Chunk:
    return Chunk(f"d:{index}", "d", index, text, 0, len(text))


def test_reply_becomes_relations_with_evidence() -> None:
    reply = (
        "桃太郎 (Character) | GIVES | きびだんご (Object)\n"
        "犬 (Animal) | BECOMES_COMPANION_OF | 桃太郎 (Character)"
    )
    result = SmallModelExtractor(LineModel(reply=lambda _: reply)).extract(chunk(), "ja", [])
    triples = {(r.source, r.type, r.target) for r in result.relations}
    assert triples == {("桃太郎", "GIVES", "きびだんご"), ("犬", "BECOMES_COMPANION_OF", "桃太郎")}
    companion = next(r for r in result.relations if r.source == "犬")
    assert companion.source_type == "Animal" and companion.target_type == "Character"
    assert companion.evidence == "犬は桃太郎の家来になりました。"
    assert {e.name for e in result.entities} == {"桃太郎", "きびだんご", "犬"}


def test_prompt_keeps_fixed_prefix_and_puts_the_chunk_last() -> None:
    model = LineModel(reply=lambda _: "なし")
    extractor = SmallModelExtractor(model)
    extractor.extract(chunk("おじいさんは山へ行きました。", 0), "ja", [])
    extractor.extract(chunk(TEXT, 1), "ja", [])
    first, second = model.seen
    assert [type(m) for m in first] == [SystemMessage, HumanMessage, AIMessage, HumanMessage]
    assert [m.content for m in first[:3]] == [m.content for m in second[:3]]
    assert first[-1].content == "おじいさんは山へ行きました。" and second[-1].content == TEXT
    assert "|" in first[2].content


def test_english_prompt_is_english() -> None:
    prompt = triple_prompt("en")
    assert prompt.instructions.isascii() and "|" in prompt.example_triples
    assert not triple_prompt("ja").instructions.isascii()


@pytest.mark.parametrize(
    "garbage",
    ["", "なし", "I cannot help with that.", '{"triples": []}', "a | b", "| | |", "x|y|z|w"],
)
def test_garbage_is_an_empty_extraction(garbage: str) -> None:
    result = SmallModelExtractor(LineModel(reply=lambda _: garbage)).extract(chunk(), "ja", [])
    assert result.relations == [] and result.entities == []


def test_names_not_in_the_text_are_dropped_and_near_misses_repaired() -> None:
    text = "桃太郎は鬼が島へ行きました。"
    reply = (
        "ごんぞう (Character) | GOES_TO | 鬼が島 (Place)\n"  # copied from the example
        "桃太郎は (Character) | GOES_TO | 鬟が島 (Place)\n"  # particle glued on, kanji slip
    )
    nodes, rels = parse_triples(reply, text)
    assert [(r.source.id, r.type, r.target.id) for r in rels] == [("桃太郎", "GOES_TO", "鬼が島")]
    assert {n.id for n in nodes} == {"桃太郎", "鬼が島"}


def test_ground_rules() -> None:
    assert ground("犬", "犬が来た") == "犬"
    assert ground("猿", "犬が来た") == ""
    assert ground("Lion", "A LION slept") == "Lion"
    assert ground("ab", "") == "ab"  # no text: nothing to check against


def test_parsing_variants() -> None:
    reply = (
        "1. 桃太郎（Character）｜ goes to ｜ 鬼が島（Place）\n"
        "- 犬 | 家来になる | 桃太郎\n"
        "犬 | 家来になる | 桃太郎\n"  # duplicate
        "犬 | LIKES | 犬\n"  # self-loop
    )
    _, rels = parse_triples(reply, "桃太郎は鬼が島へ。犬は家来になる。")
    assert [(r.source.id, r.type, r.target.id, r.target.type) for r in rels] == [
        ("桃太郎", "GOES_TO", "鬼が島", "Place"),
        ("犬", "家来になる", "桃太郎", "Character"),  # first typed mention wins
    ]


def test_english_names_match_case_insensitively() -> None:
    text = "The Lion caught the Mouse. The Mouse gnawed the rope."
    _, rels = parse_triples("Lion (Animal) | CATCHES | Mouse (Animal)\nCat | EATS | Mouse", text)
    assert [(r.source.id, r.type, r.target.id) for r in rels] == [("Lion", "CATCHES", "Mouse")]


def test_a_failing_call_is_retried_once() -> None:
    calls: list[int] = []

    def flaky(_: list[BaseMessage]) -> str | Exception:
        calls.append(1)
        return TimeoutError("slow") if len(calls) == 1 else "犬 | MEETS | 桃太郎"

    result = SmallModelExtractor(LineModel(reply=flaky)).extract(chunk(), "ja", [])
    assert len(calls) == 2 and [r.type for r in result.relations] == ["MEETS"]


def test_two_failures_raise_a_model_error_naming_the_chunk() -> None:
    model = LineModel(reply=lambda _: ConnectionError("refused"))
    with pytest.raises(ModelError) as info:
        SmallModelExtractor(model).extract(chunk(index=4), "ja", [])
    assert "chunk 5" in str(info.value) and "could not be reached" in str(info.value)
    assert len(model.seen) == 2


def test_reply_length_is_capped_in_the_field_llama_cpp_reads() -> None:
    model = LineModel(reply=lambda _: "なし")
    SmallModelExtractor(model, max_tokens=99).extract(chunk(), "ja", [])
    assert model.kwargs[0]["extra_body"] == {"max_tokens": 99}


def test_sentences_are_not_names() -> None:
    text = "犬は「あけろ、あけろ。」と言いました。桃太郎の主従は鬼の兵隊を見ました。"
    reply = (
        "犬 | SAYS | あけろ、あけろ。\n"
        "犬 | SEES | 桃太郎の主従は見はりをしている鬼の兵隊\n"
        "犬 | MEETS | 鬼の兵隊"
    )
    _, rels = parse_triples(reply, text)
    assert [(r.source.id, r.type, r.target.id) for r in rels] == [("犬", "MEETS", "鬼の兵隊")]
