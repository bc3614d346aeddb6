"""Chat tab: ask about the stories; every answer shows the sources it cites and how it was found.

The conversation is kept per data directory (storygraph.ui.app_state): it survives a reload and a
restart, and "New conversation" clears it. The input sits in `st.bottom`, pinned under the page
while the Chat tab is open (a chat input inside a tab would scroll away with the tab's content).
The latest turn is shown in full; older turns are collapsed. While an answer is worked out, a
status line names the phase running and how long it has run (or the model's queue, when others'
requests are ahead), and the model's reply shows as a muted draft marked "checking…", never in
the answer's style: the check may replace it (docs/ISSUES.md#draft-answer, #status-phases).
`show_answer` then draws the final Answer with its one verdict (storygraph.ui.answer_view): the
mark and its line, and a sentence saying what changed when the model's answer was replaced. A
question whose run is stopped (a newer question or a reload) is still saved, marked as stopped.

The answer is worked out on a worker thread while the run draws its text and the ingest banner
above the tabs (pages.jobs.refresh_banner: Streamlit holds the banner's own timer back while a
run is busy). The newest turn sits in the `chat_latest` container, scrolled into view when it
starts and when it ends, and once after a reload. Its details come in two levels: what a reader
asks (facts used and set aside, in the story's own verbs, with their sentences), then a tab for
developers (mode, types, ids, timings, Cypher).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import storygraph.qa.retrieval.retrieval as retrieval
from pages.common import (
    guarded,
    md_escape,
    model_badge,
    scroll_into_view,
    show_error,
    tab_is_open,
)
from pages.jobs import POLL_S, chat_notice, refresh_banner
from storygraph.errors import StoryGraphError
from storygraph.humanize import duration, human_date, plural, tokens_text
from storygraph.library.relation_labels import relation_label
from storygraph.llm.model_queue import waiting_for_the_model
from storygraph.models import Answer, Citation
from storygraph.qa.pipeline.explain import (
    FactLine,
    answer_method_text,
    fact_lines,
    plain_trace,
    question_kind,
    rank_text,
    score_text,
    source_text,
    split_citations,
)
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.pipeline.progress import Phase, reporting_phases
from storygraph.services import Services
from storygraph.store.reading import EVERYTHING, Reading, reading_for
from storygraph.text.chapters import chapter_label, chapter_name
from storygraph.ui.answer_view import (
    VerdictView,
    draft_line,
    phases_line,
    status_line,
    verdict_view,
)
from storygraph.ui.app_state import (
    ChatTurn,
    append_turn,
    clear_conversation,
    last_until,
    load_conversation,
)

log = logging.getLogger(__name__)

HISTORY_KEY = "chat_history"
HISTORY_STAMP_KEY = "chat_history_stamp"
PLACEHOLDER = "Ask about your stories, e.g. 桃太郎の仲間は誰？"
MODE_KEY = "chat_mode"
TOP_K_KEY = "chat_top_k"
TOP_K_MAX = 100
STORIES_KEY = "chat_stories"
READ_KEY = "chat_read_up_to"
"""The "I have read up to" picker's key prefix: one picker (and position) per story."""
READ_STORY_KEY = "chat_read_story"
"""The story the picker shown is of ("" when none is shown): the turn keeps it."""
WHOLE_STORY = -1
"""The picker's "all of it" (no reading position)."""
MIN_SCORE_KEY = "chat_min_score"
CHAT_TAB = "Chat"
EMPTY_QUESTION = "Type a question first: the message was empty."
STOPPED = "This answer was stopped before it was finished: a new question or a reload cut it short."
STOPPED_HINT = "Ask it again to get the answer."
TICK_S = 0.25
"""How often a run that is answering draws the answer's new text."""
LATEST_KEY = "chat_latest"
"""The container of the newest turn, scrolled into view when it starts and when it ends."""
SCROLLED_KEY = "_chat_scrolled_to_latest"
SOURCE_LABELS = {
    "llm": "named by the model",
    "dictionary": "found in the question by the graph's own names",
    "fuzzy": "fuzzy match",
    "given": "given",
    "embedding": "nearest name by embedding",
    "normalised": "by name, normalised (plurals, possessives)",
    "transliteration": "by its reading (Momotaro → 桃太郎)",
    "contained": "a question word that is part of a longer name",
}

