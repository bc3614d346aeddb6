"""Store fixtures: embedded FalkorDB always, Neo4j too when NEO4J_URI is set."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from storygraph.services import Services, build_services
from storygraph.settings import Settings
from storygraph.store import GraphStore
from tests.helpers.scripted_model import ScriptedChatModel

ENGINES = ["falkordb", "neo4j"]


def _settings(engine: str, data_dir: Path) -> Settings:
    if engine == "neo4j":
        uri = os.environ.get("NEO4J_URI")
        if not uri:
            pytest.skip(
                "NEO4J_URI is not set: the Neo4j contract tests need a Neo4j 5 server "
                "(it will be emptied; use a throwaway database)"
            )
        return Settings(
            data_dir=data_dir,
            neo4j_uri=uri,
            neo4j_username=os.environ.get("NEO4J_USERNAME", "neo4j"),
            neo4j_password=os.environ.get("NEO4J_PASSWORD", ""),
            neo4j_database=os.environ.get("NEO4J_DATABASE", "neo4j"),
        )
    return Settings(data_dir=data_dir)


@pytest.fixture(params=ENGINES)
def engine_services(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Services]:
    """Services on each engine, emptied, with the scripted model."""
    services = build_services(_settings(request.param, tmp_path / "data"), llm=ScriptedChatModel())
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
