"""Shared fixtures: real embedded stores in temporary data dirs, the scripted model, ../shared."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"the shared material is not beside the project ({SHARED})")
    return SHARED


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A clean environment for `storygraph.cli.main`: its own data dir, no model configured."""
    from storygraph.settings import get_settings

    data = tmp_path / "data"
    monkeypatch.chdir(tmp_path)  # no stray .env
    for name in list(os.environ):
        if name.startswith(("STORYGRAPH_", "OPENAI_", "AZURE_OPENAI_", "NEO4J_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("STORYGRAPH_DATA_DIR", str(data))
    get_settings.cache_clear()
    yield data
    get_settings.cache_clear()
