"""A model server that crashes is noticed, named, restarted once, and reported instead of
restarted again after a second crash in a row; nothing asked or stored is lost (storygraph
.crashes). The server is a real process, the stand-in OpenAI-compatible server, that kills
itself with SIGSEGV at its first chat request, as llama.cpp's AMX kernels did; the graph is the
seed graph in the real embedded FalkorDB; the app's services and the CLI are the real ones."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storygraph.crashes import CrashLedger
from storygraph.doctor import DoctorReport, check_crashes
from storygraph.ingest.graph_io import import_graph, load_graph_file
from storygraph.llm.embedded_server import EmbeddedServer
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from tests.helpers.cli_process import run_cli
from tests.helpers.model_install import installed_model

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "tests" / "helpers" / "fake_openai_server.py"
QUESTION = "桃太郎の家来は誰？"
SEGFAULT = "a segmentation fault (SIGSEGV)"

pytestmark = pytest.mark.timeout(300)


class CrashingStart:
    """An `EmbeddedStarter` whose server is the stand-in that segfaults at its first answer."""

    def __init__(self, model: Path) -> None:
        self.model = model
        self.server: EmbeddedServer | None = None

    def __call__(self, settings: Settings) -> tuple[Any, str]:
        self.server = EmbeddedServer(
            settings,
            model=self.model,
            command=lambda launch: [
                *[sys.executable, str(FAKE), "--port", str(launch.port)],
                "--segfault-on-chat",
            ],
        )
        self.server.start()
        return self.server, ""


@pytest.fixture
def services(tmp_path: Path, shared_dir: Path) -> Iterator[Services]:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF stand-in")
    settings = Settings(data_dir=tmp_path / "data", llm_provider="embedded", model_dir=None)
    start = CrashingStart(model)
    built = build_services(settings, embedded=start)
    import_graph(built.store, load_graph_file(shared_dir / "eval" / "seed_graph.json"))
    yield built
    built.close()
    if start.server is not None:
        start.server.stop()


def _ask(services: Services) -> Any:
    return services.qa().ask(QUESTION, QAOptions.from_settings(services.settings))


def test_a_crash_is_named_restarted_once_then_reported_and_nothing_is_lost(
    services: Services,
) -> None:
    stories = services.store.list_documents()
    ledger = CrashLedger(services.settings.data_dir, "model")
    server = services._embedded
    first_pid = server.pid

    first = _ask(services)  # the server dies under the first answer
    said = " ".join(first.warnings)
    assert f"the model server stopped with {SEGFAULT} at its first use" in said, said
    assert "answers list the graph's facts until it is back" in said
    assert first.answer.strip()  # the facts answer, not nothing
    assert [c.pid for c in ledger.in_a_row()] == [first_pid]

    second = _ask(services)  # restarted once: a new process, and the status says so
    assert server.pid != first_pid
    assert f"{SEGFAULT} at its first use after starting; it was restarted" in (
        services.model_status
    )
    assert SEGFAULT in " ".join(second.warnings)
    assert len(ledger.in_a_row()) == 2  # the new one crashed too: the second in a row

    third = _ask(services)  # not restarted again, and the status says so
    assert "twice in a row, so it is not restarted again" in services.model_status
    assert "python -m storygraph doctor" in services.model_status
    assert third.answer.strip()
    assert services.llm() is None  # no third start: the facts answer until it is fixed
    assert len(ledger.in_a_row()) == 2

    report = DoctorReport(model="embedded")
    check_crashes(report, services.settings)
    check = report.check("model crashes")
    assert check is not None and check.status == "fail"
    assert "Fatal Python error: Segmentation fault" in check.detail  # the log's tail
    assert "--clear-crashes" in check.fix or "make model" in check.fix

    assert services.store.list_documents() == stories  # nothing stored was lost


# The CLI in its own process, as a user runs it, the server command swapped for the stand-in.
CLI = f"""
import sys
from storygraph.llm import embedded_server, install
install.llama_server_installed = lambda: True
embedded_server.llama_command = lambda launch: [
    sys.executable, {str(FAKE)!r}, "--port", str(launch.port), "--segfault-on-chat"
]
from storygraph.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(
        data,
        [sys.executable, "-c", CLI],
        *args,
        timeout=150,
        STORYGRAPH_EMBEDDED_IDLE_S="0",
        STORYGRAPH_STORE_IDLE_S="0",
        STORYGRAPH_ENCODER_IDLE_S="0",
    )


def test_the_cli_names_the_crash_and_the_doctor_gives_the_fix(
    tmp_path: Path, shared_dir: Path
) -> None:
    data = tmp_path / "data"
    installed_model(data)
    seed = str(shared_dir / "eval" / "seed_graph.json")
    assert _cli(data, "graph", "import", seed).returncode == 0

    first = _cli(data, "ask", QUESTION, "--json")
    assert first.returncode == 0, first.stderr
    answer = json.loads(first.stdout)
    assert any(SEGFAULT in w for w in answer["warnings"]), answer["warnings"]

    second = _cli(data, "ask", QUESTION, "--json")  # a new process starts it once more
    assert second.returncode == 0, second.stderr
    assert any(SEGFAULT in w for w in json.loads(second.stdout)["warnings"])

    third = _cli(data, "ask", QUESTION, "--json")  # two in a row: not started again
    assert third.returncode == 0, third.stderr
    assert "twice in a row, so it is not restarted again" in third.stderr
    assert json.loads(third.stdout)["answer"].strip()  # the facts answer

    doctor = _cli(data, "doctor", "--json")
    assert doctor.returncode == 1
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["model crashes"]["status"] == "fail"
    assert SEGFAULT in checks["model crashes"]["detail"]

    cleared = _cli(data, "doctor", "--clear-crashes", "--json")
    assert "crashes cleared: the model server" in cleared.stderr
    # a new row: the doctor may start the server again, and the stand-in crashes at its probe
    assert len(CrashLedger(data, "model").in_a_row()) == 1
    checks = {c["name"]: c for c in json.loads(cleared.stdout)["checks"]}
    assert "model crashes" not in checks  # read before the doctor's own start
