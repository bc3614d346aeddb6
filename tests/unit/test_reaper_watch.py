"""An idle reaper's loop (storygraph.processes.watch_until_done) writes each outcome unlike the one
before to its log, so a reader (or a test) sees what the reaper did, "in use" or "idle too short"
as well as "stopped", without a line for every look."""

from __future__ import annotations

import pytest

from storygraph import processes


@pytest.fixture(autouse=True)
def no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "poll_interval", lambda _idle_s: 0.0)


def test_each_new_outcome_is_said_once_and_the_loop_ends_with_the_last() -> None:
    outcomes = ["idle too short", "idle too short", "in use", "in use", "idle too short", "in use"]
    looks = iter([*outcomes, "stopped", "never looked at"])
    said: list[str] = []
    assert processes.watch_until_done(lambda: next(looks), 1.0, said.append) == "stopped"
    assert said == ["idle too short", "in use", "idle too short", "in use", "stopped"]
    assert next(looks) == "never looked at"  # no look after the server was stopped


@pytest.mark.parametrize("done", sorted(processes.REAPER_DONE))
def test_a_first_look_with_nothing_to_watch_is_said_and_ends_the_loop(done: str) -> None:
    said: list[str] = []
    assert processes.watch_until_done(lambda: done, 0.0, said.append) == done
    assert said == [done]


def test_the_line_names_the_server_its_pid_and_the_outcome(
    capsys: pytest.CaptureFixture[str],
) -> None:
    processes.reaper_log_line("model server", 4242)("in use")
    line = capsys.readouterr().out
    assert line.endswith(" idle reaper: model server pid 4242: in use\n")
    assert line[:4].isdigit() and line.count("\n") == 1
