"""Question answering: analysis → retrieval → scoring → sources → answer, with a full trace
(design §5).

`QAEngine` runs the stages it is handed (`QAParts`), in the style of neo4j-graphrag-python: a
`QuestionReader` (storygraph.qa.question.analysis, with its `EntityFinder`), a `Retriever`
(storygraph.qa.retrieval.retrieval: the mode), a `Scorer` (storygraph.qa.retrieval.scoring), a
`ContextBuilder`
(storygraph.qa.retrieval.context: sentence search and the sources the answerer reads, within its
budget)
and an `Answerer` (storygraph.qa.generation.answer), whose reply the checks
(storygraph.qa.generation.checks) judge.
Each stage returns a value; the `Answer` is built once, at the end. Which parts a question gets
is decided in one place, `storygraph.qa.pipeline.factory.build_engine`, from what the model can do
and
the question's options; `QAOptions.from_settings` turns the settings into options, once, for the
app, the CLI and the evaluation alike. Each phase a reader waits through (finding, the model
reading its sources, writing, checking) is reported as it begins (storygraph.qa.pipeline.progress).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from storygraph.errors import error_text
from storygraph.models import CLOSEST_SHOWN, Answer, Citation, Fact, Support
from storygraph.qa.generation.answer import Answerer, TokenFn, facts_answer, sentence_line
from storygraph.qa.generation.answer_choice import ChoiceAnswerer
from storygraph.qa.generation.answer_crosslang import SourcesLanguageAnswer
from storygraph.qa.generation.candidate_answer import CandidatePicker, candidate_step
from storygraph.qa.generation.checks import judge_reply, nothing_found, so_far, unsupported_names
from storygraph.qa.pipeline.deadline import Clock, Deadline, DeadlinePassed, unchecked
from storygraph.qa.pipeline.progress import phase
from storygraph.qa.pipeline.trace import (
    Trace,
    entities_detail,
    rerank_detail,
    retrieval_detail,
    sentences_detail,
)
from storygraph.qa.question.analysis import QuestionAnalysis, QuestionReader, for_stories, within
from storygraph.qa.retrieval.context import ContextBuilder, Sources
from storygraph.qa.retrieval.passages import Passage, unsearched_warning
from storygraph.qa.retrieval.retrieval import DEFAULT_MODE, Retrieval, Retriever
from storygraph.qa.retrieval.scoring import RerankResult, Scorer, keep_fitting
from storygraph.qa.scope.per_story import (
    JOINED,
    cited_stories,
    moved_support,
    renumbered,
    source_scopes,
    story_head,
    story_scopes,
)
from storygraph.qa.scope.scope import Scope, names_in_scope
from storygraph.qa.scope.story_lead import STORY_LEAD, Lead, led_scope, story_lead
from storygraph.qa.verify import Verifier
from storygraph.qa.verify.gate import VerifyMode, evidence_of, gated, verifiable
from storygraph.qa.verify.support import SupportChecker
from storygraph.qa.verify.support_text import (
    ANSWERED_BY,
    NAMES_UNHELD,
    NOT_CONFIRMED,
    SupportStep,
    support_step,
)
from storygraph.settings import Settings
from storygraph.store.reading import EVERYTHING, Reading


@dataclass(frozen=True)
class QAOptions:
    mode: str = DEFAULT_MODE
    top_k: int = 15
    min_score: float = 1.0
    strategy: str = "auto"
    no_llm: bool = False
    sentence_sources: int = 5
    """Story sentences from sentence search the answer reads beside the facts' (0: none)."""
    choose_names: bool = False
    """The small embedded model answers a who / where question by choosing a graph name (off
    by default: measured worse than its written answers, docs/ISSUES.md#chosen-names)."""
    compose_answer: bool = True
    """False: skip the model's answer (the eval measures retrieval); the facts answer is given."""
    stories: tuple[str, ...] = ()
    """The document ids a question may be answered from (empty: every story; qa/scope/scope.py)."""
    translation: str = "dictionary"
    """How a question in another language than its stories is brought into theirs:
    "dictionary", "model", "dictionary+model" or "off" (storygraph.qa.question.translation)."""
    candidates: str = "single"
    """After an answer the support check did not confirm, a candidate the sentences' structure
    puts in the asked slot: "off", "single" (the default: the one candidate, no call; measured
    in docs/ISSUES.md#candidate-answer), "choice" or "both"
    (storygraph.qa.generation.candidate_answer)."""
    crosslang_answer: str = "sources"
    """What language the small model answers such a question in: "sources" (the stories', shown
    in the question's with the stories' words in brackets) or "question" (its own);
    storygraph.qa.generation.answer_crosslang."""
    deadline_s: float = 60.0
    """Seconds an answer may take: past them, the engine stops at the end of the stage that
    ran over and shows what was found so far, with a warning (storygraph.qa.pipeline.deadline)."""
    verify: VerifyMode = "gate"
    """What the verifier's confidence does to the model's answer: "gate", "label" or "rules"
    (storygraph.qa.verify.gate)."""
    until: int | None = None
    """The last chapter the reader has read (None: all of it): retrieval, sentence search and
    so the sources and citations stop there (storygraph.store.reading)."""

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> QAOptions:
        """The one place settings become options (the chat, the CLI and the evals use it)."""
        options = cls(
            mode=settings.retrieval_mode,
            top_k=settings.rerank_top_k,
            min_score=settings.rerank_min_score,
            strategy=settings.rerank_strategy,
            no_llm=settings.no_llm,
            sentence_sources=settings.sentence_sources,
            choose_names=settings.answer_choice,
            translation=settings.question_translation,
            candidates=settings.answer_candidates,
            crosslang_answer=settings.crosslang_answer,
            deadline_s=settings.answer_deadline_s,
            verify=settings.verify,
        )
        given = {k: v for k, v in overrides.items() if v is not None}
        return replace(options, **given)


