"""The ingest's progress on a stderr that is not a terminal: a line at each tenth of the chunks
and at each new chapter, not one per chunk (a log of a 1,500-chunk novel stays readable)."""

from __future__ import annotations

import pytest

from storygraph.cli import _stderr_progress
from storygraph.ingest.jobs import Job
from storygraph.ingest.pipeline import Progress


def test_a_file_gets_a_line_per_tenth_and_per_chapter(capsys: pytest.CaptureFixture[str]) -> None:
    job = Job(id="j", name="novel.txt", state="running", stage="extract")
    show = _stderr_progress()
    total = 200
    for done in range(total):
        chapter = 1 if done < 150 else 2
        show(job, Progress("novel.txt", "extract", done, total, "", 0, 0, chapter, 2))
    show(job, Progress("novel.txt", "extract", total, total, "", 0, 0, 2, 2))
    lines = capsys.readouterr().err.splitlines()
    assert "\r" not in "".join(lines)
    assert 10 <= len(lines) <= 13  # tenths, the new chapter, the end
    assert any("150/200 chunks, chapter 2 of 2" in line for line in lines)
    assert lines[-1].endswith("200/200 chunks")
