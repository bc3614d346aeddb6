"""Composing the answer from the kept facts, with numbered citations to chunks (design §5.4).

An `Answerer` is one narrow port: `answer(analysis, facts, sources, callbacks, on_token)`; it
writes from `sources.read`, the sources the context builder (storygraph.qa.retrieval.context) left
within
the model's budget.

- `ModelAnswerer`: one model call, streamed token by token to `on_token`. The prompt file is
  split at its `---` line into fixed instructions (the system message) and the variable part, so
  llama.cpp's prefix cache reuses the instructions from one question to the next. Capable models
  get `prompts/answer.txt` with every kept fact and source; the small embedded model gets
  `prompts/answer_small.txt`: the sources it reads (at most `SMALL_MAX_SOURCES` and
  `SMALL_SOURCE_TOKENS` of them, storygraph.qa.retrieval.context), numbered, without the facts'
  lines, and
  is told to answer only from those sentences or to say it cannot, in English with the answer
  alone (a name, a thing, a short phrase), in Japanese in one short sentence
  (`prompts/answer_small_form_*.txt`); three worked examples in the question's language come
  first, as earlier turns (storygraph.qa.generation.answer_examples).
- `FactsAnswerer`: no model; the top facts with their citation marks, and the numbers of the
  sentence-search sources.

`warm(language)` has the model read an answerer's fixed prefix ahead of the first question: the
small model's instructions and worked examples are ~700 prompt tokens, 7-8 s of reading on two
cores that the first question otherwise waits for. The embedded server keeps the model's state
per fixed prefix (storygraph.llm.prefix_states, docs/ISSUES.md#prompt-prefix), so a question after a
change of language restores that language's prefix instead of reading it again.

The small model's request asks for `logprobs`: the reply is a `Reply`, the text with the model's
log probability of each token it wrote (`Reply.logprobs`; empty when the server sends none),
which the verifier reads (storygraph.qa.verify). No extra call.

What a written answer is checked for is storygraph.qa.generation.checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from storygraph.library.relation_labels import relation_label
from storygraph.llm.request_body import capped_body
from storygraph.models import Citation, Fact
from storygraph.prompt_files import fill, load_prompt
from storygraph.qa.generation.answer_examples import answer_examples
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.retrieval.context import MAX_SOURCE_CHARS, Sources
from storygraph.store.story_time import supersession_lines
from storygraph.text.speech import quotes_in
from storygraph.text.vocabulary import SAYS_TYPE

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

SUPERSEDED_MARK = " (superseded later in the story)"
"""Marks a fact another replaced later (storygraph.store.story_time), so the answer says
"at first … later …" instead of presenting both as true."""
SMALL_MAX_TOKENS = 120
"""The small model's answer is one sentence; this bounds a reply that would not stop."""
WARM_MAX_TOKENS = 1
LOGPROBS = {"logprobs": True, "top_logprobs": 1}
"""What an OpenAI-compatible request says to get the written tokens' log probabilities."""


class Reply(str):
    """A model's written answer, with its tokens' log probabilities (the server's `logprobs`)
    and the tokens' texts (`tokens`, one per probability; "" where the server sent none)."""

    logprobs: tuple[float, ...]
    tokens: tuple[str, ...]

    def __new__(
        cls, text: str, logprobs: Sequence[float] = (), tokens: Sequence[str] = ()
    ) -> Reply:
        reply = super().__new__(cls, text)
        reply.logprobs = tuple(logprobs)
        reply.tokens = tuple(tokens)
        return reply


def chunk_logprob_entries(chunk: Any) -> list[dict[str, Any]]:
    """The per-token entries a streamed chunk carries (langchain-openai's place for them:
    `response_metadata["logprobs"]["content"]`); none when it carries none."""
    meta = getattr(chunk, "response_metadata", None) or {}
    return list((meta.get("logprobs") or {}).get("content") or ())


def token_logprob_pairs(entries: Sequence[dict[str, Any]]) -> list[tuple[str, float]]:
    """(token, log probability) of each entry that has a log probability."""
    return [
        (str(t.get("token") or ""), float(t["logprob"]))
        for t in entries
        if t.get("logprob") is not None
    ]


def chunk_logprobs(chunk: Any) -> list[tuple[str, float]]:
    """The tokens and their log probabilities a streamed chunk carries (each entry's "token"
    and "logprob"); none when it carries none."""
    return token_logprob_pairs(chunk_logprob_entries(chunk))


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


