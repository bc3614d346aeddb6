"""Relation-type selection: the model's pick, the lexical fallback, and never dropping all."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from storygraph.models import Fact
from storygraph.qa.retrieval.relation_types import (
    apply_selection,
    lexical_pick,
    select_relation_types,
)
from tests.helpers.scripted_model import ScriptedChatModel

SEED_TYPES = [
    "DEFEATS",
    "FIGHTS",
    "SURRENDERS_TO",
    "CONFRONTS",
    "GOES_TO",
    "OWNS",
    "LIVES_IN",
    "RETURNS_TO",
    "SHARES_WITH",
    "RAISES",
    "BECOMES_COMPANION_OF",
    "MEETS",
]


class PickingModel(BaseChatModel):
    """Answers the RelationTypePick tool with fixed types (or raises), recording prompts."""

    types: list[str] = Field(default_factory=list)
    error: str = ""
    prompts: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "picking"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, BaseMessage]:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.prompts.append(str(messages[-1].content))
        if self.error:
            raise TimeoutError(self.error)
        call = {"name": "RelationTypePick", "args": {"types": self.types}, "id": "c1"}
        message = AIMessage(content="", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=message)])


def test_lexical_pick_widens_companions_to_meeting() -> None:
    assert lexical_pick("桃太郎の仲間は誰？", SEED_TYPES) == ["BECOMES_COMPANION_OF", "MEETS"]


def test_lexical_pick_for_a_fight_keeps_the_conflict_field_only() -> None:
    picked = lexical_pick("Who defeated Momotaro?", SEED_TYPES)
    assert set(picked) == {"DEFEATS", "FIGHTS", "SURRENDERS_TO", "CONFRONTS"}


def test_lexical_pick_ignores_words_inside_entity_names() -> None:
    types = ["OWNS", "MEETS"]
    question = "宝持ちの長者は誰に会った？"  # 持ち (OWN) is part of the name, 会っ (MEET) is not
    assert "OWNS" in lexical_pick(question, types)
    assert lexical_pick(question, types, ["宝持ちの長者"]) == ["MEETS"]


def test_without_any_fitting_word_every_type_is_kept() -> None:
    chosen = select_relation_types("これは何？", SEED_TYPES, llm=None, callbacks=[])
    assert not chosen.filtered
    assert chosen.types == SEED_TYPES


def test_model_pick_is_joined_with_the_lexical_pick_and_unknown_types_are_ignored() -> None:
    model = PickingModel(types=["raises", "NOT_A_TYPE", "`SHARES_WITH`"])
    chosen = select_relation_types("桃太郎の仲間は誰？", SEED_TYPES, llm=model, callbacks=[])
    assert chosen.filtered and chosen.method == "llm + lexical"
    assert chosen.types == ["SHARES_WITH", "RAISES", "BECOMES_COMPANION_OF", "MEETS"]
    assert "- MEETS" in model.prompts[0] and "桃太郎の仲間は誰？" in model.prompts[0]


def test_a_failing_model_falls_back_to_the_lexical_pick_and_says_so() -> None:
    model = PickingModel(error="slow")
    chosen = select_relation_types("Who defeated Momotaro?", SEED_TYPES, llm=model, callbacks=[])
    assert chosen.method == "lexical fallback, ranking only" and "TimeoutError" in chosen.reason
    # Words alone never filter: every type stays, the lexical pick is kept for ranking.
    assert not chosen.filtered and chosen.types == SEED_TYPES
    assert "DEFEATS" in chosen.lexical_types and "LIVES_IN" not in chosen.lexical_types


def test_an_empty_model_pick_leaves_the_lexical_pick() -> None:
    # The shared scripted model answers tools it does not know with empty arguments.
    chosen = select_relation_types(
        "おじいさんは誰と住んでいる？", SEED_TYPES, llm=ScriptedChatModel(), callbacks=[]
    )
    assert chosen.lexical_types == ("LIVES_IN",) and not chosen.filtered
    assert "picked no listed type" in chosen.method


def test_applying_a_selection_never_drops_every_candidate() -> None:
    facts = [Fact("a", "GOES_TO", "b"), Fact("a", "OWNS", "c")]
    chosen = select_relation_types(
        "Who defeated Momotaro?", SEED_TYPES, llm=None, callbacks=[], model_pick=["DEFEATS"]
    )
    kept, dropped, note = apply_selection(facts, chosen)
    assert kept == facts and dropped == [] and "kept them all" in note


def test_words_alone_never_filter() -> None:
    facts = [Fact("鬼", "DEFEATS", "桃太郎"), Fact("桃太郎", "RETURNS_TO", "村")]
    chosen = select_relation_types("桃太郎を倒したのは誰？", SEED_TYPES, llm=None, callbacks=[])
    assert not chosen.filtered and "DEFEATS" in chosen.lexical_types
    assert apply_selection(facts, chosen) == (facts, [], "")


def test_applying_a_selection_drops_the_other_types() -> None:
    facts = [Fact("鬼", "DEFEATS", "桃太郎"), Fact("桃太郎", "RETURNS_TO", "村")]
    chosen = select_relation_types(
        "桃太郎を倒したのは誰？", SEED_TYPES, llm=None, callbacks=[], model_pick=["DEFEATS"]
    )
    kept, dropped, note = apply_selection(facts, chosen)
    assert [f.type for f in kept] == ["DEFEATS"]
    assert [f.type for f in dropped] == ["RETURNS_TO"] and note == ""
