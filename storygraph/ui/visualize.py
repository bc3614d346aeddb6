"""Graph pictures for the app: an answer's subgraph and a filtered whole-graph view.

Nodes and edges are built with pyvis and drawn by the vis-network 9.1.2 that pyvis bundles,
in-lined into one self-contained HTML page (no network access at all). pyvis's own template is not
used: even with `cdn_resources="in_line"` it links Bootstrap from a CDN, and it switches to
`innerHTML` tooltips when a node title contains "href". Here every string reaches the page only
inside JSON with `<`, `>` and `&` escaped, and vis-network 9 shows string titles as plain text, so
a node named `<script>alert(1)</script>` is drawn as text. The page fits the view whenever its box
gets a size (a graph drawn in a hidden Streamlit tab lays out in a 0×0 box otherwise; design §7).

Readability (issue 16, issue #42): labels are 16-22 px, and fitting a graph into its box grows
the fonts as much as it zooms out, so that no label is drawn under MIN_SCREEN_FONT px at the
default zoom. In the answer graph only kept relations carry a label, in the whole graph only
the LABELLED_NODES best-connected nodes do (node size grows with the number of relations). The
page then measures what vis-network drew and hides each label that would meet one kept before
it (node names first, bigger nodes first; a relation label also never covers a node), after
every layout change (`declutter` in the page). Every hidden label appears on hover
(`fullLabel` / `relType` in the data). Relation labels are level, beside their line's middle.
A legend above the drawing explains the colours, and a click on a node lists what the
drawing knows about it (its type and every relation touching it) under the drawing; a search
box beside the legend centres the node it names (showing its name if it was hidden).

Relation labels are the label people see (`storygraph.library.relation_labels`): the story's
verb, never the Cypher type. In the answer's drawing the relations between the same two nodes
share one line and one label (several labels on one spot overlapped), a pair linked both ways
curves apart, and the layout keeps nodes apart (`avoidOverlap`) with room for the labels.

In the whole graph a node is one story's entity (its key), so a name several stories have is
drawn once per story; it is coloured by entity type or, for a library, by story (the legend
names each story drawn; issue #28).

No Streamlit here: the app passes the HTML to `st.iframe`.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from storygraph.library.relation_labels import relation_label
from storygraph.models import Answer, Fact

if TYPE_CHECKING:
    from storygraph.qa.pipeline.explain import FactLine
    from storygraph.store import GraphStore
    from storygraph.store.reading import Reading

START_COLOR = "#f97316"
NODE_COLOR = "#3b82f6"
FADED_NODE_COLOR = "#cbd5e1"
KEPT_EDGE_COLOR = "#1e293b"
DROPPED_EDGE_COLOR = "rgba(148,163,184,0.55)"
TYPE_PALETTE = (
    "#3b82f6",
    "#10b981",
    "#a855f7",
    "#ef4444",
    "#eab308",
    "#06b6d4",
    "#ec4899",
    "#84cc16",
    "#6366f1",
    "#14b8a6",
)
MAX_TITLE_EVIDENCE = 3
MAX_EVIDENCE_CHARS = 240
LABELLED_NODES = 20
"""The whole graph labels its best-connected nodes only; the others show their name on hover."""
NODE_FONT = {"size": 18, "color": "#111827", "strokeWidth": 4, "strokeColor": "#ffffff"}
EDGE_FONT = {"size": 14, "color": "#1e293b", "strokeWidth": 4, "align": "horizontal"}
"""Relation labels are level (a label along a slanted line has no box to keep clear of others)
and drawn over a white halo beside their line's middle."""
MIN_SCREEN_FONT = 12
"""No label is drawn smaller than this on screen at the default zoom (issue #42: ~7 px)."""


@dataclass
class GraphSpec:
    """Nodes and edges in vis-network's shape, before they become HTML."""

    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    edges: list[dict[str, Any]] = field(default_factory=list)

    legend: list[dict[str, str]] = field(default_factory=list)

    def add_node(self, node_id: str, **attrs: Any) -> None:
        if node_id not in self.nodes:
            base = {"label": node_id, "title": node_id, "fullLabel": node_id}
            self.nodes[node_id] = {**base, **attrs}

    def node_count(self) -> int:
        return len(self.nodes)

    def degrees(self) -> dict[str, int]:
        counts = dict.fromkeys(self.nodes, 0)
        for edge in self.edges:
            for end in (edge["from"], edge["to"]):
                counts[end] = counts.get(end, 0) + 1
        return counts


