"""Ingest jobs in the app (AppTest): the chat answers while a story ingests, jobs show and cancel.

The scripted model is held at an extraction call (a gate), so "while the job runs" is a state
the test controls, not a race.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pages.common import SERVICES_KEY, TAB_KEY
from storygraph.ingest.extraction_cache import cache_stats
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from tests.helpers.scripted_model import ScriptedChatModel

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "storygraph" / "samples" / "momotaro_kusuyama.txt"
STORY = "桃太郎は犬と猿ときじを家来にしました。桃太郎は鬼を退治しました。".encode()
WAIT_S = 120


class Gate:
    """Holds the model before its first extraction call until `release()`."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.open = threading.Event()

    def __call__(self, kind: str) -> None:
        if kind == "extract" and not self.reached.is_set():
            self.reached.set()
            assert self.open.wait(WAIT_S), "the test never released the gate"

    def release(self) -> None:
        self.open.set()


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    built = build_services(Settings(data_dir=tmp_path / "data"), llm=ScriptedChatModel())
    yield built
    built.close()


@pytest.fixture
def gate(services: Services) -> Iterator[Gate]:
    """The sample story ingested while the model is held at its first chunk."""
    seeded = services.ingestor().ingest_bytes("story.txt", STORY)
    assert seeded.status == "added", seeded.message
    held = Gate()
    model = services.llm_override
    assert isinstance(model, ScriptedChatModel)
    model.on_call = held
    yield held
    held.release()


def _app(services: Services) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=WAIT_S)
    at.session_state[SERVICES_KEY] = services
    at.run()
    assert not at.exception, at.exception
    return at


def _texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [i.value for i in at.info] + [s.value for s in at.success]
    parts += [e.value for e in at.error] + [w.value for w in at.warning]
    return "\n".join(str(p) for p in parts)


def _start_sample(at: AppTest, gate: Gate) -> AppTest:
    at.button(key="ingest_sample").click().run()
    assert not at.exception, at.exception
    assert gate.reached.wait(WAIT_S)
    at.run()  # the job is running now: draw it
    assert not at.exception, at.exception
    return at


def test_the_chat_answers_while_a_story_is_added(services: Services, gate: Gate) -> None:
    at = _start_sample(_app(services), gate)
    (job,) = services.job_runner().active()
    assert job.state == "running"
    assert at.button(key=f"job_cancel_{job.id}")  # every tab shows it, with a cancel button
    assert any("chunk 1 of" in str(p.proto.text) for p in at.get("progress")), _texts(at)
    assert "Time left" in _texts(at)

    at.session_state[TAB_KEY] = "Chat"  # the chat input exists while the Chat tab is open
    at.run()
    at.chat_input(key="chat_input").set_value("桃太郎の仲間は誰？").run()
    assert not at.exception, at.exception
    assert [m.name for m in at.chat_message][-2:] == ["user", "assistant"]
    text = _texts(at)
    assert "A story is being added (momotaro_kusuyama.txt)" in text
    assert "犬" in text  # answered from the graph as it was before the job
    assert [d.name for d in services.store.list_documents()] == ["story.txt"]

    gate.release()
    services.job_runner().wait_idle(WAIT_S)
    at.session_state[TAB_KEY] = "Ingest"  # where the finished job's report is
    at.run()
    assert not at.exception, at.exception
    assert sorted(d.name for d in services.store.list_documents()) == [
        "momotaro_kusuyama.txt",
        "story.txt",
    ]
    assert f"job_cancel_{job.id}" not in [b.key for b in at.button]
    assert "A story is being added" not in _texts(at)
    assert any(m.label == "Chunks" for m in at.metric)  # the report of the finished job


def test_cancelling_from_the_app_leaves_the_graph_as_it_was(services: Services, gate: Gate) -> None:
    at = _start_sample(_app(services), gate)
    (job,) = services.job_runner().active()
    at.button(key=f"job_cancel_{job.id}").click().run()
    assert not at.exception, at.exception
    gate.release()
    assert services.job_runner().wait(job.id, WAIT_S).state == "cancelled"
    at.run()
    assert not at.exception, at.exception
    assert "cancelled" in _texts(at)
    assert [d.name for d in services.store.list_documents()] == ["story.txt"]


def test_the_doctor_clears_the_saved_extractions(services: Services) -> None:
    services.ingestor().ingest_bytes("story.txt", STORY)
    data_dir = Path(services.settings.data_dir)
    saved = cache_stats(data_dir).entries
    assert saved >= 1
    at = _app(services)
    at.session_state[TAB_KEY] = "Doctor"  # only the open tab is drawn
    at.run()
    assert f"{saved} chunk extractions saved" in _texts(at)
    at.button(key="doctor_cache_clear").click().run()
    assert not at.exception, at.exception
    assert f"Cleared {saved} saved chunk extractions" in _texts(at)
    assert cache_stats(data_dir).entries == 0


def test_a_job_that_ends_while_the_chat_answers_leaves_the_banner_in_that_run(
    services: Services, gate: Gate
) -> None:
    """Streamlit holds the banner's own timer back while a run answers; that run redraws it.
    Here the model, asked the question, lets the job go on and finish before it answers: the
    same run that draws the answer no longer shows the job (no later run needed)."""
    at = _start_sample(_app(services), gate)
    (job,) = services.job_runner().active()
    at.session_state[TAB_KEY] = "Chat"
    at.run()
    assert at.button(key=f"job_cancel_{job.id}")
    model = services.llm_override
    assert isinstance(model, ScriptedChatModel)
    extract_gate = model.on_call
    finished: list[str] = []

    def on_call(kind: str) -> None:
        if kind == "extract":
            assert extract_gate is not None
            extract_gate(kind)
        elif not finished:  # the question: the job runs to its end first
            gate.release()
            finished.append(services.job_runner().wait(job.id, WAIT_S).state)

    model.on_call = on_call
    at.chat_input(key="chat_input").set_value("桃太郎の仲間は誰？").run()
    assert not at.exception, at.exception
    assert finished == ["done"]
    assert [m.name for m in at.chat_message][-2:] == ["user", "assistant"]
    assert f"job_cancel_{job.id}" not in [b.key for b in at.button]
    assert not any("chunk" in str(p.proto.text) for p in at.get("progress")), _texts(at)
    assert "Time left" not in _texts(at)


def test_a_job_reads_queued_only_behind_another() -> None:
    """The first sample load said "Queued: waiting for another ingest" with nothing else
    running; a queued job with nothing ahead of it is starting."""
    from pages.jobs import progress_text, verb
    from storygraph.ingest.jobs import WAITING_FOR_LOCK, Job

    first = Job(id="a", name="momotaro.txt", message="queued")
    assert (verb(first, ahead=0), progress_text(first)) == ("Starting", "starting")
    assert verb(first, ahead=1) == "Queued"  # another job of this list runs first
    held = Job(id="b", name="story.txt", message=WAITING_FOR_LOCK)  # another process's job
    assert (verb(held, ahead=0), progress_text(held)) == ("Queued", WAITING_FOR_LOCK)
    running = Job(id="c", name="story.txt", state="running", stage="extract", chunks_total=4)
    assert verb(running, ahead=0) == "Adding"
    assert progress_text(running).startswith("chunk 1 of 4")
    reading = Job(id="d", name="novel.txt", state="running", stage="extract", chunks_done=9,
                  chunks_total=40, chapter=3, chapters=12)  # fmt: skip
    assert progress_text(reading).startswith("chunk 10 of 40 · chapter 3 of 12 · ")
