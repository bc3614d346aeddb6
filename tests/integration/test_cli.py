"""The CLI's promises from the issue, run through `storygraph.cli.main` on a real store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from storygraph.cli import main
from storygraph.qa.retrieval.scoring import NOT_FITTING

ROOT = Path(__file__).resolve().parents[2]
Triple = tuple[str, str, str]


def _ask(capsys: pytest.CaptureFixture[str], question: str, *extra: str) -> dict:
    assert main(["ask", question, "--no-llm", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _triples(result: dict) -> set[Triple]:
    return {(f["start"], f["type"], f["end"]) for f in result["facts"]}


@pytest.fixture
def seeded(cli_env: Path, shared_dir: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    assert main(["graph", "import", str(shared_dir / "eval" / "seed_graph.json")]) == 0
    assert "9 entities added" in capsys.readouterr().out
    return cli_env


def test_ask_lists_every_relation_touching_the_entity_in_both_directions(
    seeded: Path, shared_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _ask(capsys, "桃太郎を倒したのは誰？")
    assert result["entities"] == ["桃太郎"]
    graph = json.loads((shared_dir / "eval" / "seed_graph.json").read_text(encoding="utf-8"))
    touching = {
        (r["source"], r["type"], r["target"])
        for r in graph["relationships"]
        if "桃太郎" in (r["source"], r["target"])
    }
    assert _triples(result) == touching
    assert ("鬼", "DEFEATS", "桃太郎") in _triples(result)
    for leak in [
        ("おじいさん", "GOES_TO", "山"),
        ("おじいさん", "LIVES_IN", "村"),
        ("おばあさん", "LIVES_IN", "村"),
    ]:
        assert leak not in _triples(result)
    for fact in result["facts"]:
        assert set(fact) >= {"start", "type", "end", "score", "kept", "chunk_ids"}
    # Rank order: scored candidates best first, then those the relation-type stage set aside
    # (unscored, dropped); every kept fact comes before every fact dropped by rank (those set
    # aside because their relation does not fit the question's words keep their place).
    scores = [f["score"] for f in result["facts"] if f["score"] is not None]
    assert scores == sorted(scores, reverse=True)
    assert [f["score"] is None for f in result["facts"]] == sorted(
        f["score"] is None for f in result["facts"]
    )
    kept = [f["kept"] for f in result["facts"] if f["reason"] != NOT_FITTING]
    assert kept == sorted(kept, reverse=True) and any(kept)
    kept_triples = {(f["start"], f["type"], f["end"]) for f in result["facts"] if f["kept"]}
    assert ("鬼", "DEFEATS", "桃太郎") in kept_triples
    assert result["answer"]


def test_historical_modes_show_their_leaks_on_purpose(
    seeded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    undirected = _triples(_ask(capsys, "桃太郎を倒したのは誰？", "--mode", "undirected2"))
    directed = _triples(_ask(capsys, "桃太郎を倒したのは誰？", "--mode", "directed2"))
    assert ("おばあさん", "LIVES_IN", "村") in undirected
    assert ("おじいさん", "GOES_TO", "山") in directed
    assert ("おばあさん", "LIVES_IN", "村") not in directed


def test_stats_docs_export_and_reset(
    seeded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert (stats["entities"], stats["relations"], stats["documents"]) == (9, 15, 0)
    out = tmp_path / "export.json"
    assert main(["graph", "export", str(out)]) == 0
    exported = json.loads(out.read_text(encoding="utf-8"))
    assert len(exported["nodes"]) == 9 and len(exported["relationships"]) == 15
    assert main(["docs"]) == 0
    assert "no documents" in capsys.readouterr().out
    assert main(["reset"]) == 2  # refuses without --yes
    assert main(["reset", "--yes"]) == 0
    capsys.readouterr()
    assert main(["stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entities"] == 0


def test_errors_are_one_clear_line_not_a_traceback(
    cli_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert main(["graph", "import", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "is not a JSON graph file" in err and "Traceback" not in err


def test_ingest_without_any_model_says_what_to_do(
    cli_env: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STORYGRAPH_NO_LLM", "true")
    monkeypatch.setenv("STORYGRAPH_EXTRACTOR", "model")  # the parser would read it without one
    from storygraph.settings import get_settings

    get_settings.cache_clear()
    story = tmp_path / "story.txt"
    story.write_text("桃太郎は鬼を退治しました。", encoding="utf-8")
    assert main(["ingest", str(story)]) == 1
    out = capsys.readouterr().out
    assert "failed" in out and "needs a language model" in out
    assert main(["docs"]) == 0
    assert "no documents" in capsys.readouterr().out


def test_module_entry_point_runs(cli_env: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "storygraph", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    for command in ("ingest", "ask", "graph", "stats", "docs", "reset", "doctor", "eval"):
        assert command in done.stdout


def test_the_module_entry_point_still_runs_its_exit_handlers(cli_env: Path) -> None:
    """`python -m storygraph` freezes the garbage collector when the command is over (the last
    collection at exit is skipped, docs/ISSUES.md#startup-imports): the store's server it started is
    still stopped by its atexit handler, and the command's exit code is the process's."""
    from storygraph.processes import pid_alive
    from storygraph.store.falkordb_server import EmbeddedFalkorDB

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "storygraph", *argv],
            cwd=cli_env.parent,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(ROOT), "STORYGRAPH_STORE_IDLE_S": "0"},
        )

    done = run("stats")
    assert done.returncode == 0, done.stderr
    assert "documents" in done.stdout
    server = EmbeddedFalkorDB(cli_env)
    assert not server.paths.pidfile.exists()  # removed by the server's stop at exit
    assert not server.paths.socket.exists()
    missing = run("entity", "誰でもない")
    assert missing.returncode == 1
    assert "no entity called" in missing.stderr
    assert server.pid() is None or not pid_alive(server.pid())  # type: ignore[arg-type]


def test_ingest_compares_the_estimate_with_what_it_cost(
    cli_env: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from storygraph import services as services_module
    from tests.helpers.scripted_model import ScriptedChatModel

    real_build = services_module.build_services
    monkeypatch.setattr(
        "storygraph.cli.build_services",
        lambda settings, **_: real_build(settings, llm=ScriptedChatModel()),
    )
    story = tmp_path / "story.txt"
    story.write_text(
        "桃太郎は犬と猿ときじを家来にしました。桃太郎は鬼を退治しました。", encoding="utf-8"
    )
    assert main(["ingest", str(story), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["reports"][0]["status"] == "added"
    versus = result["estimate_vs_actual"]
    assert versus["chunks"]["estimated"] == versus["chunks"]["actual"] == 1
    assert versus["calls"]["estimated"] == versus["calls"]["actual"] == 1


def test_ingest_no_llm_builds_from_the_parser_and_says_so(
    cli_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    story = tmp_path / "short.txt"
    story.write_text(
        "むかし、桃太郎という男の子がいました。\n"
        "　犬はきびだんごをもらって、桃太郎について行きました。\n"
        "　桃太郎は鬼が島へ行って、鬼を退治しました。\n",
        encoding="utf-8",
    )
    assert main(["ingest", str(story), "--no-llm"]) == 0
    out = capsys.readouterr().out
    assert "added" in out and "0 LLM calls" in out
    assert "built by: the parser (no model)" in out
    result = _ask(capsys, "桃太郎の仲間は誰？")
    assert ("犬", "FOLLOWS", "桃太郎") in _triples(result)


def test_without_a_model_ingest_reads_with_the_parser_by_default(
    cli_env: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STORYGRAPH_NO_LLM", "true")
    from storygraph.settings import get_settings

    get_settings.cache_clear()
    story = tmp_path / "story.txt"
    story.write_text("桃太郎は鬼を退治しました。", encoding="utf-8")
    assert main(["ingest", str(story), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["reports"][0]
    assert report["status"] == "added" and report["extractor"] == "parser+verbs"
    assert report["relations_added"] >= 1