def type_color(entity_type: str) -> str:
    """A stable colour per entity type."""
    if not entity_type:
        return NODE_COLOR
    return TYPE_PALETTE[zlib.crc32(entity_type.encode("utf-8")) % len(TYPE_PALETTE)]


def _short(text: str, limit: int = MAX_EVIDENCE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fact_title(fact: Fact, line: FactLine) -> str:
    """A relation's hover text for a reader: the fact in the story's verb, its rank and why it
    was kept or set aside (the score is the chat's developer tab's), its sentence up to a
    sentence end."""
    from storygraph.qa.pipeline.explain import rank_text

    lines = [line.words, f"rank {rank_text(line.rank)} · {line.why}"]
    if fact.evidence:
        text = " ".join(fact.evidence.split())
        lines += ["", text if len(text) <= MAX_EVIDENCE_CHARS else _to_sentence(text)]
    return "\n".join(lines)


def _to_sentence(text: str) -> str:
    from storygraph.qa.pipeline.explain import at_sentence_end

    cut = at_sentence_end(text[:MAX_EVIDENCE_CHARS])
    return cut if cut != text[:MAX_EVIDENCE_CHARS] else _short(text)


def answer_subgraph(answer: Answer) -> GraphSpec:
    """The answer's start nodes and every candidate fact: kept solid, dropped faded and dashed."""
    spec = GraphSpec()
    starts = [e.node_id for e in answer.entities]
    for node_id in starts:
        spec.add_node(
            node_id,
            color=START_COLOR,
            size=28,
            borderWidth=3,
            font={**NODE_FONT, "size": 22},
            title=f"{node_id}\nstart node (found in the question)",
        )
    kept_nodes = {n for f in answer.facts if f.kept for n in (f.start, f.end)}
    for fact in answer.facts:
        for node_id in (fact.start, fact.end):
            kept = node_id in kept_nodes
            spec.add_node(
                node_id,
                color=NODE_COLOR if kept else FADED_NODE_COLOR,
                size=20 if kept else 14,
                font={**NODE_FONT, "color": "#111827" if kept else "#64748b"},
            )
    # One line per ordered pair of nodes: several relations between the same two nodes share
    # it, their labels joined, so no two labels print on top of each other; a kept relation
    # makes the line solid. A pair linked both ways curves apart (curvedCW flips with the
    # direction), so its two labels do not meet either.
    from storygraph.qa.pipeline.explain import facts_in_words

    said = {id(f): line for f, line in zip(answer.facts, facts_in_words(answer), strict=True)}
    pairs: dict[tuple[str, str], list[Fact]] = {}
    for fact in answer.facts:
        pairs.setdefault((fact.start, fact.end), []).append(fact)
    for (start, end), facts in pairs.items():
        kept = [f for f in facts if f.kept]
        labels = _unique(relation_label(f.type, f.evidence) for f in (kept or facts))
        edge: dict[str, Any] = {
            "from": start,
            "to": end,
            # Only kept relations are labelled; a dropped one shows its label on hover.
            "label": " · ".join(labels) if kept else "",
            "relType": " · ".join(labels),
            "title": "\n\n".join(_fact_title(f, said[id(f)]) for f in facts),
            "arrows": "to",
            "dashes": not kept,
            "width": 3 if kept else 1,
            "color": {"color": KEPT_EDGE_COLOR if kept else DROPPED_EDGE_COLOR},
            "font": {**EDGE_FONT, "color": "#1e293b" if kept else "#64748b"},
        }
        if (end, start) in pairs:
            edge["smooth"] = {"enabled": True, "type": "curvedCW", "roundness": 0.25}
        spec.edges.append(edge)
    spec.legend = [
        {"kind": "node", "color": START_COLOR, "label": "named in the question"},
        {"kind": "node", "color": NODE_COLOR, "label": "in a kept relation"},
        {"kind": "node", "color": FADED_NODE_COLOR, "label": "only in dropped relations"},
        {"kind": "edge", "color": KEPT_EDGE_COLOR, "label": "kept for the answer"},
        {"kind": "dashed", "color": "#94a3b8", "label": "dropped (hover for why)"},
    ]
    return spec


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value if v]


