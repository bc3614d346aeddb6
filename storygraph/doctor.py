"""`python -m storygraph doctor`: is the setup able to build a graph, and if not, why not?

Checks in order, each `ok` / `warn` / `fail` / `skip` with a detail and what to change:
settings, Japanese readings (the Sudachi dictionary), sentence embeddings (the encoder's
package), graph store, model reachable (for the embedded model: installed, verified, server
starts), structured output (tool calling, else JSON), context size, thinking mode, and finally
one real extraction of a short paragraph with the extractor ingest would use. When that
extraction would leave the graph empty, the last check says why (model error, no tool call,
unreadable reply, empty lists) and what to change. When it returns relations, they are checked
for plausibility (`implausible_relations`: a place as the subject of a violent verb, a name that
is not in the paragraph); any such relation makes the check a warning about a weak model, not a
pass. Secrets are never shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from pydantic import BaseModel, Field

from storygraph.errors import StoreError, StoryGraphError, error_text
from storygraph.llm.factory import ModelInfo, build_chat_model, model_info
from storygraph.models import Chunk, ExtractedRelation
from storygraph.prompt_files import load_prompt
from storygraph.qa.retrieval.type_priors import PLACE_TYPES
from storygraph.settings import Settings
from storygraph.text.normalize import normalize_name

Status = Literal["ok", "warn", "fail", "skip"]
SAMPLE_JA = (
    "むかし、むかし、あるところに、おじいさんとおばあさんがありました。"
    "桃太郎は犬と猿ときじを家来にして、鬼が島へ鬼を退治しに行きました。"
)
THINK = re.compile(r"<think>|</think>", re.IGNORECASE)
BIGGER_MODEL = (
    "Use a bigger model: set OPENAI_BASE_URL to a vLLM / Ollama / LM Studio server (or "
    "OPENAI_API_KEY), see .env.example."
)
_MARK = {"ok": "✓", "warn": "!", "fail": "✗", "skip": "-"}
VIOLENT_VERBS = frozenset(
    {
        "ATTACK", "ATTACKS", "BEAT", "BEATS", "CONQUER", "CONQUERS", "DEFEAT", "DEFEATS",
        "DESTROY", "DESTROYS", "EXTERMINATE", "EXTERMINATES", "FIGHT", "FIGHTS", "HIT", "HITS",
        "KILL", "KILLS", "MURDER", "MURDERS", "PUNISH", "PUNISHES", "SLAY", "SLAYS",
        "STAB", "STABS", "SUBDUE", "SUBDUES", "BITE", "BITES",
    }
)  # fmt: skip
"""Relation-type words that need an acting being as their subject: a place cannot do them."""


@dataclass
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


@dataclass
class DoctorReport:
    model: str
    checks: list[Check] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return bool(self.checks) and all(c.status != "fail" for c in self.checks)

    def add(self, name: str, status: Status, detail: str, fix: str = "") -> Check:
        check = Check(name, status, detail, fix)
        self.checks.append(check)
        return check

    def check(self, name: str) -> Check | None:
        return next((c for c in self.checks if c.name == name), None)

    def render(self) -> str:
        lines = [f"StoryGraph doctor · model: {self.model or 'none'}", ""]
        for c in self.checks:
            lines.append(f"[{_MARK[c.status]}] {c.name}: {c.detail}")
            if c.fix and c.status != "ok":
                lines.append(f"    → {c.fix}")
        if not self.healthy:
            verdict = "NOT healthy: fix the ✗ items above"
        elif any(c.status == "warn" for c in self.checks):
            verdict = "works, with warnings: read the ! items above"
        else:
            verdict = "healthy"
        lines += ["", f"Result: {verdict}"]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "healthy": self.healthy,
            "model": self.model,
            "checks": [asdict(c) for c in self.checks],
        }


class DoctorProbe(BaseModel):
    """Tiny schema for the tool-calling check."""

    animal: str = Field(description="the animal named in the sentence")


class _Replies(BaseCallbackHandler):
    """Keeps the raw messages the model returned, to explain an empty extraction."""

    def __init__(self) -> None:
        self.messages: list[Any] = []

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        for generations in response.generations:
            for generation in generations:
                self.messages.append(getattr(generation, "message", None))


def _content(message: Any) -> str:
    content = getattr(message, "content", "")
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


# --- individual checks -----------------------------------------------------------------------
def check_settings(report: DoctorReport, settings: Settings, info: ModelInfo) -> None:
    keys = [
        name
        for name, value in (
            ("OPENAI_API_KEY", settings.openai_api_key),
            ("AZURE_OPENAI_API_KEY", settings.azure_openai_api_key),
        )
        if value is not None and value.get_secret_value()
    ]
    store = "Neo4j" if settings.uses_neo4j else "embedded FalkorDB"
    detail = (
        f"provider {info.provider} ({info.model or 'no model'}), store {store}, data dir "
        f"{settings.data_dir}, chunk size {settings.effective_chunk_size()} chars"
    )
    if settings.openai_base_url:
        detail += f", OPENAI_BASE_URL {settings.openai_base_url}"
    detail += f"; keys set: {', '.join(keys) if keys else 'none'}"
    if info.provider == "none":
        report.add(
            "settings",
            "warn",
            detail + "; no-LLM mode: ingest cannot extract a graph",
            "Unset STORYGRAPH_NO_LLM / STORYGRAPH_LLM_PROVIDER=none to use a model.",
        )
    else:
        report.add("settings", "ok", detail)


def check_readings(report: DoctorReport) -> None:
    """The Sudachi dictionary gives kanji names their readings, which enter the merge keys
    (雉 = きじ) and the ASCII names of Japanese relation types. Without it a graph still builds,
    but another machine with it builds a different one from the same stories."""
    from storygraph.text.normalize import sudachi_problem

    problem = sudachi_problem()
    if not problem:
        report.add("japanese readings", "ok", "Sudachi and its core dictionary load")
        return
    report.add(
        "japanese readings",
        "fail",
        f"Sudachi or its core dictionary does not load ({problem}): kanji names get no "
        "readings, so names like 雉 / きじ stay apart and Japanese relation types get other "
        "names; this machine builds a different graph from the same stories than one with it",
        "Install the pinned SudachiPy and sudachidict-core (pip install -r requirements.txt).",
    )


def check_embeddings(report: DoctorReport) -> None:
    """The sentence encoder matches a question's words to names by meaning and re-ranks the
    sentences sentence search finds. Without it questions still get answers, from spelling,
    readings and word counts alone (a named fallback: storygraph.text.embeddings)."""
    from storygraph.text.embeddings import PACKAGE, embedder_problem

    problem = embedder_problem()
    if not problem:
        report.add("sentence embeddings", "ok", f"{PACKAGE} loads")
        return
    report.add(
        "sentence embeddings",
        "warn",
        f"{problem}: names are matched by spelling and reading only and sentence search ranks "
        "by words (BM25) only, so questions worded unlike the story find less",
        f"Install the pinned {PACKAGE} (pip install -r requirements.txt).",
    )


def check_store(report: DoctorReport, settings: Settings) -> None:
    from storygraph.services import open_store

    try:
        store = open_store(settings)
    except Exception as exc:  # noqa: BLE001 - any failure is the finding
        fix = (
            "Check NEO4J_URI / NEO4J_USERNAME / NEO4J_PASSWORD and that Neo4j is running."
            if settings.uses_neo4j
            else f"Check that {settings.data_dir} is writable and not used by another version."
        )
        if isinstance(exc, StoreError) and exc.hint:  # its own next step (a crashed server's)
            fix = exc.hint
        report.add("graph store", "fail", f"cannot open the store: {error_text(exc)}", fix)
        return
    try:
        documents = len(store.list_documents())
        report.add("graph store", "ok", f"{store.describe()} reachable, {documents} document(s)")
    except Exception as exc:  # noqa: BLE001
        report.add("graph store", "fail", f"store opened but a query failed: {error_text(exc)}")
    finally:
        store.close()


LOG_TAIL_MARK = "; last lines of its log:\n"


def check_crashes(report: DoctorReport, settings: Settings) -> None:
    """The helper processes' crashes in a row (storygraph.crashes): one restarted is a warning,
    two (not restarted again) a failure, each with how it ended, its log's tail and the fix."""
    from storygraph.crashes import HELPER_NAMES, MAX_RESTARTS_IN_A_ROW, CrashLedger

    for helper in HELPER_NAMES:
        crashes = CrashLedger(settings.data_dir, helper).in_a_row()
        if not crashes:
            continue
        last = crashes[-1]
        stopped = len(crashes) > MAX_RESTARTS_IN_A_ROW
        detail = f"{last.sentence} ({len(crashes)} in a row; " + (
            "not restarted again)" if stopped else "restarted once)"
        )
        if last.log_tail:
            detail += LOG_TAIL_MARK + last.log_tail
        report.add(f"{helper} crashes", "fail" if stopped else "warn", detail, _crash_fix(helper))