def facts_answer(language: str, facts: Sequence[Fact], citations: Sequence[Citation]) -> str:
    """The no-LLM answer: the top facts, each in the story's verb (never its type), with their
    citation marks, in the question's `language` (the analysis's)."""
    japanese = language == "ja"
    if not facts:
        nothing = (
            "グラフにこの質問の手がかりは見つかりませんでした。"
            if japanese
            else "I found nothing about this in the graph."
        )
        return "\n".join([nothing, *sentence_line(citations, japanese=japanese)])
    head = "グラフから見つかった関係：" if japanese else "Facts found in the graph:"
    lines = [
        f"{i}. {f.start} → {relation_label(f.type, f.evidence)} → {f.end}{_line_said(f)} "
        f"{_marks(f, citations)}".rstrip()
        for i, f in enumerate(facts, start=1)
    ]
    closing = [*supersession_lines(facts, japanese=japanese)]
    closing += sentence_line(citations, japanese=japanese)
    return "\n".join([head, *lines, *closing])


def _line_said(fact: Fact) -> str:
    """A stored line of speech's words (SAYS: storygraph.text.speech), after its listener."""
    quotes = quotes_in(fact.evidence) if fact.type == SAYS_TYPE else []
    return f": 「{' '.join(quotes)}」" if quotes else ""


def sentence_line(citations: Sequence[Citation], *, japanese: bool) -> list[str]:
    """The sentence-search sources, by number, as one closing line (none: no line)."""
    marks = "".join(f"[{c.number}]" for c in citations if c.kind == "sentence")
    if not marks:
        return []
    lead = "質問に近い本文の文：" if japanese else "Story sentences close to the question: "
    return [lead + marks]


class Answerer(Protocol):
    """Writes the answer from the kept facts and their citations."""

    name: str
    calls_model: bool
    worked_examples: bool
    """Its prompt shows worked examples (whose answers a reply must not copy:
    qa/generation/checks.py)."""

    def answer(
        self,
        analysis: QuestionAnalysis,
        facts: Sequence[Fact],
        sources: Sources,
        callbacks: list[Any],
        on_token: TokenFn | None = None,
    ) -> str:
        """The answer, written from `sources.read` (the budget is the context builder's)."""
        ...

    def warm(self, language: str) -> bool:
        """Have the model read this answerer's fixed prompt prefix for questions in `language`
        now, so a question reuses it (llama.cpp's prefix cache). False: nothing to read ahead."""
        ...


class FactsAnswerer:
    name = "facts"
    calls_model = False
    worked_examples = False

    def warm(self, language: str) -> bool:
        return False

    def answer(
        self,
        analysis: QuestionAnalysis,
        facts: Sequence[Fact],
        sources: Sources,
        callbacks: list[Any],
        on_token: TokenFn | None = None,
    ) -> str:
        text = facts_answer(analysis.language, facts, sources.citations)
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
    fixed prefix, storygraph.qa.generation.answer_examples), then the question with its
    sentences."""
    from langchain_core.messages import AIMessage

    unknown = UNKNOWN[language]
    # the reply's form by its language (measured on dev, docs/EVALUATION.md): English replies
    # asked for the answer alone, Japanese ones for one short sentence
    values = {**values, "reply_form": load_prompt(f"answer_small_form_{language}")}
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

    @property
    def worked_examples(self) -> bool:
        return self.compact

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
        """The request's extra body with `max_tokens` (storygraph.llm.request_body)."""
        return capped_body(self.llm, max_tokens)

    def messages(
        self, analysis: QuestionAnalysis, facts: Sequence[Fact], sources: Sources
    ) -> list[BaseMessage]:
        language = analysis.reply_language
        shown = sources.read
        values = {
            "question": analysis.question,
            "sources": "\n".join(f"[{c.number}] {c.text}" for c in shown) or "(none)",
            "language": LANGUAGE_NAMES[language],
        }
        if self.compact:
            # The small model reads the sentences only: the facts' "A -TYPE-> B" lines beside
            # them changed nothing it got right and made its prompt longer
            # (docs/ISSUES.md#small-model-sources).
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
        sources: Sources,
        callbacks: list[Any],
        on_token: TokenFn | None = None,
    ) -> str:
        parts: list[str] = []
        extra: dict[str, Any] = {}
        if self.compact:
            extra["extra_body"] = {**self._body(SMALL_MAX_TOKENS), **LOGPROBS}
        stream = self.llm.stream(
            self.messages(analysis, facts, sources), config={"callbacks": callbacks}, **extra
        )
        # closed as soon as the reading stops (`on_token` may end it: the answer's deadline,
        # storygraph.qa.pipeline.deadline), so the request and its place in the model's queue are
        # given
        # back now, not when the garbage collector finds the stream
        logprobs: list[tuple[str, float]] = []
        with closing(stream):
            for chunk in stream:
                piece = chunk.content if isinstance(chunk.content, str) else str(chunk.content)
                logprobs.extend(chunk_logprobs(chunk))
                if piece:
                    parts.append(piece)
                    if on_token is not None:
                        on_token(piece)
        text = "".join(parts).strip()
        if not text:
            raise ValueError("empty answer")
        return Reply(text, [p for _, p in logprobs], [t for t, _ in logprobs])