def story_colors(document_ids: Iterable[str]) -> dict[str, str]:
    """A colour per story, in the order given (the palette repeats after its 10 colours)."""
    ordered = _unique(document_ids)
    return {d: TYPE_PALETTE[i % len(TYPE_PALETTE)] for i, d in enumerate(ordered)}


def read_rows(
    store: GraphStore,
    reading: Reading,
    *,
    limit: int,
    document_id: str = "",
    types: Sequence[str] = (),
    search: str = "",
) -> list[dict[str, Any]]:
    """The whole graph's relations (`GraphStore.graph_view`) within `reading` (the reader's
    position or the tab's chapter range, storygraph.store.reading): only the relations a
    chunk shown states, each with only those chunks' sentences. A position in some stories
    leaves the others whole (`Reading.shows`): the store is then asked for every relation and
    the rows are trimmed here."""
    held = reading.limited and (not reading.stories or document_id in reading.stories)
    rows = store.graph_view(
        limit=limit,
        document_id=document_id,
        types=types,
        search=search,
        readable=reading.chunks if held else None,
    )
    if not reading.limited:
        return rows
    return [kept for row in rows if (kept := reading.relation(row)) is not None]


def whole_graph(
    rows: Iterable[Mapping[str, Any]],
    *,
    max_nodes: int,
    stories: Mapping[str, str] | None = None,
) -> GraphSpec:
    """Rows of `GraphStore.graph_view` as a graph of at most `max_nodes` nodes.

    A node is one story's entity (its key when the row has one), so a name several stories
    have is drawn once per story, each labelled with the name. `stories` (document id → the
    story's name): colour the nodes by story, the legend naming each story drawn; without it
    the nodes are coloured by entity type."""
    spec = GraphSpec()
    types: dict[str, str] = {}
    drawn_stories: list[str] = []
    for row in rows:
        ends = (
            (row.get("start_key") or row["start"], row["start"], row.get("start_type"),
             row.get("document_id")),
            (row.get("end_key") or row["end"], row["end"], row.get("end_type"),
             row.get("end_document_id", row.get("document_id"))),
        )  # fmt: skip
        new = {str(node_id) for node_id, *_ in ends} - set(spec.nodes)
        if spec.node_count() + len(new) > max_nodes:
            continue
        for node_id, name, node_type, document in ends:
            entity_type = str(node_type or "")
            story = str(document or "")
            types.setdefault(entity_type or "Entity", type_color(entity_type))
            drawn_stories.append(story)
            lines = [str(name), *([entity_type] if entity_type else [])]
            if stories is not None:
                lines.append(stories.get(story, "no story (imported)"))
            spec.add_node(
                str(node_id),
                label=str(name),
                fullLabel=str(name),
                color=type_color(entity_type),
                font=dict(NODE_FONT),
                title="\n".join(lines),
                kind=entity_type or "Entity",
                story=story,
            )
        start, end = str(ends[0][0]), str(ends[1][0])
        sentences = _as_list(row.get("evidence"))
        evidence = [_short(e) for e in sentences[:MAX_TITLE_EVIDENCE]]
        label = relation_label(str(row["type"]), sentences[0] if sentences else "")
        title = "\n".join(
            [f"{row['start']} → {label} → {row['end']}", *(f"• {e}" for e in evidence)]
        )
        spec.edges.append(
            {
                "from": start,
                "to": end,
                "label": "",  # on hover: a label per edge piles up in a dense graph
                "relType": label,
                "title": title,
                "arrows": "to",
                "width": 1.5,
                "color": {"color": "#64748b"},
                "font": dict(EDGE_FONT),
            }
        )
    _size_and_label_by_degree(spec)
    if stories is None:
        spec.legend = [
            {"kind": "node", "color": color, "label": name}
            for name, color in sorted(types.items())
        ]
    else:
        ordered = sorted(set(drawn_stories), key=lambda d: (stories.get(d, "\uffff"), d))
        colors = story_colors(ordered)
        for attrs in spec.nodes.values():
            attrs["color"] = colors[attrs["story"]]
        spec.legend = [
            {"kind": "node", "color": colors[d], "label": stories.get(d, "no story (imported)")}
            for d in ordered
        ]
        if len(ordered) > len(TYPE_PALETTE):
            spec.legend.append(
                {"kind": "note", "color": "", "label": f"colours repeat after {len(TYPE_PALETTE)}"}
            )
    spec.legend.append({"kind": "note", "color": "", "label": "bigger node: more relations"})
    return spec


