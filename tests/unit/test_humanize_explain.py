"""Numbers and traces for people: durations, plurals, dates, the plain trace, scores."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from storygraph.humanize import duration, human_date, plural, tokens_text
from storygraph.models import Answer, Citation, Fact, ResolvedEntity, TraceStep, Usage
from storygraph.qa.pipeline.explain import cited_numbers, plain_trace, score_text, split_citations


@pytest.mark.parametrize(
    "seconds, shown",
    [
        (None, "–"),
        (0.04, "40 ms"),
        (2.44, "2.4 s"),
        (15.2, "15 s"),
        (60, "1 min"),
        (207, "3 min 27 s"),
        (3006.7, "50 min 7 s"),
        (3725, "1 h 02 min"),
    ],
)
def test_durations_read_as_minutes_and_seconds(seconds: float | None, shown: str) -> None:
    assert duration(seconds) == shown


def test_tokens_a_model_server_did_not_report_are_not_shown_as_zero() -> None:
    assert tokens_text(Usage(calls=2, prompt_tokens=1200, completion_tokens=34)) == "1,234"
    assert tokens_text(Usage()) == "0"
    assert tokens_text(Usage(calls=1, unreported=1)) == "not reported"
    partial = Usage(calls=3, prompt_tokens=1000, completion_tokens=0, unreported=2)
    assert tokens_text(partial) == "≥ 1,000 (2 calls not reported)"


def test_plurals() -> None:
    assert plural(1, "document") == "1 document"
    assert plural(2, "document") == "2 documents"
    assert plural(0, "file") == "0 files"
    assert plural(3, "entity") == "3 entities"
    assert plural(1200, "chunk") == "1,200 chunks"


def test_dates_for_people() -> None:
    now = datetime(2026, 11, 22, 15, 0, tzinfo=UTC)
    local = now.astimezone()
    assert human_date(now.isoformat(), now=now) == f"today {local:%H:%M}"
    assert human_date((now - timedelta(days=1)).isoformat(), now=now).startswith("yesterday ")
    old = human_date("2026-11-03T14:05:00+00:00", now=now)
    assert "Nov 2026" in old and "T" not in old and "+00:00" not in old
    assert human_date("not a date") == "not a date"


def _answer(text: str, *, method: str = "llm") -> Answer:
    facts = [
        Fact("犬", "BECOMES_COMPANION_OF", "桃太郎", ["c1"], score=13.0, kept=True),
        Fact("猿", "BECOMES_COMPANION_OF", "桃太郎", ["c2"], score=9.0, kept=True),
        Fact("桃太郎", "GOES_TO", "鬼が島", ["c3"], score=-1.5, kept=False),
        Fact("桃太郎", "BORN_FROM", "桃", ["c4"], score=None, kept=False, reason="type"),
    ]
    return Answer(
        "桃太郎の仲間は誰？",
        text,
        "onehop+qtype+reltype+rerank",
        entities=[ResolvedEntity("桃太郎", "桃太郎", "dictionary")],
        facts=facts,
        citations=[Citation(1, "c1", "d.txt", "a"), Citation(2, "c2", "d.txt", "b")],
        steps=[TraceStep("answer", 0.1, {"method": method})],
    )


def test_the_plain_trace_tells_what_was_found_kept_and_cited() -> None:
    trace = plain_trace(_answer("猿です。[2]"))
    assert trace == (
        "found 桃太郎 by name; 4 facts touch it; 1 set aside as the wrong kind of relation; "
        "kept 2; the answer used [2]"
    )
    assert "cites none" in plain_trace(_answer("わかりません。"))
    assert "lists the kept facts" in plain_trace(_answer("1. 犬 [1]", method="facts"))
    found = _answer("きびだんごです。[3]")
    found.citations.append(Citation(3, "c9", "d.txt", "きびだんごをこしらえた。", "sentence"))
    assert plain_trace(found) == (
        "found 桃太郎 by name; 4 facts touch it; 1 set aside as the wrong kind of relation; "
        "kept 2; sentence search added 1 story sentence; the answer used [3]"
    )


def test_only_cited_sources_are_listed_first() -> None:
    answer = _answer("猿です。[2][9][2]")  # [9] is no source of this answer
    assert cited_numbers(answer) == [2]
    used, rest = split_citations(answer)
    assert [c.number for c in used] == [2] and [c.number for c in rest] == [1]


def test_scores_are_shown_on_the_0_to_10_scale() -> None:
    assert [score_text(f.score) for f in _answer("").facts] == ["10.0", "9.0", "0.0", "–"]


def test_how_the_answer_was_written_reads_in_words() -> None:
    from storygraph.qa.pipeline.explain import answer_method_text

    assert answer_method_text("llm") == "written by the model"
    assert answer_method_text("llm-compact") == "written by the model"
    assert answer_method_text("llm-compact, no answer: closest sentence shown") == (
        "written by the model, which found no answer there (the closest sentence is shown)"
    )
    assert answer_method_text("llm-choice") == "a name chosen by the model"
    assert answer_method_text("facts") == "the top facts"
    assert answer_method_text("nothing found") == "nothing found"
