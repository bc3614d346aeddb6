"""Composing the answer from the kept facts, with numbered citations to chunks (design §5.4).

An `Answerer` is one narrow port: `answer(analysis, facts, citations, callbacks, on_token)`.

- `ModelAnswerer`: one model call, streamed token by token to `on_token`. The prompt file is
  split at its `---` line into fixed instructions (the system message) and the variable part, so
  llama.cpp's prefix cache reuses the instructions from one question to the next. Capable models
  get `prompts/answer.txt` with every kept fact and source; the small embedded model gets
  `prompts/answer_small.txt`: the first sources, numbered, up to `SMALL_MAX_SOURCES` and
  `SMALL_SOURCE_TOKENS` (`small_sources`; the best facts' sentences and sentence search's, see
  `with_passages`), without the facts' lines, and is told
  to answer only from those sentences or to say it cannot; three worked examples in the
  question's language come first, as earlier turns (storygraph.qa.answer_examples).
- `FactsAnswerer`: no model; the top facts with their citation marks, and the numbers of the
  sentence-search sources.

`warm(language)` has the model read an answerer's fixed prefix ahead of the first question: the
small model's instructions and worked examples are ~700 prompt tokens, 7-8 s of reading on two
cores that the first question otherwise waits for. The embedded server keeps the model's state
per fixed prefix (storygraph.llm.prefix_states, docs/ISSUES.md §34), so a question after a
change of language restores that language's prefix instead of reading it again.

`unsupported_names` checks an answer's names against the kept facts, their evidence and the
question: a graph name that appears only in the answer is a warning in the trace.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from storygraph.models import Citation, CitationKind, Fact
from storygraph.prompt_files import fill
from storygraph.qa.analysis import QuestionAnalysis
from storygraph.qa.answer_examples import answer_examples
from storygraph.qa.passages import Passage
from storygraph.qa.question_type import PERSON_KINDS
from storygraph.store.story_time import supersession_lines
from storygraph.text.language import detect_language
from storygraph.text.normalize import normalize_name
from storygraph.text.token_estimate import estimated_tokens

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

MAX_SOURCE_CHARS = 300
SUPERSEDED_MARK = " (superseded later in the story)"
"""Marks a fact another replaced later (storygraph.store.story_time), so the answer says
"at first … later …" instead of presenting both as true."""
SMALL_MAX_SOURCES = 6
"""Sources the small model reads at most (English ones: ~45 prompt tokens each); in Japanese the
token budget below ends them first."""
SMALL_SOURCE_TOKENS = 300
"""The small model's sources stop before they pass this many prompt tokens (estimated,
storygraph.text.token_estimate); the first is always read. A Japanese character costs ~3 times
an English one, so this is two to four Japanese passages (three at the median) and four to six
English ones; the Japanese questions were answered better as well as sooner than from four
passages, the English ones better from six (docs/ISSUES.md §25: 180-350 measured, 300 best)."""
SMALL_MAX_TOKENS = 120
"""The small model's answer is one sentence; this bounds a reply that would not stop."""
WARM_MAX_TOKENS = 1
"""A read-ahead of the fixed prefix (`ModelAnswerer.warm`) writes no answer: one token."""
UNKNOWN = {"ja": "この話の文からは分かりません。", "en": "The story's sentences do not say."}
REFUSALS = (
    "分かりません",
    "わかりません",
    "見つかりません",
    "知りません",
    "書かれていません",
    "could not find",
    "found nothing",
    "not sure",
    "do not know",
    "don't know",
    "does not say",
    "do not say",
    "doesn't say",
)
"""Ways an answer declines beside the fixed reply (`UNKNOWN`): the model's own wordings and the
app's "nothing found" / "not sure" lines (lower case; the support check and the strict scorer
read the same list)."""
CLOSEST_LEAD = {"ja": "いちばん近い文：", "en": "The closest sentence is: "}
"""Leads the closest sentence shown when there is no answer to give."""
LANGUAGE_NAMES = {"ja": "Japanese", "en": "English"}

TokenFn = Callable[[str], None]


def _source_text(fact: Fact, index: int, chunks: dict[str, dict[str, Any]]) -> str:
    """What a fact's `index`-th chunk says for it: its evidence sentence, else the chunk."""
    chunk_id = fact.chunk_ids[index]
    if index == 0 and fact.evidence:
        return fact.evidence[:MAX_SOURCE_CHARS]
    return str(chunks.get(chunk_id, {}).get("text") or "")[:MAX_SOURCE_CHARS]


