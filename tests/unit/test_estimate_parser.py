"""The parser path's ingest time: the parser's speed per language, never the model's rate."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from storygraph import estimate
from storygraph.ingest.measured_rate import MeasuredRate
from storygraph.llm.factory import ModelInfo
from storygraph.settings import Settings


class _NoStories:
    def find_document_by_sha(self, sha: str) -> None:
        return None


def _services(tmp_path: Path) -> Any:
    """The embedded default: the small model, read by the parser (STORYGRAPH_EXTRACTOR=auto)."""
    return SimpleNamespace(
        settings=Settings(data_dir=tmp_path),
        info=ModelInfo("embedded", "small", capable=False),
        llm_override=None,
        store=_NoStories(),
        extractor=lambda: SimpleNamespace(name="parser+verbs"),
    )


ENGLISH_NOVEL = ("The Mole had been working very hard all the morning. " * 2700).encode()
SLOW_MODEL = MeasuredRate(
    "embedded:small", tokens=1000, seconds=100.0, chunks=10, ingests=1, updated_at="2026-12-01"
)


def test_an_english_novel_read_by_the_parser_is_timed_in_seconds(tmp_path: Path) -> None:
    # ~143k characters: the old single 700 chars/s said ~205 s; the real ingest took 6.9 s.
    result = estimate.estimate_texts(_services(tmp_path), [("novel.txt", ENGLISH_NOVEL)])
    (f,) = result["files"]
    assert f["language"] == "en" and f["chars"] > 140_000
    assert result["calls"] == 0 and result["prompt_tokens"] == 0
    assert 5 < result["seconds"] < 20
    assert "13,000 in English" in result["basis"]


def test_japanese_is_timed_at_the_japanese_parser_speed(tmp_path: Path) -> None:
    text = "むかし、むかし、あるところに、おじいさんとおばあさんがありました。" * 300
    result = estimate.estimate_texts(_services(tmp_path), [("ja.txt", text.encode())])
    chars = result["files"][0]["chars"]
    assert result["seconds"] == pytest.approx(chars / estimate.PARSER_CHARS_PER_S["ja"], abs=0.1)
    assert estimate.PARSER_CHARS_PER_S["ja"] < estimate.PARSER_CHARS_PER_S["en"]


def test_the_models_measured_rate_does_not_time_the_parser(tmp_path: Path) -> None:
    services = _services(tmp_path)
    files = [("novel.txt", ENGLISH_NOVEL)]
    with_rate = estimate.estimate_texts(services, files, SLOW_MODEL)
    assert with_rate["seconds"] == estimate.estimate_texts(services, files)["seconds"]
    assert "tokens/s" not in with_rate["summary"]