@dataclass(frozen=True)
class QAParts:
    """The stages one question goes through (built by storygraph.qa.pipeline.factory)."""

    reader: QuestionReader
    retriever: Retriever
    scorer: Scorer
    context: ContextBuilder
    answerer: Answerer
    """Writes the answer. One that calls no model (`FactsAnswerer`) is not called: the answer
    step writes the facts' answer itself (`write`)."""
    top_k: int = 15
    min_score: float = 1.0
    chooser: ChoiceAnswerer | None = None
    """Answers a who / where question by choosing a name, where it fits
    (storygraph.qa.generation.answer_choice)."""
    no_model: bool = False
    """No model in these parts: the kept facts are the answer itself, so the rerank step keeps
    the ones whose relation the question's words name, when there are such facts
    (storygraph.qa.retrieval.scoring.keep_fitting). False with a model, also when it writes no
    answer
    (`compose_answer=False`: the evaluation measures retrieval as the model would get it)."""
    support: Callable[[Sequence[dict[str, Any]]], SupportChecker] | None = None
    """Builds the support check over the graph's name rows (storygraph.qa.verify.support), run on
    the
    written answer; None: no check (the answer's support says "not checked")."""
    stories_named: Callable[[], dict[str, str]] | None = None
    """The stories' names by document id, for the head lines of a per-story answer."""
    candidate: CandidatePicker | None = None
    """Picks an answer among the check's candidates for the asked slot when the model's was
    not confirmed (storygraph.qa.generation.candidate_answer); None: the "not sure" reply stands."""
    warnings: tuple[str, ...] = ()
    """Fallbacks these parts run on, named in every answer's warnings (no sentence encoder:
    storygraph.text.embeddings.NO_EMBEDDER)."""
    across: SourcesLanguageAnswer | None = None
    """A question asked across languages is answered in its sources' language and shown in
    its own (storygraph.qa.generation.answer_crosslang); None: answered in the question's
    language."""
    verifier: Verifier | None = None
    """Judges the model's written answer (storygraph.qa.verify); None: the rule check alone."""
    verify_mode: VerifyMode = "gate"
    """What the verifier's verdict does to the answer shown (storygraph.qa.verify.gate)."""
    reading: Reading = EVERYTHING
    """How far the reader has read (storygraph.store.reading), read once for the question: the
    retriever and the context hold it; the answer's decline says so."""

    def rank(
        self, analysis: QuestionAnalysis, found: Retrieval, callbacks: list[Any]
    ) -> RerankResult:
        """The scorer on the retrieved candidates, with their priors (the kept ones marked)."""
        return self.scorer.score(
            analysis,
            found.facts,
            prior=found.priors(),
            top_k=self.top_k,
            min_score=self.min_score,
            callbacks=callbacks,
        )


