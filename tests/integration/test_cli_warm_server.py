"""The CLI's `ask` against a model server that is already running (the app's) reuses it: no
model start, no "loading" line, and the server is left running. The server is a stand-in
process (the fake OpenAI-compatible server) recorded in the data dir's state file, as the app
leaves it; the model file is a sparse file of the real size that the installer's sidecar vouches
for; the graph is the seed graph in the real embedded FalkorDB."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from storygraph.cli import main
from storygraph.llm import embedded_server as es
from storygraph.llm import install
from storygraph.llm import model_files as mf

FAKE = Path(__file__).resolve().parents[1] / "helpers" / "fake_openai_server.py"
REPLY = "The oni was defeated by Momotaro (stand-in server)."

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def running_server(cli_env: Path) -> Iterator[es.ServerState]:
    """A stand-in server recorded in the state file, as a running app leaves it."""
    model = cli_env / "models" / mf.MODEL_FILENAME
    model.parent.mkdir(parents=True)
    with model.open("wb") as fh:  # sparse: the real size, no 1.1 GB written
        fh.truncate(mf.MODEL_SIZE)
    mf._write_sidecar(model, mf.MODEL_SHA256)  # what a verified install leaves next to it
    port = es.free_port()
    log = (cli_env / "stand-in.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, str(FAKE), "--port", str(port), "--reply", REPLY],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while not es.models_answer(port) and time.monotonic() < deadline:
        time.sleep(0.1)
    state = es.ServerState(proc.pid, port, str(model.resolve()), started_at=time.time())
    es.write_state(cli_env / es.STATE_FILE, state)
    yield state
    proc.terminate()
    proc.wait(timeout=10)
    log.close()


def test_ask_reuses_the_running_server_and_leaves_it_running(
    running_server: es.ServerState,
    cli_env: Path,
    shared_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # llama-cpp-python itself is not needed to talk to a running server; do not depend on it
    monkeypatch.setattr(install, "llama_server_installed", lambda: True)
    assert main(["graph", "import", str(shared_dir / "eval" / "seed_graph.json")]) == 0
    capsys.readouterr()

    assert main(["ask", "桃太郎を倒したのは誰？", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["answer"] == REPLY  # the answer came from the running server
    assert "Loading the embedded model" not in err
    after = es.read_state(cli_env / es.STATE_FILE)
    assert after is not None and (after.pid, after.port) == (
        running_server.pid,
        running_server.port,
    )
    assert after.last_used >= running_server.started_at  # the use was stamped
    assert es.serves_port(running_server.pid, running_server.port)  # not stopped by the CLI
    assert "POST /v1/chat/completions" in (cli_env / "stand-in.log").read_text()
