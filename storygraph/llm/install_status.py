"""The embedded model's install, as other processes see it: a status file, a lock and a log.

`python -m storygraph.llm.install` writes `<model dir>/install-status.json` (by default
`<data dir>/models/`) at every step and percent, atomically, and holds `<model dir>/install.lock`
for as long as it runs, so a second install (a second `make run`) does not start and the app can
tell a running install from one that died. Its output goes to `<data dir>/logs/model-install.log`
when it runs in the background. No Streamlit here: the app's status component reads `progress()`.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from storygraph.llm.model_files import model_path
from storygraph.locks import exclusive_lock

if TYPE_CHECKING:
    from storygraph.settings import Settings

STATUS_FILE = "install-status.json"
LOCK_FILE = "install.lock"
LOG_FILE = Path("logs") / "model-install.log"
STEPS = 3

State = Literal["running", "ready", "failed"]
Shown = Literal["running", "ready", "failed", "interrupted", "not started"]


@dataclass(frozen=True)
class InstallStatus:
    """The status file's content."""

    state: State
    step: int
    label: str
    percent: int | None  # of this step; None while it cannot be measured
    pid: int
    started_at: float
    updated_at: float
    error: str = ""
    steps: int = STEPS


@dataclass(frozen=True)
class InstallProgress:
    """What the app shows: the status file read against the lock."""

    state: Shown
    step: int
    steps: int
    label: str
    percent: int | None
    error: str
    log: Path
    elapsed_s: float

    def line(self) -> str:
        """One line for a person."""
        if self.state == "not started":
            return "The embedded model is not installed: run `make model` (or `make run`)."
        if self.state == "ready":
            return "The embedded model is installed."
        pct = f", {self.percent}%" if self.percent is not None else ""
        where = f"step {self.step} of {self.steps}: {self.label}{pct}"
        if self.state == "running":
            return f"Installing the embedded model, {where} ({self.elapsed_s / 60:.0f} min so far)."
        if self.state == "interrupted":
            return (
                f"The embedded model's install stopped at {where} (its process is gone); "
                f"run `make model` to finish it. Log: {self.log}"
            )
        return f"The embedded model's install failed at {where}: {self.error}. Log: {self.log}"


def status_path(settings: Settings) -> Path:
    return model_path(settings).parent / STATUS_FILE


def lock_path(settings: Settings) -> Path:
    return model_path(settings).parent / LOCK_FILE


def log_path(settings: Settings) -> Path:
    return Path(settings.data_dir) / LOG_FILE


def write_status(path: Path, status: InstallStatus) -> None:
    """Replace the status file atomically (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(asdict(status)), encoding="utf-8")
    os.replace(tmp, path)


def read_status(path: Path) -> InstallStatus | None:
    """The status file, or None when it is missing or unreadable."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return InstallStatus(**raw)
    except (OSError, ValueError, TypeError):
        return None


def install_lock(path: Path, *, wait: bool) -> contextlib.AbstractContextManager[bool]:
    """Hold the install lock; yields False (holding nothing) when `wait` is off and another
    process holds it. The OS drops the lock when its holder dies, so a crash cannot wedge it."""
    return exclusive_lock(path, wait=wait)


def install_running(settings: Settings) -> bool:
    """True while some process holds the install lock."""
    path = lock_path(settings)
    if not path.exists():
        return False
    with install_lock(path, wait=False) as got:
        return not got


def progress(settings: Settings) -> InstallProgress:
    """The install's progress as the app shows it."""
    status = read_status(status_path(settings))
    log = log_path(settings)
    if status is None:
        state: Shown = "running" if install_running(settings) else "not started"
        label = "starting" if state == "running" else ""
        return InstallProgress(state, 1, STEPS, label, None, "", log, 0.0)
    state = status.state
    if state == "running" and not install_running(settings):
        state = "interrupted"
    elapsed = (status.updated_at if state != "running" else time.time()) - status.started_at
    return InstallProgress(
        state, status.step, status.steps, status.label, status.percent, status.error, log, elapsed
    )