def _crash_fix(helper: str) -> str:
    again = "then `python -m storygraph doctor --clear-crashes` lets it start again."
    if helper == "model":
        from storygraph.llm.cpu_features import cpu_flags, has_amx
        from storygraph.llm.install import build_unsafe_here

        if has_amx(cpu_flags()) and build_unsafe_here():
            return (
                "This CPU has AMX and the installed llama.cpp uses it, which crashes at the "
                "first answer (llama.cpp issue 20824): `make model` rebuilds it without AMX "
                "and clears the crashes."
            )
        return (
            "Read the log lines above (out of memory: lower STORYGRAPH_EMBEDDED_CTX; a build "
            "for another processor: `make model`), " + again
        )
    return "Read the log lines above and fix what they name, " + again


def _embedded_llm(report: DoctorReport, settings: Settings) -> tuple[BaseChatModel | None, Any]:
    """Installed? verified? server starts? Returns (model, server). The caller holds the server
    until its checks are done: holding it holds its users lock, so another process that
    started it and exits meanwhile leaves it running (docs/ISSUES.md#model-server-lifecycle)."""
    from storygraph.llm.model_files import MODEL_SHA256, MODEL_SIZE, is_verified, model_path

    install = "Run `make model` (or `python -m storygraph.llm.install`)."
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        report.add("model reachable", "fail", "llama-cpp-python is not installed", install)
        return None, None
    path = model_path(settings)
    if not path.exists():
        report.add("model reachable", "fail", f"the model file is missing at {path}", install)
        return None, None
    if not is_verified(path, MODEL_SIZE, MODEL_SHA256):
        report.add(
            "model reachable",
            "fail",
            f"the model file at {path} is not verified (size or checksum differs)",
            f"Delete it and run `make model` again. {install}",
        )
        return None, None
    from storygraph.llm.embedded_server import EmbeddedServer

    server = EmbeddedServer(settings)
    try:
        url = server.start()
    except StoryGraphError as exc:
        report.add(
            "model reachable",
            "fail",
            f"the llama.cpp server did not start: {error_text(exc)}",
            f"See {server.log_path}; try fewer STORYGRAPH_EMBEDDED_THREADS or a smaller "
            "STORYGRAPH_EMBEDDED_CTX if memory is short.",
        )
        return None, None
    report.add("model reachable", "ok", f"{path.name} verified; llama.cpp server at {url}")
    return build_chat_model(settings, embedded_base_url=url, embedded_server=server), server


