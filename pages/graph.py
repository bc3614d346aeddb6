"""Graph tab: the last answer's subgraph and a filterable view of the whole graph.

The pictures are self-contained HTML pages from storygraph.visualize, shown with `st.iframe`
(Streamlit 1.67 deprecates `st.components.v1.html` for it). Every name and evidence string in
them is escaped JSON, so the iframe only ever runs our own script and vis-network.
"""

from __future__ import annotations

import streamlit as st

from pages.chat import last_answer
from pages.common import guarded
from storygraph.services import Services
from storygraph.visualize import answer_graph_html, whole_graph_html

ANSWER_HEIGHT = 500
WHOLE_HEIGHT = 600
ALL_DOCUMENTS = ""


def _answer_section(services: Services) -> None:
    st.subheader("Last answer")
    answer = last_answer(services)
    if answer is None:
        st.info("Ask a question in the Chat tab: the relations it considered are drawn here.")
        return
    st.caption(
        f"「{answer.question}」 · mode `{answer.mode}` · orange: entities found in the question · "
        "solid arrows: relations kept for the answer · faded dashed: relations dropped. "
        "Hover or click for the evidence."
    )
    if not answer.facts and not answer.entities:
        st.info("This answer used no graph relations.")
        return
    st.iframe(answer_graph_html(answer, height=ANSWER_HEIGHT), height=ANSWER_HEIGHT)


def _whole_graph_section(services: Services) -> None:
    st.subheader("Whole graph")
    store = services.store
    types = sorted({str(r["type"]) for r in store.entity_names() if r.get("type")})
    documents = {d.id: d.name for d in store.list_documents()}
    cols = st.columns([1, 2, 2, 2])
    cap = cols[0].number_input(
        "Max nodes", min_value=5, max_value=1000, value=150, step=25, key="graph_cap"
    )
    chosen_types = cols[1].multiselect(
        "Entity types", types, key="graph_types", placeholder="all types"
    )
    document = cols[2].selectbox(
        "Story",
        [ALL_DOCUMENTS, *documents],
        format_func=lambda d: documents.get(d, "all stories"),
        key="graph_document",
    )
    search = cols[3].text_input("Name contains", key="graph_search", placeholder="e.g. 桃太郎")
    rows = store.graph_view(
        limit=int(cap) * 4, document_id=document or "", types=chosen_types, search=search
    )
    if not rows:
        st.info("No relations match. Add a story in the Ingest tab, or loosen the filters.")
        return
    html, spec = whole_graph_html(rows, max_nodes=int(cap), height=WHOLE_HEIGHT)
    st.caption(
        f"{spec.node_count()} nodes and {len(spec.edges)} relations shown "
        f"(node colour = entity type; hover or click for the evidence)."
    )
    st.iframe(html, height=WHOLE_HEIGHT)


def render(services: Services) -> None:
    with guarded("Drawing the answer graph"):
        _answer_section(services)
    with guarded("Drawing the whole graph"):
        _whole_graph_section(services)
