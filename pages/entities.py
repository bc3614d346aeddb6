"""Entities tab: a search box, the entities with their summaries, and one page opened at a time.

The opened page is `st.session_state["selected_entity"]` (an entity key, a name or
NAME@STORY): the list's buttons set it (a key: a name several stories use is listed once per
story), and so does a click on a node in the Graph tab (a name: its first story's page). Page
contents come from storygraph.library.entity_pages; this module only draws them.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pandas as pd
import streamlit as st

from pages.chat import chat_reading
from pages.common import md_escape
from storygraph.humanize import human_date, plural
from storygraph.library.entity_pages import METHOD_READ, Citation, EntityPage, EntityPages
from storygraph.services import Services
from storygraph.store.story_time import parse_position

SELECTED_KEY = "selected_entity"
LIST_LIMIT = 100


def widget_key(prefix: str, entity_id: str) -> str:
    """A stable widget key for an entity (names may hold any character)."""
    return f"{prefix}_{hashlib.sha1(entity_id.encode('utf-8')).hexdigest()[:12]}"


def open_entity(entity_id: str | None) -> None:
    st.session_state[SELECTED_KEY] = entity_id


def _pages(services: Services) -> EntityPages:
    # The model writes summaries only when it is capable; the small embedded model is not used.
    llm = services.llm() if services.info.capable else None
    return EntityPages(services.store, llm, services.info)


RELATION_COLUMNS: dict[str, Any] = {
    "relation": st.column_config.TextColumn(width=130),
    "with": st.column_config.TextColumn(width=100),
    "sources": st.column_config.TextColumn(
        width=170, help="Where in the story each statement is: its chunk (and chapter)"
    ),
    "story order": st.column_config.NumberColumn(
        width=90,
        format="%d",
        help="The character of the story where it is first stated: sort by it for story order",
    ),
    "superseded": st.column_config.TextColumn(width=110),
    "evidence": st.column_config.TextColumn(width="large"),
}
"""The relation tables' columns, in this order, with their widths in pixels. A grid cell does not
wrap, and left to itself the evidence column took the width of its longest sentence and pushed
the sources out of sight (a 1400 px window: the page's column, 3/5 of the wide layout, is ~720
px wide). The short columns come first at fixed widths (600 px in all), so each shows whole in
a page column down to that width; the evidence, the one long text, comes last (the timeline
below shows each sentence whole)."""


def _sources(page: EntityPage, citations: list[Citation]) -> str:
    """A relation's sources, briefly: a chunk of the page's own story by its place there
    (「第三章 #12」, "#12"); another story's by that story's name and chunk."""
    shown: list[str] = []
    for c in citations:
        if c.document_id == page.document_id:
            where = page.place(c.chunk) or c.document
        else:
            where = f"{c.document} #{c.chunk}" if c.chunk is not None else c.document
        if where not in shown:
            shown.append(where)
    return "; ".join(shown)


def _offset(story_order: str) -> int | None:
    """Where in its story a relation is first stated, as the character offset its story-order
    key holds (storygraph.store.story_time); None when it has none (an imported graph)."""
    found = parse_position(story_order)
    return found.offset if found else None


def _relations_table(page: EntityPage, direction: str) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for rel in page.relations:
        if rel.direction != direction:
            continue
        rows.append(
            {
                "relation": rel.label,
                "with": rel.other,
                "evidence": rel.evidence,
                "sources": _sources(page, rel.citations),
                "story order": _offset(rel.story_order),
                "superseded": "later replaced" if rel.invalid_at else "",
            }
        )
    return pd.DataFrame(rows, columns=list(RELATION_COLUMNS))


def _place(page: EntityPage, chunk: int | None) -> str:
    """Where a chunk of the page's story is, for markdown: 「第三章 \\#12」, "\\#12"."""
    return md_escape(page.place(chunk))


def _page(page: EntityPage) -> None:
    st.markdown(f"### {md_escape(page.id)}")
    facts = f"**Story:** {md_escape(page.document or '(imported)')} · "
    facts += f"**Type:** {md_escape(page.type or '-')}"
    if page.aliases:
        facts += f" · **also called:** {md_escape(', '.join(page.aliases))}"
    st.markdown(facts)
    st.info(md_escape(page.summary) if page.summary else "(no summary)", icon=":material/article:")
    sources = ", ".join(page.summary_sources) or "-"
    if page.summary_method == METHOD_READ:
        st.caption(f"Summary: made from the facts read so far; from: {md_escape(sources)}.")
    else:
        st.caption(
            f"Summary: {md_escape(page.summary_method or '-')}, "
            f"{human_date(page.summary_updated_at) if page.summary_updated_at else '-'}; "
            f"from: {md_escape(sources)}. It is rewritten only when a document changes this "
            "entity."
        )
    for title, direction in (("Relations from it", "out"), ("Relations to it", "in")):
        table = _relations_table(page, direction)
        st.markdown(f"**{title}** ({len(table)})")
        if table.empty:
            st.caption("none")
        else:
            st.dataframe(
                table,
                hide_index=True,
                width="stretch",
                column_order=list(RELATION_COLUMNS),
                column_config=RELATION_COLUMNS,
                placeholder="",
            )
    neighbours = sorted({r.other for r in page.relations})
    if neighbours:
        st.caption("Open a related entity:")
        with st.container(horizontal=True, gap="small"):
            for name in neighbours:
                st.button(
                    md_escape(name),
                    key=widget_key("entity_related", name),
                    on_click=open_entity,
                    args=(f"{page.document_id}:{name}",),  # the same story's entity
                    type="tertiary",
                )
    with st.expander(f"Timeline ({len(page.timeline)} relations in story order)", expanded=True):
        if not page.timeline:
            st.caption("No relation has a story position (an imported graph has none).")
        for i, entry in enumerate(page.timeline, start=1):
            later = " — *later superseded*" if entry.superseded_at else ""
            again = f" *(stated {entry.statements}×)*" if entry.statements > 1 else ""
            st.markdown(
                f"{i}\\. **{md_escape(entry.words or entry.relation)}**{again}{later} — "
                f"*{md_escape(entry.document)} {_place(page, entry.chunk)}*"
            )
            if entry.evidence:
                st.caption(md_escape(entry.evidence))
        if page.unplaced:
            st.caption("Not placed in a story: " + md_escape(", ".join(page.unplaced)))
    lines = page.lines
    if lines:
        with st.expander(f"Lines ({len(lines)} in the story's text)"):
            for line in lines:
                to = f" → {md_escape(line.listener)}" if line.listener else ""
                st.markdown(
                    f"- 「{md_escape(line.quote)}」{to} — "
                    f"*{md_escape(line.document)} {_place(page, line.chunk)}*"
                )
    with st.expander(f"Mentioned in ({plural(len(page.mentions), 'document')})"):
        for mention in page.mentions:
            chunks = ", ".join(page.place(c) for c in mention.chunks) or "-"
            st.markdown(f"- {md_escape(mention.document)}: chunks {chunks}")
        if not page.mentions:
            st.caption("No document mentions it (imported).")
    with st.expander(f"History ({plural(len(page.history), 'document')})"):
        for item in page.history:
            st.markdown(f"**{md_escape(item.kind)}** by {md_escape(item.document)} · {item.at}")
            for change in item.changes:
                st.markdown(f"- {md_escape(change)}")
        if not page.history:
            st.caption("No document has changed it (imported).")


def _same_as(services: Services, page: EntityPage) -> None:
    """The deliberate act of cross-story identity (storygraph.library.identity): link this
    entity to another story's, or undo a link."""
    from storygraph.library import identity

    names = {d.id: d.name for d in services.store.list_documents()}
    with st.expander(f"Same as in other stories ({len(page.twins)})"):
        for twin in page.twins:
            story, _, name = twin.partition(":")
            st.markdown(f"- {md_escape(name)} of {md_escape(names.get(story, story))}")
            st.button(
                "Not the same (undo)",
                key=widget_key("entity_unmerge", page.key + twin),
                on_click=identity.unmerge,
                args=(services.store, page.key, twin),
            )
        others = sorted(
            str(r["key"])
            for r in services.store.entity_names()
            if r["document_id"] != page.document_id and r["key"] not in page.twins
        )
        if not others:
            st.caption("No other story's entity to link.")
            return
        same_name = [k for k in others if k.partition(":")[2] == page.id]
        chosen = st.selectbox(
            "This is the same one as…",
            [*same_name, *(k for k in others if k not in same_name)],
            index=None,
            format_func=lambda k: f"{k.partition(':')[2]} · {names.get(k.partition(':')[0], '-')}",
            key=widget_key("entity_same_pick", page.key),
            placeholder="another story's entity",
        )
        st.button(
            "Same one",
            key=widget_key("entity_merge", page.key),
            disabled=chosen is None,
            on_click=identity.merge,
            args=(services.store, page.key, chosen or ""),
            help="Links the two (each keeps its own facts and sources; questions about one "
            "also start at the other); recorded in both histories and undoable.",
        )


def render(services: Services) -> None:
    pages = _pages(services)
    # the Chat tab's "I have read up to…": nothing of its story after it (store/reading.py)
    reading, line = chat_reading(services)
    if line:
        st.caption(line)
    left, right = st.columns([2, 3])
    with left:
        search = st.text_input("Search entities", key="entities_search", placeholder="e.g. 桃太郎")
        items = pages.list(search, LIST_LIMIT, reading=reading)
        if not items:
            st.info("No entities match. Add a story in the Ingest tab, or change the search.")
        for item in items:
            with st.container(border=True):
                st.button(
                    md_escape(f"{item.id} · {item.type or '-'} · {item.document or '-'}"),
                    key=widget_key("entity_open", item.key),
                    on_click=open_entity,
                    args=(item.key,),
                    type="tertiary",
                )
                st.caption(md_escape(item.summary) if item.summary else "(no summary)")
    with right:
        selected = st.session_state.get(SELECTED_KEY)
        if not selected:
            st.info("Pick an entity on the left (or click a node in the Graph tab).")
            return
        page = pages.page(str(selected), reading=reading)
        if page is None:
            read = " in what you have read so far" if line else " in the graph"
            st.warning(f"No entity called 「{md_escape(str(selected))}」{read}.")
            return
        _page(page)
        _same_as(services, page)
        st.button("Close the page", key="entity_close", on_click=open_entity, args=(None,))