def check_reply(report: DoctorReport, llm: BaseChatModel) -> bool:
    """A tiny call; also looks for a thinking mode. False when the model is unreachable."""
    try:
        reply = llm.invoke([HumanMessage(load_prompt("doctor_reply"))])
    except Exception as exc:  # noqa: BLE001
        from storygraph.ingest.llm_extraction import model_failure

        failure = model_failure(exc, 1)
        report.add(
            "model answers",
            "fail",
            f"the model call failed: {error_text(exc)}",
            failure.hint.split(";")[0],
        )
        return False
    text = _content(reply)
    reasoning = (getattr(reply, "additional_kwargs", None) or {}).get("reasoning_content")
    report.add("model answers", "ok", f"replied {text.strip()[:40]!r}")
    thinking_fix = (
        "Turn thinking off (Qwen3: add /no_think or serve with enable_thinking=false; vLLM: "
        "--reasoning-parser; Ollama: think=false) or use a non-thinking model."
    )
    if THINK.search(text):
        report.add("thinking mode", "fail", "the reply contains <think> reasoning", thinking_fix)
    elif not text.strip() and reasoning:
        report.add("thinking mode", "fail", "the reply is reasoning only, no answer", thinking_fix)
    elif not text.strip():
        report.add("thinking mode", "warn", "the reply was empty", thinking_fix)
    else:
        report.add("thinking mode", "ok", "answers directly, no <think> block")
    return True