__all__ = [
    "ChatTurn",
    "ask",
    "available_modes",
    "history",
    "last_answer",
    "render",
    "show_answer",
]


def available_modes() -> list[str]:
    """Retrieval modes, read at run time so modes added later appear without UI changes."""
    listing = getattr(retrieval, "available_modes", None)
    modes = list(listing()) if callable(listing) else list(retrieval.BASE_MODES)
    return modes or [retrieval.DEFAULT_MODE]


def _data_dir(services: Services) -> Path:
    return Path(services.settings.data_dir)


def _stamp(services: Services) -> float:
    from storygraph.ui.app_state import CHAT_FILE, state_dir

    path = state_dir(_data_dir(services)) / CHAT_FILE
    return path.stat().st_mtime if path.exists() else 0.0


def history(services: Services | None = None) -> list[ChatTurn]:
    """The conversation: read from the data directory when it changed on disk (another session
    or a restart), else this session's copy."""
    if services is not None and st.session_state.get(HISTORY_STAMP_KEY) != _stamp(services):
        turns, warning = load_conversation(_data_dir(services))
        if warning:
            st.warning(f"The saved conversation could not be read: {warning}")
        st.session_state[HISTORY_KEY] = turns
        st.session_state[HISTORY_STAMP_KEY] = _stamp(services)
    return st.session_state.setdefault(HISTORY_KEY, [])


def _save(services: Services, turns: list[ChatTurn], turn: ChatTurn) -> None:
    """Append `turn` to the saved conversation (and to this session's copy)."""
    try:
        st.session_state[HISTORY_KEY] = append_turn(_data_dir(services), turn)
    except OSError as exc:
        turns.append(turn)
        st.warning(f"The conversation could not be saved ({exc}); it lasts until a reload.")
    st.session_state[HISTORY_STAMP_KEY] = _stamp(services)


def _keep_unfinished(services: Services, turn: ChatTurn) -> None:
    """Save a turn whose run is being stopped (Streamlit interrupts a run when a new question
    arrives or the page reloads). Only the file is written: a Streamlit call here would be
    interrupted too."""
    try:
        append_turn(_data_dir(services), turn)
    except OSError:
        log.exception("The stopped turn %r could not be saved", turn.question)


def _new_conversation(services: Services) -> None:
    clear_conversation(_data_dir(services))
    st.session_state[HISTORY_KEY] = []
    st.session_state[HISTORY_STAMP_KEY] = _stamp(services)


def last_answer(services: Services | None = None) -> Answer | None:
    """The most recent successful answer of the conversation (drawn by the graph tab)."""
    for turn in reversed(history(services)):
        if turn.answer is not None:
            return turn.answer
    return None


def ask(
    services: Services,
    question: str,
    options: QAOptions,
    on_token: Callable[[str], None] | None = None,
    *,
    read: str = "",
) -> ChatTurn:
    """Answer a question; any failure becomes an error turn, never an exception. `on_token`
    sees the answer's pieces as the model writes them; `read`: the story `options.until` is a
    position in (kept with the turn)."""
    turn = ChatTurn(question, stories=list(options.stories), until=options.until, read=read)
    try:
        turn.answer = services.qa().ask(question, options, on_token=on_token)
    except StoryGraphError as exc:
        turn.error, turn.hint = exc.message, exc.hint
    except Exception as exc:  # noqa: BLE001 - the chat must survive any fault
        turn.error = f"Answering failed: {type(exc).__name__}: {exc}"
        turn.hint = "Try again, or another retrieval mode. The server log has the details."
    return turn


