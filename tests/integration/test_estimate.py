"""The ingest estimate: exact chunk counts from the real pipeline, prices, and the check after."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from storygraph import estimate
from storygraph.llm.factory import ModelInfo
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from tests.helpers.scripted_model import ScriptedChatModel

STORIES = Path(__file__).resolve().parents[3] / "shared" / "stories"
MOMOTARO_JA = STORIES / "ja" / "momotaro_kusuyama.txt"
MOMOTARO_EN = STORIES / "en" / "japanese__momotaro-story-of-son-of-peach.txt"


def _services(tmp_path: Path, **settings: object) -> Iterator[Services]:
    """The embedded model's model-extraction path (STORYGRAPH_EXTRACTOR=model): what these
    estimates are about; the parser path costs no call (test below)."""
    info = ModelInfo("embedded", "scripted stand-in", capable=False)
    settings.setdefault("extractor", "model")
    services = build_services(
        Settings(data_dir=tmp_path, **settings), llm=ScriptedChatModel(), info=info
    )
    try:
        yield services
    finally:
        services.close()
        services.store.runner.server.stop()


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    yield from _services(tmp_path)


@pytest.fixture
def priced(tmp_path: Path) -> Iterator[Services]:
    yield from _services(tmp_path, price_prompt_per_1k=0.5, price_completion_per_1k=2.0)


def test_estimated_calls_are_the_chunks_the_ingest_then_makes(services: Services) -> None:
    files = [MOMOTARO_JA, MOMOTARO_EN]
    expected = estimate.estimate_files(services, files)
    ingestor = services.ingestor()
    reports = [ingestor.ingest_bytes(p.name, p.read_bytes()) for p in files]

    assert expected["calls"] == sum(r.chunks for r in reports) > 10
    assert expected["calls"] == sum(r.usage.calls for r in reports)
    check = estimate.compare(expected, reports)
    assert check["calls"]["ratio"] == 1.0
    assert check["chunks"]["estimated"] == check["chunks"]["actual"]


def test_tokens_and_time_follow_the_measured_constants(services: Services) -> None:
    result = estimate.estimate_texts(services, [("a.txt", MOMOTARO_JA.read_bytes())])
    (f,) = result["files"]
    assert f["language"] == "ja" and f["status"] == "new"
    # The fixture's embedded model extracts through the small-model prompt (its constants).
    text = f["chars"] * estimate.TOKENS_PER_CHAR["ja"]
    low = f["calls"] * estimate.SMALL_INSTRUCTION_TOKENS["ja"]
    high = low + text * 1.5  # overlap repeats some text
    assert low < f["prompt_tokens"] <= high
    assert f["completion_tokens"] == f["calls"] * estimate.SMALL_COMPLETION_TOKENS["ja"]
    # Only the chunk and a few template tokens are evaluated anew: the prefix is cached.
    evaluated = f["prompt_tokens"] - f["calls"] * (
        estimate.SMALL_INSTRUCTION_TOKENS["ja"] - estimate.SMALL_UNCACHED_TOKENS_PER_CALL
    )
    assert f["seconds"] == pytest.approx(
        evaluated / estimate.PROMPT_TOKENS_PER_S
        + f["completion_tokens"] / estimate.GENERATION_TOKENS_PER_S,
        abs=0.1,
    )
    assert result["cost"] == 0
    assert "no price configured" in result["summary"]


def test_money_uses_the_price_settings(priced: Services) -> None:
    result = estimate.estimate_texts(priced, [("en.txt", MOMOTARO_EN.read_bytes())])
    expected = result["prompt_tokens"] / 1000 * 0.5 + result["completion_tokens"] / 1000 * 2.0
    assert result["cost"] == pytest.approx(expected, rel=1e-4)
    assert "at the configured prices" in result["summary"]


def test_a_stored_document_costs_nothing(services: Services) -> None:
    data = MOMOTARO_EN.read_bytes()
    services.ingestor().ingest_bytes("first.txt", data)

    result = estimate.estimate_texts(services, [("again.txt", data)])

    assert result["calls"] == 0 and result["prompt_tokens"] == 0
    assert result["files"][0]["status"] == "unchanged"
    assert "first.txt" in result["summary"]


def test_unusable_and_unreadable_files_are_listed_not_raised(
    services: Services, tmp_path: Path
) -> None:
    result = estimate.estimate_files(
        services, [tmp_path / "missing.txt", *_write(tmp_path, "blank.txt", b"   \n")]
    )

    statuses = {f["name"]: f["status"] for f in result["files"]}
    assert statuses == {"blank.txt": "error", "missing.txt": "error"}
    assert result["calls"] == 0
    assert "missing.txt: error: cannot read" in result["summary"]


def test_remote_models_are_timed_per_call(tmp_path: Path) -> None:
    services = build_services(Settings(data_dir=tmp_path), llm=ScriptedChatModel())
    try:
        result = estimate.estimate_texts(services, [("en.txt", MOMOTARO_EN.read_bytes())])
    finally:
        services.close()
        services.store.runner.server.stop()
    assert result["chunk_size"] == 1200  # a capable model gets long chunks, as in the ingest
    assert result["seconds"] == pytest.approx(
        result["calls"] * estimate.REMOTE_SECONDS_PER_CALL, abs=0.1
    )


def _write(directory: Path, name: str, data: bytes) -> list[Path]:
    path = directory / name
    path.write_bytes(data)
    return [path]


def test_time_comes_from_the_measured_rate_once_there_is_one(services: Services) -> None:
    from storygraph.ingest.measured_rate import RateBook
    from storygraph.models import IngestReport, Usage

    data = [("a.txt", MOMOTARO_JA.read_bytes())]
    assert estimate.measured_rate(services) is None
    before = estimate.estimate_texts(services, data, estimate.measured_rate(services))
    assert not before["measured"] and "measured on this machine" not in before["summary"]
    report = IngestReport("earlier.txt", status="added", chunks=10, seconds=200.0)
    report.usage = Usage(10, 1500, 500)  # 10 tokens/s, 20 s per chunk
    RateBook(services.settings.data_dir).record(services.info.label, report)
    rate = estimate.measured_rate(services)
    after = estimate.estimate_texts(services, data, rate)
    assert after["measured"] and "10.0 tokens/s, 20 s per chunk" in after["summary"]
    tokens = after["prompt_tokens"] + after["completion_tokens"]
    assert after["seconds"] == pytest.approx(tokens / 10.0, abs=0.1)
    assert after["calls"] == before["calls"]  # the rate changes the time, not the calls


def test_the_parser_path_is_estimated_at_no_model_call(tmp_path: Path) -> None:
    gen = _services(tmp_path, extractor="auto")
    services = next(gen)
    try:
        result = estimate.estimate_files(services, [MOMOTARO_EN])
        assert result["calls"] == 0 and result["prompt_tokens"] == 0 and result["chunks"] > 0
        assert "parser" in result["basis"] and 0 < result["seconds"] < 120
    finally:
        gen.close()
