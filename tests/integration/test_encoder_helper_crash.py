"""The sentence encoder's helper crashes (storygraph.crashes, helper "encoder"): the real helper
process (storygraph.text.encoder_server, the encoder loaded) is sent SIGSEGV; faulthandler writes
its line to the helper's log and the signal kills it, as a crash in the encoder would. The next
request notices it, names it ("a segmentation fault (SIGSEGV)", from its exit status when this
process started it, else from its log), starts it again once, and after a second crash in a row
does not: the process loads the encoder itself, and the answer's warnings say both. The CLI's
`ask` is run as a user runs it, in its own process."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from storygraph.crashes import CrashLedger
from storygraph.doctor import DoctorReport, check_crashes
from storygraph.ingest.graph_io import import_graph, load_graph_file
from storygraph.processes import pid_alive
from storygraph.services import build_services
from storygraph.settings import Settings
from storygraph.text import encoder_traces
from storygraph.text.encoder_server import EncoderClient, EncoderCrashed, stop_encoder_server
from tests.helpers.cli_process import STORYGRAPH, run_cli

ROOT = Path(__file__).resolve().parents[2]
SEGFAULT = "a segmentation fault (SIGSEGV)"
QUESTION = "桃太郎の仲間は誰？"

pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def data(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    yield path
    stop_encoder_server(path)


def _segfault(data: Path, *reapers: EncoderClient) -> int:
    """Send the running helper SIGSEGV and wait until it is dead. The client that started it
    reaps it (its exit status is then read from that client, or from the log by any other)."""
    found = encoder_traces.recorded(data)
    assert found is not None
    pid = found[0]
    assert encoder_traces.is_helper(pid)
    os.kill(pid, signal.SIGSEGV)
    deadline = time.monotonic() + 60
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(pid)
    for client in reapers:
        client._exit_code(pid)
    return pid


def test_a_crash_is_named_restarted_once_then_refused(
    data: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ledger = CrashLedger(data, "encoder")
    client = EncoderClient(data, idle_s=60)
    texts = ["桃太郎は鬼が島へ行きました。", "犬"]
    before = client.encode(texts)  # starts the helper
    first = _segfault(data)

    with caplog.at_level(logging.WARNING, logger="storygraph.text.encoder_server"):
        again = client.encode(texts)  # noticed at the next request: restarted once
    assert np.array_equal(again, before)
    said = caplog.text
    assert f"the sentence encoder's helper stopped with {SEGFAULT}" in said, said
    assert f"(pid {first}); restarting it once" in said
    assert client.crash_notice.endswith("; it was restarted.")
    second = _segfault(data, client)
    assert second != first
    assert ledger.in_a_row() == []  # the restarted helper answered: the row ended

    # Another process notices the second crash (not its child: the log names it) and starts
    # the helper once more; that one crashes before answering anything: not started again.
    other = EncoderClient(data, idle_s=60)
    other.ensure_running()
    crash = ledger.last()
    assert crash is not None and (crash.pid, crash.how) == (second, SEGFAULT)
    assert "Fatal Python error: Segmentation fault" in crash.log_tail
    assert crash.log_tail.count(": started") == 1  # its own part of the shared log
    assert encoder_traces.started_line(second) in crash.log_tail
    third = _segfault(data)
    with pytest.raises(EncoderCrashed) as refused:
        other.encode(texts)
    message = str(refused.value)
    assert f"The sentence encoder's helper stopped with {SEGFAULT}" in message, message
    assert "twice in a row, so it is not restarted again" in message
    assert "loads the encoder in its own process" in message
    assert [c.pid for c in ledger.in_a_row()] == [second, third]
    assert encoder_traces.recorded(data) is None  # not started again

    report = DoctorReport(model="none")
    check_crashes(report, Settings(data_dir=data))
    check = report.check("encoder crashes")
    assert check is not None and check.status == "fail", report.render()
    assert "Fatal Python error: Segmentation fault" in check.detail  # the log's tail
    assert "--clear-crashes" in check.fix


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = run_cli(
        data,
        STORYGRAPH,
        *args,
        timeout=300,
        STORYGRAPH_LLM_PROVIDER="none",
        STORYGRAPH_STORE_IDLE_S="0",
        STORYGRAPH_ENCODER_IDLE_S="60",
    )
    assert done.returncode == 0, done.stderr
    return done


def _answer(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(done.stdout)
    found.pop("steps")  # their times differ
    return found


def test_the_answers_warnings_say_it_and_the_answer_is_the_same(
    data: Path, shared_dir: Path
) -> None:
    services = build_services(Settings(data_dir=data, llm_provider="none"))
    import_graph(services.store, load_graph_file(shared_dir / "eval" / "seed_graph.json"))
    services.close()
    starter = EncoderClient(data, idle_s=60)
    starter.ensure_running()
    _segfault(data, starter)

    restarted = _answer(_cli(data, "ask", QUESTION, "--no-llm", "--json"))
    said = " ".join(restarted.pop("warnings"))
    assert f"The sentence encoder's helper stopped with {SEGFAULT}" in said, said
    assert "it was restarted" in said
    assert any(f["score"] is not None for f in restarted["facts"])

    _segfault(data)  # the helper the CLI started; then one started and crashed before any use
    again = EncoderClient(data, idle_s=60)
    again.ensure_running()
    _segfault(data, again)
    refused = _cli(data, "ask", QUESTION, "--no-llm", "--json")
    answer = _answer(refused)
    said = " ".join(answer.pop("warnings"))
    assert "twice in a row, so it is not restarted again" in said, said
    assert "python -m storygraph doctor" in said
    assert "twice in a row" in refused.stderr  # the warning on the CLI's stderr
    assert answer == restarted  # the encoder loaded in the process: the same answer
    assert encoder_traces.recorded(data) is None  # no helper started again
