"""A model answer the check takes back is never shown as the answer (issue #42 item 1), in a
real browser: Debian chromium driven by Playwright, against `streamlit run app.py`.

The app runs on its own data directory with the real `langchain-openai` client pointed at a
scripted OpenAI-compatible server that streams its answer (server-sent events). Asked the
false-premise question 「桃太郎を倒したのは誰？」 (no one defeats 桃太郎), the scripted model
first writes a culprit the story never names, 「天狗です。」, then holds its stream open until
the test has looked at the page: meanwhile the page shows the reply only as a muted draft
marked "checking…", and when the check has replaced it, the answer is a decline with one
sentence saying what the model first wrote and why it is not shown. A MutationObserver
installed before the question watches every change of the page: the culprit may appear only
inside the draft.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from typing import Any

import pytest

from tests.e2e.test_browser import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    STEP_TIMEOUT_MS,
    _open_tab,
    _running_app,
    _shoot,
    _skip_reason,
    _stop_leftover_falkordb,
    _wait_idle,
)
from tests.helpers.scripted_logic import MOMOTARO_JA, Script
from tests.helpers.scripted_openai_server import (
    STREAM_END,
    RunningServer,
    completion,
    make_handler,
    stream_chunk,
)

pytestmark = pytest.mark.e2e

QUESTION = "桃太郎を倒したのは誰？"
CULPRIT = "天狗です。"
"""A name no sentence of the sample story writes: the check takes it back whatever its fitted
weights (a culprit the story does name beside 桃太郎, such as 猿, is a borderline verdict that
moves with each refit, and this test is about the draft, not about that verdict)."""
HELD_S = STEP_TIMEOUT_MS / 1000 * 4
"""The longest the scripted stream stays held (a bound for a failed test, not a pause)."""

_WATCH_JS = """(culprit) => {
    // Every text node naming the culprit must sit in the draft: a caption whose text says
    // "checking…". Anything else is the culprit shown as (part of) an answer.
    window.culpritShown = [];
    window.draftSeen = false;
    const look = () => {
        const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            if (!node.textContent.includes(culprit)) { continue; }
            const caption = node.parentElement.closest('[data-testid="stCaptionContainer"]');
            if (caption && caption.innerText.includes('checking…')) {
                window.draftSeen = true;
            } else {
                const where = node.parentElement.closest('[data-testid]');
                window.culpritShown.push(where ? where.innerText : node.textContent);
            }
        }
    };
    new MutationObserver(look).observe(
        document.body, {childList: true, subtree: true, characterData: true});
}"""


class HeldCulprit:
    """The answer request of `QUESTION` is streamed: the culprit first, then the stream is
    held until `released`, then its source mark and the end. The mark is a source about
    something else (one that does not name 桃太郎): a misreading the check takes back."""

    def __init__(self) -> None:
        self.sent = threading.Event()
        self.released = threading.Event()

    def reply(self, handler: Any, request: dict[str, Any], prompt: str) -> None:
        sources = prompt.rsplit("Sources:", 1)[-1]
        elsewhere = re.search(r"^\[(\d+)\] (?!.*桃太郎).*$", sources, flags=re.MULTILINE)
        mark = f"[{elsewhere.group(1)}]" if elsewhere else "[1]"
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.end_headers()
        for piece in (stream_chunk(request, CULPRIT), stream_chunk(request, "[")):
            handler.wfile.write(piece)
            handler.wfile.flush()
        self.sent.set()
        self.released.wait(HELD_S)
        for piece in (stream_chunk(request, mark[1:]), stream_chunk(request, finish="stop")):
            handler.wfile.write(piece)
        handler.wfile.write(STREAM_END)
        handler.wfile.flush()
        handler.close_connection = True


HELD = HeldCulprit()


def _prompt(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in request.get("messages") or [])


@pytest.fixture(scope="module")
def model_server() -> Iterator[RunningServer]:
    script = Script(triples=MOMOTARO_JA)
    base: Any = make_handler(script)

    class Handler(base):  # type: ignore[misc,valid-type]
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            request = json.loads(raw or b"{}")
            prompt = _prompt(request)
            if request.get("stream") and not request.get("tools") and QUESTION in prompt:
                HELD.reply(self, request, prompt)
                return
            self._send(200, completion(request, script))

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="scripted-openai", daemon=True)
    thread.start()
    running = RunningServer(server, thread)
    yield running
    HELD.released.set()
    running.stop()


@pytest.fixture(scope="module")
def app_url(model_server: RunningServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    data_dir = tmp_path_factory.mktemp("e2e-draft")
    try:
        with _running_app(data_dir, model_server) as (url, _proc):
            yield url
    finally:
        _stop_leftover_falkordb(data_dir)


def test_a_culprit_the_check_takes_back_is_only_ever_a_draft_marked_checking(
    app_url: str,
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000}, locale="ja-JP")
            page.set_default_timeout(STEP_TIMEOUT_MS)
            expect.set_options(timeout=STEP_TIMEOUT_MS)
            page.goto(app_url)
            page.get_by_role("tab", name="Ingest").wait_for()
            _wait_idle(page)
            page.get_by_role("button", name=re.compile("Load the sample story")).click()
            # a background job: bounded as a job's end, not a step (a loaded 2-core machine
            # took over 30 s to read the sample)
            stored = page.locator('[class*="st-key-doc_"]').first
            expect(stored).to_contain_text("momotaro", timeout=STEP_TIMEOUT_MS * 4)
            _wait_idle(page)

            _open_tab(page, "Chat")
            _wait_idle(page)
            page.evaluate(_WATCH_JS, CULPRIT)
            box = page.get_by_placeholder("Ask about your stories")
            box.fill(QUESTION)
            box.press("Enter")
            assert HELD.sent.wait(STEP_TIMEOUT_MS / 1000), "the answer was never asked for"

            # The model has written the culprit and holds: the page shows it as a draft only.
            draft = page.locator('[data-testid="stCaptionContainer"]', has_text=CULPRIT)
            expect(draft).to_be_visible()
            expect(draft).to_contain_text("checking…")
            expect(page.get_by_text("The model is writing its answer…")).to_be_visible()
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            _shoot(page, "chat-draft.png")

            HELD.released.set()  # the reply ends; the check replaces it
            latest = page.locator('[data-testid="stChatMessage"]:visible').last
            # the check's first run loads the parser (22 s on a quiet machine): bounded as the
            # answer's deadline is, not as a step
            details = latest.get_by_text("Details: how this was answered")
            expect(details).to_be_visible(timeout=STEP_TIMEOUT_MS * 4)
            _wait_idle(page)
            expect(draft).to_have_count(0)
            answer = latest.locator('[data-testid="stMarkdownContainer"]').first
            expect(answer).not_to_contain_text(CULPRIT)
            # the decline: "the story does not say" or "not sure" (which the check finds
            # depends on the sources it reads; both replace the culprit)
            expect(answer).to_contain_text(re.compile("分かりません|確かな答えは見つかりません"))
            # the flip is said in one plain sentence: what the model first wrote, and why
            expect(latest).to_contain_text("モデルの最初の答え「天狗」は表示していません")
            _shoot(page, "chat-draft-replaced.png")
            shown = page.evaluate("() => window.culpritShown")
            assert page.evaluate("() => window.draftSeen"), "the observer never saw the draft"
            assert shown == [], f"the culprit was shown outside the draft: {shown}"
        finally:
            HELD.released.set()
            browser.close()
            expect.set_options(timeout=5_000)  # Playwright's default, for the tests after