def check_structured_output(report: DoctorReport, llm: BaseChatModel) -> None:
    question = [HumanMessage(load_prompt("doctor_tool_probe"))]
    try:
        parsed = llm.with_structured_output(DoctorProbe, method="function_calling").invoke(question)
        if isinstance(parsed, DoctorProbe) and parsed.animal.strip():
            report.add(
                "tool calling", "ok", f"named function call works (animal={parsed.animal!r})"
            )
            return
        problem = f"the reply held no usable tool call ({parsed!r})"[:200]
    except Exception as exc:  # noqa: BLE001
        problem = f"function calling failed: {error_text(exc)}"
    try:
        reply = llm.invoke([*question, HumanMessage(load_prompt("doctor_json_probe"))])
        data = json.loads(_content(reply).strip().strip("`").removeprefix("json").strip())
        json_ok = isinstance(data, dict) and bool(data.get("animal"))
    except Exception:  # noqa: BLE001
        json_ok = False
    fix = (
        "Extraction with LLMGraphTransformer needs named function calling: serve the model "
        "with tool calling on (vLLM: --enable-auto-tool-choice --tool-call-parser <parser>; "
        "Ollama / LM Studio: a model whose template supports tools). " + BIGGER_MODEL
    )
    if json_ok:
        report.add("tool calling", "warn", f"{problem}; plain JSON replies work", fix)
    else:
        report.add("tool calling", "fail", f"{problem}; JSON replies do not parse either", fix)


def check_context(report: DoctorReport, settings: Settings, info: ModelInfo) -> None:
    size = settings.effective_chunk_size()
    if info.provider != "embedded":
        report.add(
            "context size",
            "skip",
            f"not known for a remote model; chunks are {size} chars (about {size} tokens at most)",
        )
        return
    from storygraph.ingest.triple_lines import triple_prompt

    prompt = triple_prompt("ja")
    fixed = len(prompt.instructions) + len(prompt.example_text) + len(prompt.example_triples)
    # Japanese runs about one token per character with this tokenizer, English fewer; the
    # reply is capped by SmallModelExtractor's max_tokens (256). Overlap adds < size / 2.
    needed = fixed + size + size // 2 + 256 + 64
    detail = f"STORYGRAPH_EMBEDDED_CTX={settings.embedded_ctx} tokens; an extraction call needs "
    detail += f"about {needed} (prompt {fixed}, chunk {size} chars, reply 256)"
    if needed > settings.embedded_ctx:
        report.add(
            "context size",
            "fail",
            detail,
            "Raise STORYGRAPH_EMBEDDED_CTX or lower STORYGRAPH_CHUNK_SIZE.",
        )
    else:
        report.add("context size", "ok", detail)


def _why_empty(replies: list[Any]) -> tuple[str, str]:
    if not replies:
        return "the model returned nothing", "Check the model server's log."
    last = replies[-1]
    text = _content(last).strip()
    tool_calls = getattr(last, "tool_calls", None) or []
    if THINK.search(text):
        return "the reply was thinking text", "Turn the model's thinking mode off."
    if tool_calls:
        args = tool_calls[0].get("args", {})
        if not any(args.get(k) for k in ("nodes", "relationships")):
            return "the tool call held empty lists", BIGGER_MODEL
        return f"the tool call did not parse ({str(args)[:120]})", BIGGER_MODEL
    if not text:
        return "the reply was empty", BIGGER_MODEL
    return f"no tool call, the reply was text: {text[:120]!r}", BIGGER_MODEL


PLACE_VERBS = frozenset({"GOES_TO", "LIVES_IN", "TRAVELS_TO", "ARRIVES_AT", "RETURNS_TO"})
"""Relation types whose object is a place: their target counts as a place for the check below."""


def _places(relations: Sequence[ExtractedRelation], types: Mapping[str, str]) -> set[str]:
    """Names the extraction itself marks as places: by their type anywhere in it, or as the
    target of a relation such as GOES_TO (the small model often leaves types out)."""
    places = {name for name, kind in types.items() if kind.lower() in PLACE_TYPES}
    for r in relations:
        for name, kind in ((r.source, r.source_type), (r.target, r.target_type)):
            if kind.lower() in PLACE_TYPES:
                places.add(name)
        if r.type.upper() in PLACE_VERBS:
            places.add(r.target)
    return places


