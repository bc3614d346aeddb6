"""Retrieval lab: one question through every retrieval mode, side by side.

For each mode: the kept facts with scores, what it added or dropped versus the default mode, the
question type and relation types it used, the Cypher it ran, and a small graph of its facts
(storygraph.ui.visualize).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from pages.common import guarded
from storygraph.evaluation.compare import ModeRun, compare_modes
from storygraph.humanize import tokens_text
from storygraph.qa.pipeline.explain import score_text
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.retrieval.retrieval import DEFAULT_MODE, available_modes
from storygraph.services import Services
from storygraph.ui.visualize import answer_graph_html

RESULTS_KEY = "lab_runs"
COLUMNS_PER_ROW = 3
GRAPH_HEIGHT = 320


def _fact_rows(run: ModeRun) -> list[dict[str, Any]]:
    facts = run.answer.facts if run.answer else []
    return [
        {"kept": "✓" if f.kept else "", "score (0-10)": score_text(f.score), "fact": f.text()}
        for f in facts
    ]


def _show_run(run: ModeRun) -> None:
    st.markdown(f"**{run.mode}**" + ("  (default)" if run.mode == DEFAULT_MODE else ""))
    if run.error or run.answer is None:
        st.error(run.error or "no answer")
        return
    answer = run.answer
    detail = run.retrieval_detail()
    st.caption(
        f"{len(answer.kept_facts)} kept of {len(answer.facts)} candidates · "
        f"{answer.usage.calls} LLM calls · tokens: {tokens_text(answer.usage)}"
    )
    if detail.get("question_type"):
        st.caption(f"question type: {detail['question_type']}")
    if detail.get("relation_types"):
        st.caption(f"relation types: {detail['relation_types']}")
    if run.mode != DEFAULT_MODE:
        added = ", ".join(" ".join(t) for t in run.added) or "nothing"
        dropped = ", ".join(" ".join(t) for t in run.dropped) or "nothing"
        st.caption(f"vs default: **+** {added} · **−** {dropped}")
    for warning in answer.warnings:
        st.caption(f"⚠ {warning}")
    st.dataframe(_fact_rows(run), hide_index=True, width="stretch")
    if answer.kept_facts:
        st.iframe(answer_graph_html(answer, height=GRAPH_HEIGHT), height=GRAPH_HEIGHT)
    with st.expander("Cypher"):
        st.code(answer.cypher or "(none)", language="cypher")


def render(services: Services) -> None:
    st.subheader("Retrieval lab")
    st.caption(
        "One question through every retrieval mode. Modes combine a base retrieval (onehop, "
        "directed2, undirected2) with +qtype (question type: direction and expansions), "
        "+reltype (relation types that fit the question) and +rerank (scoring); without "
        "+rerank the candidates keep retrieval order."
    )
    with guarded("Comparing retrieval modes"):
        question = st.text_input(
            "Question", key="lab_question", placeholder="桃太郎を倒したのは誰？"
        )
        modes = st.multiselect(
            "Modes", available_modes(), default=available_modes(), key="lab_modes"
        )
        left, right = st.columns(2)
        no_llm = left.toggle(
            "Without the model (dictionary entities, lexical scores)",
            value=services.llm() is None,
            key="lab_no_llm",
        )
        top_k = right.number_input(
            "Keep top k", 1, 100, services.settings.rerank_top_k, key="lab_top_k"
        )
        if st.button("Compare", type="primary", disabled=not question.strip() or not modes):
            options = QAOptions.from_settings(
                services.settings, top_k=int(top_k), no_llm=no_llm
            )
            with st.spinner("Running every mode…"):
                st.session_state[RESULTS_KEY] = compare_modes(
                    services.qa(), question, modes, options, baseline=DEFAULT_MODE
                )
        runs: list[ModeRun] = st.session_state.get(RESULTS_KEY) or []
        if runs and runs[0].answer is not None:
            found = ", ".join(e.node_id for e in runs[0].answer.entities) or "(none)"
            st.caption(f"start entities: {found}")
        for start in range(0, len(runs), COLUMNS_PER_ROW):
            row = runs[start : start + COLUMNS_PER_ROW]
            for column, run in zip(st.columns(COLUMNS_PER_ROW), row, strict=False):
                with column, st.container(border=True):
                    _show_run(run)
