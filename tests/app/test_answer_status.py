"""What the chat says while and after an answer is worked out (issue #42 items 1-3): each phase
named as it begins (finding in the graph, the model reading N sources, writing, checking), the
finished answer's phases with their times, and one verdict: the mark, the line under it and the
warnings beside it never contradict each other. Real Streamlit (AppTest), the real engine and
store; the model is scripted at its boundary."""

from __future__ import annotations

import re
import threading

import pytest

import pages.chat as chat
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.pipeline.progress import Phase, reporting_phases
from storygraph.qa.verify.support_text import CHECK_WARNINGS
from storygraph.services import Services
from tests.app.test_app import SAMPLE, _app, _ask, services  # noqa: F401 - the fixture
from tests.app.test_support_ui import _check_lines, _marks, _reply_naming
from tests.helpers import scripted_logic


def _distinct(phases: list[Phase]) -> list[str]:
    names: list[str] = []
    for p in phases:
        if not names or names[-1] != p.name:
            names.append(p.name)
    return names


def test_each_phase_is_named_as_it_begins_and_the_model_reads_under_reading(
    services: Services,  # noqa: F811 - the fixture
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    monkeypatch.setattr(scripted_logic, "answer", _reply_naming("犬", "ついて"))
    heard: list[Phase] = []
    during_call: dict[str, str] = {}
    model = services.llm_override
    assert model is not None
    # what the status says when the model receives the answer's prompt: before, the chat said
    # "Finding the answer in the graph…" all the while the model read it
    model.on_call = lambda kind: during_call.setdefault(kind, heard[-1].name)  # type: ignore[attr-defined]
    with reporting_phases(heard.append):
        answer = services.qa().ask("桃太郎の仲間は誰？", QAOptions.from_settings(services.settings))
    assert _distinct(heard) == ["finding", "reading", "writing", "checking"], heard
    assert during_call["answer"] == "reading"
    reading = next(p for p in heard if p.name == "reading")
    read = next(s.detail["sources_read"] for s in answer.steps if s.name == "answer")
    assert reading.sources == read > 0
    assert "first_token_s" in next(s.detail for s in answer.steps if s.name == "answer")


def test_the_page_says_the_model_is_reading_while_it_reads_its_prompt(
    services: Services,  # noqa: F811 - the fixture
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The scripted model receives the answer's prompt and holds it until the page has drawn
    # its status line for that phase (an event, bounded; no pause): what a reader sees while
    # the model reads. Before, it was "Finding the answer in the graph…" all along.
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    monkeypatch.setattr(scripted_logic, "answer", _reply_naming("犬", "ついて"))
    drawn: list[str] = []
    reading_drawn = threading.Event()
    real = chat.status_line

    def recording(phase: Phase | None, seconds: float, ahead: int = 0) -> str:
        line = real(phase, seconds, ahead)
        drawn.append(line)
        if phase is not None and phase.name == "reading":
            reading_drawn.set()
        return line

    monkeypatch.setattr(chat, "status_line", recording)
    model = services.llm_override
    assert model is not None
    model.on_call = lambda kind: kind == "answer" and reading_drawn.wait(60)  # type: ignore[attr-defined]
    at = _ask(_app(services), "桃太郎の仲間は誰？")
    assert reading_drawn.is_set(), drawn
    assert drawn[0].startswith("Finding the answer in the graph…"), drawn
    reading = next(i for i, line in enumerate(drawn) if line.startswith("The model is reading"))
    assert re.match(r"The model is reading the question and \d+ sources?… \(", drawn[reading])
    assert not [line for line in drawn[reading:] if line.startswith("Finding")], drawn
    assert not [line for line in drawn if line.startswith("Waiting for the model")], drawn
    assert at.chat_message[-1].markdown[0].value.startswith("犬です。")


def test_the_finished_answer_names_its_phases_with_their_times(
    services: Services,  # noqa: F811 - the fixture
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    monkeypatch.setattr(scripted_logic, "answer", _reply_naming("犬", "ついて"))
    at = _ask(_app(services), "桃太郎の仲間は誰？")
    captions = [str(c.value).replace("\\", "") for c in at.chat_message[-1].caption]
    line = next((c for c in captions if "found in the graph" in c), "")
    phases = r"found in the graph [\d.]+ m?s · the model read \d+ sources? [\d.]+ m?s · " + (
        r"wrote [\d.]+ m?s · checked [\d.]+ m?s"
    )
    assert re.search(phases, line), captions


@pytest.mark.parametrize(
    "question, reply",
    [
        ("桃太郎の仲間は誰？", _reply_naming("犬", "ついて")),  # confirmed
        ("桃太郎を倒したのは誰？", _reply_naming("猿", "猿")),  # a false premise's culprit
        ("桃太郎の仲間は誰？", _reply_naming("金太郎", "ついて")),  # no source names him
        ("犬は誰のあとからついて行きましたか？", _reply_naming("おじいさん", "おじいさん")),
    ],
    ids=["confirmed", "false-premise", "unheld-name", "misread-role"],
)
def test_the_mark_the_line_and_the_warnings_are_one_verdict(
    services: Services,  # noqa: F811 - the fixture
    monkeypatch: pytest.MonkeyPatch,
    question: str,
    reply: object,
) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    monkeypatch.setattr(scripted_logic, "answer", reply)
    at = _ask(_app(services), question)
    marks = _marks(at)
    assert len(marks) == 1, marks
    colour, line = marks[0]
    supported = line.startswith("確認済み")
    assert colour == ("green" if supported else "orange"), marks
    # no warning beside the mark is the check's verdict in other words (it went one level
    # deeper, to the developer tab, with the check's own line)
    warnings = [str(w.value) for w in at.chat_message[-1].warning]
    assert not [w for w in warnings if w.startswith(CHECK_WARNINGS)], warnings
    assert not [w for w in warnings if "not confirmed" in w or "not shown" in w], warnings
    checks = _check_lines(at)
    said_supported = checks[0].startswith(("checked", "supported")) if checks else None
    assert said_supported == supported, (line, checks)
    if not supported:  # the model's answer is not shown as the answer
        shown = str(at.chat_message[-1].markdown[0].value)
        assert not shown.startswith(("猿です", "金太郎です")), shown
