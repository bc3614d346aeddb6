"""Take the README's screenshots from a running StoryGraph app with Chromium (Playwright).

    make run                                   # in one terminal: the app with the real model
    .venv/bin/python scripts/screenshots.py    # in another: writes docs/screenshots/*.png

It drives the app as a person would: the Ingest tab (loading the sample story first with
`--load-sample` when the graph is empty; with the embedded defaults the parser reads it in
about half a minute),
then asks `--question` in the Chat tab and waits for the answer (the embedded model can take
minutes), then the Graph tab. It writes

    ingest.png        the Ingest tab with the last ingest report and the stored stories
    chat.png          the answer with its cited sources and the plain trace
    chat-details.png  the same with "Details: how this was answered" open
    graph.png         the Graph tab: the answer's subgraph and the whole graph with its legend
    entities.png      the Entities tab with 桃太郎's page (relations, history, timeline)
    delete-confirm.png the Ingest tab asking before a story is deleted (then Cancel: nothing goes)
    answer-graph.png  the answer's subgraph alone
    whole-graph.png   the whole graph alone, with its legend
    lines.png         `--speaker`'s page in the Entities tab (きじ), its Lines open: what the
                      character says in the sample, and to whom; the Timeline closed
    chapters.png      the Chat tab's "I have read up to…" picker set to `--chapter`, with
                      `--chapter-question` answered from the chapters read and its sources
                      naming their chapter (「第三章」)

`--only chapters,lines` takes only those pictures (names from `--help`; `graph` asks
`--question` first for the answer's subgraph). Every other picture is of the whole story:
the script sets the picker so first, since a fresh session starts at the last question's
reading position (after a run, that is `--chapter`'s: the app's tabs open held there until the
picker is set back or another question is asked).

The test suite never runs this script (the browser test writes its own pictures to
tests/e2e/artifacts/); the README's pictures come from the real model, not the scripted one.
Needs Debian's chromium (`bash scripts/ensure_system_deps.sh`) and the dev requirements.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "docs" / "screenshots"
DEFAULT_QUESTION = "桃太郎の仲間は誰？"
ENTITY = "桃太郎"
"""Whose page the Entities picture shows."""
SPEAKER = "きじ"
"""Whose lines the Lines picture shows: a character who speaks in the sample story."""
CHAPTER = "第三章"
"""Where the chapters picture's reader has read up to (the sample has four chapters)."""
CHAPTER_QUESTION = "犬は桃太郎から何をもらいましたか？"
"""Answered from 第三章 (the dog joins there), so its source names that chapter."""
READ_PICKER = "I have read up to…"
WHOLE_STORY = "The whole story"
STEPS: dict[str, tuple[str, ...]] = {
    "ingest": ("ingest.png",),
    "chat": ("chat.png", "chat-details.png"),
    "graph": ("graph.png", "answer-graph.png", "whole-graph.png"),
    "entities": ("entities.png",),
    "delete": ("delete-confirm.png",),
    "lines": ("lines.png",),
    "chapters": ("chapters.png",),
}
"""The pictures by step, in the order they are taken (`--only` picks steps)."""
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"]
VIEWPORT = {"width": 1400, "height": 1000}


def _wait_idle(page: Any, timeout_ms: float) -> None:
    """Wait until the app's script run is over (the running indicator is gone)."""
    page.wait_for_timeout(500)
    page.wait_for_function(
        """() => {
            const w = document.querySelector('[data-testid="stStatusWidget"]');
            const busy = w && /Running|Stop/i.test(w.innerText || '');
            const stale = document.querySelector('[data-stale="true"], [data-testid="stSkeleton"]');
            return !busy && !stale;
        }""",
        timeout=timeout_ms,
    )
    page.wait_for_timeout(300)


def _open_tab(page: Any, label: str, timeout_ms: float) -> None:
    page.get_by_role("tab", name=label).click()
    _wait_idle(page, timeout_ms)


