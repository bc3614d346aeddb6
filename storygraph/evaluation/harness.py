"""The eval harness: a graph file loaded into a fresh, isolated store; every question of a
question file asked in every mode; metrics per question and per mode (see metrics.py).

Question files are JSON lines like `shared/eval/seed_questions.jsonl`:
`{"id", "question", "entities"?: [...], "expected": [[s, TYPE, t], ...], "excluded": [...]}`.
With `entities` those are the start nodes; without, the pipeline finds them.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from storygraph.errors import InputError
from storygraph.evaluation.metrics import (
    Triple,
    excluded_leaks,
    expected_recall,
    mean,
    order_accuracy,
)
from storygraph.ingest.graph_io import import_graph
from storygraph.llm.factory import ModelInfo, build_chat_model, model_info
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.retrieval.retrieval import available_modes, canonical_mode
from storygraph.services import Services, build_services
from storygraph.settings import Settings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


@dataclass(frozen=True)
class EvalQuestion:
    id: str
    question: str
    entities: tuple[str, ...] | None
    expected: tuple[Triple, ...]
    excluded: tuple[Triple, ...]


@dataclass
class QuestionResult:
    id: str
    mode: str
    question: str
    entities: list[str]
    recall: float | None
    missing: list[Triple]
    leaks: int
    leaked: list[Triple]
    order_accuracy: float | None
    kept: int
    candidates: int
    llm_calls: int
    tokens: int
    seconds: float
    question_type: str | None = None
    relation_types: str | None = None
    ranked: list[dict[str, Any]] = field(default_factory=list)
    entity_recall: float | None = None
    """Share of the gold start entities the pipeline found (the entities-found pass only)."""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["seconds"] = round(self.seconds, 4)
        data["missing"] = [list(t) for t in self.missing]
        data["leaked"] = [list(t) for t in self.leaked]
        return data


def _triples(raw: Any, where: str) -> tuple[Triple, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(
        isinstance(t, list | tuple) and len(t) == 3 and all(isinstance(x, str) for x in t)
        for t in raw
    ):
        raise InputError(f"{where}: expected a list of [source, TYPE, target] triples")
    return tuple((t[0], t[1], t[2]) for t in raw)


def read_jsonl(path: Path) -> Iterator[tuple[str, Any]]:
    """(`file:line`, parsed value) of every non-blank line of a JSON-lines file; a missing file
    or a line that is not JSON is an InputError naming where."""
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except FileNotFoundError as exc:
        raise InputError(f"{path} does not exist.") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            yield where, json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where}: not JSON ({exc})") from exc


def load_questions(path: Path) -> list[EvalQuestion]:
    """Questions of a JSON-lines file; lines without a question are skipped, bad lines fail."""
    questions: list[EvalQuestion] = []
    for where, row in read_jsonl(path):
        if not isinstance(row, dict) or not str(row.get("question") or "").strip():
            continue
        entities = row.get("entities")
        questions.append(
            EvalQuestion(
                id=str(row.get("id") or f"q{where.rsplit(':', 1)[1]}"),
                question=str(row["question"]).strip(),
                entities=tuple(str(e) for e in entities) if entities else None,
                expected=_triples(row.get("expected"), where),
                excluded=_triples(row.get("excluded"), where),
            )
        )
    return questions


@contextmanager
def configured_model(settings: Settings) -> Iterator[tuple[BaseChatModel | None, ModelInfo]]:
    """The configured model without opening the user's store (the eval store is temporary).

    The embedded model's server is held for the block and let go after it. Holding the server
    object is what holds its users lock: a dropped `EmbeddedServer` let go of that lock when it
    was garbage-collected, and the process that had started the server, exiting meanwhile,
    stopped it under this one (docs/ISSUES.md#model-server-lifecycle)."""
    info = model_info(settings)
    if info.provider == "none":
        yield None, info
        return
    if info.provider != "embedded":
        yield build_chat_model(settings), info
        return
    from storygraph.llm.embedded_server import EmbeddedServer

    server = EmbeddedServer(settings)
    url = server.ensure_running()
    try:
        yield build_chat_model(settings, embedded_base_url=url), info
    finally:
        server.stop_if_started_here()


@contextmanager
def isolated_services(
    settings: Settings, *, llm: BaseChatModel | None = None, info: ModelInfo | None = None
) -> Iterator[Services]:
    """Services on a fresh store in a temporary data dir (its own embedded FalkorDB), removed
    afterwards. Without `llm` nothing calls a model."""
    with tempfile.TemporaryDirectory(prefix="storygraph-eval-") as tmp:
        local = settings.model_copy(
            update={"data_dir": Path(tmp), "neo4j_uri": None, "no_llm": llm is None}
        )
        services = build_services(local, llm=llm, info=info)
        try:
            yield services
        finally:
            services.close()


FOUND_SUFFIX = " (entities found)"
"""Mode label of the pass that finds the start entities instead of taking the gold ones."""


def evaluate_question(
    services: Services,
    case: EvalQuestion,
    mode: str,
    options: QAOptions,
    *,
    gold_entities: Sequence[str] | None = None,
) -> QuestionResult:
    """Ask one question in one mode. With `gold_entities` the pipeline finds the start nodes
    itself and the result records how many of the gold ones it found."""
    qa = services.qa()
    started = time.perf_counter()
    answer = qa.ask(
        case.question,
        replace(options, mode=mode, compose_answer=False),
        start_entities=list(case.entities) if case.entities else None,
    )
    seconds = time.perf_counter() - started
    ranked = [f.key for f in answer.facts]
    kept = [f.key for f in answer.kept_facts]
    leaked = excluded_leaks(kept, case.excluded)
    retrieval = next((s.detail for s in answer.steps if s.name == "retrieval"), {})
    return QuestionResult(
        id=case.id,
        mode=answer.mode,
        question=case.question,
        entities=[e.node_id for e in answer.entities],
        recall=expected_recall(kept, case.expected),
        missing=[t for t in case.expected if t not in set(kept)],
        leaks=len(leaked),
        leaked=leaked,
        order_accuracy=order_accuracy(ranked, case.expected, case.excluded),
        kept=len(kept),
        candidates=len(answer.facts),
        llm_calls=answer.usage.calls,
        tokens=answer.usage.total_tokens,
        seconds=seconds,
        question_type=retrieval.get("question_type"),
        relation_types=retrieval.get("relation_types"),
        ranked=[{"fact": list(f.key), "score": f.score, "kept": f.kept} for f in answer.facts],
        entity_recall=(
            sum(1 for e in gold_entities if e in {x.node_id for x in answer.entities})
            / len(gold_entities)
            if gold_entities
            else None
        ),
    )


def summarize(results: Sequence[QuestionResult], excluded_total: int) -> dict[str, Any]:
    """Overall metrics of one mode."""
    recall = mean([r.recall for r in results])
    order = mean([r.order_accuracy for r in results])
    leaks = sum(r.leaks for r in results)
    entity_recall = mean([r.entity_recall for r in results])
    return {
        "questions": len(results),
        "recall": None if recall is None else round(recall, 4),
        "full_recall": sum(1 for r in results if r.recall == 1.0),
        "leaks": leaks,
        "leak_rate": round(leaks / excluded_total, 4) if excluded_total else None,
        "order_accuracy": None if order is None else round(order, 4),
        "perfect_order": sum(1 for r in results if r.order_accuracy == 1.0),
        "kept": round(sum(r.kept for r in results) / len(results), 2) if results else 0,
        "llm_calls": sum(r.llm_calls for r in results),
        "tokens": sum(r.tokens for r in results),
        "seconds": round(sum(r.seconds for r in results), 3),
        "entity_recall": None if entity_recall is None else round(entity_recall, 4),
    }


@dataclass
class EvalReport:
    overall: dict[str, dict[str, Any]]
    questions: list[QuestionResult]

    def to_json(self) -> dict[str, Any]:
        return {"overall": self.overall, "questions": [q.to_json() for q in self.questions]}


def run_eval(
    services: Services,
    graph: Mapping[str, Any],
    questions: Sequence[EvalQuestion],
    modes: Sequence[str] | None = None,
    options: QAOptions | None = None,
) -> EvalReport:
    """Import `graph` into the (fresh) store of `services` and run every question in every mode."""
    options = options or QAOptions()
    chosen = [canonical_mode(m) for m in (modes or available_modes())]
    chosen = list(dict.fromkeys(chosen))
    import_graph(services.store, dict(graph))
    excluded_total = sum(len(q.excluded) for q in questions)
    results: list[QuestionResult] = []
    overall: dict[str, dict[str, Any]] = {}
    given = [q for q in questions if q.entities]
    for mode in chosen:
        mode_results = [evaluate_question(services, case, mode, options) for case in questions]
        overall[mode] = summarize(mode_results, excluded_total)
        results.extend(mode_results)
        if given:  # the same questions again, the pipeline finding the entities itself
            label = mode + FOUND_SUFFIX
            found = [
                replace(
                    evaluate_question(
                        services,
                        replace(case, entities=None),
                        mode,
                        options,
                        gold_entities=case.entities,
                    ),
                    mode=label,
                )
                for case in given
            ]
            overall[label] = summarize(found, sum(len(q.excluded) for q in given))
            results.extend(found)
    return EvalReport(overall, results)


def memo_questions(memo: Mapping[str, Any]) -> dict[str, EvalQuestion]:
    """The founding memo's mode table (`shared/eval/seed_modes.json`) as one pseudo-question per
    historical mode: the candidates that must (not) appear from the start node."""
    start = str(memo["start"])
    never = _triples(memo.get("never"), "never")

    def case(mode: str, include: str, exclude: str | None) -> EvalQuestion:
        excluded = _triples(memo.get(exclude), exclude) if exclude else ()
        return EvalQuestion(
            f"memo-{mode}", start, (start,), _triples(memo.get(include), include), excluded + never
        )

    return {
        "undirected2": case("undirected2", "undirected_2hop_must_include", None),
        "directed2": case("directed2", "directed_2hop_must_include", "directed_2hop_must_exclude"),
        "onehop": case("onehop", "onehop_both_must_include", "onehop_both_must_exclude"),
    }