def implausible_relations(
    relations: Sequence[ExtractedRelation], text: str, types: Mapping[str, str] | None = None
) -> list[str]:
    """Why each implausible relation is implausible (empty: none is): a place (by its type, or
    as the target of GOES_TO and the like, in this extraction) as the subject of a violent verb,
    or a subject / object that does not occur in `text`. `types`: entity name → type."""
    seen = normalize_name(text)
    places = _places(relations, types or {})
    problems: list[str] = []
    for r in relations:
        shown = f"{r.source} -[{r.type}]→ {r.target}"
        words = set(r.type.upper().split("_"))
        if r.source in places and words & VIOLENT_VERBS:
            problems.append(f"{shown}: a place ({r.source}) as the subject of {r.type}")
            continue
        absent = [n for n in (r.source, r.target) if normalize_name(n) not in seen]
        if absent:
            problems.append(f"{shown}: {', '.join(absent)} is not in the sentence")
    return problems


def check_extraction(
    report: DoctorReport, settings: Settings, info: ModelInfo, llm: BaseChatModel
) -> None:
    from storygraph.services import Services

    language = "ja"
    text = SAMPLE_JA
    chunk = Chunk("doctor:0", "doctor", 0, text, 0, len(text))
    extractor = Services(settings=settings, store=None, info=info, llm_override=llm).extractor()  # type: ignore[arg-type]
    replies = _Replies()
    try:
        result = extractor.extract(chunk, language, [replies])
    except StoryGraphError as exc:
        report.add(
            "extraction",
            "fail",
            f"{extractor.name} on a 桃太郎 paragraph failed: {exc}",
            getattr(exc, "hint", "") or BIGGER_MODEL,
        )
        return
    facts = [f"{r.source}-{r.type}->{r.target}" for r in result.relations]
    if facts:
        shown = ", ".join(facts[:4]) + (" …" if len(facts) > 4 else "")
        types = {e.name: e.type for e in result.entities}
        problems = implausible_relations(result.relations, text, types)
        if problems:
            report.add(
                "extraction",
                "warn",
                f"{extractor.name}: {len(problems)} of {len(facts)} relation(s) from 2 "
                f"sentences are implausible, so this model is weak at extraction: "
                + "; ".join(problems[:3]),
                BIGGER_MODEL + " Expect wrong facts in the graph with this model.",
            )
            return
        report.add(
            "extraction",
            "ok",
            f"{extractor.name}: {len(facts)} relation(s) from 2 sentences, all plausible: {shown}",
        )
        return
    why, fix = _why_empty(replies.messages)
    if result.entities:
        why = f"{len(result.entities)} entities but no relations ({why})"
    report.add(
        "extraction",
        "fail",
        f"{extractor.name} would leave the graph empty: {why}",
        fix + " Smaller STORYGRAPH_CHUNK_SIZE can help a small model.",
    )


# --- the whole run ---------------------------------------------------------------------------
def run_doctor(
    settings: Settings,
    *,
    llm: BaseChatModel | None = None,
    info: ModelInfo | None = None,
    check_store_fn: Callable[[DoctorReport, Settings], None] = check_store,
) -> DoctorReport:
    """Run every check. `llm` / `info` inject a model (tests); otherwise the configured one."""
    info = info or (
        ModelInfo("scripted", type(llm).__name__, capable=True) if llm else model_info(settings)
    )
    report = DoctorReport(model=info.label)
    check_settings(report, settings, info)
    check_readings(report)
    check_embeddings(report)
    check_store_fn(report, settings)
    check_crashes(report, settings)
    if info.provider == "none":
        report.add("model reachable", "skip", "no-LLM mode: questions use graph facts only")
        return report
    server = None
    try:
        if llm is None:
            if info.provider == "embedded":
                llm, server = _embedded_llm(report, settings)
            else:
                try:
                    llm = build_chat_model(settings)
                except StoryGraphError as exc:
                    report.add("model reachable", "fail", str(exc), exc.hint)
        if llm is None:
            return report
        if check_reply(report, llm):
            check_structured_output(report, llm)
            check_context(report, settings, info)
            check_extraction(report, settings, info, llm)
    finally:
        if server is not None:
            # Stops a server started here that nobody else uses; a reused one is left running.
            server.stop_if_started_here()
    return report
