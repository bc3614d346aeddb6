"""CPU the Streamlit process burns while a story ingests, file watching on ("auto") vs off ("none").

    .venv/bin/python -m benchmarks.streamlit_cpu [--delay 1.0] [--idle 20]

For each setting it builds a throwaway project folder laid out as a user's checkout is: the app
(app.py, pages/, storygraph/, prompts/) with `.streamlit/config.toml` setting
`server.fileWatcherType`, the project's `.venv` (a hard-linked copy of the running venv: same
4,800 folders and 38,000 files, nothing copied, and Streamlit runs from it, so its imports open
files inside the watched tree as in a real checkout), and `data/` inside. The model is the
scripted OpenAI-compatible server (tests/helpers), answering each request after `--delay`
seconds and appending to `data/models/server.log`, as llama.cpp's server does; the graph is the
real embedded FalkorDB. An unfinished ingest job for the sample story (its runner dead) is
left in `data/jobs/`, so the app adopts and runs it as soon as a session opens (a websocket
client stands in for the browser). The figure is the Streamlit process's utime + stime from
/proc/<pid>/stat over the ingest, and over `--idle` seconds after it, as a share of one core.
"""

from __future__ import annotations

import argparse
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
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from storygraph.ingest.jobs import Job, read_jobs
from tests.helpers.scripted_logic import MOMOTARO_JA, Script
from tests.helpers.scripted_openai_server import RunningServer, make_handler

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "storygraph" / "samples" / "momotaro_kusuyama.txt"
TICKS = os.sysconf("SC_CLK_TCK")
CONFIG = """[browser]
gatherUsageStats = false

[server]
headless = true
runOnSave = false
fileWatcherType = "{watcher}"
"""


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, in seconds (fields 14 and 15 of /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def slow_server(delay: float, log: Path) -> RunningServer:
    """The scripted model, `delay` seconds per request, logging each one like llama.cpp."""
    base: Any = make_handler(Script(triples=MOMOTARO_JA))

    class Slow(base):  # type: ignore[misc,valid-type]
        def do_POST(self) -> None:
            time.sleep(delay)
            log.parent.mkdir(parents=True, exist_ok=True)
            with log.open("a", encoding="utf-8") as fh:
                for step in ("launch_slot_", "prompt eval", "eval", "total time", "release"):
                    fh.write(f"slot {step}: id 0 | task {time.time_ns()} | done\n")
            super().do_POST()

    handler: type[BaseHTTPRequestHandler] = Slow
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="slow-model", daemon=True)
    thread.start()
    return RunningServer(server, thread)