def build_citations(facts: Sequence[Fact], chunks: dict[str, dict[str, Any]]) -> list[Citation]:
    """One citation per distinct source sentence behind the kept facts, numbered in rank order:
    a fact's evidence sentence (in its first chunk), else its chunk's text. Two facts of one
    chunk with different sentences get two numbers, so each number points at what it says. A
    fact with no chunk in the store (an imported graph's) is cited as itself (kind "graph"), so
    a mark in the answer always points at something the user can read."""
    citations: dict[tuple[str, str], Citation] = {}
    for fact in facts:
        keys = [
            (c, _source_text(fact, i, chunks)) for i, c in enumerate(fact.chunk_ids) if c in chunks
        ]
        kind: CitationKind = "fact" if keys else "graph"
        for chunk_id, text in keys or [("", fact.text())]:
            if (chunk_id, text) in citations:
                continue
            document = str(chunks[chunk_id].get("document") or "") if chunk_id else ""
            citations[(chunk_id, text)] = Citation(
                number=len(citations) + 1,
                chunk_id=chunk_id,
                document_name=document,
                text=text,
                kind=kind,
            )
    return list(citations.values())


def with_passages(
    citations: Sequence[Citation], passages: Sequence[Passage], fact_slots: int | None
) -> list[Citation]:
    """The facts' citations and the sentence-search passages as one list, renumbered: the
    first `fact_slots` fact sources (all when None), then the passages (one already among the
    fact sources is left out), then the other fact sources."""
    have = {normalize_name(c.text) for c in citations}
    found = [
        Citation(0, p.chunk_id, p.document_name, p.text[:MAX_SOURCE_CHARS], "sentence")
        for p in passages
        if normalize_name(p.text[:MAX_SOURCE_CHARS]) not in have
    ]
    split = len(citations) if fact_slots is None else fact_slots
    ordered = [*citations[:split], *found, *citations[split:]]
    return [
        Citation(i, c.chunk_id, c.document_name, c.text, c.kind)
        for i, c in enumerate(ordered, start=1)
    ]


def citation_numbers(fact: Fact, citations: Sequence[Citation]) -> list[int]:
    """The numbers of the citations standing for a fact's sources (see `build_citations`)."""
    by_key = {(c.chunk_id, c.text): c.number for c in citations}
    own = by_key.get(("", fact.text()))
    if own is not None:
        return [own]
    first_of_chunk: dict[str, int] = {}
    for c in citations:
        if c.chunk_id:
            first_of_chunk.setdefault(c.chunk_id, c.number)
    numbers: list[int] = []
    for i, chunk_id in enumerate(fact.chunk_ids):
        key = (chunk_id, fact.evidence[:MAX_SOURCE_CHARS]) if i == 0 and fact.evidence else None
        number = by_key.get(key) if key else None
        if number is None:
            number = first_of_chunk.get(chunk_id)
        if number is not None and number not in numbers:
            numbers.append(number)
    return numbers


def _marks(fact: Fact, citations: Sequence[Citation]) -> str:
    return "".join(f"[{n}]" for n in citation_numbers(fact, citations))


def facts_answer(question: str, facts: Sequence[Fact], citations: Sequence[Citation]) -> str:
    """The no-LLM answer: the top facts, with their citation marks, in the question's language."""
    japanese = detect_language(question) == "ja"
    if not facts:
        nothing = (
            "グラフにこの質問の手がかりは見つかりませんでした。"
            if japanese
            else "I found nothing about this in the graph."
        )
        return "\n".join([nothing, *sentence_line(citations, japanese=japanese)])
    head = "グラフから見つかった関係：" if japanese else "Facts found in the graph:"
    lines = [
        f"{i}. {f.start} -[{f.type}]→ {f.end} {_marks(f, citations)}".rstrip()
        for i, f in enumerate(facts, start=1)
    ]
    closing = [*supersession_lines(facts, japanese=japanese)]
    closing += sentence_line(citations, japanese=japanese)
    return "\n".join([head, *lines, *closing])


def sentence_line(citations: Sequence[Citation], *, japanese: bool) -> list[str]:
    """The sentence-search sources, by number, as one closing line (none: no line)."""
    marks = "".join(f"[{c.number}]" for c in citations if c.kind == "sentence")
    if not marks:
        return []
    lead = "質問に近い本文の文：" if japanese else "Story sentences close to the question: "
    return [lead + marks]


def says_unknown(text: str) -> bool:
    """Did the model answer with the prompt's "the sentences do not say" reply? Anywhere in
    its answer: the small model sometimes puts the question's subject first
    (「桃太郎はこの話の文からは分かりません。」)."""
    folded = text.strip().lower()
    return any(u.lower().rstrip("。.") in folded for u in UNKNOWN.values())