def names(spec: GraphSpec) -> list[str]:
    """The entity names drawn (a name several stories share, once)."""
    return sorted({str(attrs["fullLabel"]) for attrs in spec.nodes.values()})


def _size_and_label_by_degree(spec: GraphSpec, labelled: int = LABELLED_NODES) -> None:
    """Node size grows with its relations; only the `labelled` best-connected nodes keep a
    visible label (ties: first seen), the others show their name on hover."""
    degrees = spec.degrees()
    ranked = sorted(spec.nodes, key=lambda n: -degrees.get(n, 0))
    shown = set(ranked[:labelled])
    for node_id, attrs in spec.nodes.items():
        degree = degrees.get(node_id, 0)
        attrs["size"] = min(40.0, 12 + 8 * degree**0.5)
        attrs["title"] = f"{attrs['title']}\n{degree} relation{'s' if degree != 1 else ''}"
        if node_id not in shown:
            attrs["label"] = ""


def script_json(value: Any) -> str:
    """JSON that is safe inside a <script> element: no `<`, `>`, `&` or line separators."""
    text = json.dumps(value, ensure_ascii=False)
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


def _pyvis_data(spec: GraphSpec) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Nodes and edges normalised by pyvis (ids checked, edges only between known nodes)."""
    from pyvis.network import Network

    net = Network(directed=True, cdn_resources="in_line")
    for node_id, attrs in spec.nodes.items():
        extra = {k: v for k, v in attrs.items() if k not in ("label", "title")}
        # pyvis replaces an empty label by the id; a hidden label is set again below.
        net.add_node(node_id, label=attrs["label"] or node_id, title=attrs["title"], **extra)
    for edge in spec.edges:
        extra = {k: v for k, v in edge.items() if k not in ("from", "to")}
        net.add_edge(edge["from"], edge["to"], **extra)
    nodes = [
        {**node, "label": spec.nodes[node["id"]]["label"]} if node["id"] in spec.nodes else node
        for node in net.nodes
    ]
    return nodes, list(net.edges)


@lru_cache(maxsize=1)
def _vis_assets() -> tuple[str, str]:
    """The vis-network script and stylesheet that ship inside the pyvis package."""
    import pyvis

    lib = Path(pyvis.__file__).parent / "templates" / "lib" / "vis-9.1.2"
    js = (lib / "vis-network.min.js").read_text(encoding="utf-8")
    css = (lib / "vis-network.css").read_text(encoding="utf-8")
    return js.replace("</script", "<\\/script"), css.replace("</style", "<\\/style")


OPTIONS: dict[str, Any] = {
    "autoResize": True,
    "layout": {"improvedLayout": True, "randomSeed": 7},
    "nodes": {"shape": "dot", "font": {"face": "Noto Sans CJK JP, Noto Sans JP, sans-serif"}},
    "edges": {
        "smooth": {"enabled": True, "type": "dynamic"},
        "font": {"face": "Noto Sans CJK JP, Noto Sans JP, sans-serif"},
    },
    "physics": {
        "enabled": True,
        "solver": "forceAtlas2Based",
        # avoidOverlap keeps labelled nodes apart; the longer springs leave room for the
        # relation labels between them.
        "forceAtlas2Based": {
            "gravitationalConstant": -120,
            "springLength": 190,
            "avoidOverlap": 1,
        },
        "stabilization": {"enabled": True, "iterations": 300, "fit": True},
    },
    "interaction": {"hover": True, "tooltipDelay": 200, "navigationButtons": False},
}

_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8">
<style>__CSS__</style>
<style>
html, body { margin: 0; padding: 0; background: #ffffff; font-family: "Noto Sans CJK JP",
  "Noto Sans JP", sans-serif; }
#sg-legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 13px; color: #334155;
  padding: 2px 2px 6px 2px; min-height: 20px; max-height: 44px; overflow: auto; }
#sg-legend span.item { display: inline-flex; align-items: center; gap: 5px; }
#sg-search { margin-left: auto; font: inherit; font-size: 13px; padding: 1px 6px;
  border: 1px solid #cbd5e1; border-radius: 4px; width: 150px; }
#sg-legend i.dot { width: 12px; height: 12px; border-radius: 50%; display: inline-block; }
#sg-legend i.line { width: 22px; height: 0; border-top: 3px solid; display: inline-block; }
#sg-legend i.dashed { width: 22px; height: 0; border-top: 2px dashed; display: inline-block; }
#sg-graph { width: 100%; height: __GRAPH_HEIGHT__px; border: 1px solid #e2e8f0;
  border-radius: 6px; box-sizing: border-box; }
#sg-details { font-size: 14px; color: #1e293b; padding: 6px 2px; white-space: pre-wrap;
  height: __DETAILS_HEIGHT__px; overflow: auto; box-sizing: border-box; }
div.vis-tooltip { white-space: pre-wrap; max-width: 420px; font-family: inherit;
  font-size: 13px; }
</style>
<script>__JS__</script>
</head><body>
<div id="sg-legend" data-testid="storygraph-legend"></div>
<div id="sg-graph" data-testid="storygraph-graph"></div>
<div id="sg-details" data-testid="storygraph-details"></div>
<script>
(function () {
  var nodes = new vis.DataSet(__NODES__);
  var edges = new vis.DataSet(__EDGES__);
  var legend = __LEGEND__;
  var container = document.getElementById("sg-graph");
  var details = document.getElementById("sg-details");
  var legendBox = document.getElementById("sg-legend");
  legend.forEach(function (entry) {
    var item = document.createElement("span");
    item.className = "item";
    if (entry.kind !== "note") {
      var mark = document.createElement("i");
      mark.className = entry.kind === "node" ? "dot" : entry.kind === "dashed" ? "dashed" : "line";
      if (entry.kind === "node") { mark.style.background = entry.color; }
      else { mark.style.borderColor = entry.color; }
      item.appendChild(mark);
    }
    item.appendChild(document.createTextNode(entry.label));
    legendBox.appendChild(item);
  });
  var search = document.createElement("input");
  search.id = "sg-search";
  search.type = "search";
  search.placeholder = "Find a node…";
  search.setAttribute("aria-label", "Find a node");
  search.setAttribute("data-testid", "storygraph-search");
  legendBox.appendChild(search);
  var hint = __HINT__;
  details.textContent = hint;
  var network = new vis.Network(container, {nodes: nodes, edges: edges}, __OPTIONS__);
  window.storygraph = {network: network, nodes: nodes, edges: edges};
  // Fitting a graph into its box zooms out; fonts grow by the same factor, so that labels keep
  // their size on screen (never under __MIN_SCREEN_FONT__ px); labels that would then meet are
  // hidden by declutter() below and shown on hover.
  var baseFont = {nodes: {}, edges: {}};
  nodes.get().forEach(function (n) { baseFont.nodes[n.id] = (n.font && n.font.size) || 14; });
  edges.get().forEach(function (e) { baseFont.edges[e.id] = (e.font && e.font.size) || 14; });
  var grown = 1;
  function grownFonts(set, base, grow) {
    return set.get().map(function (item) {
      var font = Object.assign({}, item.font || {});
      font.size = base[item.id] * grow;
      return {id: item.id, font: font};
    });
  }
  function readableFonts() {
    var scale = network.getScale();
    if (!(scale > 0)) { return; }
    var grow = Math.max(1, 1 / scale, __MIN_SCREEN_FONT__ / (minBase * scale));
    if (Math.abs(grow - grown) < 0.05) { return; }
    grown = grow;
    nodes.update(grownFonts(nodes, baseFont.nodes, grow));
    edges.update(grownFonts(edges, baseFont.edges, grow));
  }
  var minBase = Math.min.apply(null, [14].concat(
    Object.values(baseFont.nodes), Object.values(baseFont.edges)));
  // No two labels meet, and no relation label covers a node: after every layout change the
  // labels are drawn, measured (vis-network's own boxes) and, most important first (node
  // names, bigger nodes first; then relation labels, kept and wide lines first), each one that
  // meets a label kept before it (or, a relation's, a node) is hidden until hovered. A name may
  // pass over a small node's dot: its white halo keeps both readable, and hiding a hub's name
  // behind its own leaves would leave a star unnamed.
  var settled = false;
  // vis-network keeps an edge's label when it is set to "" or null: a space is no label.
  var NO_EDGE_LABEL = " ";
  function box(item) {
    var s = item && item.labelModule && item.labelModule.size;
    if (!item || !String(item.options.label || "").trim() || !s || !s.width) { return null; }
    return {l: s.left, t: s.top, r: s.left + s.width, b: s.top + s.height};
  }
  function dot(item) {
    var r = (item.options.size || 10) + 2;
    return {l: item.x - r, t: item.y - r, r: item.x + r, b: item.y + r};
  }
  function meets(a, c) { return a.l < c.r && c.l < a.r && a.t < c.b && c.t < a.b; }
  // Two steps, each on a drawing of its own (a redraw asked for inside vis-network's events
  // may draw later): show every label hidden before, and once drawn, measure and hide.
  var step = "idle";
  function declutter() {
    if (!settled) { return; }
    var back = nodes.get({filter: function (n) { return n.decluttered; }});
    nodes.update(back.map(function (n) {
      return {id: n.id, label: String(n.fullLabel || n.id), decluttered: false};
    }));
    var backEdges = edges.get({filter: function (e) { return e.decluttered; }});
    edges.update(backEdges.map(function (e) {
      return {id: e.id, label: String(e.relType || ""), decluttered: false};
    }));
    step = "measure";
    network.redraw();
  }
  network.on("afterDrawing", function () {
    if (step !== "measure") { return; }
    step = "hide";
    window.setTimeout(hideClashes, 0);
  });
  function hideClashes() {
    var body = network.body;
    var ids = nodes.getIds();
    var dots = ids.map(function (id) { return {id: id, box: dot(body.nodes[id])}; });
    var taken = [];
    var order = ids.slice().sort(function (a, c) {
      return (body.nodes[c].options.size || 0) - (body.nodes[a].options.size || 0);
    });
    var hideNodes = [];
    order.forEach(function (id) {
      var b = box(body.nodes[id]);
      if (!b) { return; }
      var clash = taken.some(function (t) { return meets(b, t.box); });
      if (clash) { hideNodes.push({id: id, label: "", decluttered: true}); }
      else { taken.push({id: "label:" + id, box: b}); }
    });
    var hideEdges = [];
    edges.getIds().slice().sort(function (a, c) {
      return (body.edges[c].options.width || 0) - (body.edges[a].options.width || 0);
    }).forEach(function (id) {
      var b = box(body.edges[id]);
      if (!b) { return; }
      var clash = function (t) { return meets(b, t.box); };
      if (taken.some(clash) || dots.some(clash)) {
        hideEdges.push({id: id, label: NO_EDGE_LABEL, decluttered: true});
      } else { taken.push({id: "edge:" + id, box: b}); }
    });
    nodes.update(hideNodes);
    edges.update(hideEdges);
    step = "idle";
    network.redraw();
    if (window.storygraph.onDecluttered) { window.storygraph.onDecluttered(); }
  }
  window.storygraph.declutter = declutter;
  var pending = null;
  function declutterSoon() {
    window.clearTimeout(pending);
    pending = window.setTimeout(declutter, 150);
  }
  function fit() {
    if (container.clientWidth > 0 && container.clientHeight > 0) {
      network.redraw();
      network.fit({animation: false});
      readableFonts();
      declutter();
    }
  }
  function name(id) {
    var n = nodes.get(id);
    return n ? String(n.fullLabel || n.label || id) : String(id);
  }
  function describeNode(id) {
    var node = nodes.get(id);
    var touching = edges.get({filter: function (e) { return e.from === id || e.to === id; }});
    var lines = [String(node.title || name(id)).split("\\n").join(" · ")];
    lines.push(touching.length + (touching.length === 1 ? " relation" : " relations") +
               " in this drawing:");
    touching.forEach(function (e) {
      var type = String(e.relType || e.label || "");
      lines.push(e.from === id ? "  → " + type + " → " + name(e.to)
                               : "  ← " + type + " ← " + name(e.from));
    });
    return lines.join("\\n");
  }
  // The search centres the first node whose name holds the text (an exact name first),
  // shows its name if it was hidden, selects it and lists its relations under the drawing.
  function findNode(text) {
    var want = String(text || "").trim().toLowerCase();
    if (!want) { return null; }
    var all = nodes.get();
    var hit = all.find(function (n) { return name(n.id).toLowerCase() === want; }) ||
              all.find(function (n) { return name(n.id).toLowerCase().indexOf(want) >= 0; });
    return hit ? hit.id : null;
  }
  function centre(id) {
    var n = nodes.get(id);
    if (n && !n.label) { nodes.update({id: id, label: String(n.fullLabel || id)}); }
    network.selectNodes([id]);
    network.focus(id, {scale: Math.max(network.getScale(), 1), animation: false});
    readableFonts();
    declutter();
    if (!nodes.get(id).label) {  // the node searched for keeps its name
      nodes.update({id: id, label: String(nodes.get(id).fullLabel || id), decluttered: false});
    }
    window.storygraph.selected = id;
    details.textContent = describeNode(id);
  }
  search.addEventListener("keydown", function (event) {
    if (event.key !== "Enter") { return; }
    var id = findNode(search.value);
    if (id === null) { details.textContent = "No node called “" + search.value + "” here."; }
    else { centre(id); }
  });
  network.once("stabilizationIterationsDone", function () {
    network.setOptions({physics: {enabled: false}});
    settled = true;
    fit();
    // Ready once the labels are sorted out (declutter's second step).
    window.storygraph.onDecluttered = function () {
      window.storygraph.ready = true;
      window.storygraph.onDecluttered = null;
    };
    declutter();
  });
  network.on("zoom", declutterSoon);  // zoomed in, hidden labels may fit again
  network.on("dragEnd", declutterSoon);
  network.on("click", function (params) {
    var text = hint;
    if (params.nodes.length) {
      text = describeNode(params.nodes[0]);
      window.storygraph.selected = params.nodes[0];
    } else if (params.edges.length) {
      var e = edges.get(params.edges[0]);
      text = String(e.title || e.relType || "");
    }
    details.textContent = text;
  });
  network.on("hoverNode", function (p) {
    var n = nodes.get(p.node);
    if (n && !n.label) {
      nodes.update({id: p.node, label: String(n.fullLabel || ""), hoverLabel: true});
    }
  });
  network.on("blurNode", function (p) {
    var n = nodes.get(p.node);
    if (n && n.hoverLabel) { nodes.update({id: p.node, label: "", hoverLabel: false}); }
  });
  network.on("hoverEdge", function (p) {
    var e = edges.get(p.edge);
    if (e && !String(e.label || "").trim()) {
      edges.update({id: p.edge, label: String(e.relType || ""), hoverLabel: true});
    }
  });
  network.on("blurEdge", function (p) {
    var e = edges.get(p.edge);
    if (e && e.hoverLabel) {
      edges.update({id: p.edge, label: NO_EDGE_LABEL, hoverLabel: false});
    }
  });
  if (window.ResizeObserver) { new ResizeObserver(fit).observe(container); }
  window.addEventListener("resize", fit);
  window.addEventListener("load", fit);
  document.addEventListener("visibilitychange", fit);
  fit();
})();
</script>
</body></html>
"""

