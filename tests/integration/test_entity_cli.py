"""`python -m storygraph entity NAME` and `export-wiki DIR` on the seed graph (an old export
without story time or summaries), through `storygraph.cli.main` on a real store."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from storygraph.cli import main


@pytest.fixture
def seeded(cli_env: Path, shared_dir: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    assert main(["graph", "import", str(shared_dir / "eval" / "seed_graph.json")]) == 0
    capsys.readouterr()
    return cli_env


def test_entity_json_lists_relations_in_both_directions(
    seeded: Path, shared_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["entity", "桃太郎", "--json"]) == 0
    page = json.loads(capsys.readouterr().out)
    found = {(r["start"], r["type"], r["end"], r["direction"]) for r in page["relations"]}
    assert ("鬼", "DEFEATS", "桃太郎", "in") in found
    assert ("桃太郎", "FIGHTS", "鬼", "out") in found
    graph = json.loads((shared_dir / "eval" / "seed_graph.json").read_text(encoding="utf-8"))
    touching = {
        (r["source"], r["type"], r["target"])
        for r in graph["relationships"]
        if "桃太郎" in (r["source"], r["target"])
    }
    assert {(s, t, e) for s, t, e, _ in found} == touching
    assert page["summary"].startswith("桃太郎 (Character)") and page["summary_method"] == "facts"
    # imported without positions: nothing to place in story time, and nothing invented
    assert page["timeline"] == [] and len(page["unplaced"]) == len(touching)
    assert page["history"] == []


def test_entity_timeline_text_and_unknown_names(
    seeded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["entity", "桃太郎", "--timeline"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("timeline:") and "not placed in a story" in out
    assert main(["entity", "竜宮城"]) == 1
    assert "no entity called" in capsys.readouterr().err


def test_export_wiki_writes_one_linked_page_per_entity(
    seeded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "wiki"
    assert main(["export-wiki", str(out)]) == 0
    assert "wrote 9 entity pages" in capsys.readouterr().out
    pages = sorted(p.name for p in out.glob("*.md"))
    assert len(pages) == 10 and "index.md" in pages and "桃太郎.md" in pages
    for path in out.glob("*.md"):
        for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text(encoding="utf-8")):
            assert (out / unquote(target)).is_file(), f"{path.name}: {target}"
    momotaro = (out / "桃太郎.md").read_text(encoding="utf-8")
    # the label people see: an imported fact has no sentence, so its type reads as words
    assert "## Relations to 桃太郎" in momotaro and "← defeats" in momotaro