def small_sources(citations: Sequence[Citation]) -> list[Citation]:
    """The citations the small model reads: the first ones, at most `SMALL_MAX_SOURCES`, while
    they stay within `SMALL_SOURCE_TOKENS` (the first one whatever its length)."""
    read: list[Citation] = []
    tokens = 0.0
    for citation in citations[:SMALL_MAX_SOURCES]:
        cost = estimated_tokens(citation.text)
        if read and tokens + cost > SMALL_SOURCE_TOKENS:
            break
        read.append(citation)
        tokens += cost
    return read


class Answerer(Protocol):
    """Writes the answer from the kept facts and their citations."""

    name: str
    calls_model: bool

    def read(self, citations: Sequence[Citation]) -> list[Citation]:
        """The citations it reads (the first ones), out of all the answer's."""
        ...

    def answer(
        self,
        analysis: QuestionAnalysis,
        facts: Sequence[Fact],
        citations: Sequence[Citation],
        callbacks: list[Any],
        on_token: TokenFn | None = None,
    ) -> str: ...

    def warm(self, language: str) -> bool:
        """Have the model read this answerer's fixed prompt prefix for questions in `language`
        now, so a question reuses it (llama.cpp's prefix cache). False: nothing to read ahead."""
        ...


class FactsAnswerer:
    name = "facts"
    calls_model = False

    def warm(self, language: str) -> bool:
        return False

    def read(self, citations: Sequence[Citation]) -> list[Citation]:
        return list(citations)

    def answer(
        self,
        analysis: QuestionAnalysis,
        facts: Sequence[Fact],
        citations: Sequence[Citation],
        callbacks: list[Any],
        on_token: TokenFn | None = None,
    ) -> str:
        text = facts_answer(analysis.question, facts, citations)
        if on_token is not None:
            on_token(text)
        return text


def prompt_messages(name: str, **values: str) -> list[BaseMessage]:
    """A prompt file as (system, user) messages, split at its `---` line."""
    from langchain_core.messages import HumanMessage, SystemMessage  # on the first model call

    text = fill(name, **values)
    system, _, user = text.partition("\n---\n")
    return [SystemMessage(system.strip()), HumanMessage(user.strip())]


def small_messages(language: str, values: dict[str, str]) -> list[BaseMessage]:
    """The small model's prompt: its instructions, the worked examples as earlier turns (the
    fixed prefix, storygraph.qa.answer_examples), then the question with its sentences."""
    from langchain_core.messages import AIMessage

    unknown = UNKNOWN[language]
    system, user = prompt_messages("answer_small", unknown=unknown, **values)
    turns: list[BaseMessage] = [system]
    for example in answer_examples(language, unknown):
        shown = {**values, "sources": example.sources, "question": example.question}
        turns += [prompt_messages("answer_small", unknown=unknown, **shown)[1]]
        turns += [AIMessage(example.answer)]
    return [*turns, user]


@dataclass
class ModelAnswerer:
    """One streamed model call (see the module docstring); `compact` is the small-model prompt."""

    llm: BaseChatModel
    compact: bool = False
    calls_model: bool = True

    @property
    def name(self) -> str:
        return "llm-compact" if self.compact else "llm"

    def read(self, citations: Sequence[Citation]) -> list[Citation]:
        return small_sources(citations) if self.compact else list(citations)

    def warm(self, language: str) -> bool:
        """The small model's instructions and worked examples for `language`, read by the
        embedded server now (one token written). A capable model's server is not ours to load:
        False, no call."""
        if not self.compact:
            return False
        language = "ja" if language == "ja" else "en"
        values = {"question": "", "sources": "(none)", "language": LANGUAGE_NAMES[language]}
        self.llm.invoke(small_messages(language, values), extra_body=self._body(WARM_MAX_TOKENS))
        return True

    def _body(self, max_tokens: int) -> dict[str, Any]:
        """The request's extra body with `max_tokens`: llama.cpp's server reads it from the body
        (langchain-openai would send max_completion_tokens, which it ignores), merged over the
        client's own extra body."""
        body = dict(getattr(self.llm, "extra_body", None) or {})
        return {**body, "max_tokens": max_tokens}

    def messages(
        self, analysis: QuestionAnalysis, facts: Sequence[Fact], citations: Sequence[Citation]
    ) -> list[BaseMessage]:
        language = "ja" if analysis.language == "ja" else "en"
        shown = self.read(citations)
        values = {
            "question": analysis.question,
            "sources": "\n".join(f"[{c.number}] {c.text}" for c in shown) or "(none)",
            "language": LANGUAGE_NAMES[language],
        }
        if self.compact:
            # The small model reads the sentences only: the facts' "A -TYPE-> B" lines beside
            # them changed nothing it got right and made its prompt longer (docs/ISSUES.md §20).
            # A fact with no story sentence (an imported graph's) is its own source, numbered
            # "(1)": after the worked examples, "[1] A -[T]-> B" lines came back as
            # 「犬です。[BECOMES_COMPANION_OF]-> 犬」; numbered "(1)", as 「犬です。[1]」.
            lines = [
                f"({c.number}) {c.text}" if c.kind == "graph" else f"[{c.number}] {c.text}"
                for c in shown
            ]
            values["sources"] = "\n".join(lines) or "(none)"
            return small_messages(language, values)
        fact_lines = "\n".join(
            f"- {f.text()} {_marks(f, shown)}{SUPERSEDED_MARK if f.invalid_at else ''}".rstrip()
            for f in facts
            if citation_numbers(f, shown)
        )
        return prompt_messages("answer", facts=fact_lines or "(none)", **values)

    def answer(
        self,
        analysis: QuestionAnalysis,
        facts: Sequence[Fact],
        citations: Sequence[Citation],
        callbacks: list[Any],
        on_token: TokenFn | None = None,
    ) -> str:
        parts: list[str] = []
        extra: dict[str, Any] = {}
        if self.compact:
            extra["extra_body"] = self._body(SMALL_MAX_TOKENS)
        for chunk in self.llm.stream(
            self.messages(analysis, facts, citations), config={"callbacks": callbacks}, **extra
        ):
            piece = chunk.content if isinstance(chunk.content, str) else str(chunk.content)
            if piece:
                parts.append(piece)
                if on_token is not None:
                    on_token(piece)
        text = "".join(parts).strip()
        if not text:
            raise ValueError("empty answer")
        return text


