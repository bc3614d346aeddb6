"""The graph pictures' data: labels that can be read, a legend, scores on the 0-10 scale."""

from __future__ import annotations

import json
import re

from storygraph.models import Answer, Fact, ResolvedEntity
from storygraph.ui.visualize import (
    LABELLED_NODES,
    START_COLOR,
    answer_subgraph,
    render_html,
    type_color,
    whole_graph,
)


def _answer() -> Answer:
    return Answer(
        "桃太郎の仲間は誰？",
        "",
        "onehop",
        entities=[ResolvedEntity("桃太郎", "桃太郎", "dictionary")],
        facts=[
            Fact("犬", "BECOMES_COMPANION_OF", "桃太郎", ["c1"], "犬は家来になりました。", 13.0, True),  # noqa: E501
            Fact("桃太郎", "GOES_TO", "鬼が島", ["c2"], "", 2.0, False, "below minimum score"),
        ],
    )


def test_the_answer_graph_labels_kept_relations_and_explains_its_colours() -> None:
    spec = answer_subgraph(_answer())
    kept, dropped = spec.edges
    assert kept["label"] == "家来になる"  # the story's verb, not the type
    assert dropped["label"] == "" and dropped["relType"] == "goes to"  # on hover only
    # a reader's hover: rank and why, in words; the score is the developer tab's
    assert "rank 1 · kept: names 桃太郎" in kept["title"] and "of 10" not in kept["title"]
    assert "rank 2 · set aside: scored below the least" in dropped["title"]
    assert {"color": START_COLOR, "label": "named in the question", "kind": "node"} in spec.legend
    assert spec.nodes["桃太郎"]["font"]["size"] >= 18


