"""Question answering: analysis → retrieval → scoring → sources → answer, with a full trace
(design §5).

`QAEngine` runs the stages it is handed (`QAParts`, storygraph.qa.pipeline.parts), in the style
of neo4j-graphrag-python: a `QuestionReader` (storygraph.qa.question.analysis, with its
`EntityFinder`), a `Retriever` (storygraph.qa.retrieval.retrieval: the mode), a `Scorer`
(storygraph.qa.retrieval.scoring), a `ContextBuilder` (storygraph.qa.retrieval.context: sentence
search and the sources the answerer reads, within its budget) and an `Answerer`
(storygraph.qa.generation.answer), whose reply the checks (storygraph.qa.generation.checks) judge.
Each stage returns a value; the `Answer` is built once, at the end. Which parts a question gets
is decided in one place, `storygraph.qa.pipeline.factory.build_engine`, from what the model can do
and the question's options; `QAOptions.from_settings` turns the settings into options, once, for
the app, the CLI and the evaluation alike. Each phase a reader waits through (finding, the model
reading its sources, writing, checking) is reported as it begins (storygraph.qa.pipeline.progress).

The steps within one scope are modules of their own: `gathering` (retrieval, scoring, sources),
`writing` (the answer step), `checking` (the support and candidate steps) and `answering` (those
in order, then the verifier); `replies` holds the answers a library question gets when its names
do not decide its story (per story, the leading story, the tellings of one tale).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from storygraph.models import Answer
from storygraph.qa.generation.answer import TokenFn
from storygraph.qa.pipeline.answering import answer_within
from storygraph.qa.pipeline.deadline import Clock, Deadline
from storygraph.qa.pipeline.parts import PartsFor, QAOptions, QAParts, names_read_once
from storygraph.qa.pipeline.progress import phase
from storygraph.qa.pipeline.replies import headed, per_story_answer, unread_warning
from storygraph.qa.pipeline.trace import Trace, entities_detail
from storygraph.qa.question.analysis import for_stories
from storygraph.qa.scope.per_story import story_scopes
from storygraph.qa.scope.reading import so_far
from storygraph.qa.scope.resolver import (
    TIED,
    UNDECIDED,
    Undecided,
    leading_story,
    tellings_story,
    undecided_story,
    wider_lead,
)


class QAEngine:
    """Answers questions with the parts it is handed: one `QAParts` for every question (tests,
    benchmarks), or a function giving the parts for each question's options (the factory's)."""

    def __init__(self, parts: QAParts | PartsFor, *, clock: Clock = time.monotonic) -> None:
        self._parts_for: PartsFor = (lambda _: parts) if isinstance(parts, QAParts) else parts
        self._clock = clock
        """What the answers' deadlines are measured by (tests hand a clock of their own)."""

    def parts_for(self, options: QAOptions) -> QAParts:
        return self._parts_for(options)

    def top_k_used(self, options: QAOptions) -> int:
        """The number of kept facts these options' answer uses (the small model: at most
        SMALL_TOP_K, whatever is asked), for the chat's Top-k control."""
        return self.parts_for(options).top_k

    def warm(self, language: str, options: QAOptions) -> bool:
        """Have the model read the answer's fixed prompt prefix for `language` ahead of the
        first question (`Answerer.warm`); False when these options' answerer has none."""
        return self.parts_for(options).answerer.warm(language)

    def ask(
        self,
        question: str,
        options: QAOptions = QAOptions(),
        *,
        start_entities: Sequence[str] | None = None,
        on_token: TokenFn | None = None,
    ) -> Answer:
        deadline = Deadline(options.deadline_s, self._clock)
        phase("finding")
        parts = names_read_once(self.parts_for(options))
        trace = Trace(model=not parts.no_model)
        analysis = parts.reader.read(question, trace.callbacks, start_entities=start_entities)
        trace.record("entities", **entities_detail(analysis))
        scopes = story_scopes(analysis.scope)
        if deadline.over(trace, "retrieval"):
            told = Undecided()
        elif len(scopes) > 1:
            led = leading_story(analysis, scopes, parts, trace)
            if led is None:
                return per_story_answer(
                    analysis, scopes, parts, trace, on_token, deadline, told=TIED
                )
            analysis, told = led
        elif (wider := wider_lead(analysis, parts, trace)) is not None:
            analysis, told = wider
        else:
            told = tellings_story(analysis, parts) or undecided_story(
                analysis, parts, trace, deadline
            )
        if len(told.scopes) > 1:
            return per_story_answer(
                analysis, told.scopes, parts, trace, on_token, deadline, told=UNDECIDED
            )
        head = told.head
        streamed = headed(on_token, head + "\n") if on_token is not None and head else on_token
        about = for_stories(analysis, (told.story,)) if told.story else analysis
        one = answer_within(about, parts, trace, streamed, deadline, told.gathered)
        text = so_far(one.checked.text, parts.reading)
        return Answer(
            question=analysis.question,
            answer=f"{head}\n{text}" if head else text,
            mode=one.found.mode,
            entities=list(analysis.entities),
            facts=one.facts,
            citations=one.sources.citations,
            steps=trace.steps,
            usage=trace.usage(),
            rerank_fell_back=one.ranked.fell_back,
            warnings=[
                *deadline.warnings,
                *parts.warnings,
                *told.warnings,
                *unread_warning(analysis, parts),
                *analysis.warnings,
                *one.warnings,
            ],
            cypher=one.found.cypher,
            support=one.checked.support,
        )
