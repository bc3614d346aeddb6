"""The graph pictures are readable in a real browser (Debian chromium via Playwright).

The pages of `storygraph.ui.visualize` for a dense answer (22 relations around 桃太郎, as the
embedded model extracts the sample) and a whole graph of 150 nodes, opened at the app's sizes:
no two drawn labels meet, no relation label covers a node, every drawn label is at least
MIN_SCREEN_FONT px on screen, relation labels are the story's verbs, and the labels hidden to
keep them apart come back on hover. Screenshots: tests/e2e/artifacts/graph-labels-*.png
(docs/ISSUES.md#graph-view).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest

from storygraph.models import Answer, Fact, ResolvedEntity
from storygraph.ui.visualize import MIN_SCREEN_FONT, answer_graph_html, whole_graph_html

pytestmark = pytest.mark.e2e

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"]
WIDTH, ANSWER_HEIGHT, WHOLE_HEIGHT = 1200, 560, 720  # pages/graph.py's heights, a wide tab

FACTS = (
    ("犬", "BECOMES_COMPANION_OF", "桃太郎", "犬は桃太郎の家来になりました。", True),
    ("猿", "BECOMES_COMPANION_OF", "桃太郎", "猿も家来になりました。", True),
    ("きじ", "BECOMES_COMPANION_OF", "桃太郎", "きじも家来になりました。", True),
    ("桃太郎", "GOES_TO", "鬼が島", "桃太郎は鬼が島へ行きました。", True),
    ("桃太郎", "DEFEATS", "鬼", "桃太郎は鬼を退治しました。", True),
    ("桃太郎", "GIVES", "きびだんご", "桃太郎はきびだんごをやりました。", True),
    ("おじいさん", "RAISES", "桃太郎", "おじいさんは桃太郎を育てました。", True),
    ("おばあさん", "RAISES", "桃太郎", "おばあさんは桃太郎を育てました。", True),
    ("おばあさん", "FINDS", "桃", "おばあさんは川で桃を見つけました。", False),
    ("桃太郎", "BORN_FROM", "桃", "桃から生まれた桃太郎。", True),
    ("おじいさん", "GOES_TO", "山", "おじいさんは山へしば刈りに行きました。", False),
    ("おばあさん", "GOES_TO", "川", "おばあさんは川へ洗濯に行きました。", False),
    ("猿", "OPENS", "門", "猿が門をあけました。", False),
    ("鬼", "LIVES_IN", "鬼が島", "鬼は鬼が島に住んでいました。", False),
    ("鬼", "GIVES", "宝物", "鬼は宝物をさし出しました。", False),
    ("桃太郎", "RETURNS_TO", "村", "桃太郎は村へ帰りました。", True),
    ("きじ", "ATTACKS", "鬼", "きじは鬼の目をつつきました。", False),
    ("犬", "BITES", "鬼", "犬は鬼にかみつきました。", False),
    ("おじいさん", "STANDS", "門", "おじいさんは門に立ちました。", False),
    ("鬼", "SURRENDERS_TO", "桃太郎", "鬼は桃太郎に降参しました。", True),
    ("桃太郎", "SOROERU", "家来", "桃太郎は家来をそろえました。", True),
    ("猿", "KURABERU", "犬", "猿は犬とくらべました。", False),
)

_SCREEN_JS = """() => {
    // What vis-network drew, in screen pixels: each shown label's box and font size, and each
    // node's dot; every pair of labels that meet, and every relation label over a node.
    const sg = window.storygraph, net = sg.network, body = net.body, scale = net.getScale();
    const labels = [], dots = [];
    const screen = (l, t, r, b) => {
        const a = net.canvasToDOM({x: l, y: t}), c = net.canvasToDOM({x: r, y: b});
        return {l: a.x, t: a.y, r: c.x, b: c.y};
    };
    for (const id of sg.nodes.getIds()) {
        const n = body.nodes[id], s = n.labelModule.size, rad = n.options.size || 10;
        dots.push({id: String(id), ...screen(n.x - rad, n.y - rad, n.x + rad, n.y + rad)});
        if (n.options.label && s.width) {
            labels.push({what: 'node ' + n.options.label, id: String(id),
                         px: n.options.font.size * scale,
                         ...screen(s.left, s.top, s.left + s.width, s.top + s.height)});
        }
    }
    for (const id of sg.edges.getIds()) {
        const e = body.edges[id], s = e.labelModule.size;
        if (String(e.options.label || '').trim() && s.width) {
            labels.push({what: 'edge ' + e.options.label, id: 'edge ' + id,
                         px: e.options.font.size * scale,
                         ...screen(s.left, s.top, s.left + s.width, s.top + s.height)});
        }
    }
    const meet = (a, c) => a.l < c.r && c.l < a.r && a.t < c.b && c.t < a.b;
    const overlaps = [];
    labels.forEach((a, i) => labels.slice(i + 1).forEach(c => {
        if (meet(a, c)) { overlaps.push([a.what, c.what]); }
    }));
    labels.filter(a => a.what.startsWith('edge')).forEach(a => dots.forEach(d => {
        if (meet(a, d)) { overlaps.push([a.what, 'dot ' + d.id]); }
    }));
    return {labels: labels, overlaps: overlaps, scale: scale,
            hidden: sg.nodes.get().filter(n => n.decluttered).map(n => n.id)
                .concat(sg.edges.get().filter(e => e.decluttered).map(e => e.relType))};
}"""


def _skip_reason() -> str:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (run `bash scripts/ensure_system_deps.sh` as root)"
    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is missing (pip install -r requirements-dev.txt)"
    return ""


def _answer() -> Answer:
    facts = [
        Fact(s, t, e, [f"d:{i:04d}"], ev, 9.0 if kept else 2.0, kept, "" if kept else "low")
        for i, (s, t, e, ev, kept) in enumerate(FACTS)
    ]
    return Answer(
        "桃太郎の仲間は誰？",
        "",
        "onehop",
        entities=[ResolvedEntity("桃太郎", "桃太郎", "dictionary")],
        facts=facts,
    )


def _whole_rows(count: int = 150) -> list[dict[str, Any]]:
    """A library-sized graph: hubs with many neighbours, names of one to seven characters."""
    names = [
        f"{'登場人物'[: 1 + i % 4]}{i}号{'の家来' if i % 5 == 0 else ''}" for i in range(count)
    ]
    rows = []
    for i, name in enumerate(names[1:], start=1):
        hub = names[(i * 7) % 9]
        if hub != name:
            rows.append(
                {"start": hub, "start_type": "Character", "type": "MEETS", "end": name,
                 "end_type": "Place" if i % 3 else "Object",
                 "evidence": [f"{hub}は{name}に会いました。"]}
            )  # fmt: skip
    return rows


def _open(page: Any, html: str, height: int, name: str) -> dict[str, Any]:
    page.set_viewport_size({"width": WIDTH, "height": height})
    page.set_content(html)
    page.wait_for_function("() => window.storygraph && window.storygraph.ready", timeout=60_000)
    page.wait_for_timeout(300)  # the last redraw after the labels were sorted out
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"graph-labels-{name}.png"))
    drawn: dict[str, Any] = page.evaluate(_SCREEN_JS)
    return drawn


def _check(drawn: dict[str, Any], least_labels: int) -> None:
    assert drawn["overlaps"] == [], drawn["overlaps"]
    sizes = [round(label["px"], 1) for label in drawn["labels"]]
    assert len(sizes) >= least_labels, drawn
    assert min(sizes) >= MIN_SCREEN_FONT, (sizes, drawn["scale"])


def test_graph_labels_are_apart_readable_and_in_the_storys_words() -> None:
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            drawn = _open(page, answer_graph_html(_answer(), height=ANSWER_HEIGHT), 560, "answer")
            _check(drawn, least_labels=10)
            edge_labels = [x["what"][5:] for x in drawn["labels"] if x["what"].startswith("edge")]
            assert edge_labels, drawn
            for label in edge_labels + drawn["hidden"]:  # never a type (BECOMES_COMPANION_OF)
                assert not re.search(r"[A-Z]{3}", str(label)), label
            assert "そろえる" in edge_labels + drawn["hidden"]  # SOROERU in the story's verb

            # a label hidden to keep the others apart shows on hover
            if drawn["hidden"]:
                hidden_node = page.evaluate(
                    "() => { const n = window.storygraph.nodes.get().find(x => x.decluttered);"
                    " if (!n) { return null; } const p = window.storygraph.network.canvasToDOM("
                    "window.storygraph.network.getPositions([n.id])[n.id]); return {id: n.id,"
                    " x: p.x, y: p.y}; }"
                )
                if hidden_node is not None:
                    box = page.locator("#sg-graph canvas").bounding_box()
                    assert box is not None
                    page.mouse.move(box["x"] + hidden_node["x"], box["y"] + hidden_node["y"])
                    page.wait_for_function(
                        "(id) => Boolean(window.storygraph.nodes.get(id).label)",
                        arg=hidden_node["id"],
                        timeout=10_000,
                    )

            html, _spec = whole_graph_html(_whole_rows(), max_nodes=150, height=WHOLE_HEIGHT)
            _check(_open(page, html, WHOLE_HEIGHT, "whole"), least_labels=9)  # every hub
        finally:
            browser.close()
