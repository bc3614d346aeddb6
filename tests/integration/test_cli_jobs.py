"""`python -m storygraph ingest` runs through the job runner; `cache` shows and clears it."""

from __future__ import annotations

from pathlib import Path

import pytest

from storygraph.cli import main
from storygraph.ingest.jobs import read_jobs
from storygraph.llm.factory import ModelInfo
from storygraph.services import Services
from tests.helpers.scripted_model import ScriptedChatModel

STORY = "桃太郎は犬と猿ときじを家来にしました。桃太郎は鬼を退治しました。"


@pytest.fixture
def scripted_cli(cli_env: Path, monkeypatch: pytest.MonkeyPatch) -> list[ScriptedChatModel]:
    """Every CLI command builds its services with a fresh scripted model, listed here."""
    from storygraph import services as services_module

    models: list[ScriptedChatModel] = []
    real_build = services_module.build_services

    def build(settings: object, **_: object) -> Services:
        models.append(ScriptedChatModel())
        info = ModelInfo("scripted", "scripted-model", capable=True)  # one name, as configured
        return real_build(settings, llm=models[-1], info=info)  # type: ignore[arg-type]

    monkeypatch.setattr("storygraph.cli.build_services", build)
    return models


def test_cli_ingest_is_a_job_and_a_second_ingest_reuses_the_saved_chunks(
    cli_env: Path,
    scripted_cli: list[ScriptedChatModel],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    story = tmp_path / "story.txt"
    story.write_text(STORY, encoding="utf-8")
    assert main(["ingest", str(story)]) == 0
    captured = capsys.readouterr()
    assert "story.txt: [" in captured.err and "1/1 chunks" in captured.err  # progress on stderr
    assert "story.txt: added" in captured.out
    assert scripted_cli[-1].calls.count("extract") == 1
    (job,) = read_jobs(cli_env)
    assert (job.name, job.state, job.chunks_extracted) == ("story.txt", "done", 1)

    assert main(["cache"]) == 0
    assert "1 saved chunk extractions" in capsys.readouterr().out
    assert main(["docs", "delete", "story.txt"]) == 0
    assert main(["ingest", str(story)]) == 0
    out = capsys.readouterr().out
    assert "1 chunks from saved extractions, 0 new" in out and "0 LLM calls" in out
    assert scripted_cli[-1].calls.count("extract") == 0

    assert main(["cache", "clear"]) == 0
    assert "1 saved chunk extractions removed" in capsys.readouterr().out
    assert main(["cache"]) == 0
    assert "0 saved chunk extractions" in capsys.readouterr().out
    assert main(["docs", "delete", "story.txt"]) == 0
    assert main(["ingest", str(story)]) == 0
    assert scripted_cli[-1].calls.count("extract") == 1  # cleared: the model is asked again


def test_cli_delete_can_be_undone_until_the_next_ingest(
    cli_env: Path,
    scripted_cli: list[ScriptedChatModel],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    story = tmp_path / "story.txt"
    story.write_text(STORY, encoding="utf-8")
    assert main(["ingest", str(story)]) == 0
    assert main(["docs", "delete", "story.txt"]) == 0
    out = capsys.readouterr().out
    assert "deleted story.txt" in out and "docs undo" in out
    assert main(["docs", "undo", "story.txt"]) == 0
    assert "restored story.txt" in capsys.readouterr().out
    assert main(["docs"]) == 0
    assert "story.txt" in capsys.readouterr().out
    assert main(["docs", "delete", "story.txt"]) == 0
    other = tmp_path / "other.txt"
    other.write_text("犬は鬼が島へ行きました。", encoding="utf-8")
    assert main(["ingest", str(other)]) == 0
    capsys.readouterr()
    assert main(["docs", "undo", "story.txt"]) == 1  # the ingest ended the undo
    assert "only until the next ingest" in capsys.readouterr().err
