"""The app in a real browser: Debian chromium driven by Playwright, against `streamlit run app.py`.

The app runs as a subprocess with a temporary data directory and the real `langchain-openai`
client pointed at a scripted OpenAI-compatible server, so only the model's words are scripted.
Upload the Japanese Momotaro, ask 「桃太郎の仲間は誰？」, check the answer, the trace and the graph
drawn inside its iframe, and save screenshots of the three tabs in tests/e2e/artifacts/ (and in
the tracked docs/screenshots/ only when asked: `make screenshots`, which sets
UPDATE_SCREENSHOTS=1). A last step uploads a story whose character is named
`<script>alert(1)</script>` and checks it is drawn as text: no dialog may open.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import HERMETIC_PREFIXES, missing_shared
from tests.helpers.scripted_logic import MOMOTARO_EN, MOMOTARO_JA, Script
from tests.helpers.scripted_openai_server import RunningServer, start_in_thread

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT.parent / "shared" / "stories" / "ja" / "momotaro_kusuyama.txt"
CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = ROOT / "docs" / "screenshots"
UPDATE_SCREENSHOTS = os.environ.get("UPDATE_SCREENSHOTS") == "1"
"""Overwrite the tracked docs/screenshots/*.png (only `make screenshots` sets it)."""
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
XSS_NAME = "<script>alert(1)</script>"
XSS_STORY = f"{XSS_NAME}という名のいたずら者は、桃太郎の友だちでした。\n".encode()
QUESTION = "桃太郎の仲間は誰？"
STEP_TIMEOUT_MS = 30_000


def _skip_reason() -> str:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (run `bash scripts/ensure_system_deps.sh` as root)"
    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is missing (pip install -r requirements-dev.txt)"
    return ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the app exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response,
        ):
            if response.status == 200:
                return
        time.sleep(0.2)
    pytest.fail(f"the app did not answer within {timeout:.0f} s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def model_server() -> Iterator[RunningServer]:
    triples = (
        *MOMOTARO_JA,
        *MOMOTARO_EN,
        (XSS_NAME, "Character", "FRIEND_OF", "桃太郎", "Character"),
    )
    server = start_in_thread(Script(triples=triples))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def app_url(model_server: RunningServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    reason = _skip_reason()
    if reason:
        print(f"SKIP e2e: {reason}")
        pytest.skip(reason)
    if not STORY.exists():
        missing_shared(STORY)
    data_dir = tmp_path_factory.mktemp("e2e-data")
    log = data_dir / "streamlit.log"
    port = _free_port()
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(HERMETIC_PREFIXES)}
    env = {
        **inherited,
        "PYTHONPATH": str(ROOT),
        "STORYGRAPH_DATA_DIR": str(data_dir),
        "STORYGRAPH_LLM_PROVIDER": "openai_compatible",
        "STORYGRAPH_LLM_MODEL": "scripted-model",
        "OPENAI_BASE_URL": model_server.base_url,
        "OPENAI_API_KEY": "test",
        "NEO4J_URI": "",
        "STORYGRAPH_NO_LLM": "false",
    }
    command = [
        sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
        "--server.address", "127.0.0.1", "--server.port", str(port),
        "--server.headless", "true", "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
    ]  # fmt: skip
    with open(log, "wb") as out:
        # Run from the data directory: no `.env` of the developer's is read.
        proc = subprocess.Popen(
            command, cwd=data_dir, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc, log, timeout=60)
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        _stop_leftover_falkordb(data_dir)
        with contextlib.suppress(OSError):
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(log, ARTIFACTS / "streamlit.log")


def _stop_leftover_falkordb(data_dir: Path) -> None:
    """The app stops its embedded FalkorDB at exit; if it could not, stop that one pid."""
    pidfile = data_dir / "falkordb" / "falkordb.pid"
    with contextlib.suppress(OSError, ValueError):
        pid = int(pidfile.read_text().strip())
        os.kill(pid, signal.SIGTERM)


def _wait_idle(page: Any) -> None:
    """Wait until the app's script run is over (the running indicator is gone)."""
    page.wait_for_function(
        """() => {
            const w = document.querySelector('[data-testid="stStatusWidget"]');
            return !w || !/Running|Stop/i.test(w.innerText || '');
        }""",
        timeout=STEP_TIMEOUT_MS,
    )


def _shoot(page: Any, name: str) -> None:
    """Screenshot the whole app into tests/e2e/artifacts/ (and docs/screenshots/ only with
    UPDATE_SCREENSHOTS=1). Streamlit scrolls inside its own main element, so a full-page
    screenshot would stop at the viewport: grow the viewport to the content first."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    height = page.evaluate(
        """() => { const m = document.querySelector('[data-testid="stMain"]');
                   return m ? m.scrollHeight : document.body.scrollHeight; }"""
    )
    page.set_viewport_size({"width": size["width"], "height": max(size["height"], height)})
    try:
        page.screenshot(path=str(ARTIFACTS / name), full_page=True)
    finally:
        page.set_viewport_size(size)
    if UPDATE_SCREENSHOTS:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ARTIFACTS / name, SCREENSHOTS / name)


def _open_tab(page: Any, label: str) -> None:
    tab = page.get_by_role("tab", name=label)
    tab.click()
    page.wait_for_function(
        "(el) => el.getAttribute('aria-selected') === 'true'", arg=tab.element_handle()
    )


def _graph_frames(page: Any, count: int) -> list[Any]:
    """The graph iframes of the visible tab, once `count` of them are shown."""
    iframes = page.locator('[data-testid="stIFrame"]:visible')
    expect_count(iframes, count)
    return [h.content_frame() for h in iframes.element_handles()]


def expect_count(locator: Any, count: int) -> None:
    from playwright.sync_api import expect

    expect(locator).to_have_count(count)


_DRAWN_JS = """() => {
    const sg = window.storygraph;
    const c = document.querySelector('#sg-graph canvas');
    if (!sg || !c) { return null; }
    const ids = sg.nodes.getIds();
    const pos = sg.network.getPositions(ids);
    const inside = ids.map(id => sg.network.canvasToDOM(pos[id])).filter(
        p => p.x >= 0 && p.y >= 0 && p.x <= c.clientWidth && p.y <= c.clientHeight).length;
    return {nodes: ids.length, edges: sg.edges.length, width: c.clientWidth,
            height: c.clientHeight, inside: inside, labels: sg.nodes.get().map(n => n.label)};
}"""


def _wait_drawn(frame: Any) -> dict[str, Any]:
    """Wait until the graph is drawn with every node inside the visible canvas; its numbers."""
    frame.wait_for_function(
        f"""() => {{ const d = ({_DRAWN_JS})();
                    return d && d.nodes > 0 && d.width > 0 && d.inside === d.nodes; }}""",
        timeout=STEP_TIMEOUT_MS,
    )
    return frame.evaluate(_DRAWN_JS)


def test_upload_ask_and_see_the_graph(app_url: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    dialogs: list[str] = []
    started = time.monotonic()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000}, locale="ja-JP")
            page.set_default_timeout(STEP_TIMEOUT_MS)
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(app_url)
            page.get_by_role("tab", name="Ingest").wait_for()
            _wait_idle(page)

            # Ingest: upload through the real file input, then add it to the graph.
            page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
                str(STORY)
            )
            add = page.get_by_role("button", name="Add 1 file to the graph")
            expect(add).to_be_enabled()
            add.click()
            report = page.locator(".st-key-ingest_report_0")
            expect(report).to_contain_text(STORY.name)
            expect(report).to_contain_text("added")
            expect(report).to_contain_text("Entities added / merged")
            _wait_idle(page)
            expect(page.locator('[class*="st-key-doc_"]').first).to_contain_text(STORY.name)
            _shoot(page, "ingest.png")

            # Chat: ask in Japanese, check the answer, its sources and the trace.
            _open_tab(page, "Chat")
            box = page.get_by_placeholder("Ask about your stories")
            box.fill(QUESTION)
            box.press("Enter")
            messages = page.locator('[data-testid="stChatMessage"]')
            expect(messages).to_have_count(2)
            answer = messages.nth(1)
            expect(answer).to_contain_text("桃太郎")
            expect(answer).to_contain_text("Sources")
            _wait_idle(page)
            answer.get_by_text("How this was answered").click()
            trace = answer.locator('[data-testid="stExpander"]').last
            expect(trace).to_contain_text("onehop")
            expect(trace).to_contain_text("Candidate relations")
            expect(trace).to_contain_text("kept")
            expect(trace.locator('[data-testid="stDataFrame"]').first).to_be_visible()
            _shoot(page, "chat.png")

            # Graph: both pictures are drawn, with nodes and edges inside their boxes.
            _open_tab(page, "Graph")
            frames = _graph_frames(page, 2)  # the answer graph and the whole graph
            answer_graph = _wait_drawn(frames[0])
            whole_graph = _wait_drawn(frames[1])
            for drawn in (answer_graph, whole_graph):
                assert drawn["width"] > 0 and drawn["height"] > 0
                assert drawn["nodes"] > 0 and drawn["edges"] > 0
                assert drawn["inside"] == drawn["nodes"], f"nodes outside the view: {drawn}"
            assert {"桃太郎", "犬", "猿", "きじ"} <= set(answer_graph["labels"])
            _shoot(page, "graph.png")

            # A character named like a script tag is drawn as text; no dialog opens.
            _open_tab(page, "Ingest")
            page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
                files=[{"name": "xss.txt", "mimeType": "text/plain", "buffer": XSS_STORY}]
            )
            page.get_by_role("button", name="Add 1 file to the graph").click()
            expect(page.locator(".st-key-ingest_report_0")).to_contain_text("xss.txt")
            _wait_idle(page)
            _open_tab(page, "Graph")
            labels = _wait_drawn(_graph_frames(page, 2)[1])["labels"]
            # LLMGraphTransformer title-cases ids (<Script>Alert(1)</Script>): still a tag.
            assert XSS_NAME in [str(label).lower() for label in labels]
            page.wait_for_timeout(500)  # give a (wrongly) injected script its chance to run
            assert dialogs == [], f"a dialog opened: {dialogs}"
        finally:
            browser.close()
    print(f"e2e browser steps took {time.monotonic() - started:.1f} s")
