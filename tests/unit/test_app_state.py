"""What the app keeps per data directory: the conversation, the last ingest, the measured rate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storygraph import state_files
from storygraph.ingest.measured_rate import RateBook
from storygraph.models import (
    Answer,
    Citation,
    Fact,
    IngestReport,
    ResolvedEntity,
    TraceStep,
    Usage,
)
from storygraph.ui import app_state
from storygraph.ui.app_state import (
    ChatTurn,
    answer_from_json,
    answer_to_json,
    load_conversation,
    load_last_ingest,
    save_conversation,
    save_last_ingest,
)


def _answer() -> Answer:
    return Answer(
        question="桃太郎の仲間は誰？",
        answer="犬です。[1]",
        mode="onehop+rerank",
        entities=[ResolvedEntity("桃太郎", "桃太郎", "llm", 0.9)],
        facts=[
            Fact("犬", "BECOMES_COMPANION_OF", "桃太郎", ["d:0001"], "犬が…", 9.0, True),
            Fact("桃太郎", "GOES_TO", "鬼が島", ["d:0002"], "", None, False, "type"),
        ],
        citations=[Citation(1, "d:0001", "momotaro.txt", "犬が…")],
        steps=[TraceStep("rerank", 0.25, {"method": "llm"}, Usage(1, 10, 2))],
        usage=Usage(3, 100, 20),
        rerank_fell_back=False,
        warnings=["w"],
        cypher="MATCH (n) RETURN n",
        language="ja",
    )


def test_an_answer_survives_json_with_every_field() -> None:
    answer = _answer()
    again = answer_from_json(json.loads(json.dumps(answer_to_json(answer))))
    assert again == answer


def test_an_answer_from_a_newer_version_ignores_unknown_fields() -> None:
    data = answer_to_json(_answer())
    data["streamed"] = True
    data["facts"][0]["confidence"] = 0.5
    assert answer_from_json(data).facts[0].score == 9.0


def test_the_conversation_is_saved_and_loaded_per_data_directory(tmp_path: Path) -> None:
    turns = [ChatTurn("q1", _answer()), ChatTurn("q2", error="down", hint="restart")]
    save_conversation(tmp_path / "a", turns)
    loaded, warning = load_conversation(tmp_path / "a")
    assert warning == ""
    assert [t.question for t in loaded] == ["q1", "q2"]
    assert loaded[0].answer == turns[0].answer and loaded[1].hint == "restart"
    assert load_conversation(tmp_path / "b") == ([], "")  # another data directory: its own
    app_state.clear_conversation(tmp_path / "a")
    assert load_conversation(tmp_path / "a") == ([], "")


def test_only_the_last_turns_are_kept(tmp_path: Path) -> None:
    save_conversation(tmp_path, [ChatTurn(f"q{i}") for i in range(app_state.MAX_TURNS + 5)])
    loaded, _ = load_conversation(tmp_path)
    assert len(loaded) == app_state.MAX_TURNS and loaded[0].question == "q5"


def test_an_unreadable_file_is_kept_aside_and_named(tmp_path: Path) -> None:
    path = app_state.state_dir(tmp_path) / app_state.CHAT_FILE
    path.parent.mkdir(parents=True)
    path.write_text("{half a file", encoding="utf-8")
    loaded, warning = load_conversation(tmp_path)
    assert loaded == [] and "could not be read" in warning
    assert (path.parent / (path.name + ".unreadable")).read_text() == "{half a file"


def test_a_failed_write_leaves_the_previous_file_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_conversation(tmp_path, [ChatTurn("kept")])

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(state_files.json, "dump", broken)
    with pytest.raises(OSError):
        save_conversation(tmp_path, [ChatTurn("lost")])
    monkeypatch.undo()
    assert [t.question for t in load_conversation(tmp_path)[0]] == ["kept"]
    assert [p.name for p in app_state.state_dir(tmp_path).iterdir()] == [app_state.CHAT_FILE]


def test_a_batch_where_every_file_failed_keeps_the_last_successful_report(tmp_path: Path) -> None:
    good = IngestReport("a.txt", "id", "added", chunks=3, usage=Usage(3, 30, 3), seconds=2.0)
    assert save_last_ingest(tmp_path, [good], {"calls": 3})
    failed = IngestReport("b.txt", status="failed", message="timed out")
    assert not save_last_ingest(tmp_path, [failed], None)
    record, warning = load_last_ingest(tmp_path)
    assert warning == "" and record is not None
    assert record.reports == [good] and record.estimate == {"calls": 3}
    mixed = [failed, IngestReport("c.txt", status="unchanged")]
    assert save_last_ingest(tmp_path, mixed, None)
    assert [r.document for r in load_last_ingest(tmp_path)[0].reports] == ["b.txt", "c.txt"]  # type: ignore[union-attr]


def test_the_measured_rate_sums_the_last_ingests_of_one_model(tmp_path: Path) -> None:
    book = RateBook(tmp_path)
    assert book.get("m") is None
    for seconds in (10.0, 30.0):
        report = IngestReport("a", status="added", chunks=2, seconds=seconds)
        report.usage = Usage(2, 150, 50)
        book.record("m", report)
    rate = RateBook(tmp_path).get("m")
    assert rate is not None
    assert rate.tokens_per_s == pytest.approx(400 / 40) and rate.seconds_per_chunk == 10.0
    assert RateBook(tmp_path).get("other model") is None
    # Unchanged, failed or instant ingests say nothing about the model's speed.
    for report in (
        IngestReport("b", status="unchanged", seconds=5.0, usage=Usage(1, 10, 1)),
        IngestReport("c", status="failed", seconds=5.0, usage=Usage(1, 10, 1)),
        IngestReport("d", status="added", seconds=0.1, usage=Usage(1, 10, 1)),
    ):
        assert book.record("m", report) is None
    assert book.get("m") == rate


def test_only_the_last_few_ingests_count(tmp_path: Path) -> None:
    from storygraph.ingest.measured_rate import KEEP

    book = RateBook(tmp_path)
    for i in range(KEEP + 3):
        report = IngestReport("a", status="added", chunks=1, seconds=100.0 if i < 3 else 10.0)
        report.usage = Usage(1, 90, 10)
        book.record("m", report)
    rate = book.get("m")
    assert rate is not None and rate.ingests == KEEP and rate.tokens_per_s == 10.0


def test_turns_from_two_sessions_are_both_kept(tmp_path: Path) -> None:
    first = app_state.append_turn(tmp_path, ChatTurn("from session A"))
    second = app_state.append_turn(tmp_path, ChatTurn("from session B"))
    assert [t.question for t in first] == ["from session A"]
    assert [t.question for t in second] == ["from session A", "from session B"]


def test_a_turn_saved_late_takes_its_place_by_when_it_was_asked(tmp_path: Path) -> None:
    """A question cut short by a newer one is saved after the newer one's answer: it goes back
    before it. Turns from older files (seconds, or no time at all) keep their place."""
    app_state.append_turn(tmp_path, ChatTurn("legacy", asked_at=""))
    app_state.append_turn(tmp_path, ChatTurn("first", asked_at="2026-11-22T10:00:00+00:00"))
    cut = ChatTurn("cut short", error="stopped", asked_at="2026-11-22T10:00:05.100+00:00")
    app_state.append_turn(tmp_path, ChatTurn("newer", asked_at="2026-11-22T10:00:05.900+00:00"))
    turns = app_state.append_turn(tmp_path, cut)
    assert [t.question for t in turns] == ["legacy", "first", "cut short", "newer"]
    assert [t.question for t in load_conversation(tmp_path)[0]] == [t.question for t in turns]
    later = app_state.append_turn(tmp_path, ChatTurn("later"))  # now: after all of them
    assert later[-1].question == "later"


def test_a_question_is_timed_to_the_millisecond() -> None:
    """Two questions asked within one second still sort in the order they were asked."""
    asked = ChatTurn("a").asked_at
    assert len(asked.split("T")[1].split("+")[0]) == len("10:00:05.123"), asked