@dataclass(frozen=True)
class Written:
    """The answer step's value: the text, how it was written, how many sources it was written
    from, its warnings, and the names it brought in unsupported."""

    text: str
    method: str
    read: int
    warnings: tuple[str, ...] = ()
    unsupported: tuple[str, ...] = ()
    language: str = ""
    """The language the text is written in, as the checks read a model's reply; "": the
    question's reply language (the facts' answer and the fixed replies are written in it)."""
    cut: bool = False
    """The model's reply as far as it had come when the deadline passed (not judged)."""
    logprobs: tuple[float, ...] = ()
    """The model's log probability of each token it wrote
    (storygraph.qa.generation.answer.Reply)."""


PartsFor = Callable[["QAOptions"], QAParts]

TIED = (
    "{count} stories fit this question equally; the answer is written for each of them, under "
    "its name: {stories}. Pick the stories to ask about one."
)
UNDECIDED = (
    "The question's names do not say which story it is about; its sources came from "
    "{count} stories, and the answer is written for each of them, under its name: {stories}. "
    "Pick the stories to ask about one."
)
LED = (
    "{count} stories fit this question's words equally, and it names none of them; {story}'s "
    "sentences fit it best, so the answer is about {story}. Pick the stories to ask about "
    "another."
)
TELLINGS = (
    "{count} stories tell the tale this question names ({stories}); the answer is drawn from "
    "them together, under their names. Pick the stories to ask about one."
)
WIDER = (
    "The question's names are ordinary words; {story}'s sentences fit it best of all the "
    "stories, so the answer is about {story}. Pick the stories to ask about another."
)
UNDECIDED_ONE = (
    "The question's names do not say which story it is about; its sources are from {story}. "
    "Pick the stories to ask about one."
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
            support=parts.reading.support(one.checked.support),
        )


@dataclass(frozen=True)
class Answered:
    """One answer's values from retrieval to the support check (a story's, in a per-story
    answer)."""

    found: Retrieval
    ranked: RerankResult
    facts: list[Fact]
    sources: Sources
    written: Written
    checked: SupportStep

    @property
    def warnings(self) -> list[str]:
        return [
            *self.found.notes,
            *self.ranked.warnings,
            *self.written.warnings,
            *self.checked.warnings,
        ]


@dataclass(frozen=True)
class Gathered:
    """What an answer is written from: the retrieved facts, their ranking, the kept ones and
    the sources (facts' sentences and sentence search's)."""

    found: Retrieval
    ranked: RerankResult
    facts: list[Fact]
    kept: list[Fact]
    sources: Sources


@dataclass(frozen=True)
class Undecided:
    """What an undecided scope (qa/scope/scope.py) leads to once its sources are gathered: the
    stories to answer for one by one (`scopes`, when the sources came from several), or the one
    story's head line and the warning naming it (also the story whose sentences lead a tie of
    ordinary words: `leading_story`); empty when the scope is decided."""

    gathered: Gathered | None = None
    scopes: tuple[Scope, ...] = ()
    head: str = ""
    warnings: tuple[str, ...] = ()
    story: str = ""
    """The one story the answer is about (its sources', or the leading one), when one."""


