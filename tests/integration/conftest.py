"""Store fixtures: embedded FalkorDB always; Neo4j only under `pytest -m neo4j`.

The Neo4j cases empty the database they run against, so an exported NEO4J_URI alone never
selects them (`make test` deselects the `neo4j` marker; see pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from storygraph.services import Services, build_services
from storygraph.settings import Settings
from storygraph.store import GraphStore
from tests.helpers.scripted_model import ScriptedChatModel

ENGINES = ["falkordb", pytest.param("neo4j", marks=pytest.mark.neo4j)]


def _settings(request: pytest.FixtureRequest, data_dir: Path) -> Settings:
    if request.param == "neo4j":
        env = request.getfixturevalue("neo4j_env")
        return Settings(
            data_dir=data_dir,
            neo4j_uri=env["NEO4J_URI"],
            neo4j_username=env.get("NEO4J_USERNAME", "neo4j"),
            neo4j_password=env.get("NEO4J_PASSWORD", ""),
            neo4j_database=env.get("NEO4J_DATABASE", "neo4j"),
        )
    return Settings(data_dir=data_dir)


@pytest.fixture(params=ENGINES)
def engine_services(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Services]:
    """Services on each engine, emptied, with the scripted model."""
    services = build_services(_settings(request, tmp_path / "data"), llm=ScriptedChatModel())
    services.store.reset()
    yield services
    services.store.reset()
    services.close()


@pytest.fixture
def store(engine_services: Services) -> GraphStore:
    return engine_services.store


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    """Services on embedded FalkorDB with the scripted model."""
    built = build_services(Settings(data_dir=tmp_path / "data"), llm=ScriptedChatModel())
    yield built
    built.close()
