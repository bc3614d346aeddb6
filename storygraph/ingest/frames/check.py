"""The model chooses and checks, never writes: constrained calls on parser-proposed facts.

Three narrow questions, each with an answer space fixed before the model speaks:

- `check_fact`: does this sentence say SUBJECT -[RELATION]-> OBJECT? One word, yes or no.
- `pick_relation_type`: which of the verb table's types (or NONE) does this predicate say?
- `pick_arguments`: which of this chunk's own entity names are the subject and the object?

On llama.cpp's server (the embedded model, `ModelInfo.provider == "embedded"`) the answer space
is enforced while decoding: a GBNF `grammar` (`root ::= "yes" | "no"`, or an alternation of the
type names) and, for arguments, `response_format {"type": "json_object", "schema": ...}` whose
`enum` lists the names (llama-cpp-python's server rejects OpenAI's `json_schema` form). Both go
in the request body through langchain-openai's `extra_body`, with `max_tokens` (llama.cpp reads
it from the body only). Other providers get a short `max_tokens` (and JSON mode for arguments)
and the reply is parsed; a reply outside the answer space is reported as unclear, never guessed.

Prompts live in `prompts/fact_check.txt`, `prompts/relation_pick.txt`, `prompts/argument_pick.txt`;
their fixed instructions come first so llama.cpp's prefix cache reuses them call after call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from storygraph.ingest.frames import ProposedFact
from storygraph.llm.factory import ModelInfo
from storygraph.llm.grammar import choice_grammar
from storygraph.prompt_files import fill
from storygraph.text.vocabulary import relation_types

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

YES_NO_GRAMMAR = 'root ::= "yes" | "no"'
NO_TYPE = "NONE"
"""The relation pick's answer when no listed type fits."""
CHECK_MAX_TOKENS = 3
ARGUMENTS_MAX_TOKENS = 96
_TYPE_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")


def arguments_schema(names: Sequence[str]) -> dict[str, Any]:
    """A JSON schema allowing only `names` (the chunk's own entities) as subject and object."""
    enum = list(dict.fromkeys(names))
    return {
        "type": "object",
        "properties": {
            "subject": {"type": "string", "enum": enum},
            "object": {"type": "string", "enum": enum},
        },
        "required": ["subject", "object"],
    }


def _constrained(
    llm: BaseChatModel,
    info: ModelInfo,
    *,
    max_tokens: int,
    grammar: str | None = None,
    schema: dict[str, Any] | None = None,
) -> Any:
    """The model bound to the answer space: in the body for llama.cpp, max_tokens elsewhere."""
    if info.grammar_constrained:
        body: dict[str, Any] = {"max_tokens": max_tokens}
        if grammar is not None:
            body["grammar"] = grammar
        if schema is not None:
            body["response_format"] = {"type": "json_object", "schema": schema}
        return llm.bind(extra_body=body)
    if schema is not None:
        return llm.bind(max_tokens=max_tokens, response_format={"type": "json_object"})
    return llm.bind(max_tokens=max_tokens)


def _ask(model: Any, prompt: str, callbacks: list[Any] | None) -> str:
    """The model's reply to one user message, as text. LangChain's message classes are
    imported here, on the first model call, not when the question path is imported."""
    from langchain_core.messages import HumanMessage

    return _reply_text(model.invoke([HumanMessage(prompt)], config={"callbacks": callbacks or []}))


def _reply_text(reply: Any) -> str:
    content = getattr(reply, "content", reply)
    if isinstance(content, list):
        content = "".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return str(content or "").strip()


def relation_words(rel_type: str) -> str:
    """DEFEATS → "defeats", BECOMES_COMPANION_OF → "becomes companion of"."""
    return rel_type.replace("_", " ").lower()


# --- yes / no ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    """The model's answer on one fact: "yes", "no", or "unclear" (a reply outside yes/no)."""

    fact: ProposedFact
    answer: str
    raw: str


def check_fact(
    fact: ProposedFact, llm: BaseChatModel, info: ModelInfo, callbacks: list[Any] | None = None
) -> Verdict:
    """Ask whether the fact's own sentence says it; one constrained word. Client errors raise."""
    prompt = fill(
        "fact_check",
        sentence=fact.sentence,
        subject=fact.subject,
        relation=relation_words(fact.relation or fact.predicate),
        object=fact.object,
    )
    model = _constrained(llm, info, max_tokens=CHECK_MAX_TOKENS, grammar=YES_NO_GRAMMAR)
    raw = _ask(model, prompt, callbacks)
    word = re.sub(r"[^a-z]", "", raw.lower().split()[0]) if raw.split() else ""
    answer = word if word in ("yes", "no") else "unclear"
    return Verdict(fact, answer, raw)