def undecided_story(
    analysis: QuestionAnalysis, parts: QAParts, trace: Trace, deadline: Deadline
) -> Undecided:
    """The names do not say which story the question is about (a library, `library_names`):
    gather the sources first and say which story each is from."""
    named = library_names(analysis, parts)
    if not named:
        return Undecided()
    gathered = gather(analysis, parts, trace, deadline)
    stories = cited_stories(gathered.sources.citations)
    if len(stories) > 1:
        return Undecided(gathered, tuple(source_scopes(analysis.scope, stories)))
    if not stories:
        return Undecided(gathered)
    name = named.get(stories[0], stories[0])
    head = story_head(name, japanese=analysis.reply_language == "ja")
    return Undecided(
        gathered, head=head, warnings=(UNDECIDED_ONE.format(story=name),), story=stories[0]
    )


def tellings_story(analysis: QuestionAnalysis, parts: QAParts) -> Undecided | None:
    """A question naming a tale several stories tell (`Scope.tellings`): one answer from all
    of them, under one head line naming them; None for any other scope."""
    if not analysis.scope.tellings or parts.stories_named is None:
        return None
    named = parts.stories_named()
    names = [named.get(d, d) for d in analysis.scope.tellings]
    head = story_head(JOINED.join(names), japanese=analysis.reply_language == "ja")
    told = TELLINGS.format(count=len(names), stories=", ".join(names))
    return Undecided(head=head, warnings=(told,))


def leading_story(
    analysis: QuestionAnalysis, scopes: Sequence[Scope], parts: QAParts, trace: Trace
) -> tuple[QuestionAnalysis, Undecided] | None:
    """Stories tied by ordinary words alone (`Scope.ordinary`): when one story's sentences
    lead the others' (qa/scope/story_lead.py), the question within that story's scope, with its head
    line and the warning naming it; None when none leads (the answer is written per story)."""
    if not analysis.scope.ordinary or parts.stories_named is None:
        return None
    lead = recorded_lead(trace, parts.context.sentences(analysis), analysis.scope.tied)
    scope = led_scope(scopes, lead.story) if lead.story is not None else None
    if scope is None or lead.story is None:
        return None
    name = parts.stories_named().get(lead.story, lead.story)
    return led_within(analysis, scope, name, LED.format(count=len(scopes), story=name))


def wider_lead(
    analysis: QuestionAnalysis, parts: QAParts, trace: Trace
) -> tuple[QuestionAnalysis, Undecided] | None:
    """An undecided scope held by ordinary names one story's graph holds (`Scope.choice`):
    another story's text may say them too without its graph holding them (親 is an entity of
    竹取物語; 「親がにを殺したのは誰？」 is about 猿蟹合戦, whose graph has no 親), so the sentences
    of every story the user chose are searched together (qa/scope/story_lead.py). When a story the
    names did not keep leads them all, the question is answered within that story, from its
    own entities of those names (none when it has none), under its name; otherwise None (the
    undecided scope stands: `undecided_story`)."""
    scope = analysis.scope
    if not (scope.undecided and scope.keys) or parts.stories_named is None:
        return None
    named = parts.stories_named()
    if len(named) <= len(scope.documents):
        return None
    everywhere = replace(analysis, scope=Scope(documents=scope.choice, undecided=True))
    passages = parts.context.sentences(everywhere)
    stories = list(dict.fromkeys(p.document_id for p in passages))
    searched = "every story in scope: its names are ordinary words"
    lead = recorded_lead(trace, passages, stories, searched=searched)
    if lead.story is None or lead.story in scope.documents:
        return None
    ids = set(analysis.ids)
    keys = tuple(
        str(row["key"])
        for row in analysis.name_rows
        if row.get("document_id") == lead.story and row["id"] in ids and row.get("key")
    )
    name = named.get(lead.story, lead.story)
    held = Scope(keys=keys, documents=(lead.story,), note=f"{name}'s sentences lead every story's")
    return led_within(analysis, held, name, WIDER.format(story=name), story=lead.story)


def recorded_lead(
    trace: Trace, passages: Sequence[Passage], stories: Sequence[str], **detail: str
) -> Lead:
    """Which of `stories` the sentences found lead (qa/scope/story_lead.py), recorded in `trace`."""
    lead = story_lead(passages, stories)
    trace.record(
        "story lead",
        best={d: round(score, 3) for d, score in lead.best.items()},
        leading=lead.story,
        needed=STORY_LEAD,
        **detail,
    )
    return lead


