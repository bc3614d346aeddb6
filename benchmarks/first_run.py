"""First run from a fresh clone: seconds to the app's first page, minutes to the embedded model.

    python -m benchmarks.first_run [--repo DIR] [--branch NAME] [--keep]

Clones the repository into a temporary folder, runs `make run` there (a fresh venv, the
packages, the app; the embedded model installs in the background) and measures, from the
moment `make run` starts:
- the first page: Chromium (Playwright) shows the app's title and its tabs;
- each install step and the model being ready, from `data/models/install-status.json`.
The browser closes after the first page, so the app does not load the model meanwhile. Not part
of `python -m benchmarks`: it downloads every package (pip's caches apply: say which) and joins
1.1 GB. Needs /usr/bin/chromium and playwright (requirements-dev.txt) in this interpreter.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repo", type=Path, default=ROOT)
    parser.add_argument("--branch", default="")
    parser.add_argument("--keep", action="store_true", help="keep the clone for inspection")
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
    port = _free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("STORYGRAPH_", "OPENAI_", "AZURE_OPENAI_", "NEO4J_", "VIRTUAL_ENV"))
    }
    log = work / "make-run.log"
    started = time.monotonic()
    with log.open("wb") as logf:
        make = subprocess.Popen(
            ["make", "run", f"PORT={port}"],
            cwd=clone,
            env=env,
            stdout=logf,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        page_s = _first_page(f"http://127.0.0.1:{port}", started, started + PAGE_TIMEOUT_S)
        print(f"first page after {page_s:.0f} s", flush=True)
        steps = _follow_install(
            clone / "data" / "models" / "install-status.json", started, started + MODEL_TIMEOUT_S
        )
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(make.pid, signal.SIGTERM)
        make.wait(timeout=60)
        _stop_unfinished_install(clone / "data" / "models")
    print("\n| from `make run` in a fresh clone | time |\n|---|---|")
    print(f"| first page (title and tabs in Chromium) | {page_s:.0f} s |")
    for key, at in steps:
        print(f"| {key} | {at / 60:.1f} min |")
    print(f"\npip's wheel cache beforehand: {cache}")
    print(f"make run log: {log}")
    if not args.keep:
        shutil.rmtree(clone, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
