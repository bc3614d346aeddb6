"""Graph pictures for the app: an answer's subgraph and a filtered whole-graph view.

Nodes and edges are built with pyvis and drawn by the vis-network 9.1.2 that pyvis bundles,
in-lined into one self-contained HTML page (no network access at all). pyvis's own template is not
used: even with `cdn_resources="in_line"` it links Bootstrap from a CDN, and it switches to
`innerHTML` tooltips when a node title contains "href". Here every string reaches the page only
inside JSON with `<`, `>` and `&` escaped, and vis-network 9 shows string titles as plain text, so
a node named `<script>alert(1)</script>` is drawn as text. The page fits the view whenever its box
gets a size (a graph drawn in a hidden Streamlit tab lays out in a 0×0 box otherwise; design §7).

No Streamlit here: the app passes the HTML to `st.components.v1.html`.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from storygraph.models import Answer, Fact

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


@dataclass
class GraphSpec:
    """Nodes and edges in vis-network's shape, before they become HTML."""

    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    edges: list[dict[str, Any]] = field(default_factory=list)

    def add_node(self, node_id: str, **attrs: Any) -> None:
        if node_id not in self.nodes:
            self.nodes[node_id] = {"label": node_id, "title": node_id, **attrs}

    def node_count(self) -> int:
        return len(self.nodes)


def type_color(entity_type: str) -> str:
    """A stable colour per entity type."""
    if not entity_type:
        return NODE_COLOR
    return TYPE_PALETTE[zlib.crc32(entity_type.encode("utf-8")) % len(TYPE_PALETTE)]


def _short(text: str, limit: int = MAX_EVIDENCE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fact_title(fact: Fact) -> str:
    state = "kept" if fact.kept else "dropped"
    score = "–" if fact.score is None else f"{fact.score:g}"
    lines = [f"{fact.start} -[{fact.type}]-> {fact.end}", f"score {score} · {state}"]
    if fact.evidence:
        lines += ["", _short(fact.evidence)]
    return "\n".join(lines)


def answer_subgraph(answer: Answer) -> GraphSpec:
    """The answer's start nodes and every candidate fact: kept solid, dropped faded and dashed."""
    spec = GraphSpec()
    starts = [e.node_id for e in answer.entities]
    for node_id in starts:
        spec.add_node(
            node_id,
            color=START_COLOR,
            size=26,
            borderWidth=3,
            font={"size": 18, "color": "#111827"},
            title=f"{node_id}\nstart node (found in the question)",
        )
    kept_nodes = {n for f in answer.facts if f.kept for n in (f.start, f.end)}
    for fact in answer.facts:
        for node_id in (fact.start, fact.end):
            kept = node_id in kept_nodes
            spec.add_node(
                node_id,
                color=NODE_COLOR if kept else FADED_NODE_COLOR,
                size=18,
                font={"size": 15, "color": "#111827" if kept else "#94a3b8"},
            )
        spec.edges.append(
            {
                "from": fact.start,
                "to": fact.end,
                "label": fact.type,
                "title": _fact_title(fact),
                "arrows": "to",
                "dashes": not fact.kept,
                "width": 2.5 if fact.kept else 1,
                "color": {"color": KEPT_EDGE_COLOR if fact.kept else DROPPED_EDGE_COLOR},
                "font": {
                    "size": 11,
                    "color": "#1e293b" if fact.kept else "#94a3b8",
                    "strokeWidth": 3,
                    "align": "middle",
                },
            }
        )
    return spec


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value if v]