def led_within(
    analysis: QuestionAnalysis, scope: Scope, name: str, told: str, *, story: str = ""
) -> tuple[QuestionAnalysis, Undecided]:
    """The question within the leading story's `scope`, with its head line (`name`) and the
    warning `told` saying why."""
    head = story_head(name, japanese=analysis.reply_language == "ja")
    return within(analysis, scope), Undecided(head=head, warnings=(told,), story=story)


def answer_within(
    analysis: QuestionAnalysis,
    parts: QAParts,
    trace: Trace,
    on_token: TokenFn | None,
    deadline: Deadline,
    gathered: Gathered | None = None,
) -> Answered:
    """Retrieval, scoring, sources (unless `gathered` already), the answer and its support
    check within `analysis.scope`, each step recorded in `trace`; past the `deadline`, the
    stages left are skipped (storygraph.qa.pipeline.deadline)."""
    if gathered is None:
        phase("finding")  # a per-story answer's next story
    got = gathered if gathered is not None else gather(analysis, parts, trace, deadline)
    found, ranked, facts, kept, sources = got.found, got.ranked, got.facts, got.kept, got.sources
    asked = None
    if parts.across is not None and parts.answerer.calls_model and (kept or sources.citations):
        asked = parts.across.asked(analysis)  # answered in the sources' language
    first: list[float] = []  # when the answer's first piece came, into the answer step

    def heard(piece: str) -> None:
        if not first:
            first.append(trace.elapsed())
            phase("writing")
        if on_token is not None:
            on_token(piece)

    if deadline.over(trace, "answer"):
        written = facts_written(analysis, kept, facts, sources, on_token)
        asked = None  # the facts' answer is written in the question's language
    else:
        written = write(
            asked or analysis, parts, kept, facts, sources, trace.callbacks, heard, deadline
        )
    by_model = written.method.startswith("llm") and bool(first)
    trace.record(
        "answer", method=written.method, citations=len(sources.citations),
        sources_read=written.read, unsupported_names=list(written.unsupported),
        **({"cut_at_deadline": True} if written.cut else {}),
        **({"first_token_s": round(first[0], 4)} if by_model else {}),
    )  # fmt: skip
    if written.method.startswith("llm") and not written.cut:
        phase("checking")
    read_as = asked or analysis
    checker = scoped_checker(read_as, parts)
    offered = None
    if deadline.over(trace, "support"):
        checked = unchecked(written.text)
    else:
        checked = check_support(read_as, checker, written, sources, facts)
        if not deadline.over(trace, "candidate", stage="support"):
            offered = offer_candidate(
                read_as, parts, checker, written, sources, facts, checked, trace.callbacks
            )
    shown = offered.step if offered is not None else checked
    # what the model wrote in the sources' language, or the candidate shown in its place
    said = shown.text if shown is not checked else written.text
    if parts.verifier is not None and verifiable(written.method, written.text, written.cut):
        evidence = evidence_of(
            read_as.question, written.text, written.logprobs, sources.citations, written.read,
            checked.support,
        )  # fmt: skip
        verdict = parts.verifier.verify(evidence)
        shown = gated(
            parts.verify_mode, parts.verifier, verdict, read_as, written.text, checked, shown,
            sources.citations,
        )  # fmt: skip
    if asked is not None and parts.across is not None:
        # a candidate shown in the sources' language is rendered as the model's answer would be
        said = written.text if shown.text == written.text else said
        shown = parts.across.shown(analysis, shown, said, written.method, sources)
    trace.record("support", **shown.detail)
    if offered is not None:
        trace.record("candidate", **offered.detail)
    return Answered(found, ranked, facts, sources, written, shown)