def _rows(hub_edges: int, extra_pairs: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = [
        {"start": "hub", "start_type": "Character", "type": "MEETS", "end": f"n{i}",
         "end_type": "Place" if i % 2 else "Animal", "evidence": [f"hub meets n{i}"]}
        for i in range(hub_edges)
    ]  # fmt: skip
    rows += [
        {"start": f"a{i}", "start_type": "Object", "type": "NEAR", "end": f"b{i}",
         "end_type": "Object", "evidence": []}
        for i in range(extra_pairs)
    ]  # fmt: skip
    return rows


def test_the_whole_graph_labels_its_best_connected_nodes_only() -> None:
    spec = whole_graph(_rows(10, LABELLED_NODES), max_nodes=500)
    labelled = [n for n, attrs in spec.nodes.items() if attrs["label"]]
    assert len(labelled) == LABELLED_NODES < spec.node_count()
    assert "hub" in labelled  # the best-connected node
    assert spec.nodes["hub"]["size"] > spec.nodes["a0"]["size"]
    assert all(attrs["fullLabel"] == n for n, attrs in spec.nodes.items())  # names on hover
    assert all(e["label"] == "" and e["relType"] for e in spec.edges)
    legend = {entry["label"]: entry["color"] for entry in spec.legend if entry["kind"] == "node"}
    assert legend == {t: type_color(t) for t in ("Animal", "Character", "Object", "Place")}


def test_hidden_labels_stay_hidden_in_the_page_and_the_legend_is_escaped() -> None:
    spec = whole_graph(_rows(3, LABELLED_NODES), max_nodes=500)
    spec.legend.append({"kind": "node", "color": "#000", "label": "</script><b>x"})
    html = render_html(spec)
    nodes = json.loads(re.search(r"new vis\.DataSet\((\[.*?\])\);", html, re.S)[1])  # type: ignore[index]
    hidden = [n for n in nodes if n["label"] == ""]
    assert hidden and all(n["fullLabel"] for n in hidden)
    assert "</script><b>x" not in html and "\\u003c/script\\u003e" in html
    assert 'data-testid="storygraph-legend"' in html


def test_relations_between_the_same_two_nodes_share_one_line_and_one_label() -> None:
    """FOLLOWS and TALKS_TO between the same pair printed on top of each other (issue 29);
    a pair linked both ways curves apart."""
    answer = Answer(
        "犬は何をした？",
        "",
        "onehop",
        entities=[ResolvedEntity("犬", "犬", "dictionary")],
        facts=[
            Fact("犬", "FOLLOWS", "桃太郎", ["c1"], "犬は桃太郎について行きました。", 9.0, True),
            Fact("犬", "TALKS_TO", "桃太郎", ["c2"], "犬は桃太郎に話しかけました。", 8.0, True),
            Fact("桃太郎", "GIVES", "犬", ["c3"], "桃太郎は犬にきびだんごを与えました。", 7.0, True),  # noqa: E501
        ],
    )
    spec = answer_subgraph(answer)
    assert len(spec.edges) == 2
    pair = next(e for e in spec.edges if e["from"] == "犬")
    assert pair["label"] == "ついて行く · 話しかける"
    back = next(e for e in spec.edges if e["from"] == "桃太郎")
    assert back["label"] == "与える"
    assert pair["smooth"]["type"] == back["smooth"]["type"] == "curvedCW"
    assert "FOLLOWS" not in json.dumps(spec.edges, ensure_ascii=False)  # the type stays inside


def _library_rows() -> list[dict[str, object]]:
    """Two stories, each with its own おじいさん (keys: document id + ':' + name)."""
    return [
        {"start": "おじいさん", "start_type": "Character", "type": "GOES_TO", "end": "山",
         "end_type": "Place", "evidence": ["おじいさんは山へしば刈りに行きました。"],
         "start_key": "d1:おじいさん", "end_key": "d1:山", "document_id": "d1",
         "end_document_id": "d1"},
        {"start": "おじいさん", "start_type": "Character", "type": "SCATTERS", "end": "灰",
         "end_type": "Object", "evidence": ["おじいさんは灰をまきました。"],
         "start_key": "d2:おじいさん", "end_key": "d2:灰", "document_id": "d2",
         "end_document_id": "d2"},
    ]  # fmt: skip


def test_a_name_two_stories_share_is_one_node_per_story_coloured_by_its_story() -> None:
    stories = {"d1": "momotaro.txt", "d2": "hanasaka.txt"}
    spec = whole_graph(_library_rows(), max_nodes=50, stories=stories)
    jiji = [n for n in spec.nodes.values() if n["fullLabel"] == "おじいさん"]
    assert sorted(n["story"] for n in jiji) == ["d1", "d2"]
    assert jiji[0]["color"] != jiji[1]["color"]
    by_story = {n["story"]: n["color"] for n in spec.nodes.values()}
    assert all(n["color"] == by_story[n["story"]] for n in spec.nodes.values())
    legend = {e["label"]: e["color"] for e in spec.legend if e["kind"] == "node"}
    assert legend == {"hanasaka.txt": by_story["d2"], "momotaro.txt": by_story["d1"]}
    assert all("momotaro.txt" in n["title"] for n in spec.nodes.values() if n["story"] == "d1")
    edge = next(e for e in spec.edges if e["relType"])
    assert edge["from"] in spec.nodes and edge["to"] in spec.nodes


def test_coloured_by_type_the_legend_names_types_and_many_stories_repeat_colours() -> None:
    by_type = whole_graph(_library_rows(), max_nodes=50)
    assert {e["label"] for e in by_type.legend if e["kind"] == "node"} == {
        "Character", "Object", "Place"
    }  # fmt: skip
    assert by_type.node_count() == 4  # still one おじいさん per story
    rows = [
        {"start": f"a{i}", "type": "MEETS", "end": f"b{i}", "start_key": f"s{i}:a{i}",
         "end_key": f"s{i}:b{i}", "document_id": f"s{i}", "end_document_id": f"s{i}"}
        for i in range(12)
    ]  # fmt: skip
    spec = whole_graph(rows, max_nodes=100, stories={f"s{i}": f"story{i:02}" for i in range(12)})
    notes = [e["label"] for e in spec.legend if e["kind"] == "note"]
    assert "colours repeat after 10" in notes
    assert len({e["color"] for e in spec.legend if e["kind"] == "node"}) == 10
