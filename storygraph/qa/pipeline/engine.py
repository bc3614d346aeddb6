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

`ask` reads the question, has the scope resolver plan its answer over the stories
(storygraph.qa.scope.resolver: one story, the leading one, the tellings of one tale, or story by
story) and answers within that scope. The steps within one scope are modules of their own:
`gathering` (retrieval, scoring, sources), `writing` (the answer step), `checking` (the support
step) and `answering` (those in order, then the verifier); `replies` tells the
answer, one or per story.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from storygraph.models import Answer
from storygraph.qa.generation.answer import TokenFn
from storygraph.qa.pipeline.answering import answer_within
from storygraph.qa.pipeline.deadline import Clock, Deadline
from storygraph.qa.pipeline.gathering import gather
from storygraph.qa.pipeline.parts import PartsFor, QAOptions, QAParts, names_read_once
from storygraph.qa.pipeline.progress import phase
from storygraph.qa.pipeline.replies import headed, one_answer, per_story_answer
from storygraph.qa.pipeline.trace import Trace, entities_detail
from storygraph.qa.scope.resolver import ScopeResolver


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
        # read the question, once
        analysis = parts.reader.read(question, trace.callbacks, start_entities=start_entities)
        trace.record("entities", **entities_detail(analysis))
        # scope: which stories it is answered about, and how (storygraph.qa.scope.resolver)
        plan = ScopeResolver(parts, trace, deadline, gather).plan(analysis)
        if plan.per_story:
            return per_story_answer(
                plan.analysis, plan.per_story, parts, trace, on_token, deadline, told=plan.told
            )
        # retrieve → generate → verify within that scope (storygraph.qa.pipeline.answering)
        head = plan.head
        streamed = headed(on_token, head + "\n") if on_token is not None and head else on_token
        one = answer_within(plan.about, parts, trace, streamed, deadline, plan.gathered)
        return one_answer(plan, one, parts, trace, deadline)