def gather(
    analysis: QuestionAnalysis, parts: QAParts, trace: Trace, deadline: Deadline
) -> Gathered:
    """Retrieval, scoring and the sources within `analysis.scope`, recorded in `trace`; past
    the `deadline`, what was gathered so far (the first candidates, unranked, before the
    rerank; no sources before the sentences)."""
    nothing = Sources([], [])
    if deadline.over(trace, "retrieval"):
        found = Retrieval([], "", mode=parts.retriever.mode)
        return Gathered(found, RerankResult([], False, "not run"), [], [], nothing)
    found = parts.retriever.search(analysis, trace.callbacks)
    trace.record("retrieval", **retrieval_detail(found))
    if deadline.over(trace, "rerank"):
        kept = unranked(found.facts, parts.top_k)
        facts = list(found.facts) + set_aside(found.filtered_out)
        return Gathered(found, RerankResult(kept, False, "not run"), facts, kept, nothing)
    ranked = parts.rank(analysis, found, trace.callbacks)
    facts = ranked.facts + set_aside(found.filtered_out)
    fitting = 0
    if parts.no_model and found.relation_types is not None:
        fitting = keep_fitting(facts, found.relation_types.lexical_types)
    kept = [f for f in facts if f.kept]
    trace.record(
        "rerank", **rerank_detail(ranked, len(kept), fitting, parts.top_k, parts.min_score)
    )
    if deadline.over(trace, "sentences"):
        return Gathered(found, ranked, facts, kept, nothing)
    passages = parts.context.sentences(analysis)
    trace.record("sentences", **sentences_detail(parts.context.method, passages))
    sources = parts.context.sources(kept, passages, story_order=found.order is not None)
    return Gathered(found, ranked, facts, kept, sources)


def per_story_answer(
    analysis: QuestionAnalysis,
    scopes: Sequence[Scope],
    parts: QAParts,
    trace: Trace,
    on_token: TokenFn | None,
    deadline: Deadline,
    *,
    told: str,
) -> Answer:
    """Several stories fit the question (tied by its names, or the stories an undecided
    question's sources came from: that first search stays in the trace before the parts'): an
    answer for each, in turn, each under its story's head line with its citations numbered on
    (storygraph.qa.scope.per_story); past the `deadline`, the stories not begun are left out.
    `told`:
    the warning naming them, formatted with `count` and `stories`."""
    named = parts.stories_named() if parts.stories_named is not None else {}
    japanese = analysis.reply_language == "ja"
    texts: list[str] = []
    citations: list[Citation] = []
    facts: list[Fact] = []
    warnings: list[str] = []
    supports: list[Support] = []
    answered: list[Answered] = []
    for scope in scopes:
        if answered and deadline.over(trace, "the next story's answer"):
            break
        story = scope.documents[0]
        head = story_head(named.get(story, story), japanese=japanese)
        lead = ("\n\n" if texts else "") + head + "\n"
        streamed = headed(on_token, lead) if on_token is not None else None
        part = within(analysis, scope)
        one = answer_within(part, parts, trace, streamed, deadline)
        offset = len(citations)
        said = so_far(one.checked.text, parts.reading)
        text, cited = renumbered(said, one.sources.citations, offset)
        texts.append(f"{head}\n{text}")
        citations.extend(cited)
        facts.extend(one.facts)
        warnings.extend(w for w in one.warnings if w not in warnings)
        supports.append(moved_support(parts.reading.support(one.checked.support), offset))
        answered.append(one)
    stories = ", ".join(named.get(s.documents[0], s.documents[0]) for s in scopes)
    return Answer(
        question=analysis.question,
        answer="\n\n".join(texts),
        mode=answered[0].found.mode,
        entities=list(analysis.entities),
        facts=facts,
        citations=citations,
        steps=trace.steps,
        usage=trace.usage(),
        rerank_fell_back=any(a.ranked.fell_back for a in answered),
        warnings=[
            *deadline.warnings,
            *parts.warnings,
            told.format(count=len(scopes), stories=stories),
            *analysis.warnings,
            *warnings,
        ],
        cypher="\n\n".join(dict.fromkeys(a.found.cypher for a in answered if a.found.cypher)),
        support=least_supported(supports),
    )


def names_read_once(parts: QAParts) -> QAParts:
    """`parts` for one question, the stories' names read from the store at most once: the
    undecided scope, its per-story answer and the unsearched-library warning each need them."""
    if parts.stories_named is None:
        return parts
    return replace(parts, stories_named=cache(parts.stories_named))