@dataclass
class CheckedFacts:
    """Facts after the check: kept (yes, or unclear: the model did not reject them) and dropped."""

    kept: list[ProposedFact] = field(default_factory=list)
    dropped: list[ProposedFact] = field(default_factory=list)
    unclear: list[ProposedFact] = field(default_factory=list)

    def describe(self) -> str:
        return (
            f"model check: {len(self.kept)} kept, {len(self.dropped)} rejected"
            + (f", {len(self.unclear)} unclear replies kept" if self.unclear else "")
        )


def check_facts(
    facts: Iterable[ProposedFact],
    llm: BaseChatModel,
    info: ModelInfo,
    callbacks: list[Any] | None = None,
) -> CheckedFacts:
    """Check each fact; a "no" drops it, an unclear reply keeps it and is counted apart."""
    result = CheckedFacts()
    for fact in facts:
        verdict = check_fact(fact, llm, info, callbacks)
        if verdict.answer == "no":
            result.dropped.append(fact)
            continue
        result.kept.append(fact)
        if verdict.answer == "unclear":
            result.unclear.append(fact)
    return result


# --- relation type -------------------------------------------------------------------------------
def pick_relation_type(
    fact: ProposedFact,
    types: Sequence[str],
    llm: BaseChatModel,
    info: ModelInfo,
    callbacks: list[Any] | None = None,
) -> str | None:
    """The listed type the fact's predicate says, or None (the model chose NONE or, outside
    llama.cpp, answered with something not listed). Client errors raise."""
    allowed = [t for t in dict.fromkeys(types) if _TYPE_NAME.match(t)]
    if not allowed:
        return None
    prompt = fill(
        "relation_pick",
        sentence=fact.sentence,
        subject=fact.subject,
        predicate=fact.predicate,
        object=fact.object,
        types="\n".join(f"- {t}" for t in allowed),
        none=NO_TYPE,
    )
    longest = max(len(t) for t in [*allowed, NO_TYPE])
    model = _constrained(
        llm, info, max_tokens=longest // 2 + 4, grammar=choice_grammar([*allowed, NO_TYPE])
    )
    raw = _ask(model, prompt, callbacks)
    word = raw.split()[0].strip("`'\".,") if raw.split() else ""
    by_upper = {t.upper(): t for t in allowed}
    return by_upper.get(word.upper())


@dataclass
class TypedFacts:
    """Facts after the relation pick: `facts` all typed (table or model), `picked` how many the
    model typed, `untyped` the facts for which it chose NONE (left out of `facts`)."""

    facts: list[ProposedFact] = field(default_factory=list)
    picked: int = 0
    untyped: list[ProposedFact] = field(default_factory=list)


def fill_relation_types(
    facts: Iterable[ProposedFact],
    llm: BaseChatModel,
    info: ModelInfo,
    types: Sequence[str] | None = None,
    callbacks: list[Any] | None = None,
) -> TypedFacts:
    """Type the facts the verb table could not (relation ""), by a constrained pick among
    `types` (default: every type of the table); facts already typed pass unchanged."""
    allowed = list(types) if types is not None else list(relation_types())
    result = TypedFacts()
    for fact in facts:
        if fact.relation:
            result.facts.append(fact)
            continue
        picked = pick_relation_type(fact, allowed, llm, info, callbacks)
        if picked is None:
            result.untyped.append(fact)
            continue
        result.facts.append(replace(fact, relation=picked))
        result.picked += 1
    return result


# --- arguments -----------------------------------------------------------------------------------
def pick_arguments(
    sentence: str,
    predicate: str,
    names: Sequence[str],
    llm: BaseChatModel,
    info: ModelInfo,
    callbacks: list[Any] | None = None,
) -> tuple[str, str] | None:
    """(subject, object) of `predicate` in `sentence`, both among `names`; None when the reply
    is not a JSON object naming two listed, different names. Client errors raise."""
    listed = list(dict.fromkeys(n for n in names if n))
    if len(listed) < 2:
        return None
    prompt = fill(
        "argument_pick",
        sentence=sentence,
        predicate=predicate,
        names="\n".join(f"- {n}" for n in listed),
    )
    model = _constrained(
        llm, info, max_tokens=ARGUMENTS_MAX_TOKENS, schema=arguments_schema(listed)
    )
    raw = _ask(model, prompt, callbacks)
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    subject, obj = data.get("subject"), data.get("object")
    if subject in listed and obj in listed and subject != obj:
        return str(subject), str(obj)
    return None