def _controls(services: Services) -> QAOptions:
    modes = available_modes()
    default = services.settings.retrieval_mode
    cols = st.columns([2, 1, 2])
    mode = cols[0].selectbox(
        "Retrieval mode",
        modes,
        index=modes.index(default) if default in modes else 0,
        key=MODE_KEY,
        help="onehop: every relation touching the question's entities (recommended). "
        "directed2 / undirected2: the older two-hop modes, kept for comparison.",
    )
    # The control offers what the answer actually uses: the small embedded model reads at
    # most SMALL_TOP_K facts, whatever the setting says (QAEngine.top_k_used).
    most = services.qa().top_k_used(QAOptions.from_settings(services.settings, top_k=TOP_K_MAX))
    if int(st.session_state.get(TOP_K_KEY, 0)) > most:
        st.session_state[TOP_K_KEY] = most
    top_k = cols[1].number_input(
        "Top-k facts",
        min_value=1,
        max_value=most,
        value=min(services.settings.rerank_top_k, most),
        key=TOP_K_KEY,
        help="How many of the best-scored relations the answer may use"
        + (f" (this model reads at most {most})." if most < TOP_K_MAX else "."),
    )
    min_score = cols[2].slider(
        "Minimum score",
        min_value=0.0,
        max_value=10.0,
        value=float(services.settings.rerank_min_score),
        step=0.5,
        key=MIN_SCORE_KEY,
        help="Relations scored below this (0-10) are dropped.",
    )
    stories = _story_picker(services)
    return QAOptions.from_settings(
        services.settings,
        mode=str(mode),
        top_k=int(top_k),
        min_score=float(min_score),
        stories=stories,
        until=_reading_picker(services, stories),
    )


def _story_picker(services: Services) -> tuple[str, ...]:
    """The stories a question may be answered from (none picked: every story, narrowed by the
    question's names). Kept with the conversation: a fresh session starts from the last turn's."""
    documents = {d.id: d.name for d in services.store.list_documents() if d.status == "ready"}
    if len(documents) < 2:
        return ()
    if STORIES_KEY not in st.session_state:
        turns = history(services)
        st.session_state[STORIES_KEY] = turns[-1].stories if turns else []
    # a story deleted meanwhile leaves the choice (the widget accepts only existing options)
    st.session_state[STORIES_KEY] = [d for d in st.session_state[STORIES_KEY] if d in documents]
    chosen = st.multiselect(
        "Stories",
        list(documents),
        format_func=lambda d: documents.get(d, d),
        key=STORIES_KEY,
        placeholder="All stories",
        help="Answer only from these stories. Empty: every story; a name only one story has "
        "(桃太郎) keeps the question to that story.",
    )
    return tuple(d for d in chosen if d in documents)


def _reading_picker(services: Services, stories: tuple[str, ...]) -> int | None:
    """The "I have read up to…" picker: the last chapter read of the one story in scope (the one
    picked, or the library's only story), shown when that story has more than one chapter; the
    answer uses nothing after it (storygraph.store.reading). One position per story, kept with
    the
    conversation: a fresh session starts from the story's last turn's. None: all of it."""
    st.session_state[READ_STORY_KEY] = ""
    ready = [d for d in services.store.list_documents() if d.status == "ready"]
    scoped = [d for d in ready if d.id in stories] if stories else ready
    if len(scoped) != 1:
        return None
    story = scoped[0]
    parts = services.store.document_chapters(story.id)
    if len(parts) < 2:
        return None
    numbers = [n for n, _ in parts]
    titles = dict(parts)
    key = f"{READ_KEY}:{story.id}"
    if st.session_state.get(key) not in [WHOLE_STORY, *numbers]:
        last = last_until(history(services), story.id)
        st.session_state[key] = last if last in numbers else WHOLE_STORY
    chosen = st.selectbox(
        "I have read up to…",
        [WHOLE_STORY, *numbers],
        format_func=lambda n: reading_label(n, titles.get(n, ""), story.language),
        key=key,
        help=f"The last chapter of {story.name} you have read: answers, their sources and "
        "citations use nothing after it, so nothing later is given away.",
    )
    st.session_state[READ_STORY_KEY] = story.id
    return None if chosen == WHOLE_STORY else int(chosen)


