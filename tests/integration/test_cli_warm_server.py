"""The CLI and a warm model server. `ask` against a server that is already running (the app's)
reuses it: no model start, no "loading" line, and the server is left running. A server the CLI
starts itself says it is loading, outlives the CLI for STORYGRAPH_EMBEDDED_IDLE_S, and the next
command reuses it. The server is a stand-in process (the fake OpenAI-compatible server); the
model file is a sparse file of the real size that the installer's sidecar vouches for; the graph
is the seed graph in the real embedded FalkorDB."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storygraph.cli import main
from storygraph.llm import embedded_server as es
from storygraph.llm import install
from tests.helpers.cli_process import run_cli
from tests.helpers.model_install import installed_model

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "tests" / "helpers" / "fake_openai_server.py"
REPLY = "The oni was defeated by Momotaro (stand-in server)."

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def running_server(cli_env: Path) -> Iterator[es.ServerState]:
    """A stand-in server recorded in the state file, as a running app leaves it."""
    model = installed_model(cli_env)
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


def model_wrote(payload: dict[str, Any]) -> str:
    """What the model wrote: the answer, or, when the support check did not show it (the
    stand-in's reply names no one the seed graph's sources put in the asked role), the model's
    text the support step keeps in the trace."""
    step = next(s for s in payload["steps"] if s["name"] == "support")
    return str(step["model_answer"] or payload["answer"])


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
    assert model_wrote(json.loads(out)) == REPLY  # the answer came from the running server
    usage = json.loads(out)["usage"]  # its stream, like llama-cpp-python's, reports no tokens
    assert usage["calls"] >= 1 and usage["unreported"] == usage["calls"], usage
    assert "Loading the embedded model" not in err
    after = es.read_state(cli_env / es.STATE_FILE)
    assert after is not None and (after.pid, after.port) == (
        running_server.pid,
        running_server.port,
    )
    assert after.last_used >= running_server.started_at  # the use was stamped
    assert es.serves_port(running_server.pid, running_server.port)  # not stopped by the CLI
    assert "POST /v1/chat/completions" in (cli_env / "stand-in.log").read_text()


# The CLI in its own process (atexit runs at its exit), the server command swapped for the
# stand-in and llama-cpp-python's presence assumed: everything else is the real CLI.
CLI = f"""
import sys
from storygraph.llm import embedded_server, install
install.llama_server_installed = lambda: True
embedded_server.llama_command = lambda launch: [
    sys.executable, {str(FAKE)!r}, "--port", str(launch.port), "--reply", {REPLY!r}
]
from storygraph.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # the store's server and the encoder helper are not what this test keeps warm: idle 0 stops
    # them with each command, as the suite's other CLI runs do (else they outlive the test 300 s)
    return run_cli(
        data,
        [sys.executable, "-c", CLI],
        *args,
        timeout=120,
        STORYGRAPH_EMBEDDED_IDLE_S="120",
        STORYGRAPH_STORE_IDLE_S="0",
        STORYGRAPH_ENCODER_IDLE_S="0",
    )


def test_a_server_the_cli_started_stays_warm_for_the_next_command(
    tmp_path: Path, shared_dir: Path
) -> None:
    data = tmp_path / "data"
    installed_model(data)
    seed = str(shared_dir / "eval" / "seed_graph.json")
    assert _cli(data, "graph", "import", seed).returncode == 0
    try:
        first = _cli(data, "ask", "桃太郎を倒したのは誰？", "--json")
        assert first.returncode == 0, first.stderr
        assert "Loading the embedded model" in first.stderr
        assert model_wrote(json.loads(first.stdout)) == REPLY
        state = es.read_state(data / es.STATE_FILE)
        assert state is not None and es.serves_port(state.pid, state.port)  # outlived the CLI

        second = _cli(data, "ask", "桃太郎を倒したのは誰？", "--json")
        assert second.returncode == 0, second.stderr
        assert "Loading the embedded model" not in second.stderr  # no model start this time
        assert model_wrote(json.loads(second.stdout)) == REPLY
        again = es.read_state(data / es.STATE_FILE)
        assert again is not None and (again.pid, again.port) == (state.pid, state.port)
    finally:
        leftover = es.read_state(data / es.STATE_FILE)
        if leftover is not None and es.serves_port(leftover.pid, leftover.port):
            es.terminate_pid(leftover.pid, 10)  # the reaper then finds it gone and exits
