"""Chat tab: ask about the stories; every answer shows its citations and how it was found."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

import storygraph.retrieval as retrieval
from pages.common import guarded, md_escape, model_badge, show_error
from storygraph.errors import StoryGraphError
from storygraph.models import Answer
from storygraph.qa import QAOptions
from storygraph.services import Services

HISTORY_KEY = "chat_history"
PLACEHOLDER = "Ask about your stories, e.g. 桃太郎の仲間は誰？"
MODE_KEY = "chat_mode"
TOP_K_KEY = "chat_top_k"
MIN_SCORE_KEY = "chat_min_score"
SOURCE_LABELS = {
    "llm": "named by the model",
    "dictionary": "found in the question by the graph's own names",
    "fuzzy": "fuzzy match",
    "given": "given",
    "embedding": "nearest name by embedding",
}


@dataclass
class ChatTurn:
    """One question and what came back: an answer, or an error with what to do next."""

    question: str
    answer: Answer | None = None
    error: str = ""
    hint: str = ""


def available_modes() -> list[str]:
    """Retrieval modes, read at run time so modes added later appear without UI changes."""
    listing = getattr(retrieval, "available_modes", None)
    modes = list(listing()) if callable(listing) else list(retrieval.BASE_MODES)
    return modes or [retrieval.DEFAULT_MODE]


def history() -> list[ChatTurn]:
    return st.session_state.setdefault(HISTORY_KEY, [])


def last_answer() -> Answer | None:
    """The most recent successful answer of this session (drawn by the graph tab)."""
    for turn in reversed(history()):
        if turn.answer is not None:
            return turn.answer
    return None


def ask(services: Services, question: str, options: QAOptions) -> ChatTurn:
    """Answer a question; any failure becomes an error turn, never an exception."""
    turn = ChatTurn(question)
    try:
        turn.answer = services.qa().ask(question, options)
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
    top_k = cols[1].number_input(
        "Top-k facts",
        min_value=1,
        max_value=100,
        value=services.settings.rerank_top_k,
        key=TOP_K_KEY,
        help="How many of the best-scored relations the answer may use.",
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
    return QAOptions.from_settings(
        services.settings, mode=str(mode), top_k=int(top_k), min_score=float(min_score)
    )


def _show_citations(answer: Answer) -> None:
    if not answer.citations:
        return
    st.markdown("**Sources**")
    for c in answer.citations:
        with st.expander(f"[{c.number}] {c.document_name} · chunk {c.chunk_id}"):
            st.markdown(md_escape(c.text))


def _facts_table(answer: Answer) -> list[dict[str, object]]:
    return [
        {
            "kept": "✓" if f.kept else "✗",
            "score": f.score,
            "start": f.start,
            "relation": f.type,
            "end": f.end,
            "evidence": f.evidence,
        }
        for f in answer.facts
    ]


def _show_trace(answer: Answer) -> None:
    method = next((s.detail.get("method") for s in answer.steps if s.name == "answer"), "")
    rerank = next((s.detail.get("method") for s in answer.steps if s.name == "rerank"), "")
    with st.expander("How this was answered"):
        st.markdown(
            f"**Mode:** `{answer.mode}` · **rerank:** {rerank or '–'} · **answer:** "
            f"{'written by the model' if method == 'llm' else 'the top facts'} · "
            f"**LLM calls:** {answer.usage.calls} · **tokens:** {answer.usage.total_tokens:,}"
        )
        if answer.rerank_fell_back:
            st.warning(
                "The model's scores were unusable, so the rerank fell back to a lexical score."
            )
        for warning in answer.warnings:
            st.warning(warning)
        retrieval = next((s.detail for s in answer.steps if s.name == "retrieval"), {})
        details = [
            f"**question type:** {retrieval['question_type']}"
            if retrieval.get("question_type") else "",
            f"**relation types:** {md_escape(str(retrieval['relation_types']))}"
            if retrieval.get("relation_types") else "",
            f"**added by expansion:** {md_escape(', '.join(retrieval['added']))}"
            if retrieval.get("added") else "",
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
            st.info("No entity of the question was found in the graph.")
        kept = len(answer.kept_facts)
        st.markdown(f"**Candidate relations:** {len(answer.facts)} found, {kept} kept")
        if answer.facts:
            st.dataframe(
                _facts_table(answer),
                hide_index=True,
                column_config={
                    "score": st.column_config.NumberColumn(format="%.1f"),
                    "evidence": st.column_config.TextColumn(width="large"),
                },
            )
        st.markdown("**Steps**")
        st.dataframe(
            [
                {
                    "step": s.name,
                    "ms": round(s.seconds * 1000, 1),
                    "LLM calls": s.usage.calls,
                    "tokens": s.usage.total_tokens,
                }
                for s in answer.steps
            ],
            hide_index=True,
        )
        if answer.cypher:
            st.markdown("**Retrieval query**")
            st.code(answer.cypher, language="cypher")


def show_turn(turn: ChatTurn) -> None:
    with st.chat_message("user"):
        st.markdown(md_escape(turn.question))
    with st.chat_message("assistant"):
        if turn.answer is None:
            show_error(turn.error or "No answer.", turn.hint)
            return
        st.markdown(turn.answer.answer)
        _show_citations(turn.answer)
        _show_trace(turn.answer)


def render(services: Services) -> None:
    model_badge(services)
    with guarded("Reading the chat settings"):
        options = _controls(services)
        messages = st.container()
        for turn in history():
            with messages:
                show_turn(turn)
        question = st.chat_input(PLACEHOLDER, key="chat_input")
        if question and question.strip():
            with messages, st.spinner("Finding the answer in the graph…"):
                turn = ask(services, question, options)
            history().append(turn)
            with messages:
                show_turn(turn)