_SOURCE_MARK = re.compile(r"\[\d+\]|\(\d+\)")
_COPULA = ("です", "でした", "だ")


def _answer_core(text: str) -> str:
    """An answer without its source numbers and final stop, normalised (normalize_name)."""
    core = normalize_name(_SOURCE_MARK.sub(" ", text)).strip(" 。.")
    for ending in _COPULA:
        core = core.removesuffix(ending)
    return core.strip()


def copied_example(answer: str, language: str, read: Sequence[Citation]) -> str | None:
    """The worked example's answer (storygraph.qa.answer_examples) that `answer` repeats word for
    word while none of the sentences the model read holds it: the small model answered the
    example's question, not the user's (「湖の岸のあしの中です。[2]」 for where the bamboo
    cutter found the girl; docs/ISSUES.md §33). None for any other answer, for the fixed
    "the sentences do not say" reply, and when a sentence read does hold those words."""
    language = "ja" if language == "ja" else "en"
    unknown = UNKNOWN[language]
    said = _answer_core(answer)
    if not said:
        return None
    held = normalize_name(" ".join(c.text for c in read))
    for example in answer_examples(language, unknown):
        if example.answer != unknown and _answer_core(example.answer) == said:
            return None if said in held else example.answer
    return None


_QUOTED = re.compile(r"「[^」]*」|『[^』]*』|\"[^\"]*\"")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+")


def echoed_name(answer: str, analysis: QuestionAnalysis) -> str | None:
    """The question's own start entity that `answer` gives, and nothing else, to a question
    asking for a person: 「たぬきの縄をといてやったのは誰？」 → 「たぬきです。[3]」, 「都に帰った
    貞光は、金太郎を誰に会わせた？」 → 「金太郎です。[2]」 (docs/ISSUES.md §36). Whom a question
    names as a participant is not whom it asks for. None for other questions and answers, and
    for a name the question only quotes (a title: 「一寸法師」で鬼を退治したのは誰？)."""
    if analysis.qtype.kind not in PERSON_KINDS:
        return None
    said = _ARTICLE.sub("", _answer_core(answer))
    if not said:
        return None
    outside_quotes = normalize_name(_QUOTED.sub(" ", analysis.question))
    for entity in analysis.entities:
        for name in (entity.node_id, entity.mention):
            key = normalize_name(name)
            if key and said == key and key in outside_quotes:
                return entity.node_id
    return None


def unsupported_names(
    answer: str,
    graph_names: Sequence[str],
    facts: Sequence[Fact],
    citations: Sequence[Citation],
    question: str,
) -> list[str]:
    """Graph names the answer mentions that neither the kept facts, their evidence sentences,
    the cited sources nor the question contain (a name the model brought in unsupported). The
    fixed "the sentences do not say" reply is not the model's own words and is left out."""
    for fixed in UNKNOWN.values():
        answer = answer.replace(fixed, " ")
    said = normalize_name(answer)
    support = normalize_name(
        " ".join(
            [question]
            + [f"{f.start} {f.end} {f.evidence}" for f in facts]
            + [c.text for c in citations]
        )
    )
    found: list[str] = []
    for name in graph_names:
        key = normalize_name(name)
        if (len(key) < 2 and key.isascii()) or key not in said or key in support:
            continue
        if any(key in normalize_name(other) for other in found):
            continue
        found.append(name)
    return found