def make_project(root: Path, watcher: str) -> Path:
    """The app, its config, and a hard-linked copy of this venv (`cp -al`: links, no data)."""
    shutil.copy2(ROOT / "app.py", root / "app.py")
    for folder in ("pages", "storygraph", "prompts"):
        shutil.copytree(ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (root / ".streamlit").mkdir()
    (root / ".streamlit" / "config.toml").write_text(CONFIG.format(watcher=watcher))
    if sys.prefix == sys.base_prefix:
        raise SystemExit("run this from the project's venv (.venv/bin/python)")
    venv = os.path.realpath(sys.prefix)  # a symlinked .venv would not be walked
    subprocess.run(["cp", "-al", venv, str(root / ".venv")], check=True)
    return root


def leave_orphan_job(data_dir: Path, name: str, data: bytes) -> str:
    """An unfinished job whose runner is gone: the app adopts it when its first session opens."""
    jobs = data_dir / "jobs"
    jobs.mkdir(parents=True, exist_ok=True)
    job = Job(id=f"{time.time_ns():x}-bench", name=name, owner="gone", created_at=time.time())
    (jobs / f"{job.id}.upload").write_bytes(data)
    (jobs / f"{job.id}.json").write_text(json.dumps(job.to_json()), encoding="utf-8")
    return job.id


@contextmanager
def browser_session(port: int) -> Iterator[None]:
    """A websocket client that opens a session and asks for a script run, as a browser does."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from websockets.sync.client import connect

    stop = threading.Event()
    url = f"ws://127.0.0.1:{port}/_stcore/stream"
    with connect(url, subprotocols=["streamlit"]) as ws:  # type: ignore[list-item]
        msg = BackMsg()
        msg.rerun_script.query_string = ""
        msg.rerun_script.page_script_hash = ""
        ws.send(msg.SerializeToString())

        def drain() -> None:  # read what the app sends, or its buffers fill
            while not stop.is_set():
                try:
                    ws.recv(timeout=1)
                except TimeoutError:
                    continue
                except Exception:  # noqa: BLE001 - the app closed the connection
                    return

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        try:
            yield
        finally:
            stop.set()
            reader.join(5)


def wait_healthy(port: int, proc: subprocess.Popen[bytes], timeout: float = 90) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("streamlit exited")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError("streamlit did not start")


def measure(watcher: str, delay: float, idle: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"sg-cpu-{watcher}-") as tmp:
        project = make_project(Path(tmp), watcher)
        data_dir = project / "data"
        server = slow_server(delay, data_dir / "models" / "server.log")
        job_id = leave_orphan_job(data_dir, SAMPLE.name, SAMPLE.read_bytes())
        port = _free_port()
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("STORYGRAPH_", "OPENAI_", "AZURE_OPENAI_", "NEO4J_", "STREAMLIT_"))
        }
        env.update(
            STORYGRAPH_DATA_DIR=str(data_dir),
            STORYGRAPH_LLM_PROVIDER="openai_compatible",
            STORYGRAPH_LLM_MODEL="scripted-model",
            STORYGRAPH_CHUNK_SIZE="200",  # the embedded model's chunking: 33 chunks
            OPENAI_BASE_URL=server.base_url,
            OPENAI_API_KEY="bench",
            PYTHONPATH=str(project),
        )
        log = open(Path(tmp) / "streamlit.log", "wb")  # noqa: SIM115 - closed below
        proc = subprocess.Popen(
            [
                str(project / ".venv" / "bin" / "python"),
                *("-m", "streamlit", "run", "app.py", "--server.port", str(port)),
            ],
            cwd=project,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_healthy(port, proc)
            with browser_session(port):
                cpu0, t0 = cpu_seconds(proc.pid), time.monotonic()
                while True:
                    job = next((j for j in read_jobs(data_dir) if j.id == job_id), None)
                    if job is not None and not job.active:
                        break
                    if time.monotonic() - t0 > 1800:
                        raise RuntimeError("the ingest did not finish in 30 minutes")
                    time.sleep(0.5)
                cpu1, t1 = cpu_seconds(proc.pid), time.monotonic()
                time.sleep(idle)
                cpu2, t2 = cpu_seconds(proc.pid), time.monotonic()
            overflows = (Path(tmp) / "streamlit.log").read_text(errors="replace").count(
                "overflow"
            )
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
            log.close()
            server.stop()
            pidfile = data_dir / "falkordb" / "falkordb.pid"
            if pidfile.exists():
                with suppress(OSError, ValueError):
                    os.kill(int(pidfile.read_text().strip()), signal.SIGTERM)
        assert job is not None
        return {
            "fileWatcherType": watcher,
            "job": job.state,
            "chunks": job.chunks_total,
            "ingest_s": round(t1 - t0, 1),
            "ingest_cpu_s": round(cpu1 - cpu0, 2),
            "ingest_cpu_share": f"{100 * (cpu1 - cpu0) / (t1 - t0):.1f}%",
            "idle_cpu_share": f"{100 * (cpu2 - cpu1) / (t2 - t1):.1f}%",
            "overflow_log_lines": overflows,
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.streamlit_cpu", description=__doc__)
    parser.add_argument("--delay", type=float, default=0.5, help="seconds per model request")
    parser.add_argument("--idle", type=float, default=20.0, help="seconds measured after it")
    parser.add_argument("--watcher", action="append", choices=["auto", "watchdog", "poll", "none"])
    args = parser.parse_args(argv)
    rows = [
        measure(w, args.delay, args.idle) for w in args.watcher or ["auto", "none"]
    ]
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row[c]) for c in columns) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