def _shoot_page(page: Any, path: Path) -> None:
    """The whole app, grown to its content (Streamlit scrolls inside its main element)."""
    height = page.evaluate(
        """() => { const m = document.querySelector('[data-testid="stMain"]');
                   return m ? m.scrollHeight : document.body.scrollHeight; }"""
    )
    page.set_viewport_size({"width": VIEWPORT["width"], "height": max(VIEWPORT["height"], height)})
    try:
        page.screenshot(path=str(path), full_page=True)
    finally:
        page.set_viewport_size(VIEWPORT)
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


def _set_reading(page: Any, choice: str, timeout_ms: float) -> bool:
    """Set the Chat tab's "I have read up to…" picker to `choice` (a chapter's label, or the
    whole story); False when the picker is not shown (one story with chapters only has it)."""
    picker = page.get_by_role("combobox", name=READ_PICKER)
    if not picker.count():
        return False
    # a chapter's choice may carry its heading after the label: 「第三章 · 三」
    named = re.compile(rf"^{re.escape(choice)}( · .*)?$")
    if named.match(picker.input_value()):
        return True
    picker.click()
    page.get_by_role("option", name=named).first.click()
    _wait_idle(page, timeout_ms)
    return True


def _ask(page: Any, question: str, timeout_ms: float) -> Any:
    """Ask `question` in the Chat tab; the answer's message once it is complete."""
    box = page.get_by_placeholder("Ask about your stories")
    box.fill(question)
    box.press("Enter")
    print(f"asked {question} …")
    # the run answering is busy until the answer is drawn (an earlier turn has Details too)
    page.wait_for_timeout(1500)
    _wait_idle(page, timeout_ms)
    answer = page.locator('[data-testid="stChatMessage"]:visible').last
    answer.get_by_text("Details: how this was answered").wait_for(timeout=timeout_ms)
    _wait_idle(page, timeout_ms)
    return answer


def _open_entity(page: Any, name: str, timeout_ms: float) -> None:
    _open_tab(page, "Entities", timeout_ms)
    search = page.get_by_label("Search entities")
    search.fill(name)
    search.press("Enter")
    _wait_idle(page, timeout_ms)
    # its button in the list: "name · type · story"
    page.get_by_role("button", name=re.compile(rf"^{re.escape(name)} · ")).first.click()
    _wait_idle(page, timeout_ms)


def _shoot_element(page: Any, element: Any, path: Path) -> None:
    """One element of the app whole, however tall (the viewport grown as in _shoot_page)."""
    height = page.evaluate(
        """() => { const m = document.querySelector('[data-testid="stMain"]');
                   return m ? m.scrollHeight : document.body.scrollHeight; }"""
    )
    page.set_viewport_size({"width": VIEWPORT["width"], "height": max(VIEWPORT["height"], height)})
    try:
        page.wait_for_timeout(300)
        element.screenshot(path=str(path))
    finally:
        page.set_viewport_size(VIEWPORT)
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


def _wait_graph(frame: Any, timeout_ms: float) -> None:
    frame.wait_for_function(
        "() => window.storygraph && window.storygraph.ready", timeout=timeout_ms
    )


