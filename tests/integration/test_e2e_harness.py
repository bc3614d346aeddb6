"""The end-to-end harness: real stories ingested through the app's path into the real embedded
FalkorDB, questions asked through the chat's engine, answers scored; the scripted model stands
at the model boundary."""

from __future__ import annotations

import json
from pathlib import Path

from storygraph.evaluation.answer_scoring import score_answer
from storygraph.evaluation.e2e import load_e2e_questions, run_e2e
from storygraph.ingest.llm_extraction import TransformerExtractor
from storygraph.llm.factory import ModelInfo
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.verify.support_words import declines
from storygraph.settings import Settings
from tests.helpers.scripted_model import ScriptedChatModel

QUESTIONS = [
    {
        "id": "ja-companions",
        "story": "ja/momotaro_kusuyama.txt",
        "question": "桃太郎の仲間は誰？",
        "answers": ["犬", "猿", "きじ"],
    },
    {
        "id": "ja-companions-wrong",
        "story": "ja/momotaro_kusuyama.txt",
        "question": "桃太郎の仲間は誰？",
        "answers": ["犬", "猿", "きじ"],
        "wrong": ["桃太郎"],
    },
    {
        "id": "en-long",
        "story": "en/japanese__momotaro-story-of-son-of-peach.txt",
        "question": "Who were Momotaro's companions?",
        "answers": ["the dog, the monkey and the pheasant followed Momotaro"],
    },
    {
        "id": "ja-unanswerable",
        "story": "ja/momotaro_kusuyama.txt",
        "question": "桃太郎を倒したのは誰？",
        "answers": [],
        "unanswerable": True,
    },
]


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "questions.jsonl"
    path.write_text(
        "\n".join(json.dumps(q, ensure_ascii=False) for q in QUESTIONS), encoding="utf-8"
    )
    return path


def test_harness_ingests_asks_scores_and_reuses_its_cache(
    tmp_path: Path, shared_dir: Path
) -> None:
    questions = load_e2e_questions(_write(tmp_path))
    settings = Settings(data_dir=tmp_path / "data")
    cache = tmp_path / "cache"
    model = ScriptedChatModel()

    def run() -> dict:
        report = run_e2e(
            settings,
            questions,
            shared_dir / "stories",
            modes=["onehop+qtype+reltype+rerank"],
            options=QAOptions(),
            cache_dir=cache,
            llm=model,
        )
        return report.to_json()

    first = run()
    by_id = {q["id"]: q for q in first["questions"]}
    assert by_id["ja-companions"]["correct"], by_id["ja-companions"]["answer"]
    assert by_id["ja-companions"]["strict_correct"] == (
        by_id["ja-companions"]["strict_rule"].split(":")[0] in ("equals", "word", "reading")
    )
    # An unanswerable question is right only when the app declines. The scripted model
    # answers with a name; the support check (docs/ISSUES.md#support-check) finds no fact or
    # sentence in which anyone defeats 桃太郎, so the app says the story does not say: right by both
    # rules.
    unanswerable = by_id["ja-unanswerable"]
    assert unanswerable["unanswerable"] and unanswerable["declined"], unanswerable["answer"]
    assert unanswerable["strict_rule"] == "declined"
    assert unanswerable["strict_correct"] and unanswerable["correct"]
    # the row keeps what the model wrote, so the run can be checked again without the model
    assert unanswerable["model_answer"] and not declines(unanswerable["model_answer"])
    replaced = [q for q in first["questions"] if any("not shown" in w for w in q["warnings"])]
    assert all(q["model_answer"] is None for q in first["questions"] if q not in replaced)
    # every answer carries the check's yes / no verdict
    assert all(isinstance(q["supported"], bool) for q in first["questions"])
    # The scripted answer names 桃太郎 too, so the `wrong` string fires.
    assert not by_id["ja-companions-wrong"]["correct"]
    assert by_id["ja-companions-wrong"]["rule"] == "wrong:桃太郎"
    # A long accepted answer is scored by ROUGE-L F1, not containment. Whether the gate shows
    # the scripted answer depends on the committed verifier weights (refitted on evaluation
    # runs), so the row is scored as the model wrote it: the run keeps those words when the
    # gate withholds them.
    long = by_id["en-long"]
    written = long["model_answer"] or long["answer"]
    assert written.startswith("Pheasant follows Momotaro"), long
    accepted = next(q["answers"] for q in QUESTIONS if q["id"] == "en-long")
    scored = score_answer(written, accepted)
    assert scored.rule.startswith("rouge:") and scored.correct, scored
    if long["model_answer"] is None:  # shown as written: the run's own verdict is the same
        assert long["rule"].startswith("rouge:") and long["correct"], long
    else:  # withheld by the gate, and said so: "not sure" is no answer to score as right
        assert any("not shown" in w for w in long["warnings"]), long
        assert not long["correct"] and not long["strict_correct"], long
    assert [i["cached"] for i in first["ingests"]] == [False, False]
    # a saved run scored again by the same rules gives the same verdicts
    from storygraph.evaluation.e2e import rescore_report

    again = rescore_report([first], questions).to_json()["questions"]
    assert [(q["correct"], q["strict_correct"]) for q in again] == [
        (q["correct"], q["strict_correct"]) for q in first["questions"]
    ]
    assert all(i["relations"] > 0 and i["status"] == "added" for i in first["ingests"])
    overall = first["overall"]["onehop+qtype+reltype+rerank"]
    assert overall["questions"] == 4
    # a source the answer read is one of its citations: evidence read is evidence cited
    assert all(q["evidence_cited"] for q in first["questions"] if q["evidence_found"])
    assert overall["evidence_cited"] is not None
    assert overall["evidence_cited"] >= overall["evidence_recall"]
    assert overall["correct"] == sum(q["correct"] for q in first["questions"]) >= 2
    assert overall["llm_calls_per_question"] == 3.0
    assert overall["unanswerable"] == 1 and overall["unanswerable_declined"] == 1.0
    shown = [q for q in first["questions"] if q["supported"] and not q["unanswerable"]]
    assert overall["coverage"] == round(len(shown) / 4, 4)
    if shown:
        right = sum(q["strict_correct"] for q in shown)
        assert overall["supported_precision"] == round(right / len(shown), 4)
    assert overall["strict_correct"] == sum(q["strict_correct"] for q in first["questions"])
    extract_calls = model.calls.count("extract")
    assert extract_calls > 0

    model.calls.clear()
    second = run()
    assert [i["cached"] for i in second["ingests"]] == [True, True]
    assert "extract" not in model.calls  # the cached ingest calls no model
    assert [q["answer"] for q in second["questions"]] == [q["answer"] for q in first["questions"]]
    assert second["ingests"][0]["seconds"] == first["ingests"][0]["seconds"]