def whole_graph(rows: Iterable[Mapping[str, Any]], *, max_nodes: int) -> GraphSpec:
    """Rows of `GraphStore.graph_view` as a graph of at most `max_nodes` nodes."""
    spec = GraphSpec()
    for row in rows:
        start, end = str(row["start"]), str(row["end"])
        new = {start, end} - set(spec.nodes)
        if spec.node_count() + len(new) > max_nodes:
            continue
        for node_id, node_type in ((start, row.get("start_type")), (end, row.get("end_type"))):
            entity_type = str(node_type or "")
            spec.add_node(
                node_id,
                color=type_color(entity_type),
                size=18,
                font={"size": 15, "color": "#111827"},
                title=f"{node_id}\n{entity_type}" if entity_type else node_id,
                group=entity_type or "Entity",
            )
        evidence = [_short(e) for e in _as_list(row.get("evidence"))[:MAX_TITLE_EVIDENCE]]
        title = "\n".join([f"{start} -[{row['type']}]-> {end}", *(f"• {e}" for e in evidence)])
        spec.edges.append(
            {
                "from": start,
                "to": end,
                "label": str(row["type"]),
                "title": title,
                "arrows": "to",
                "width": 1.5,
                "color": {"color": "#475569"},
                "font": {"size": 10, "color": "#334155", "strokeWidth": 3, "align": "middle"},
            }
        )
    return spec


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
        net.add_node(node_id, label=attrs["label"], title=attrs["title"], **extra)
    for edge in spec.edges:
        extra = {k: v for k, v in edge.items() if k not in ("from", "to")}
        net.add_edge(edge["from"], edge["to"], **extra)
    return list(net.nodes), list(net.edges)


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
        "forceAtlas2Based": {"gravitationalConstant": -80, "springLength": 140},
        "stabilization": {"enabled": True, "iterations": 300, "fit": True},
    },
    "interaction": {"hover": True, "tooltipDelay": 120, "navigationButtons": False},
}

_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8">
<style>__CSS__</style>
<style>
html, body { margin: 0; padding: 0; background: #ffffff; font-family: "Noto Sans CJK JP",
  "Noto Sans JP", sans-serif; }
#sg-graph { width: 100%; height: __GRAPH_HEIGHT__px; border: 1px solid #e2e8f0;
  border-radius: 6px; box-sizing: border-box; }
#sg-details { font-size: 13px; color: #334155; padding: 4px 2px; white-space: pre-wrap;
  height: 44px; overflow: auto; }
div.vis-tooltip { white-space: pre-wrap; max-width: 420px; font-family: inherit; }
</style>
<script>__JS__</script>
</head><body>
<div id="sg-graph" data-testid="storygraph-graph"></div>
<div id="sg-details"></div>
<script>
(function () {
  var nodes = new vis.DataSet(__NODES__);
  var edges = new vis.DataSet(__EDGES__);
  var container = document.getElementById("sg-graph");
  var details = document.getElementById("sg-details");
  var hint = __HINT__;
  details.textContent = hint;
  var network = new vis.Network(container, {nodes: nodes, edges: edges}, __OPTIONS__);
  window.storygraph = {network: network, nodes: nodes, edges: edges};
  function fit() {
    if (container.clientWidth > 0 && container.clientHeight > 0) {
      network.redraw();
      network.fit({animation: false});
    }
  }
  network.once("stabilizationIterationsDone", function () {
    network.setOptions({physics: {enabled: false}});
    fit();
  });
  network.on("click", function (params) {
    var item = null;
    if (params.nodes.length) { item = nodes.get(params.nodes[0]); }
    else if (params.edges.length) { item = edges.get(params.edges[0]); }
    details.textContent = item ? String(item.title || item.label || "") : hint;
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

DETAILS_HEIGHT = 52
_PLACEHOLDER = re.compile(r"__(CSS|JS|GRAPH_HEIGHT|NODES|EDGES|OPTIONS|HINT)__")


def render_html(spec: GraphSpec, *, height: int = 520, hint: str = "") -> str:
    """A self-contained HTML page drawing `spec`; `height` is the whole page's height in px."""
    nodes, edges = _pyvis_data(spec)
    js, css = _vis_assets()
    values = {
        "CSS": css,
        "JS": js,
        "GRAPH_HEIGHT": str(max(120, height - DETAILS_HEIGHT)),
        "NODES": script_json(nodes),
        "EDGES": script_json(edges),
        "OPTIONS": script_json(OPTIONS),
        "HINT": script_json(hint or "Click a node or a relation to see its evidence."),
    }
    # One pass, so text inside a value (a node named "__EDGES__") is never substituted again.
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], _PAGE)


def answer_graph_html(answer: Answer, *, height: int = 520) -> str:
    return render_html(answer_subgraph(answer), height=height)


def whole_graph_html(
    rows: Sequence[Mapping[str, Any]], *, max_nodes: int, height: int = 600
) -> tuple[str, GraphSpec]:
    spec = whole_graph(rows, max_nodes=max_nodes)
    return render_html(spec, height=height), spec
