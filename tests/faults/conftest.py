"""Shared fixtures of the fault suite: one embedded FalkorDB per module, one graph per test.

Every test that injects a fault compares `snapshot(store)` before and after it: the graph export,
the document list and the counts must be equal (or differ exactly as the test says), which is
what "nothing lost, nothing corrupted" means here — not the absence of an exception.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel

from storygraph.services import Services, build_services
from storygraph.settings import Settings
from storygraph.store import GraphStore
from storygraph.store.falkordb_server import EmbeddedFalkorDB, serves_socket
from tests.helpers.scripted_model import ScriptedChatModel

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
STORIES = SHARED / "stories"

# Test-only probes of the raw graph (every label and every node), used to prove that no input
# created nodes or labels outside the graph model. The app itself never needs them.
PROBE_LABELS = "MATCH (n) UNWIND labels(n) AS label RETURN DISTINCT label ORDER BY label"
PROBE_NODE_COUNT = "MATCH (n) RETURN count(n) AS n"

SEED_JA = (
    "むかしむかし、おじいさんとおばあさんがありました。おじいさんは山へしば刈りに行きました。"
    "おばあさんは川へ洗濯に行きました。おばあさんは大きな桃を見つけました。"
    "桃から生まれた子を桃太郎と名づけ、おじいさんは桃太郎を大事に育てました。"
)
SEED_EN = (
    "The old man went to the mountains. The old woman finds a peach in the river. "
    "Momotaro was born from the peach. The dog follows Momotaro."
)
# A second story sharing the seed's characters (merges into them) and adding new ones.
STORY = (
    SEED_JA
    + "桃太郎は鬼が島へ行きました。犬は桃太郎の家来になりました。猿も桃太郎の家来になりました。"
    + "桃太郎は鬼を倒しました。鬼は宝物を持っていました。鬼は鬼が島に住んでいました。"
).encode()

_graph_numbers = itertools.count(1)


def snapshot(store: GraphStore) -> dict[str, Any]:
    """Everything a user could lose: the graph export, the documents and the counts."""
    docs = sorted((asdict(d) for d in store.list_documents()), key=lambda d: d["id"])
    return {"graph": store.export_graph(), "documents": docs, "stats": store.stats()}


def graph_labels(store: GraphStore) -> list[str]:
    return [row["label"] for row in store.runner.run(PROBE_LABELS)]


def node_count(store: GraphStore) -> int:
    rows = store.runner.run(PROBE_NODE_COUNT)
    return int(rows[0]["n"]) if rows else 0


def chunk_ids_everywhere(store: GraphStore) -> set[str]:
    """Every chunk id any entity or relation of the export refers to."""
    graph = store.export_graph()
    found: set[str] = set()
    for item in [*graph["nodes"], *graph["relationships"]]:
        found.update(item.get("chunk_ids", []))
    return found


def make_settings(data_dir: Path, **overrides: Any) -> Settings:
    """Settings that ignore the developer's `.env` and environment secrets."""
    values: dict[str, Any] = {
        "data_dir": data_dir,
        "graph_name": f"faults_{next(_graph_numbers)}",
        "llm_provider": "none",
        "openai_api_key": None,
        "neo4j_uri": None,
        "chunk_size": 200,
        "chunk_overlap": 0,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def stop_server(data_dir: Path) -> None:
    """Stop the embedded FalkorDB a test started in `data_dir` (by its pid, and only when that
    pid is the server of this data directory)."""
    server = EmbeddedFalkorDB(data_dir)
    pid = server.pid()
    if pid is not None and serves_socket(pid, server.paths.socket):
        EmbeddedFalkorDB._terminate(pid)


ServicesFactory = Callable[..., Services]


@pytest.fixture(scope="module")
def module_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One data directory and one embedded FalkorDB server per test module, owned here.

    The Services of each test attach to it and never own it, so closing them does not stop it:
    before, the first test's Services started (and owned) the server and stopped it at its end,
    so every test restarted it and replayed the growing append-only file of all the graphs
    before it, which under load ran past the start timeout (two flaky failures). A test that
    kills it gets it restarted by the runner; that restart then belongs to the test's Services."""
    path = tmp_path_factory.mktemp("faults")
    server = EmbeddedFalkorDB(path)
    server.ensure_running()
    yield path
    server.stop()
    stop_server(path)  # a server a test restarted after killing this one


@pytest.fixture
def make_services(module_data_dir: Path) -> Iterator[ServicesFactory]:
    """Build Services on the module's server, each call on a fresh graph; closed afterwards."""
    built: list[Services] = []

    def factory(
        llm: BaseChatModel | None = None, *, data_dir: Path | None = None, **overrides: Any
    ) -> Services:
        settings = make_settings(data_dir or module_data_dir, **overrides)
        services = build_services(settings, llm=llm or ScriptedChatModel())
        built.append(services)
        return services

    yield factory
    for services in built:
        services.close()


@pytest.fixture
def own_data_dir(tmp_path: Path) -> Iterator[Path]:
    """A private data directory (own server) for tests that kill or restart the server."""
    yield tmp_path
    stop_server(tmp_path)


@pytest.fixture
def seeded(make_services: ServicesFactory) -> Services:
    """Services whose graph already holds one committed Japanese document."""
    services = make_services()
    report = services.ingestor().ingest_bytes("seed.txt", SEED_JA.encode("utf-8"))
    assert report.status == "added", report.message
    assert services.store.stats()["relations"] > 0
    return services


@pytest.fixture
def clean_graph(make_services: ServicesFactory, own_data_dir: Path) -> dict[str, Any]:
    """The graph a fault-free run gives for seed + STORY (the reference to compare with)."""
    services = make_services(data_dir=own_data_dir)
    services.ingestor().ingest_bytes("seed.txt", SEED_JA.encode())
    assert services.ingestor().ingest_bytes("story.txt", STORY).status == "added"
    return snapshot(services.store)