DETAILS_HEIGHT = 110
LEGEND_HEIGHT = 30
_PLACEHOLDER = re.compile(
    r"__(CSS|JS|GRAPH_HEIGHT|DETAILS_HEIGHT|MIN_SCREEN_FONT|NODES|EDGES|LEGEND|OPTIONS|HINT)__"
)


def render_html(spec: GraphSpec, *, height: int = 520, hint: str = "") -> str:
    """A self-contained HTML page drawing `spec`; `height` is the whole page's height in px."""
    nodes, edges = _pyvis_data(spec)
    js, css = _vis_assets()
    values = {
        "CSS": css,
        "JS": js,
        "GRAPH_HEIGHT": str(max(120, height - DETAILS_HEIGHT - LEGEND_HEIGHT - 8)),
        "DETAILS_HEIGHT": str(DETAILS_HEIGHT),
        "MIN_SCREEN_FONT": str(MIN_SCREEN_FONT),
        "NODES": script_json(nodes),
        "EDGES": script_json(edges),
        "LEGEND": script_json(spec.legend),
        "OPTIONS": script_json(OPTIONS),
        "HINT": script_json(
            hint or "Click a node to see what the graph knows about it, or a relation for its "
            "evidence; hover to see hidden names."
        ),
    }
    # One pass, so text inside a value (a node named "__EDGES__") is never substituted again.
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], _PAGE)


def answer_graph_html(answer: Answer, *, height: int = 520) -> str:
    return render_html(
        answer_subgraph(answer),
        height=height,
        hint="Click a node to see what the graph knows about it; hover a dashed line for why "
        "it was dropped.",
    )


def whole_graph_html(
    rows: Sequence[Mapping[str, Any]],
    *,
    max_nodes: int,
    height: int = 600,
    stories: Mapping[str, str] | None = None,
) -> tuple[str, GraphSpec]:
    spec = whole_graph(rows, max_nodes=max_nodes, stories=stories)
    return render_html(spec, height=height), spec
