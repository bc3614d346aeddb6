"""Composing the answer from the kept facts, with numbered citations to chunks (design §5.4)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel

from storygraph.models import Citation, Fact
from storygraph.prompt_files import fill
from storygraph.story_time import supersession_lines
from storygraph.text.language import detect_language

MAX_SOURCE_CHARS = 300
SUPERSEDED_MARK = " (superseded later in the story)"


def build_citations(facts: Sequence[Fact], chunks: dict[str, dict[str, Any]]) -> list[Citation]:
    """One citation per distinct chunk behind the kept facts, numbered in rank order."""
    citations: dict[str, Citation] = {}
    for fact in facts:
        for i, chunk_id in enumerate(fact.chunk_ids):
            if chunk_id in citations or chunk_id not in chunks:
                continue
            row = chunks[chunk_id]
            text = fact.evidence if i == 0 and fact.evidence else str(row.get("text") or "")
            citations[chunk_id] = Citation(
                number=len(citations) + 1,
                chunk_id=chunk_id,
                document_name=str(row.get("document") or ""),
                text=text[:MAX_SOURCE_CHARS],
            )
    return list(citations.values())


def _marks(fact: Fact, numbers: dict[str, int]) -> str:
    return "".join(f"[{numbers[c]}]" for c in fact.chunk_ids if c in numbers)


def facts_answer(question: str, facts: Sequence[Fact], citations: Sequence[Citation]) -> str:
    """The no-LLM answer: the top facts, with their citation marks, in the question's language."""
    japanese = detect_language(question) == "ja"
    if not facts:
        return (
            "グラフにこの質問の手がかりは見つかりませんでした。"
            if japanese
            else "I found nothing about this in the graph."
        )
    numbers = {c.chunk_id: c.number for c in citations}
    head = "グラフから見つかった関係：" if japanese else "Facts found in the graph:"
    lines = [
        f"{i}. {f.start} -[{f.type}]→ {f.end} {_marks(f, numbers)}".rstrip()
        for i, f in enumerate(facts, start=1)
    ]
    return "\n".join([head, *lines, *supersession_lines(facts, japanese=japanese)])


def llm_answer(
    question: str,
    facts: Sequence[Fact],
    citations: Sequence[Citation],
    llm: BaseChatModel,
    callbacks: list[Any],
) -> str:
    numbers = {c.chunk_id: c.number for c in citations}
    fact_lines = (
        "\n".join(
            f"- {f.text()} {_marks(f, numbers)}{SUPERSEDED_MARK if f.invalid_at else ''}".rstrip()
            for f in facts
        )
        or "(none)"
    )
    source_lines = "\n".join(f"[{c.number}] {c.text}" for c in citations) or "(none)"
    language = "Japanese" if detect_language(question) == "ja" else "English"
    prompt = fill(
        "answer", question=question, facts=fact_lines, sources=source_lines, language=language
    )
    message = llm.invoke(prompt, config={"callbacks": callbacks})
    text = message.content if isinstance(message.content, str) else str(message.content)
    text = text.strip()
    if not text:
        raise ValueError("empty answer")
    return text