def read_up_to(story: str) -> int | None:
    """The chat's "I have read up to…" in `story` (None: the whole story, or never picked)."""
    value = st.session_state.get(f"{READ_KEY}:{story}") if story else None
    return None if value is None or value == WHOLE_STORY else int(value)


def chat_reading(services: Services) -> tuple[Reading, str]:
    """The reading position the chat's picker holds (its story's, storygraph.store.reading)
    for the other tabs, and a line saying so ("" when there is none): the Entities and Graph
    tabs show nothing after it either."""
    story = str(st.session_state.get(READ_STORY_KEY) or "")
    until = read_up_to(story)
    if until is None:
        return EVERYTHING, ""
    names = {d.id: d for d in services.store.list_documents()}
    if story not in names:
        return EVERYTHING, ""
    doc = names[story]
    label = chapter_label(until, doc.language) or f"chapter {until}"
    line = (
        f"Up to {label} of {doc.name} (the Chat tab's “I have read up to…”): nothing of that "
        "story after it is shown."
    )
    return reading_for(services.store, until, (story,)), line


def reading_label(number: int, title: str, language: str) -> str:
    """A choice of the reading picker: the chapter as the story numbers it, with its heading
    when that says more (「第三章 · 鬼ヶ島」, "Chapter 1 · Down the Rabbit-Hole")."""
    if number == WHOLE_STORY:
        return "The whole story"
    return chapter_name(number, title, language) or "Only what comes before the first chapter"


def _source(answer: Answer, c: Citation) -> None:
    """One source: its story and chapter, and its sentence whole, or a fact with no sentence
    in the story's verbs (storygraph.qa.pipeline.explain.source_text)."""
    text = md_escape(source_text(answer, c))
    if c.kind == "graph":
        st.markdown(f"**[{c.number}]** *a fact of the graph, no story sentence* — {text}")
        return
    how = " · *sentence search*" if c.kind == "sentence" else ""
    chapter = chapter_label(c.chapter, c.language) or (c.chapter_title if c.chapter == 0 else "")
    where = md_escape(c.document_name) + (f" · {md_escape(chapter)}" if chapter else "")
    st.markdown(f"**[{c.number}]** {where}{how} — {text}")


def _show_sources(answer: Answer) -> None:
    """The sources the text cites; the other sources of the kept facts one click away."""
    used, rest = split_citations(answer)
    if used:
        st.markdown("**Sources**")
        for c in used:
            _source(answer, c)
    if rest:
        label = (
            f"{plural(len(rest), 'more source')}"
            if used
            else f"{plural(len(rest), 'source')} (none cited)"
        )
        with st.expander(label):
            for c in rest:
                _source(answer, c)


READER_COLUMNS = ("rank", "fact", "why", "the story says")


def _reader_rows(lines: list[FactLine]) -> list[dict[str, object]]:
    return [
        dict(zip(READER_COLUMNS, (rank_text(f.rank), f.words, f.why, f.evidence), strict=True))
        for f in lines
    ]


def _show_reader_details(answer: Answer) -> None:
    """What a reader asks: what was found, which facts were used and why, which were set
    aside and why, each with its rank and its sentence whole (a table wraps its cells; a
    dataframe's cut them off). The scores are the developer tab's."""
    if answer.entities:
        found = ", ".join(
            f"{md_escape(e.node_id)} ({SOURCE_LABELS.get(e.source, e.source)})"
            for e in answer.entities
        )
        st.markdown(f"**Found in the question:** {found}")
    else:
        st.caption("No one and nothing the question names was found in the graph.")
    lines = fact_lines(answer)
    used = _reader_rows([f for f in lines if f.kept])
    st.markdown(f"**Facts the answer was given:** {len(used)}")
    if used:
        st.table(used, hide_index=True)
    aside = _reader_rows([f for f in lines if not f.kept])
    if aside:
        st.markdown(f"**Set aside:** {len(aside)}")
        st.table(aside, hide_index=True)


def _facts_table(answer: Answer) -> list[dict[str, object]]:
    return [
        {
            "kept": "✓" if f.kept else "✗",
            "score (0-10)": score_text(f.score),
            "start": f.start,
            "relation": f.type,
            "label": relation_label(f.type, f.evidence),
            "end": f.end,
            "why dropped": f.reason,
            "sources": ", ".join(f.chunk_ids),
            "evidence": f.evidence,
        }
        for f in answer.facts
    ]


