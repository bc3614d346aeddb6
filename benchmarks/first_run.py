"""First run from a fresh clone: seconds to the app's first page, minutes to the embedded model.

    python -m benchmarks.first_run [--repo DIR] [--branch NAME] [--keep] [--page-only]
                                   [--make-var NAME=VALUE ...]

Clones the repository into a temporary folder, runs `make run` there (a fresh venv, the
packages, the app; the embedded model installs in the background) and measures, from the
moment `make run` starts:
- the first page: Chromium (Playwright) shows the app's title and its tabs;
- the Python packages being in: `make`'s stamp `.venv/.installed` appears;
- each install step and the model being ready, from `data/models/install-status.json`
  (`--page-only` stops at the first page instead: for A/B runs of the package install, e.g.
  `--make-var INSTALLER=pip` against the default uv; the load average is printed).
The browser closes after the first page, so the app does not load the model meanwhile. Not part
of `python -m benchmarks`: it downloads every package (uv's and pip's caches apply: say which)
and joins 1.1 GB. Needs /usr/bin/chromium and playwright (requirements-dev.txt) in this interpreter.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
PAGE_TIMEOUT_S = 1800.0
MODEL_TIMEOUT_S = 7200.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pip_cache() -> str:
    out = subprocess.run(
        [sys.executable, "-m", "pip", "cache", "list", "llama_cpp_python"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return out or "no llama_cpp_python wheel in pip's cache"


def _first_page(url: str, started: float, deadline: float) -> float:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        while time.monotonic() < deadline:
            try:
                page.goto(url, timeout=10_000)
                page.get_by_role("tab", name="Chat").wait_for(timeout=60_000)
                page.get_by_text("StoryGraph").first.wait_for(timeout=5_000)
                return time.monotonic() - started
            except Exception:  # noqa: BLE001 - not up yet: the server is still installing
                time.sleep(2)
        browser.close()
    raise TimeoutError("the first page did not appear")


class _StampWatch(threading.Thread):
    """Seconds from `started` until `path` exists (polled every 0.2 s), in `.at`."""

    def __init__(self, path: Path, started: float, deadline: float) -> None:
        super().__init__(daemon=True)
        self.path, self.started, self.deadline = path, started, deadline
        self.at: float | None = None

    def run(self) -> None:
        while self.at is None and time.monotonic() < self.deadline:
            if self.path.exists():
                self.at = time.monotonic() - self.started
            time.sleep(0.2)


def _follow_install(status: Path, started: float, deadline: float) -> list[tuple[str, float]]:
    seen: list[tuple[str, float]] = []
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError):
            raw = json.loads(status.read_text(encoding="utf-8"))
            key = f"{raw['state']}: step {raw['step']} {raw['label']}"
            if not seen or seen[-1][0] != key:
                seen.append((key, time.monotonic() - started))
            if raw["state"] in ("ready", "failed"):
                return seen
        time.sleep(2)
    seen.append(("timed out", time.monotonic() - started))
    return seen


def _stop_unfinished_install(models: Path) -> None:
    """The install runs detached from `make run`; stop it if it is still at work in our clone."""
    with contextlib.suppress(OSError, ValueError, KeyError):
        raw = json.loads((models / "install-status.json").read_text(encoding="utf-8"))
        if raw["state"] == "running":
            cmdline = Path(f"/proc/{int(raw['pid'])}/cmdline").read_bytes()
            if b"storygraph.llm.install" in cmdline:
                os.killpg(int(raw["pid"]), signal.SIGTERM)


def _stop_clone_workers(clone: Path) -> None:
    """Stop a model install worker of the clone that had not written its status yet (its
    command line starts with the clone's interpreter)."""
    python = str(clone / ".venv" / "bin" / "python").encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError, ProcessLookupError):
            cmdline = (proc / "cmdline").read_bytes()
            if cmdline.startswith(python) and b"storygraph.llm.install" in cmdline:
                os.killpg(int(proc.name), signal.SIGTERM)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repo", type=Path, default=ROOT)
    parser.add_argument("--branch", default="")
    parser.add_argument("--keep", action="store_true", help="keep the clone for inspection")
    parser.add_argument(
        "--page-only", action="store_true", help="stop at the first page (no model install)"
    )
    parser.add_argument(
        "--make-var", action="append", default=[], help="NAME=VALUE for make, e.g. INSTALLER=pip"
    )
    args = parser.parse_args()
    branch = (
        args.branch
        or subprocess.run(
            ["git", "-C", str(args.repo), "branch", "--show-current"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    work = Path(tempfile.mkdtemp(prefix="storygraph-first-run-"))
    clone = work / "storygraph"
    subprocess.run(
        ["git", "clone", "--quiet", "--branch", branch, str(args.repo), str(clone)], check=True
    )
    cache = _pip_cache()
    uv_cache = Path(os.environ.get("UV_CACHE_DIR", Path.home() / ".cache" / "uv"))
    uv_state = "present" if (uv_cache / "archive-v0").is_dir() else "empty"
    port = _free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("STORYGRAPH_", "OPENAI_", "AZURE_OPENAI_", "NEO4J_", "VIRTUAL_ENV"))
    }
    log = work / "make-run.log"
    load_before = os.getloadavg()
    started = time.monotonic()
    stamp = _StampWatch(clone / ".venv" / ".installed", started, started + PAGE_TIMEOUT_S)
    stamp.start()
    with log.open("wb") as logf:
        make = subprocess.Popen(
            ["make", "run", f"PORT={port}", *args.make_var],
            cwd=clone,
            env=env,
            stdout=logf,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        page_s = _first_page(f"http://127.0.0.1:{port}", started, started + PAGE_TIMEOUT_S)
        print(f"first page after {page_s:.0f} s", flush=True)
        load_page = os.getloadavg()
        steps = (
            []
            if args.page_only
            else _follow_install(
                clone / "data" / "models" / "install-status.json",
                started,
                started + MODEL_TIMEOUT_S,
            )
        )
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(make.pid, signal.SIGTERM)
        make.wait(timeout=60)
        _stop_unfinished_install(clone / "data" / "models")
        _stop_clone_workers(clone)
    print("\n" + " ".join(["make run", *args.make_var]))
    print("\n| from `make run` in a fresh clone | time |\n|---|---|")
    packages = f"{stamp.at:.0f} s" if stamp.at is not None else "not seen"
    print(f"| fresh venv + Python packages (`.venv/.installed`) | {packages} |")
    print(f"| first page (title and tabs in Chromium) | {page_s:.0f} s |")
    for key, at in steps:
        print(f"| {key} | {at / 60:.1f} min |")
    print(f"\npip's wheel cache beforehand: {cache}")
    print(f"uv's cache beforehand: {uv_cache} ({uv_state})")
    print(
        "load average (1, 5, 15 min) at the start: "
        + ", ".join(f"{x:.1f}" for x in load_before)
        + "; at the first page: "
        + ", ".join(f"{x:.1f}" for x in load_page)
    )
    print(f"FIRST_PAGE_S={page_s:.1f} PACKAGES_S={stamp.at or float('nan'):.1f}")
    print(f"make run log: {log}")
    if not args.keep:
        shutil.rmtree(clone, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