def test_small_model_path_makes_one_streamed_call_per_question(
    tmp_path: Path, shared_dir: Path
) -> None:
    questions = load_e2e_questions(_write(tmp_path))[:1]
    model = ScriptedChatModel()
    report = run_e2e(
        Settings(data_dir=tmp_path / "data"),
        questions,
        shared_dir / "stories",
        modes=["onehop+qtype+reltype+rerank"],
        options=QAOptions(),
        cache_dir=None,
        llm=model,
        extractor=TransformerExtractor(model),
        info=ModelInfo("embedded", "scripted-small", capable=False),
    )
    result = report.results[0]
    assert result.correct, result.answer
    assert result.llm_calls == 1
    assert 0 < result.first_token_seconds <= result.seconds
    # the steps before the answer's (names, retrieval, scoring, sentences) were timed apart
    assert 0 < result.before_answer_seconds < result.seconds
    asked = [c for c in model.calls if c != "extract"]
    assert asked == ["answer"]
    # the verifier judged the written answer and the run keeps what it read, for the trainer
    judged = result.verifier
    assert judged is not None and 0.0 <= judged["confidence"] <= 1.0
    assert judged["evidence"]["answer"] and judged["evidence"]["read"]
    assert set(judged["signals"]) >= {"grounded_cited", "no_premise", "mean_logprob"}


def test_library_mode_asks_every_question_of_one_store_and_counts_other_stories(
    tmp_path: Path, shared_dir: Path
) -> None:
    cases = [
        QUESTIONS[0],
        {
            "id": "ja-hanasaka-grandpa",
            "story": "ja/hanasaka_jijii_kusuyama.txt",
            "question": "おじいさんは何をしましたか？",
            "answers": ["灰"],
        },
    ]
    path = tmp_path / "library.jsonl"
    path.write_text("\n".join(json.dumps(q, ensure_ascii=False) for q in cases), encoding="utf-8")
    report = run_e2e(
        Settings(data_dir=tmp_path / "data"),
        load_e2e_questions(path),
        shared_dir / "stories",
        modes=["onehop"],
        options=QAOptions(no_llm=True),
        cache_dir=None,
        llm=ScriptedChatModel(),
        library=True,
    ).to_json()
    assert [i["story"] for i in report["ingests"]] == [Path(c["story"]).name for c in cases]
    by_id = {q["id"]: q for q in report["questions"]}
    # 桃太郎 is only in the 桃太郎 story: scoped to it although the store holds both
    assert by_id["ja-companions"]["other_stories"] == []
    assert by_id["ja-companions"]["cites_own_story"]
    assert by_id["ja-companions"]["correct"]
    # the scripted extraction knows 桃太郎's triples only, so only that story has an おじいさん
    # in the graph; sentence search reads both stories (one document frequency over them,
    # docs/ISSUES.md#sentence-search), so the hanasaka question may cite its own story or
    # 桃太郎's: whatever it cites outside its own story is what is counted
    grandpa = by_id["ja-hanasaka-grandpa"]
    assert grandpa["entities"] == ["おじいさん"]
    assert set(grandpa["other_stories"]) <= {"momotaro_kusuyama.txt"}
    assert "hanasaka_jijii_kusuyama.txt" not in grandpa["other_stories"]
    overall = report["overall"]["onehop"]
    assert overall["citing_other_stories"] == sum(bool(q["other_stories"]) for q in by_id.values())


def test_a_library_asked_a_few_questions_still_holds_every_story_of_its_shelf(
    tmp_path: Path, shared_dir: Path
) -> None:
    # `--only` picks one question; the library it is asked of is still every set's story, so
    # another story's おじいさん competes as it does in the whole run
    path = _write(tmp_path)
    report = run_e2e(
        Settings(data_dir=tmp_path / "data"),
        load_e2e_questions(path)[:1],
        shared_dir / "stories",
        modes=["onehop"],
        options=QAOptions(no_llm=True),
        cache_dir=None,
        llm=ScriptedChatModel(),
        library=True,
        shelf=["ja/momotaro_kusuyama.txt", "ja/hanasaka_jijii_kusuyama.txt"],
    ).to_json()
    stocked = [i["story"] for i in report["ingests"]]
    assert stocked == ["momotaro_kusuyama.txt", "hanasaka_jijii_kusuyama.txt"]
    assert [q["id"] for q in report["questions"]] == ["ja-companions"]
