"""Graph tab: the last answer's subgraph and a filterable view of the whole graph.

The pictures are self-contained HTML pages from storygraph.ui.visualize, shown with `st.iframe`
(Streamlit 1.67 deprecates `st.components.v1.html` for it). Every name and evidence string in
them is escaped JSON, so the iframe only ever runs our own script and vis-network.

A click on a node inside a picture lists what that picture knows about it; a plain iframe cannot
report the click back to Python, so "What the graph knows about…" below the whole graph picks
an entity for the app: its choice is `st.session_state["selected_entity"]` (SELECTED_ENTITY_KEY),
which other pages may read to open that entity.

The whole graph draws each story's entity as its own node (a name several stories have, once
per story) and is coloured by story when a library is shown whole ("Colour by", issue #28), by
entity type otherwise; the "Story" filter draws one story.

Nothing past the reader's position is drawn (storygraph.store.reading, issue #41.2): the
whole graph and the entity list under it hold the Chat tab's "I have read up to…", and a story
of chapters drawn alone has a chapter range ("Chapters"), which starts at that position; the
last answer's drawing holds its facts, already read so far.
"""

from __future__ import annotations

import streamlit as st

from pages.chat import chat_reading, last_answer, read_up_to
from pages.common import guarded, md_escape
from storygraph.humanize import plural
from storygraph.library import wrong_facts
from storygraph.library.relation_labels import relation_label
from storygraph.library.wrong_facts import FactRef
from storygraph.services import Services
from storygraph.store.reading import Reading, reading_for
from storygraph.text.chapters import chapter_label
from storygraph.ui.visualize import answer_graph_html, names, read_rows, whole_graph_html

ANSWER_HEIGHT = 560
WHOLE_HEIGHT = 720
ALL_DOCUMENTS = ""
SELECTED_ENTITY_KEY = "selected_entity"
MAX_LISTED_RELATIONS = 50
COLOUR_BY = ("story", "type")
NOTICE_KEY = "graph_notice"
"""What the last "this is wrong" / "show again" did, shown once at the top of the tab."""


