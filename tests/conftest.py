"""Shared fixtures: a hermetic environment for every test, real embedded stores in temporary data
dirs, the scripted model, ../shared.

Every test runs hermetically (`hermetic`, autouse): the developer's `STORYGRAPH_*`, `OPENAI_*`,
`AZURE_*` and `NEO4J_*` variables are cleared and the working directory is an empty temporary one,
so no `.env` is read and nothing reaches a configured model or database. STORYGRAPH_STORE_IDLE_S
and STORYGRAPH_ENCODER_IDLE_S are set to 0: a command stops the store's server it started and
starts no encoder helper. Tests marked `neo4j` (deselected unless `-m neo4j`) get the `NEO4J_*`
values of the shell that started pytest through `neo4j_env`, and only they.

Under `CI=true` a skipped test fails the run, and the summary lists the deselected tests
(`tests.helpers.ci_skips`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# `pytester` tests the CI plugin; `ci_skips` fails every skip when CI=true (see that module).
pytest_plugins = ("pytester", "tests.helpers.ci_skips")

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
HERMETIC_PREFIXES = ("STORYGRAPH_", "OPENAI_", "AZURE_", "NEO4J_")

NEO4J_ENV: dict[str, str] = {k: v for k, v in os.environ.items() if k.startswith("NEO4J_")}
"""The shell's NEO4J_* values, kept for the `-m neo4j` tests before `hermetic` clears them."""


def missing_shared(path: Path) -> None:
    """Fail (never skip): CI without ../shared must go red, not quietly test less."""
    pytest.fail(
        f"{path} is missing: the shared stories and eval files must sit beside the project "
        f"({SHARED})",
        pytrace=False,
    )


def _clear_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(HERMETIC_PREFIXES):
            monkeypatch.delenv(name)
    # A CLI command keeps the store's server it started running for STORYGRAPH_STORE_IDLE_S
    # (300 s by default): no test leaves one behind unless it asks for it
    # (tests/integration/test_kept_store_server.py).
    monkeypatch.setenv("STORYGRAPH_STORE_IDLE_S", "0")
    monkeypatch.setenv("STORYGRAPH_ENCODER_IDLE_S", "0")  # and `ask` starts no encoder helper


@pytest.fixture(scope="session", autouse=True)
def hermetic_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The same for session- and module-scoped fixtures (servers, subprocess apps), which are
    set up before any function-scoped fixture."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        _clear_environment(monkeypatch)
        monkeypatch.chdir(tmp_path_factory.mktemp("session-cwd"))
        yield


@pytest.fixture(autouse=True)
def hermetic(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """No developer environment and no `.env` for any test; the settings cache cleared."""
    from storygraph.settings import get_settings

    _clear_environment(monkeypatch)
    cwd = tmp_path_factory.mktemp("cwd")
    monkeypatch.chdir(cwd)  # `.env` is read from the working directory: there is none here
    get_settings.cache_clear()
    yield cwd
    get_settings.cache_clear()


@pytest.fixture
def neo4j_env() -> dict[str, str]:
    """The NEO4J_* settings of the shell, for tests marked `neo4j` only."""
    if not NEO4J_ENV.get("NEO4J_URI"):
        pytest.fail(
            "`-m neo4j` needs NEO4J_URI (and NEO4J_USERNAME / NEO4J_PASSWORD) of a throwaway "
            "Neo4j 5 server: these tests empty the database",
            pytrace=False,
        )
    return dict(NEO4J_ENV)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        missing_shared(SHARED)
    return SHARED


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A clean environment for `storygraph.cli.main`: its own data dir, no model configured."""
    from storygraph.settings import get_settings

    data = tmp_path / "data"
    monkeypatch.chdir(tmp_path)  # no stray .env
    monkeypatch.setenv("STORYGRAPH_DATA_DIR", str(data))
    get_settings.cache_clear()
    yield data
    get_settings.cache_clear()