def _show_details(answer: Answer, view: VerdictView) -> None:
    """Two levels behind one expander: first what a reader asks (`_show_reader_details`), one
    click deeper the developer's trace (the support check's verdict and warnings in its own
    words, mode, question type, entities with ids, every candidate with its score and type,
    per-step timings and the Cypher)."""
    with st.expander("Details: how this was answered"):
        reader, developer = st.tabs(["What the answer used", "For developers"])
        with reader:
            _show_reader_details(answer)
        with developer:
            for line in view.developer:
                st.markdown(f"**Support check:** {md_escape(line)}")
            _show_developer_details(answer)


def _show_developer_details(answer: Answer) -> None:
    method = next((s.detail.get("method") for s in answer.steps if s.name == "answer"), "")
    rerank = next((s.detail.get("method") for s in answer.steps if s.name == "rerank"), "")
    st.markdown(
        f"**Mode:** `{answer.mode}` · **rerank:** {rerank or '–'} · **answer:** "
        f"{answer_method_text(str(method or ''))} · "
        f"**LLM calls:** {answer.usage.calls} · **tokens:** {tokens_text(answer.usage)}"
    )
    retrieval_detail = next((s.detail for s in answer.steps if s.name == "retrieval"), {})
    details = [
        f"**question type:** {md_escape(str(retrieval_detail['question_type']))}"
        if retrieval_detail.get("question_type")
        else "",
        f"**relation types:** {md_escape(str(retrieval_detail['relation_types']))}"
        if retrieval_detail.get("relation_types")
        else "",
        f"**added by expansion:** {md_escape(', '.join(retrieval_detail['added']))}"
        if retrieval_detail.get("added")
        else "",
    ]
    if any(details):
        st.markdown(" · ".join(d for d in details if d))
    st.markdown("**Entities found in the question**")
    if answer.entities:
        st.dataframe(
            [
                {
                    "mention": e.mention,
                    "graph node": e.node_id,
                    "how": SOURCE_LABELS.get(e.source, e.source),
                    "match score": round(e.score, 3),
                }
                for e in answer.entities
            ],
            hide_index=True,
        )
    else:
        st.caption("No entity of the question was found in the graph.")
    kept = len(answer.kept_facts)
    st.markdown(f"**Candidate relations:** {len(answer.facts)} found, {kept} kept")
    if answer.facts:
        st.caption(
            "Scores: the model's 0-10 relevance plus the question-type adjustment, shown "
            "clamped to 0-10 (ranking uses the unclamped value); – where a relation was "
            "never scored."
        )
        st.dataframe(
            _facts_table(answer),
            hide_index=True,
            column_config={"evidence": st.column_config.TextColumn(width="large")},
        )
    st.markdown("**Steps**")
    st.dataframe(
        [
            {
                "step": s.name,
                "time": duration(s.seconds),
                "LLM calls": s.usage.calls,
                "tokens": tokens_text(s.usage),
            }
            for s in answer.steps
        ],
        hide_index=True,
    )
    citations = [f"[{c.number}] {c.chunk_id}" for c in answer.citations if c.chunk_id]
    if citations:
        st.caption("Source chunks: " + " · ".join(citations))
    if answer.cypher:
        st.markdown("**Retrieval query**")
        st.code(answer.cypher, language="cypher")


SUPPORT_MARKS = {
    "supported": (":green", ":material/verified:"),
    "not sure": (":orange", ":material/help:"),
    "does not say": (":orange", ":material/help:"),
    "declined": (":gray", ":material/info:"),
}
CHANGED_ICON = ":material/swap_horiz:"


def _show_verdict(view: VerdictView) -> None:
    """The answer's one verdict (storygraph.ui.answer_view): its mark and line, and when the
    model's answer was replaced, the sentence saying what changed and why; nothing for an
    answer the check did not read."""
    if view.mark is None:
        return
    color, icon = SUPPORT_MARKS[view.mark]
    st.markdown(f"{icon} {color}[{md_escape(view.line)}]")
    if view.changed:
        st.markdown(f"{CHANGED_ICON} {md_escape(view.changed)}")


