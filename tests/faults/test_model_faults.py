"""Model faults during ingest and questions: a clear message, a retry where it helps, and a graph
that is exactly as before (a failed document leaves nothing) or exactly as a clean run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from storygraph.llm.factory import build_chat_model
from storygraph.qa.pipeline.factory import build_engine
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.services import Services
from tests.faults.conftest import SEED_JA, ServicesFactory, make_settings, snapshot
from tests.helpers.faulty_models import (
    REPLY_FAULTS,
    CountingFaultModel,
    EnglishAnswerModel,
    FlakyModel,
    ReplyFaultModel,
)
from tests.helpers.flaky_openai_server import FlakyOpenAIServer
from tests.helpers.scripted_model import ScriptedChatModel

STORY = (SEED_JA + "桃太郎は鬼が島へ行きました。鬼は鬼が島に住んでいました。" * 12).encode()
_REQUEST = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


def _status_error(cls: type[openai.APIStatusError], code: int) -> openai.APIStatusError:
    response = httpx.Response(code, request=_REQUEST, json={"error": {"message": "busy"}})
    return cls("busy", response=response, body=None)


EXCEPTIONS: dict[str, tuple[BaseException, str]] = {
    # case id: (raised by the model on every extraction call, word the message must contain)
    "timeout-builtin": (TimeoutError("read timed out"), "timed out"),
    "timeout-openai": (openai.APITimeoutError(request=_REQUEST), "timed out"),
    "timeout-httpx": (httpx.ReadTimeout("read timed out", request=_REQUEST), "timed out"),
    "connection-refused": (openai.APIConnectionError(request=_REQUEST), "reach"),
    "rate-limited-429": (_status_error(openai.RateLimitError, 429), "rate"),
    "server-error-500": (_status_error(openai.InternalServerError, 500), "server error"),
}

PROGRAMMING_ERRORS: dict[str, Exception] = {
    "type-error": TypeError("unsupported operand type(s) for +: 'int' and 'str'"),
    "key-error": KeyError("nodes"),
    "attribute-error": AttributeError("'NoneType' object has no attribute 'id'"),
    "runtime-error": RuntimeError("boom"),
}


def _ingest(services: Services, name: str = "story.txt", data: bytes = STORY) -> Any:
    return services.ingestor().ingest_bytes(name, data)


@pytest.mark.parametrize("case", sorted(EXCEPTIONS))
def test_extraction_exception_fails_document_and_keeps_graph(
    make_services: ServicesFactory, seeded: Services, case: str
) -> None:
    error, word = EXCEPTIONS[case]
    model = ScriptedChatModel(faults={"extract": error})
    services = make_services(model, graph_name=seeded.settings.graph_name)
    before = snapshot(services.store)
    report = _ingest(services)
    assert report.status == "failed"
    assert word.lower() in report.message.lower(), report.message
    assert "chunk 1" in report.message and " — " in report.message
    assert "upload it again" in report.message
    assert snapshot(services.store) == before
    assert services.store.pending_document_ids() == []
    assert model.calls.count("extract") == 2  # one retry, then the document is abandoned


@pytest.mark.parametrize("case", sorted(PROGRAMMING_ERRORS))
def test_a_programming_error_is_not_reported_as_the_model_failing(
    make_services: ServicesFactory, seeded: Services, case: str
) -> None:
    """A bug of ours raised during a model call propagates as itself, at once: it is neither
    retried nor dressed up as "the model failed". Nothing is written."""
    error = PROGRAMMING_ERRORS[case]
    model = ScriptedChatModel(faults={"extract": error})
    services = make_services(model, graph_name=seeded.settings.graph_name)
    before = snapshot(services.store)
    with pytest.raises(type(error)) as raised:
        _ingest(services)
    assert raised.value is error
    assert model.calls.count("extract") == 1  # not retried
    assert snapshot(services.store) == before
    assert services.store.pending_document_ids() == []


@pytest.mark.parametrize("fault", [*REPLY_FAULTS, "garbage"])
def test_unusable_model_reply(make_services: ServicesFactory, seeded: Services, fault: str) -> None:
    """A reply the transformer cannot read fails the document (empty is a valid answer)."""
    if fault == "garbage":
        model: ScriptedChatModel = ScriptedChatModel(faults={"extract": "garbage"})
    else:
        model = ReplyFaultModel(replies={"extract": fault})
    services = make_services(model, graph_name=seeded.settings.graph_name)
    before = snapshot(services.store)
    report = _ingest(services)
    after = snapshot(services.store)
    if fault == "empty":
        assert report.status == "added"
        assert any("extracted nothing" in w for w in report.warnings)
        assert after["graph"] == before["graph"]
        assert after["stats"]["documents"] == before["stats"]["documents"] + 1
        return
    assert report.status == "failed", report.message
    assert "structured" in report.message.lower(), report.message
    assert after == before
    assert model.calls.count("extract") == 2  # retried once


def test_transient_fault_is_retried_and_result_equals_clean_run(
    make_services: ServicesFactory,
) -> None:
    clean = make_services()
    assert _ingest(clean).status == "added"
    flaky = make_services(FlakyModel(fail_times={"extract": 1}, error=TimeoutError("slow")))
    report = _ingest(flaky)
    assert report.status == "added", report.message
    assert snapshot(flaky.store)["graph"] == snapshot(clean.store)["graph"]


def test_fault_in_the_middle_of_a_document_leaves_nothing(
    make_services: ServicesFactory,
) -> None:
    model = CountingFaultModel(fail_on={"extract": 3}, error=ConnectionError("gone"))
    services = make_services(model)
    before = snapshot(services.store)
    report = _ingest(services)
    assert report.status == "failed" and "chunk" in report.message
    assert model.seen["extract"] >= 3
    assert snapshot(services.store) == before


# --- the real langchain-openai client against a local HTTP server --------------------------


def _openai_model(base_url: str, *, retries: int, timeout: float = 10.0) -> Any:
    settings = make_settings(
        Path("unused"),
        llm_provider="openai_compatible",
        openai_base_url=base_url,
        llm_model="flaky-model",
        llm_max_retries=retries,
        llm_timeout_s=timeout,
    )
    return build_chat_model(settings)


def test_real_client_retries_429_then_500_then_succeeds(
    make_services: ServicesFactory,
) -> None:
    clean = make_services()
    assert _ingest(clean, data=SEED_JA.encode()).status == "added"
    with FlakyOpenAIServer([429, 500]) as server:
        services = make_services(_openai_model(server.base_url, retries=2))
        report = _ingest(services, data=SEED_JA.encode())
    assert report.status == "added", report.message
    assert server.statuses[:3] == [429, 500, 200]
    assert snapshot(services.store)["graph"] == snapshot(clean.store)["graph"]


def test_real_client_gives_up_on_persistent_429(make_services: ServicesFactory) -> None:
    with FlakyOpenAIServer([429] * 10) as server:
        services = make_services(_openai_model(server.base_url, retries=1))
        before = snapshot(services.store)
        report = _ingest(services, data=SEED_JA.encode())
    assert report.status == "failed"
    assert "rate" in report.message.lower(), report.message
    assert snapshot(services.store) == before
    assert len(server.requests) == 4  # (1 try + 1 retry) x 2 attempts of the extractor


def test_real_client_timeout(make_services: ServicesFactory) -> None:
    with FlakyOpenAIServer(["hang", "hang"], hang_s=1.5) as server:
        services = make_services(_openai_model(server.base_url, retries=0, timeout=0.3))
        before = snapshot(services.store)
        report = _ingest(services, data=SEED_JA.encode())
    assert report.status == "failed"
    assert "timed out" in report.message.lower(), report.message
    assert "STORYGRAPH_LLM_TIMEOUT_S" in report.message
    assert snapshot(services.store) == before


def test_model_server_killed_mid_ingest(make_services: ServicesFactory) -> None:
    """The server answers two chunks, then dies mid-request: nothing stored; a restarted
    server ingests the same upload to the same graph as a clean run."""
    clean = make_services()
    assert _ingest(clean).status == "added"
    with FlakyOpenAIServer([200, 200, "drop"]) as server:
        services = make_services(_openai_model(server.base_url, retries=1))
        before = snapshot(services.store)
        report = _ingest(services)
    assert report.status == "failed"
    assert "reach" in report.message.lower(), report.message
    assert snapshot(services.store) == before
    with FlakyOpenAIServer() as restarted:
        again = make_services(
            _openai_model(restarted.base_url, retries=1),
            graph_name=services.settings.graph_name,
        )
        assert _ingest(again).status == "added"
    assert snapshot(again.store)["graph"] == snapshot(clean.store)["graph"]


# --- question time -----------------------------------------------------------------------------


QA_FAULTS: dict[str, dict[str, Any]] = {
    "rerank-timeout": {"rerank": TimeoutError("slow")},
    "rerank-garbage": {"rerank": "garbage"},
    "entities-timeout": {"entities": TimeoutError("slow")},
    "entities-garbage": {"entities": "garbage"},
    "answer-connection-error": {"answer": ConnectionError("gone")},
}


@pytest.mark.parametrize("case", sorted(QA_FAULTS))
def test_question_survives_model_fault(seeded: Services, case: str) -> None:
    before = snapshot(seeded.store)
    model = ScriptedChatModel(faults=QA_FAULTS[case])
    engine = build_engine(seeded.store, model, seeded.info)
    answer = engine.ask("桃太郎はどこで生まれましたか？", QAOptions(top_k=5))
    assert answer.answer.strip()
    assert "桃太郎" in [e.node_id for e in answer.entities]
    assert answer.kept_facts, answer.warnings
    if case.startswith(("rerank", "answer")):
        assert answer.warnings, "a model fault must be flagged"
    if case == "answer-connection-error":  # the exception's message, not only its type
        assert "the model could not answer (ConnectionError: gone)" in answer.warnings[-1]
    assert snapshot(seeded.store) == before


def test_wrong_language_answer_is_flagged(seeded: Services) -> None:
    engine = build_engine(seeded.store, EnglishAnswerModel(), seeded.info)
    answer = engine.ask("桃太郎は誰に育てられましたか？", QAOptions(top_k=5))
    assert any("language" in w.lower() for w in answer.warnings), answer.warnings


def test_a_timed_out_call_the_client_retried_counts_as_two_llm_calls(
    make_services: ServicesFactory,
) -> None:
    clean = make_services()
    clean_report = _ingest(clean, data=SEED_JA.encode())
    with FlakyOpenAIServer(["hang"], hang_s=1.5) as server:
        services = make_services(_openai_model(server.base_url, retries=1, timeout=0.5))
        report = _ingest(services, data=SEED_JA.encode())
    assert report.status == "added", report.message
    assert len(server.requests) == report.chunks + 1  # the client sent one request again
    assert report.usage.calls == report.chunks + 1 == clean_report.usage.calls + 1