def _answer_section(services: Services) -> None:
    st.subheader("Last answer")
    answer = last_answer(services)
    if answer is None:
        st.info("Ask a question in the Chat tab: the relations it considered are drawn here.")
        return
    st.caption(
        f"「{md_escape(answer.question)}」 · {plural(len(answer.kept_facts), 'relation')} kept "
        f"of {len(answer.facts)} considered. Hover a line or a node for its name and evidence; "
        "click a node for everything the drawing knows about it."
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
    cols = st.columns([1, 2, 2, 2, 1])
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
    # A library shown whole is coloured by story first (a name several stories share is one
    # node per story); one story, by entity type.
    colour_by = cols[4].selectbox(
        "Colour by",
        COLOUR_BY,
        index=0 if len(documents) > 1 and not document else 1,
        key="graph_colour_by",
    )
    reading = _chapter_range(services, document) if document else None
    if reading is None:
        reading, line = chat_reading(services)
        if line:
            st.caption(line)
    rows = read_rows(
        store,
        reading,
        limit=int(cap) * 4,
        document_id=document or "",
        types=chosen_types,
        search=search,
    )
    if not rows:
        st.info("No relations match. Add a story in the Ingest tab, or loosen the filters.")
        return
    html, spec = whole_graph_html(
        rows,
        max_nodes=int(cap),
        height=WHOLE_HEIGHT,
        stories=documents if colour_by == "story" else None,
    )
    st.caption(
        f"{plural(spec.node_count(), 'node')} and {plural(len(spec.edges), 'relation')} shown; "
        "the best-connected nodes are labelled, hover any other for its name and any line for "
        "its relation; click a node for what the drawing knows about it."
    )
    st.iframe(html, height=WHOLE_HEIGHT)
    _entity_section(services, names(spec), reading)


def _chapter_range(services: Services, document: str) -> Reading | None:
    """The "Chapters" range of a story drawn alone, when it has more than one chapter: from
    its first chapter up to the Chat tab's position in it (its last chapter when none); None
    for a story without chapters (the Chat tab's position holds it)."""
    store = services.store
    parts = store.document_chapters(document)
    if len(parts) < 2:
        return None
    numbers = [n for n, _ in parts]
    titles = dict(parts)
    language = next((d.language for d in store.list_documents() if d.id == document), "")
    until = read_up_to(document)
    picked = st.select_slider(
        "Chapters",
        numbers,
        value=(numbers[0], until if until in numbers else numbers[-1]),
        key=f"graph_chapters:{document}:{until}",  # a new position starts the range anew
        format_func=lambda n: chapter_label(n, language) or titles.get(n) or "before chapter 1",
        help="Draw only the relations these chapters state (starting at the Chat tab's "
        "“I have read up to…”, so nothing later is given away).",
    )
    since, upto = picked if isinstance(picked, tuple | list) else (numbers[0], picked)
    if since == numbers[0] and upto == numbers[-1]:
        return reading_for(store, None)  # the whole story
    return reading_for(store, upto, (document,), since=since)


def _entity_section(services: Services, names: list[str], reading: Reading) -> None:
    """Pick an entity (kept in st.session_state["selected_entity"]) and list its relations in
    the story's words; one of them can be hidden as wrong."""
    if st.session_state.get(SELECTED_ENTITY_KEY) not in (None, *names):
        names = [st.session_state[SELECTED_ENTITY_KEY], *names]
    chosen = st.selectbox(
        "What the graph knows about…",
        names,
        index=None,
        key=SELECTED_ENTITY_KEY,
        placeholder="pick an entity of the drawing",
    )
    if not chosen:
        return
    store = services.store
    kind = store.entity_types([chosen]).get(chosen, "")
    named = reading.names(store.entity_names())
    keys = sorted({str(row["key"]) for row in named if row.get("id") == chosen})
    relations = [
        kept for row in store.entity_relations(keys) if (kept := reading.relation(row)) is not None
    ]
    st.markdown(
        f"**{md_escape(chosen)}**" + (f" · {md_escape(kind)}" if kind else "")
        + f" · {plural(len(relations), 'relation')}"
    )
    if not relations:
        st.caption("No relation touches it.")
        return
    shown = relations[:MAX_LISTED_RELATIONS]
    st.dataframe(
        [
            {
                "direction": "→" if row["start"] == chosen else "←",
                "relation": relation_label(str(row["type"]), _first(row.get("evidence"))),
                "other": row["end"] if row["start"] == chosen else row["start"],
                "evidence": _first(row.get("evidence")),
                "sources": len(row.get("chunk_ids") or []),
            }
            for row in shown
        ],
        hide_index=True,
        column_config={"evidence": st.column_config.TextColumn(width="large")},
    )
    _wrong_fact_picker(services, shown)


def _first(evidence: object) -> str:
    if isinstance(evidence, list):
        return str(evidence[0]) if evidence else ""
    return str(evidence or "")


def _fact_ref(row: dict[str, object]) -> FactRef:
    return FactRef(str(row["start_key"]), str(row["type"]), str(row["end_key"]))


def _hide(services: Services, fact: FactRef) -> None:
    try:
        line = wrong_facts.hide(services.store, fact)
    except Exception as exc:  # noqa: BLE001 - shown to the user on the next run
        st.session_state[NOTICE_KEY] = ("error", f"Could not hide the fact: {exc}")
        return
    st.session_state[NOTICE_KEY] = (
        "success",
        f"Hidden as wrong: {line}. It is no longer drawn or used in answers; "
        "“Show again” under “Hidden as wrong” undoes it.",
    )


def _show_again(services: Services, fact: FactRef) -> None:
    try:
        line = wrong_facts.show_again(services.store, fact)
    except Exception as exc:  # noqa: BLE001 - shown to the user on the next run
        st.session_state[NOTICE_KEY] = ("error", f"Could not show the fact again: {exc}")
        return
    st.session_state[NOTICE_KEY] = ("success", f"Shown again: {line}.")


def _wrong_fact_picker(services: Services, relations: list[dict[str, object]]) -> None:
    """The "this is wrong" act: hide one of the listed facts from the graph and answers."""
    lines = {i: wrong_facts.fact_line(row, str(row["type"])) for i, row in enumerate(relations)}
    with st.container(horizontal=True, gap="small", vertical_alignment="bottom"):
        picked = st.selectbox(
            "Is one of these wrong?",
            list(lines),
            index=None,
            format_func=lambda i: lines[i],
            key="graph_wrong_fact",
            placeholder="pick the wrong fact",
        )
        st.button(
            "This is wrong: hide it",
            key="graph_hide_fact",
            icon=":material/visibility_off:",
            disabled=picked is None,
            on_click=_hide,
            args=(services, _fact_ref(relations[picked])) if picked is not None else (),
        )


def _hidden_section(services: Services) -> None:
    """Every fact hidden as wrong, each with its undo."""
    hidden = services.store.hidden_facts()
    if not hidden:
        return
    with st.expander(f"Hidden as wrong ({len(hidden)})", expanded=False):
        st.caption("Not drawn and not used in answers; each act is in both entities' history.")
        for index, row in enumerate(hidden):
            left, right = st.columns([5, 1], vertical_alignment="center")
            left.markdown(md_escape(wrong_facts.fact_line(row, str(row["type"]))))
            right.button(
                "Show again",
                key=f"graph_show_fact_{index}",
                icon=":material/undo:",
                on_click=_show_again,
                args=(services, _fact_ref(row)),
            )


def _notice() -> None:
    notice = st.session_state.pop(NOTICE_KEY, None)
    if notice is not None:
        kind, text = notice
        (st.error if kind == "error" else st.success)(md_escape(text))


def render(services: Services) -> None:
    _notice()
    with guarded("Drawing the answer graph"):
        _answer_section(services)
    with guarded("Drawing the whole graph"):
        _whole_graph_section(services)
    with guarded("Listing the facts hidden as wrong"):
        _hidden_section(services)