def show_answer(answer: Answer) -> None:
    """One final answer: its text, its one verdict, the sources it cites, the warnings that
    are not about its support (those are the verdict's, in the developer tab), the plain
    trace with the phases' times, then the details."""
    view = verdict_view(answer)
    st.markdown(answer.answer)
    _show_verdict(view)
    _show_sources(answer)
    for warning in view.warnings:
        st.warning(warning)
    kind = question_kind(answer)
    took = sum(s.seconds for s in answer.steps)
    phases = phases_line(answer.steps)
    st.caption(
        md_escape(plain_trace(answer))
        + (f" The question {kind}." if kind else "")
        + f" It took {duration(took)}"
        + (f" ({md_escape(phases)})" if phases else "")
        + "."
    )
    _show_details(answer, view)


def _show_reply(turn: ChatTurn) -> None:
    if turn.answer is None:
        show_error(turn.error or "No answer.", turn.hint)
    else:
        show_answer(turn.answer)


def show_turn(turn: ChatTurn) -> None:
    """The latest turn, in full."""
    with st.chat_message("user"):
        st.markdown(md_escape(turn.question))
    with st.chat_message("assistant"):
        _show_reply(turn)


def show_older_turn(turn: ChatTurn) -> None:
    """An earlier turn, collapsed to its question (its answer one click away)."""
    when = f" · {human_date(turn.asked_at)}" if turn.asked_at else ""
    failed = " · no answer" if turn.answer is None else ""
    with st.expander(f"{turn.question}{when}{failed}", icon=":material/forum:"):
        with st.chat_message("user"):
            st.markdown(md_escape(turn.question))
        with st.chat_message("assistant"):
            _show_reply(turn)


def _question_input() -> str | None:
    """The pinned chat input, drawn only while the Chat tab is the one shown."""
    if not tab_is_open(CHAT_TAB):
        return None
    with st.bottom:
        return st.chat_input(PLACEHOLDER, key="chat_input")


class _Abandoned(Exception):
    """Raised into the model's stream when the run that asked has been stopped."""


class _Progress:
    """What the worker thread has heard so far, for the run that draws it: the pieces of the
    reply, the phase running and when it began, the requests ahead in the model's queue."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.phase: Phase | None = None
        self.since = time.monotonic()
        self.ahead = 0
        self.drafted = False
        """The pieces are the model's reply (a reading phase came first): a draft to check."""

    def on_phase(self, phase: Phase) -> None:
        if self.phase is None or phase.name != self.phase.name:
            self.since = time.monotonic()
        if phase.name == "reading":
            self.drafted = True
        self.phase = phase

    def on_wait(self, ahead: int) -> None:
        if self.ahead and not ahead:
            self.since = time.monotonic()  # the wait is over: the phase's own time begins
        self.ahead = ahead


def _draw_live(live: DeltaGenerator, progress: _Progress) -> None:
    """The status line (the phase running now, or the queue, with its time) and, under it,
    the reply so far: the model's as a muted draft marked "checking…", never in the answer's
    style, since the check may replace it (docs/ISSUES.md#draft-answer)."""
    text = "".join(progress.pieces)
    seconds = time.monotonic() - progress.since
    with live.container():
        st.caption(md_escape(status_line(progress.phase, seconds, progress.ahead)))
        if text.strip() and progress.drafted:
            st.caption(f"*{md_escape(draft_line(text))}* ▌", help=DRAFT_HELP)
        elif text.strip():
            st.markdown(md_escape(text) + " ▌")


DRAFT_HELP = (
    "The model's reply as it is written. Each answer is checked against the story's "
    "sentences before it is shown as the answer; one they do not confirm is replaced, and the "
    "answer then says why."
)