def library_names(analysis: QuestionAnalysis, parts: QAParts) -> dict[str, str]:
    """The stories' names by document id when the question's scope is undecided (qa/scope/scope.py:
    it names no one, or only ordinary words) in a store of several stories; else empty (a
    single-story store's answers carry no story head line)."""
    if not analysis.scope.undecided or parts.stories_named is None:
        return {}
    named = parts.stories_named()
    return named if len(named) > 1 else {}


def unread_warning(analysis: QuestionAnalysis, parts: QAParts) -> list[str]:
    """A question naming no one in a library too big for sentence search to read whole
    (storygraph.qa.retrieval.passages.MAX_SEARCHED_STORIES) is told so."""
    if analysis.scope.keys or parts.stories_named is None:
        return []
    return unsearched_warning(analysis, len(parts.stories_named()))


def headed(on_token: TokenFn, head: str) -> TokenFn:
    """`on_token` with `head` sent just before the first piece (so a part's head line is not
    a "first token" before its story's retrieval has run)."""
    said = False

    def piece(text: str) -> None:
        nonlocal said
        if not said:
            said = True
            on_token(head)
        on_token(text)

    return piece


def least_supported(supports: Sequence[Support]) -> Support:
    """A per-story answer's verdict: the first part's that is not supported, else the first
    (every part supported)."""
    return next((s for s in supports if not s.supported), supports[0])


def scoped_checker(analysis: QuestionAnalysis, parts: QAParts) -> SupportChecker | None:
    """The support checker for one question: it reads the names of the question's stories
    only (`Scope.documents`; every story's when the scope is all of them): in a library,
    another story's names (丹後, a place of another tale) made a right answer's words "names
    the sources do not hold", and the answer the one-story store showed was replaced
    (docs/ISSUES.md#story-scope). None: the parts check nothing."""
    if parts.support is None:
        return None
    return parts.support(names_in_scope(analysis.name_rows, analysis.scope.documents))


def check_support(
    analysis: QuestionAnalysis,
    checker: SupportChecker | None,
    written: Written,
    sources: Sources,
    facts: Sequence[Fact],
) -> SupportStep:
    """The support check on the written answer: does a cited source say what it says, in that
    role? (storygraph.qa.verify.support_text.support_step: one that fails is replaced by "not
    sure".)"""
    return support_step(
        checker,
        analysis,
        written.method,
        written.text,
        sources.citations,
        facts,
        written.read,
        written.language or None,
    )


def offer_candidate(
    analysis: QuestionAnalysis,
    parts: QAParts,
    checker: SupportChecker | None,
    written: Written,
    sources: Sources,
    facts: Sequence[Fact],
    checked: SupportStep,
    callbacks: list[Any],
) -> Offered | None:
    """The candidate step (storygraph.qa.generation.candidate_answer) after a model answer the
    check did
    not confirm or that declined: a candidate of the asked slot, shown when the same check
    confirms it; None when the parts have no picker or the step does not apply."""
    if parts.candidate is None or checker is None:
        return None
    if parts.reading.later_names(analysis.question):
        return None  # it asks about what comes past the reading position (store/reading.py)
    read = sources.citations[: written.read]
    picked = candidate_step(
        parts.candidate, checker, analysis, checked.support, sources.citations, facts, read,
        callbacks,
    )  # fmt: skip
    if picked is None:
        return None
    if picked.text is None or picked.support is None:
        return Offered(checked, picked.detail)
    by = ANSWERED_BY.get(picked.support.answered_by, picked.support.answered_by)
    warning = f"{NOT_CONFIRMED}the answer shown is {by} ({picked.support.reason})"
    step = SupportStep(
        picked.support,
        picked.text,
        (*checked.warnings, warning),
        {**checked.detail, "model_answer": written.text},
    )
    return Offered(step, picked.detail)


@dataclass(frozen=True)
class Offered:
    """The candidate step's outcome: the support step the answer keeps (the candidate's when
    one was shown) and the candidate step's trace detail."""

    step: SupportStep
    detail: dict[str, Any]


