"""Numbers and traces for people: durations, plurals, dates, the plain trace, scores."""

from __future__ import annotations

import re
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
        "Found 桃太郎 by name in the question; 4 facts of the graph touch it; 1 was set aside as "
        "the wrong kind of relation; 2 were kept for the answer; the answer used [2]."
    )
    assert "cites none" in plain_trace(_answer("わかりません。"))
    assert "lists the kept facts" in plain_trace(_answer("1. 犬 [1]", method="facts"))
    found = _answer("きびだんごです。[3]")
    found.citations.append(Citation(3, "c9", "d.txt", "きびだんごをこしらえた。", "sentence"))
    assert plain_trace(found) == (
        "Found 桃太郎 by name in the question; 4 facts of the graph touch it; 1 was set aside as "
        "the wrong kind of relation; 2 were kept for the answer; sentence search added 1 story "
        "sentence; the answer used [3]."
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


LONG = (
    "桃太郎が鬼が島へ鬼退治に行くと言うと、犬と猿と雉はみんなで声をそろえて、"
    "どこまでもお供をいたしますと言い、きびだんごを一つずつもらって家来になりました。"
    "それから四人は長い道を歩いて、海をわたり、とうとう鬼が島の門の前に着いたのでした。"
)


def _ranked_answer() -> Answer:
    """Scores as the small model gives them: all within a tenth of each other."""
    facts = [
        Fact("犬", "SOROERU", "声", ["c1"], LONG, score=2.8, kept=True),
        Fact("犬", "BECOMES_COMPANION_OF", "桃太郎", ["c1"], LONG, score=2.75, kept=True),
        Fact(
            "桃太郎",
            "GOES_TO",
            "鬼が島",
            ["c2"],
            "桃太郎は鬼が島へ行きました。",
            2.7,
            reason="beyond top-k",
        ),
        Fact(
            "桃太郎",
            "BORN_FROM",
            "桃",
            ["c3"],
            "桃から生まれました。",
            reason="relation type does not fit the question",
        ),
    ]
    retrieval = {"asked_types": ["BECOMES_COMPANION_OF"]}
    return Answer(
        "桃太郎の家来は誰？",
        "犬です。[1]",
        "onehop+qtype+reltype+rerank",
        entities=[ResolvedEntity("桃太郎", "桃太郎", "dictionary")],
        facts=facts,
        citations=[Citation(1, "c1", "d.txt", LONG[:60])],
        steps=[
            TraceStep("retrieval", 0.1, retrieval),
            TraceStep("rerank", 0.1, {"top_k": 2}),
            TraceStep("answer", 0.1, {"method": "llm"}),
        ],
    )


def test_a_reader_sees_each_facts_rank_and_why_in_words_not_its_score() -> None:
    from storygraph.qa.pipeline.explain import fact_lines

    lines = fact_lines(_ranked_answer())
    assert [(f.rank, f.why) for f in lines] == [
        (1, "kept: among the 2 best for this question"),
        (2, "kept: names 桃太郎 and the asked act"),
        (3, "set aside: below the top 2"),
        (None, "set aside: not the kind of act the question asks about"),
    ]
    shown = " ".join(f"{f.words} {f.why}" for f in lines)
    assert "of 10" not in shown and "2.7" not in shown and "2.8" not in shown


def test_a_reader_sees_the_storys_verb_not_a_romaji_or_identifier_type() -> None:
    from storygraph.qa.pipeline.explain import fact_lines

    words = [f.words for f in fact_lines(_ranked_answer())]
    assert words[0] == "犬 → そろえる → 声"  # SOROERU, the verb's reading
    assert words[1] == "犬 → 家来になる → 桃太郎"  # BECOMES_COMPANION_OF, as the sentence says
    assert not [w for w in words if re.search(r"[A-Za-z]", w)], words


def test_a_long_evidence_sentence_is_shown_whole() -> None:
    from storygraph.qa.pipeline.explain import fact_lines, source_text

    answer = _ranked_answer()
    assert fact_lines(answer)[0].evidence == LONG
    assert source_text(answer, answer.citations[0]) == LONG  # the model read 60 characters


def test_a_fact_with_no_sentence_is_a_source_in_the_storys_verb() -> None:
    from storygraph.qa.pipeline.explain import source_text

    fact = Fact("犬", "BECOMES_COMPANION_OF", "桃太郎", [], "犬は桃太郎の家来になりました。")
    answer = Answer("q", "a", "onehop", facts=[fact])
    assert source_text(answer, Citation(1, "", "", fact.text(), "graph")) == (
        "犬 → 家来になる → 桃太郎"
    )


def test_a_source_the_answer_kept_only_cut_ends_at_a_whole_sentence() -> None:
    from storygraph.qa.pipeline.explain import CUT_MARK, source_text
    from storygraph.qa.retrieval.context import MAX_SOURCE_CHARS

    said = "「ああ、見える、鬼が島が見える。」とさけびました。"
    chunk = ("むかし、" + said * 20)[:MAX_SOURCE_CHARS]
    assert not chunk.endswith("。")  # cut in the middle of a sentence
    answer = Answer("q", "a", "onehop", citations=[Citation(1, "c1", "d.txt", chunk)])
    shown = source_text(answer, answer.citations[0])
    assert shown.endswith(("。" + CUT_MARK, "。」" + CUT_MARK)), shown[-20:]
    assert len(shown) > MAX_SOURCE_CHARS - len(said)  # only the cut sentence is left out
    assert chunk.startswith(shown.removesuffix(CUT_MARK))


def test_a_sentence_search_passage_is_shown_whole() -> None:
    from storygraph.qa.pipeline.explain import source_text

    cut = Citation(1, "c2", "d.txt", LONG[:40], "sentence")
    found = {"found": [{"text": LONG, "document": "d.txt"}]}
    answer = Answer("q", "a", "onehop", citations=[cut], steps=[TraceStep("sentences", 0, found)])
    assert source_text(answer, cut) == LONG
