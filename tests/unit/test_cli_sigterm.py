"""`kill` ends a CLI command as Ctrl-C does: it unwinds, so atexit (which stops or hands over a
model server the command started) runs."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

COMMAND = """
import atexit, sys, time
from storygraph.cli import stop_on_sigterm
stop_on_sigterm()
atexit.register(lambda: open(sys.argv[1], "w").write("atexit ran"))
try:
    print("ready", flush=True)
    for _ in range(600):  # short sleeps: the handler runs soon even if another thread got
        time.sleep(0.1)   # the signal (the main thread runs it at its next check)
except KeyboardInterrupt:
    sys.exit(130)
"""


def _run_and_terminate(tmp_path: Path, code: str) -> tuple[int, Path, str]:
    """Start `code`, SIGTERM it once it says it is ready; its exit code, marker and stderr."""
    marker = tmp_path / "marker"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(marker)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip() == "ready":
            break
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=120)
    return proc.returncode, marker, err


def test_sigterm_unwinds_the_command_and_runs_atexit(tmp_path: Path) -> None:
    code, marker, err = _run_and_terminate(tmp_path, COMMAND)
    assert code == 130, err
    assert marker.read_text() == "atexit ran"


def test_without_the_handler_sigterm_skips_atexit(tmp_path: Path) -> None:
    """Why the handler exists: Python's default SIGTERM ends the process on the spot."""
    code, marker, err = _run_and_terminate(tmp_path, COMMAND.replace("stop_on_sigterm()\n", "", 1))
    assert code == -signal.SIGTERM, err
    assert not marker.exists()