def take(
    url: str,
    out: Path,
    question: str,
    load_sample: bool,
    timeout_s: float,
    steps: tuple[str, ...] = tuple(STEPS),
    speaker: str = SPEAKER,
    chapter: str = CHAPTER,
    chapter_question: str = CHAPTER_QUESTION,
) -> int:
    from playwright.sync_api import sync_playwright

    timeout_ms = timeout_s * 1000
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT, locale="ja-JP")
            page.set_default_timeout(60_000)
            page.goto(url)
            page.get_by_role("tab", name="Ingest").wait_for()
            _open_tab(page, "Ingest", timeout_ms)
            stored = page.locator('[class*="st-key-doc_"]').count()
            if not stored:
                if not load_sample:
                    print("the graph is empty: pass --load-sample (or add a story first)")
                    return 2
                print("loading the sample story (this can take a long time) …")
                started = time.monotonic()
                page.get_by_role("button", name="Load the sample story").click()
                page.locator(".st-key-ingest_report_0").wait_for(timeout=timeout_ms)
                _wait_idle(page, timeout_ms)
                print(f"sample story ingested in {time.monotonic() - started:.0f} s")
            if "ingest" in steps:
                _shoot_page(page, out / "ingest.png")
            # the whole story (a fresh session starts at the last question's reading position,
            # which holds the Graph and Entities tabs too): only chapters.png picks a chapter
            _open_tab(page, "Chat", timeout_ms)
            _set_reading(page, WHOLE_STORY, timeout_ms)

            if "chat" in steps or "graph" in steps:
                _open_tab(page, "Chat", timeout_ms)
                answer = _ask(page, question, timeout_ms)
                if "chat" in steps:
                    _shoot_page(page, out / "chat.png")
                    answer.get_by_text("Details: how this was answered").click()
                    page.wait_for_timeout(500)
                    _shoot_page(page, out / "chat-details.png")

            if "graph" in steps:
                _open_tab(page, "Graph", timeout_ms)
                iframes = page.locator('[data-testid="stIFrame"]:visible')
                iframes.nth(1).wait_for(timeout=timeout_ms)
                for index, name in ((0, "answer-graph.png"), (1, "whole-graph.png")):
                    _wait_graph(iframes.nth(index).element_handle().content_frame(), timeout_ms)
                    iframes.nth(index).screenshot(path=str(out / name))
                    print(f"wrote {name}")
                _shoot_page(page, out / "graph.png")

            if "entities" in steps:
                _open_entity(page, ENTITY, timeout_ms)
                _shoot_page(page, out / "entities.png")

            if "delete" in steps:
                _open_tab(page, "Ingest", timeout_ms)
                page.locator('[class*="st-key-delete_"] button').first.click()
                page.locator('[class*="st-key-delete_cancel_"]').wait_for(timeout=timeout_ms)
                _wait_idle(page, timeout_ms)
                _shoot_page(page, out / "delete-confirm.png")
                page.locator('[class*="st-key-delete_cancel_"] button').click()
                _wait_idle(page, timeout_ms)

            if "lines" in steps:
                _open_entity(page, speaker, timeout_ms)
                # the page's column with its Lines open and its long Timeline closed
                page.get_by_text("Timeline (").first.click()
                page.get_by_text("Lines (").first.click()
                _wait_idle(page, timeout_ms)
                column = page.locator('[data-testid="stColumn"]').filter(
                    has=page.get_by_text("Lines (")
                )
                _shoot_element(page, column.last, out / "lines.png")

            if "chapters" in steps:
                _open_tab(page, "Chat", timeout_ms)
                if not _set_reading(page, chapter, timeout_ms):
                    print(f"no {READ_PICKER!r} picker: the chat needs one story with chapters")
                    return 2
                _ask(page, chapter_question, timeout_ms)
                _shoot_page(page, out / "chapters.png")
                _set_reading(page, WHOLE_STORY, timeout_ms)
        finally:
            browser.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8501", help="the running app")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for the PNGs")
    parser.add_argument("--question", default=DEFAULT_QUESTION)
    parser.add_argument(
        "--load-sample", action="store_true", help="load the sample story if the graph is empty"
    )
    parser.add_argument(
        "--timeout-min", type=float, default=90.0, help="longest wait for an ingest or an answer"
    )
    parser.add_argument(
        "--only",
        default="",
        help="take only these pictures, comma-separated: " + ", ".join(STEPS),
    )
    parser.add_argument("--speaker", default=SPEAKER, help="whose Lines lines.png shows")
    parser.add_argument(
        "--chapter", default=CHAPTER, help="the reading position chapters.png picks"
    )
    parser.add_argument(
        "--chapter-question", default=CHAPTER_QUESTION, help="the question chapters.png asks"
    )
    args = parser.parse_args(argv)
    steps = tuple(s.strip().removesuffix(".png") for s in args.only.split(",") if s.strip())
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        parser.error(f"--only: unknown {', '.join(unknown)} (known: {', '.join(STEPS)})")
    return take(
        args.url,
        args.out,
        args.question,
        args.load_sample,
        args.timeout_min * 60,
        steps=steps or tuple(STEPS),
        speaker=args.speaker,
        chapter=args.chapter,
        chapter_question=args.chapter_question,
    )


if __name__ == "__main__":
    sys.exit(main())