def _streamed(services: Services, question: str, options: QAOptions) -> ChatTurn:
    """Ask, showing the answer's progress as it is worked out; the finished turn then replaces
    it.

    The question is answered on a worker thread while this run draws, every TICK_S: the phase
    running and for how long (storygraph.qa.pipeline.progress), the model's queue when others'
    requests are ahead, and the reply so far as a draft; the ingest banner above the tabs every
    POLL_S (Streamlit holds the banner's own timer back until this run ends). When the run is
    stopped (a newer question, a reload), the model's stream is cut at its next piece."""
    live = st.empty()
    progress = _Progress()
    progress.on_phase(Phase("finding"))
    _draw_live(live, progress)
    stopped = threading.Event()
    result: list[ChatTurn] = []

    def on_token(piece: str) -> None:
        if stopped.is_set():
            raise _Abandoned("the run that asked was stopped")
        progress.pieces.append(piece)

    read = str(st.session_state.get(READ_STORY_KEY, ""))  # read here: the worker has no session

    def work() -> None:  # the queue's and the phases' reports go by context: set them here
        with waiting_for_the_model(progress.on_wait), reporting_phases(progress.on_phase):
            result.append(ask(services, question, options, on_token, read=read))

    worker = threading.Thread(target=work, name="storygraph-answer", daemon=True)
    worker.start()
    banner_at = time.monotonic()
    try:
        while worker.is_alive():
            worker.join(TICK_S)
            if worker.is_alive():
                _draw_live(live, progress)
            if time.monotonic() - banner_at >= POLL_S or not worker.is_alive():
                banner_at = time.monotonic()
                refresh_banner(services)
    finally:
        stopped.set()
    live.empty()
    if not result:  # ask() turns every Exception into a turn; this is something else
        return ChatTurn(question, None, "Answering stopped unexpectedly.", STOPPED_HINT)
    return result[0]


def render(services: Services) -> None:
    model_badge(services)
    chat_notice(services)
    with guarded("Reading the chat settings"):
        options = _controls(services)
        raw = _question_input()
        question = raw.strip() if isinstance(raw, str) else ""
        turns = history(services)
        st.button(
            "New conversation",
            key="chat_new",
            icon=":material/add_comment:",
            disabled=not turns and not question,
            on_click=_new_conversation,
            args=(services,),
            help="Clears the saved conversation of this data directory.",
        )
        if not turns and not question:
            st.caption("Ask a question below; the conversation is kept across reloads.")
        shown_in_full = turns[-1:] if not question else []
        for turn in turns[: len(turns) - len(shown_in_full)]:
            show_older_turn(turn)
        for turn in shown_in_full:
            with st.container(key=LATEST_KEY):
                show_turn(turn)
            # After a reload (or on opening the Chat tab) the latest turn is in view, once:
            # later reruns of this session keep wherever the reader scrolled to.
            if tab_is_open(CHAT_TAB) and not st.session_state.get(SCROLLED_KEY):
                st.session_state[SCROLLED_KEY] = True
                scroll_into_view(LATEST_KEY, f"open{len(turns)}")
        if isinstance(raw, str) and not question:
            st.warning(EMPTY_QUESTION, icon=":material/edit_note:")
        if question:
            _answer_now(services, turns, question, options)


def _answer_now(
    services: Services, turns: list[ChatTurn], question: str, options: QAOptions
) -> None:
    """The new turn: drawn, scrolled into view when it starts and again when it is done."""
    st.session_state[SCROLLED_KEY] = True
    nonce = f"q{len(turns)}"
    with st.container(key=LATEST_KEY):
        with st.chat_message("user"):
            st.markdown(md_escape(question))
        reply = ChatTurn(question, None, STOPPED, STOPPED_HINT)  # until the answer is in
        try:
            with st.chat_message("assistant"):
                scroll_into_view(LATEST_KEY, f"{nonce}start")
                reply = _streamed(services, question, options)
                _show_reply(reply)
        except BaseException:
            # The run is being stopped (or drawing failed): the question, and the answer if
            # it was complete, are saved before the interruption goes on.
            _keep_unfinished(services, reply)
            raise
    _save(services, turns, reply)
    scroll_into_view(LATEST_KEY, f"{nonce}end")