def unranked(facts: Sequence[Fact], top_k: int) -> list[Fact]:
    """The first `top_k` candidates in retrieval order, kept unscored: what an answer stopped
    by its deadline before the rerank shows."""
    for fact in facts[:top_k]:
        fact.kept = True
        fact.reason = "not ranked: the answer's deadline passed"
    return list(facts[:top_k])


def set_aside(facts: Sequence[Fact]) -> list[Fact]:
    """Candidates the relation-type stage set aside: in the trace, dropped, last."""
    for fact in facts:
        fact.kept = False
        fact.reason = "relation type does not fit the question"
    return list(facts)


def write(
    analysis: QuestionAnalysis,
    parts: QAParts,
    kept: Sequence[Fact],
    candidates: Sequence[Fact],
    sources: Sources,
    callbacks: list[Any],
    on_token: TokenFn | None,
    deadline: Deadline | None = None,
) -> Written:
    """The answer step: the model's reply judged by the checks (storygraph.qa.generation.checks),
    or, with
    no model, a failed one or nothing to read, the facts' answer. The model's streamed reply
    is read until the `deadline` (`Deadline.guard`): a reply cut there is kept as it is."""
    if not kept and not sources.citations:
        return facts_written(analysis, kept, candidates, sources, on_token)
    answerer: Answerer = parts.answerer
    if parts.chooser is not None and parts.chooser.fits(analysis, sources):
        answerer = parts.chooser
    warnings: list[str] = []
    if answerer.calls_model:
        emit = on_token if on_token is not None else (lambda _: None)
        said: list[str] = []
        streamed = deadline.guard(on_token, said) if deadline is not None else on_token
        phase("reading", len(sources.read))
        try:
            reply = answerer.answer(analysis, kept, sources, callbacks, streamed)
            judged = judge_reply(reply, analysis, sources, worked_examples=answerer.worked_examples)
            warnings.extend(judged.warnings)
            if judged.added:
                emit(judged.added)
        except DeadlinePassed:
            so_far = "".join(said).strip()
            # the reply as far as it came, shown unchecked (storygraph.qa.pipeline.deadline)
            if so_far:
                return Written(so_far, answerer.name, len(sources.read), cut=True)
        except Exception as exc:  # noqa: BLE001 - a model fault still yields an answer
            warnings.append(
                f"the model could not answer ({error_text(exc)}); showing the facts instead"
            )
        else:
            method = f"{answerer.name}, {CLOSEST_SHOWN}" if judged.added else answerer.name
            names = analysis.graph_names
            unsupported = unsupported_names(
                judged.text, names, kept, sources.citations, analysis.folded
            )
            if unsupported:
                warnings.append(NAMES_UNHELD + ", ".join(parts.reading.named(unsupported)))
            read = len(sources.read)
            return Written(
                judged.text, method, read, tuple(warnings), tuple(unsupported), judged.language,
                logprobs=tuple(getattr(reply, "logprobs", ())),
            )  # fmt: skip
    written = facts_written(analysis, kept, candidates, sources, on_token)
    return replace(written, warnings=tuple(warnings))


def facts_written(
    analysis: QuestionAnalysis,
    kept: Sequence[Fact],
    candidates: Sequence[Fact],
    sources: Sources,
    on_token: TokenFn | None,
) -> Written:
    """The answer without a model: the kept facts' answer, else "nothing found" (pointing at
    the sentence-search sources when there are some), sent to `on_token`."""
    if not kept and not sources.citations:
        text, method, read = nothing_found(analysis, candidates), "nothing found", 0
    elif kept:
        text = facts_answer(analysis.language, kept, sources.citations)
        method, read = "facts", len(sources.citations)
    else:
        # No fact, only sentence-search sources: say so, and point at those sentences.
        lines = sentence_line(sources.citations, japanese=analysis.reply_language == "ja")
        text = "\n".join([nothing_found(analysis, candidates), *lines])
        method, read = "facts", len(sources.citations)
    if on_token is not None:
        on_token(text)
    return Written(text, method, read)
