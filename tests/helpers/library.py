"""A library of stories in one real embedded store, its extraction scripted at the model
boundary (tests of issue #28's scope: tests/integration/test_library_*.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from storygraph.services import Services, build_services
from storygraph.settings import Settings
from tests.helpers.scripted_logic import Script, Triple
from tests.helpers.scripted_model import ScriptedChatModel


def ingested_library(
    tmp_path: Path, stories: Mapping[str, str], triples: Sequence[Triple]
) -> tuple[Services, dict[str, str]]:
    """Services over a fresh store holding `stories` (file name → text), and their document
    ids by file name; the caller closes the services."""
    settings = Settings(data_dir=tmp_path / "data", chunk_size=40, chunk_overlap=0)
    services = build_services(settings, llm=ScriptedChatModel(script=Script(triples=triples)))
    ids: dict[str, str] = {}
    for name, text in stories.items():
        report = services.ingestor().ingest_bytes(name, text.encode("utf-8"))
        assert report.status == "added", report.message
        ids[name] = report.document_id
    return services, ids


Library = tuple[Services, dict[str, str]]
"""The services over a library's store and its document ids by file name."""


def library_fixture(
    stories: Mapping[str, str], triples: Sequence[Triple]
) -> Callable[[Path], Iterator[Library]]:
    """A pytest fixture of `ingested_library(tmp_path, stories, triples)`, closed after the
    test: `queens = library_fixture(QUEEN_STORIES, QUEENS)` in a test module."""

    @pytest.fixture
    def fixture(tmp_path: Path) -> Iterator[Library]:
        services, ids = ingested_library(tmp_path, stories, triples)
        yield services, ids
        services.close()

    return fixture
