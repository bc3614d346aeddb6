"""The constrained model checks on parser facts, against an OpenAI-compatible HTTP server.

The real langchain-openai client built by the real factory talks to the scripted server, which
records every request body and, like llama.cpp, refuses a reply outside the request's grammar or
schema; only the model's words are scripted (yes when the asked fact is a scripted triple).
"""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest
from langchain_core.language_models import BaseChatModel

from storygraph.ingest.frames import ProposedFact
from storygraph.ingest.frames.check import (
    NO_TYPE,
    YES_NO_GRAMMAR,
    arguments_schema,
    check_fact,
    check_facts,
    fill_relation_types,
    pick_arguments,
    pick_relation_type,
)
from storygraph.llm.factory import ModelInfo, build_chat_model, model_info
from storygraph.llm.grammar import choice_grammar
from storygraph.settings import Settings
from tests.helpers.scripted_logic import Script
from tests.helpers.scripted_openai_server import RunningServer, start_in_thread

SENTENCE = "鬼の大将も、とうとう桃太郎に組みふせられて、降参しました。"
SCRIPT = Script(
    triples=(
        ("桃太郎", "Character", "DEFEATS", "鬼の大将", "Character"),
        ("犬", "Animal", "FOLLOWS", "桃太郎", "Character"),
    )
)


def _fact(subject: str, relation: str, obj: str, predicate: str = "組みふせる") -> ProposedFact:
    return ProposedFact(subject, relation, obj, predicate, SENTENCE, 0, "passive:に-が")


def _settings(**values: object) -> Settings:
    base: dict[str, object] = {
        "openai_api_key": None,
        "openai_base_url": None,
        "azure_openai_endpoint": None,
    }
    base.update(values)
    return Settings(_env_file=None, **base)  # type: ignore[arg-type, call-arg]


@pytest.fixture
def server() -> Iterator[RunningServer]:
    running = start_in_thread(SCRIPT, llama_cpp=True)
    yield running
    running.stop()


def _embedded(server: RunningServer) -> tuple[BaseChatModel, ModelInfo]:
    settings = _settings(llm_provider="embedded", llm_max_retries=0)
    llm = build_chat_model(settings, embedded_base_url=server.base_url)
    assert llm is not None
    return llm, model_info(settings)


def _remote(server: RunningServer) -> tuple[BaseChatModel, ModelInfo]:
    settings = _settings(
        llm_provider="openai_compatible",
        openai_base_url=server.base_url,
        llm_model="remote",
        llm_max_retries=0,
    )
    llm = build_chat_model(settings)
    assert llm is not None
    return llm, model_info(settings)


def test_yes_no_check_sends_a_one_word_grammar_to_the_embedded_server(
    server: RunningServer,
) -> None:
    llm, info = _embedded(server)
    verdict = check_fact(_fact("桃太郎", "DEFEATS", "鬼の大将"), llm, info)
    assert verdict.answer == "yes"
    body = server.requests[-1]
    assert body["grammar"] == YES_NO_GRAMMAR == 'root ::= "yes" | "no"'
    assert body["max_tokens"] == 3
    assert "Fact: 桃太郎 defeats 鬼の大将" in body["messages"][-1]["content"]


def test_the_check_drops_a_planted_reversed_fact(server: RunningServer) -> None:
    """The embedded model once read this sentence backwards; the check must drop that reading."""
    llm, info = _embedded(server)
    right = _fact("桃太郎", "DEFEATS", "鬼の大将")
    planted = _fact("鬼の大将", "DEFEATS", "桃太郎")
    checked = check_facts([right, planted], llm, info)
    assert checked.kept == [right]
    assert checked.dropped == [planted]
    assert checked.unclear == []
    assert "1 kept, 1 rejected" in checked.describe()
    assert all(body["grammar"] == YES_NO_GRAMMAR for body in server.requests)


def test_relation_pick_is_limited_to_the_table_types_by_grammar(server: RunningServer) -> None:
    llm, info = _embedded(server)
    types = ["DEFEATS", "FOLLOWS", "GIVES"]
    picked = pick_relation_type(_fact("桃太郎", "", "鬼の大将"), types, llm, info)
    assert picked == "DEFEATS"
    body = server.requests[-1]
    assert body["grammar"] == choice_grammar([*types, NO_TYPE])
    assert body["grammar"] == 'root ::= "DEFEATS" | "FOLLOWS" | "GIVES" | "NONE"'
    none = pick_relation_type(_fact("桃太郎", "", "犬"), types, llm, info)
    assert none is None  # the script has no type for that pair: the model said NONE


def test_argument_pick_sends_a_json_object_schema_with_the_chunk_names(
    server: RunningServer,
) -> None:
    llm, info = _embedded(server)
    names = ["鬼の大将", "桃太郎", "宝物"]
    pair = pick_arguments(SENTENCE, "組みふせる", names, llm, info)
    assert pair == ("桃太郎", "鬼の大将")
    fmt = server.requests[-1]["response_format"]
    assert fmt == {"type": "json_object", "schema": arguments_schema(names)}
    assert fmt["schema"]["properties"]["subject"]["enum"] == names


def test_the_server_refuses_a_reply_outside_the_grammar(server: RunningServer) -> None:
    """The double enforces constraints, so the tests above would fail on a lost grammar."""
    llm, _ = _embedded(server)
    bound = llm.bind(extra_body={"grammar": 'root ::= "maybe"', "max_tokens": 3})
    with pytest.raises(openai.InternalServerError, match="not one of the grammar"):
        bound.invoke(f"Answer with one word: yes or no.\nFact: 桃太郎 defeats 鬼の大将\n{SENTENCE}")


def test_other_providers_get_a_short_reply_and_no_grammar(server: RunningServer) -> None:
    llm, info = _remote(server)
    assert info.provider == "openai_compatible"
    verdict = check_fact(_fact("鬼の大将", "DEFEATS", "桃太郎"), llm, info)
    assert verdict.answer == "no"
    body = server.requests[-1]
    assert "grammar" not in body
    assert (body.get("max_completion_tokens") or body.get("max_tokens")) == 3
    pair = pick_arguments(SENTENCE, "組みふせる", ["桃太郎", "鬼の大将"], llm, info)
    assert pair == ("桃太郎", "鬼の大将")
    assert server.requests[-1]["response_format"] == {"type": "json_object"}


def test_untyped_facts_get_a_picked_type_or_are_set_apart(server: RunningServer) -> None:
    llm, info = _embedded(server)
    typed = _fact("犬", "FOLLOWS", "桃太郎", predicate="ついて行く")
    unknown = _fact("桃太郎", "", "鬼の大将")  # the script knows DEFEATS for this pair
    unknowable = _fact("桃太郎", "", "犬")  # nothing scripted: the model says NONE
    result = fill_relation_types([typed, unknown, unknowable], llm, info)
    assert [(f.subject, f.relation, f.object) for f in result.facts] == [
        ("犬", "FOLLOWS", "桃太郎"),
        ("桃太郎", "DEFEATS", "鬼の大将"),
    ]
    assert result.picked == 1
    assert result.untyped == [unknowable]
    assert len(server.requests) == 2  # the typed fact cost no call
    assert all('"DEFEATS"' in body["grammar"] for body in server.requests)
