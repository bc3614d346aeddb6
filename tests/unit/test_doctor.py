"""The doctor with fake models at the model boundary (no real model server)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, SecretStr

from storygraph.doctor import DoctorReport, run_doctor
from storygraph.llm.factory import ModelInfo
from storygraph.settings import Settings

_ids = itertools.count(1)
EMBEDDED = ModelInfo("embedded", "fake-small", capable=False)
REMOTE = ModelInfo("openai_compatible", "fake-remote", capable=True)
GOOD_GRAPH = {
    "nodes": [{"id": "桃太郎", "type": "Character"}, {"id": "鬼が島", "type": "Place"}],
    "relationships": [
        {
            "source_node_id": "桃太郎",
            "source_node_type": "Character",
            "target_node_id": "鬼が島",
            "target_node_type": "Place",
            "type": "GOES_TO",
        }
    ],
}


class FakeModel(BaseChatModel):
    """Plain calls answer `text`; a bound tool gets `tools[name]` as its arguments, if given."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    text: str = "OK"
    tools: dict[str, dict[str, Any]] = Field(default_factory=dict)
    error: Exception | None = None

    @property
    def _llm_type(self) -> str:
        return "fake"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, BaseMessage]:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:  # fmt: skip
        if self.error is not None:
            raise self.error
        bound = [t["function"]["name"] for t in kwargs.get("tools", [])]
        name = next((n for n in bound if n in self.tools), None)
        if name is not None:
            call = {"name": name, "args": self.tools[name], "id": f"call_{next(_ids)}"}
            message = AIMessage("", tool_calls=[call])
        else:
            message = AIMessage(self.text)
        return ChatResult(generations=[ChatGeneration(message=message)])


def no_store(report: DoctorReport, settings: Settings) -> None:
    report.add("graph store", "ok", "not checked in this test")


def doctor(tmp_path: Path, llm: BaseChatModel, info: ModelInfo) -> DoctorReport:
    """The doctor with the model's extraction path (the extraction checks are about it)."""
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", extractor="model")  # type: ignore[call-arg]
    return run_doctor(settings, llm=llm, info=info, check_store_fn=no_store)


def statuses(report: DoctorReport) -> dict[str, str]:
    return {c.name: c.status for c in report.checks}


def test_by_default_the_doctor_tries_the_parser_the_embedded_model_ingests_with(
    tmp_path: Path,
) -> None:
    llm = FakeModel(text="none", tools={"DoctorProbe": {"animal": "dog"}})
    settings = Settings(_env_file=None, data_dir=tmp_path / "data")  # type: ignore[call-arg]
    report = run_doctor(settings, llm=llm, info=EMBEDDED)
    extraction = report.check("extraction")
    assert extraction is not None and extraction.status == "ok"
    assert extraction.detail.startswith("parser+verbs:") and "GOES_TO->鬼が島" in extraction.detail


def test_healthy_embedded_model_with_the_real_store(tmp_path: Path) -> None:
    reply = "桃太郎 (Character) | GOES_TO | 鬼が島 (Place)"
    llm = FakeModel(text=reply, tools={"DoctorProbe": {"animal": "dog"}})
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", extractor="model")  # type: ignore[call-arg]
    report = run_doctor(settings, llm=llm, info=EMBEDDED)
    assert report.healthy, report.render()
    assert statuses(report) == {
        "settings": "ok",
        "japanese readings": "ok",
        "sentence embeddings": "ok",
        "graph store": "ok",
        "model answers": "ok",
        "thinking mode": "ok",
        "tool calling": "ok",
        "context size": "ok",
        "extraction": "ok",
    }
    extraction = report.check("extraction")
    assert extraction is not None and "SmallModelExtractor" in extraction.detail
    assert "桃太郎-GOES_TO->鬼が島" in extraction.detail
    assert "0 document(s)" in (report.check("graph store") or extraction).detail
    assert json.loads(json.dumps(report.to_json()))["healthy"] is True


def test_healthy_capable_model_uses_the_transformer(tmp_path: Path) -> None:
    llm = FakeModel(tools={"DoctorProbe": {"animal": "dog"}, "DynamicGraph": GOOD_GRAPH})
    report = doctor(tmp_path, llm, REMOTE)
    assert report.healthy, report.render()
    extraction = report.check("extraction")
    assert extraction is not None and "LLMGraphTransformer" in extraction.detail
    assert statuses(report)["context size"] == "skip"


