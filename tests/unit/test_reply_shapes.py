"""A structured reply of an unexpected shape is a named failure, never a silent "nothing".

Before, a reply without a tool call (the parser gives None) read as "the model saw no names" /
"the model picked no type", and a dict whose `names` was a bare string was read character by
character. Now each raises UnexpectedReply, and the fallback that catches it says so.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableLambda

from storygraph.llm.replies import UnexpectedReply
from storygraph.qa.question.entities import find_entities, llm_names
from storygraph.qa.retrieval.relation_types import select_relation_types
from tests.helpers.scripted_model import ScriptedChatModel

NAMES = [
    {"id": "桃太郎", "norm": "桃太郎", "type": "Character"},
    {"id": "桃", "norm": "桃", "type": "Object"},
    {"id": "鬼", "norm": "鬼", "type": "Character"},
]
TYPES = ["DEFEATS", "GOES_TO", "BORN_FROM"]


class ShapedReply(ScriptedChatModel):
    """A model whose structured output returns `reply` as it is (what a provider integration
    that parses to dicts, or a parser given no tool call, hands back)."""

    reply: Any = None

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Runnable[Any, Any]:
        return RunnableLambda(lambda _: self.reply)


def test_a_reply_without_a_tool_call_is_reported_not_read_as_no_names() -> None:
    model = ScriptedChatModel(faults={"entities": "garbage"})  # text, no tool call
    finding = find_entities("桃太郎を倒したのは誰？", NAMES, model, [], relation_types=TYPES)
    assert [e.node_id for e in finding.entities] == ["桃太郎"]  # the dictionary still works
    assert len(finding.warnings) == 1, finding.warnings
    assert "UnexpectedReply" in finding.warnings[0]
    assert "used dictionary matching only" in finding.warnings[0]
    assert finding.relation_types is None  # no pick: not "the model picked nothing"


@pytest.mark.parametrize(
    "reply",
    [{"names": "桃太郎"}, {"names": ["桃太郎", 7]}, "桃太郎", 42],
    ids=["bare-string", "not-strings", "text", "number"],
)
def test_names_of_an_unexpected_shape_raise(reply: Any) -> None:
    with pytest.raises(UnexpectedReply):
        llm_names("桃太郎を倒したのは誰？", ShapedReply(reply=reply), [])


def test_a_bare_string_of_names_is_not_read_character_by_character() -> None:
    model: BaseChatModel = ShapedReply(reply={"names": "桃太郎", "relation_types": []})
    finding = find_entities("鬼を倒したのは誰？", NAMES, model, [], relation_types=TYPES)
    assert "桃" not in [e.node_id for e in finding.entities]  # 桃 is not in the question
    assert any("UnexpectedReply" in w for w in finding.warnings), finding.warnings


def test_a_type_pick_without_a_tool_call_is_a_named_fallback() -> None:
    model = ScriptedChatModel(faults={"answer": "garbage"})  # RelationTypePick: text, no call
    selection = select_relation_types("桃太郎を倒したのは誰？", TYPES, llm=model, callbacks=[])
    assert selection.method == "lexical fallback, ranking only"
    assert "UnexpectedReply" in selection.reason
    assert selection.lexical_types == ("DEFEATS",)  # the lexical pick ("倒"), ranking only
    assert not selection.filtered