def test_unreachable_model_fails_and_says_what_to_check(tmp_path: Path) -> None:
    llm = FakeModel(error=ConnectionError("connection refused"))
    report = doctor(tmp_path, llm, REMOTE)
    assert not report.healthy
    failed = report.check("model answers")
    assert failed is not None and failed.status == "fail"
    assert "OPENAI_BASE_URL" in failed.fix
    assert report.check("extraction") is None  # nothing further is tried
    assert "✗ model answers" in report.render().replace("[", "").replace("]", "")


def test_no_tool_calling_is_reported_with_the_empty_graph_reason(tmp_path: Path) -> None:
    llm = FakeModel(text="Sure! Here is what I found in the story.")
    report = doctor(tmp_path, llm, REMOTE)
    assert not report.healthy
    tools = report.check("tool calling")
    assert tools is not None and tools.status == "fail" and "function calling" in tools.fix
    extraction = report.check("extraction")
    assert extraction is not None and extraction.status == "fail"
    assert "structured graph" in extraction.detail


def test_json_without_tool_calling_is_a_warning(tmp_path: Path) -> None:
    llm = FakeModel(text='{"animal": "dog"}', tools={"DynamicGraph": GOOD_GRAPH})
    report = doctor(tmp_path, llm, REMOTE)
    assert statuses(report)["tool calling"] == "warn"
    assert report.healthy


def test_thinking_mode_is_caught(tmp_path: Path) -> None:
    llm = FakeModel(
        text="<think>The user wants OK.</think>OK", tools={"DoctorProbe": {"animal": "dog"}}
    )
    report = doctor(tmp_path, llm, EMBEDDED)
    thinking = report.check("thinking mode")
    assert thinking is not None and thinking.status == "fail" and "thinking" in thinking.fix
    assert not report.healthy


def test_empty_extraction_says_why(tmp_path: Path) -> None:
    llm = FakeModel(
        tools={"DoctorProbe": {"animal": "dog"}, "DynamicGraph": {"nodes": [], "relationships": []}}
    )
    report = doctor(tmp_path, llm, REMOTE)
    extraction = report.check("extraction")
    assert extraction is not None and extraction.status == "fail"
    assert "empty" in extraction.detail and "OPENAI_BASE_URL" in extraction.fix


def test_small_model_text_without_triples_is_explained(tmp_path: Path) -> None:
    llm = FakeModel(text="なし", tools={"DoctorProbe": {"animal": "dog"}})
    report = doctor(tmp_path, llm, EMBEDDED)
    extraction = report.check("extraction")
    assert extraction is not None and extraction.status == "fail"
    assert "'なし'" in extraction.detail


def test_context_too_small_for_the_chunk_size(tmp_path: Path) -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, data_dir=tmp_path / "d", chunk_size=4000, embedded_ctx=1024
    )
    llm = FakeModel(text="桃太郎 | GOES_TO | 鬼が島", tools={"DoctorProbe": {"animal": "dog"}})
    report = run_doctor(settings, llm=llm, info=EMBEDDED, check_store_fn=no_store)
    context = report.check("context size")
    assert context is not None and context.status == "fail"
    assert "STORYGRAPH_EMBEDDED_CTX" in context.fix


def test_secrets_are_never_shown(tmp_path: Path) -> None:
    secret = "sk-do-not-print-me-123"
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, data_dir=tmp_path / "d", openai_api_key=SecretStr(secret)
    )
    report = run_doctor(settings, llm=FakeModel(error=ConnectionError(secret)), info=REMOTE,
                        check_store_fn=no_store)  # fmt: skip
    rendered = report.render() + json.dumps(report.to_json())
    assert "OPENAI_API_KEY" in rendered
    assert secret not in (report.check("settings") or report.checks[0]).detail


def test_no_llm_mode_warns_and_stops(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path / "d", no_llm=True)  # type: ignore[call-arg]
    report = run_doctor(settings, check_store_fn=no_store)
    assert statuses(report) == {
        "settings": "warn",
        "japanese readings": "ok",
        "sentence embeddings": "ok",
        "graph store": "ok",
        "model reachable": "skip",
    }
    assert report.healthy


def test_embedded_model_missing_fails_with_install_hint(tmp_path: Path) -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, data_dir=tmp_path / "d", model_dir=tmp_path / "no-models"
    )
    report = run_doctor(settings, info=EMBEDDED, check_store_fn=no_store)
    reach = report.check("model reachable")
    assert reach is not None and reach.status == "fail" and "make model" in reach.fix
    assert not report.healthy


def test_a_place_defeating_someone_makes_the_extraction_a_warning(tmp_path: Path) -> None:
    # The small model's triples, as the embedded model wrote them for issue 16: no types on
    # the wrong line, but 鬼が島 is a place by the model's own GOES_TO line.
    lines = "桃太郎 | GOES_TO | 鬼が島\n鬼が島 | DEFEATS | 鬼"
    llm = FakeModel(text=lines, tools={"DoctorProbe": {"animal": "dog"}})
    report = doctor(tmp_path, llm, EMBEDDED)
    extraction = report.check("extraction")
    assert extraction is not None and extraction.status == "warn", report.render()
    assert "鬼が島 -[DEFEATS]→ 鬼" in extraction.detail
    assert "weak" in extraction.detail and extraction.fix
    assert report.healthy and "works, with warnings" in report.render()


def test_a_name_absent_from_the_sentence_is_implausible() -> None:
    from storygraph.doctor import SAMPLE_JA, implausible_relations
    from storygraph.models import ExtractedRelation

    def rel(source: str, kind: str, target: str, source_type: str = "Character") -> Any:
        return ExtractedRelation(source, source_type, kind, target, "Character", "c")

    assert implausible_relations([rel("桃太郎", "DEFEATS", "鬼")], SAMPLE_JA) == []
    assert implausible_relations([rel("犬", "FOLLOWS", "桃太郎")], SAMPLE_JA) == []
    absent = implausible_relations([rel("桃太郎", "MEETS", "金太郎")], SAMPLE_JA)
    assert absent == ["桃太郎 -[MEETS]→ 金太郎: 金太郎 is not in the sentence"]
    typed = implausible_relations([rel("鬼が島", "ATTACKS", "村", "Island")], "鬼が島が村を")
    assert typed and "a place (鬼が島)" in typed[0]


def test_a_missing_sudachi_dictionary_fails_the_doctor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without Sudachi the merge keys and Japanese relation-type names change, so two machines
    would build different graphs from the same stories: the doctor must say so, not only a log."""
    import sys

    from storygraph.text import normalize

    monkeypatch.setitem(sys.modules, "sudachipy", None)  # the import fails, as when missing
    monkeypatch.setattr(normalize, "_dictionary", None)
    monkeypatch.setattr(normalize, "_dictionary_loaded", False)
    monkeypatch.setattr(normalize, "_dictionary_error", "", raising=False)
    llm = FakeModel(text="OK", tools={"DoctorProbe": {"animal": "dog"}})
    report = doctor(tmp_path, llm, REMOTE)
    readings = report.check("japanese readings")
    assert readings is not None, report.render()
    assert readings.status == "fail"
    assert "sudachipy" in readings.detail.lower() and "different graph" in readings.detail
    assert "requirements.txt" in readings.fix
    assert not report.healthy


class RecordingModel(FakeModel):
    """Keeps the text of every message it is sent."""

    seen: list[str] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:  # fmt: skip
        self.seen.extend(str(m.content) for m in messages)
        return super()._generate(messages, stop, run_manager, **kwargs)


def test_the_doctors_probes_are_the_prompt_files(tmp_path: Path) -> None:
    """The doctor's own questions live in prompts/ and are loaded by name, like every prompt."""
    from storygraph.prompt_files import load_prompt

    llm = RecordingModel(text="not json", tools={})  # no tool call: the JSON probe is asked too
    doctor(tmp_path, llm, REMOTE)
    for name in ("doctor_reply", "doctor_tool_probe", "doctor_json_probe"):
        assert load_prompt(name) in llm.seen, (name, llm.seen)
