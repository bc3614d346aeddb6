"""A small scripted "model": deterministic answers to the four requests StoryGraph makes.

It stands at the model boundary only. It reads the real prompts the pipeline sends and answers
in the real wire shapes (tool calls for structured output, text for the answer), so decoding,
chunking, LLMGraphTransformer's parsing, merging, Cypher and ranking all run for real.

- extraction (tool `DynamicGraph`): emits the scripted triples whose two names both occur in the
  chunk text, so what it returns depends on the text it is given;
- question entities (tools `QuestionEntities` / `QuestionAnalysis`): the scripted names that
  occur in the question, and the listed relation types its score rules tie to the question;
- rerank (tools `FactScores` / `SingleScore`): a score from keyword rules of the script;
- answer (no tool): the first listed fact, in words, with its citation marks;
- the Doctor's tool-calling probe (tool `DoctorProbe`): the animal named in the sentence;
- the verifier's self-check (no tool, recognised by its prompt): yes when the proposed answer's
  words stand in the sentences, else no;
- the frame checks of `storygraph.ingest.frames.check` (no tool, recognised by their prompts):
  yes/no
  from whether the asked fact is a scripted triple, the scripted type for a relation pick, the
  first scripted pair among the listed names for an argument pick.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Triple = tuple[str, str, str, str, str]  # source, source type, REL_TYPE, target, target type

MOMOTARO_JA: tuple[Triple, ...] = (
    ("おじいさん", "Character", "GOES_TO", "山", "Place"),
    ("おばあさん", "Character", "GOES_TO", "川", "Place"),
    ("おばあさん", "Character", "FINDS", "桃", "Object"),
    ("桃太郎", "Character", "BORN_FROM", "桃", "Object"),
    ("おじいさん", "Character", "RAISES", "桃太郎", "Character"),
    ("桃太郎", "Character", "GOES_TO", "鬼が島", "Place"),
    ("鬼", "Character", "LIVES_IN", "鬼が島", "Place"),
    ("おばあさん", "Character", "MAKES", "きびだんご", "Object"),
    ("桃太郎", "Character", "GIVES_DUMPLING_TO", "犬", "Animal"),
    ("犬", "Animal", "BECOMES_COMPANION_OF", "桃太郎", "Character"),
    ("猿", "Animal", "BECOMES_COMPANION_OF", "桃太郎", "Character"),
    ("きじ", "Animal", "BECOMES_COMPANION_OF", "桃太郎", "Character"),
    ("桃太郎", "Character", "DEFEATS", "鬼", "Character"),
    ("鬼", "Character", "OWNS", "宝物", "Object"),
)

MOMOTARO_EN: tuple[Triple, ...] = (
    ("old man", "Character", "GOES_TO", "mountains", "Place"),
    ("old woman", "Character", "FINDS", "peach", "Object"),
    ("Momotaro", "Character", "BORN_FROM", "peach", "Object"),
    ("Momotaro", "Character", "GOES_TO", "Island of the Ogres", "Place"),
    ("dog", "Animal", "FOLLOWS", "Momotaro", "Character"),
    ("monkey", "Animal", "FOLLOWS", "Momotaro", "Character"),
    ("pheasant", "Animal", "FOLLOWS", "Momotaro", "Character"),
    ("Momotaro", "Character", "DEFEATS", "ogres", "Character"),
)

DEFAULT_SCORE_RULES: tuple[tuple[str, str, float], ...] = (
    # (word in question, relation-type substring, score)
    ("仲間", "COMPANION", 9.0),
    ("companion", "FOLLOW", 9.0),
    ("倒", "DEFEAT", 9.0),
    ("defeat", "DEFEAT", 9.0),
    ("住", "LIVES", 9.0),
    ("どこ", "GOES_TO", 8.0),
)


@dataclass
class Script:
    triples: Sequence[Triple] = MOMOTARO_JA + MOMOTARO_EN
    score_rules: Sequence[tuple[str, str, float]] = DEFAULT_SCORE_RULES
    default_score: float = 3.0
    names: Sequence[str] = field(default_factory=tuple)
    translations: Mapping[str, str] = field(default_factory=dict)
    """Question → the model's translation of it (prompts/question_translation_*); a question
    not listed gets an empty reply."""

    def vocabulary(self) -> list[str]:
        found = {t[0] for t in self.triples} | {t[3] for t in self.triples} | set(self.names)
        return sorted(found, key=len, reverse=True)


def _tool_names(tools: Sequence[dict[str, Any]] | None) -> list[str]:
    names = []
    for tool in tools or []:
        fn = tool.get("function", tool)
        names.append(str(fn.get("name", "")))
    return names


def _input_text(prompt: str) -> str:
    marker = "following input:"
    return prompt.split(marker, 1)[1] if marker in prompt else prompt


def _occurs(name: str, text: str) -> bool:
    if re.fullmatch(r"[A-Za-z][A-Za-z ]*", name):
        return re.search(rf"\b{re.escape(name)}s?\b", text, flags=re.IGNORECASE) is not None
    return name in text


def extract(script: Script, text: str) -> dict[str, Any]:
    nodes: dict[str, str] = {}
    rels = []
    for source, s_type, rel, target, t_type in script.triples:
        if _occurs(source, text) and _occurs(target, text):
            nodes.setdefault(source, s_type)
            nodes.setdefault(target, t_type)
            rels.append(
                {
                    "source_node_id": source,
                    "source_node_type": s_type,
                    "type": rel,
                    "target_node_id": target,
                    "target_node_type": t_type,
                }
            )
    return {"nodes": [{"id": n, "type": t} for n, t in nodes.items()], "relationships": rels}


def question_names(script: Script, question: str) -> dict[str, Any]:
    found: list[str] = []
    for name in script.vocabulary():
        if _occurs(name, question) and not any(name in longer for longer in found):
            found.append(name)
    return {"names": found}


def analysis(script: Script, prompt: str) -> dict[str, Any]:
    """Names in the question, and the listed relation types the score rules tie to it."""
    question = _question(prompt)
    listed = re.findall(r"^- ([A-Za-z_][A-Za-z0-9_]*)$", prompt, flags=re.MULTILINE)
    picked = [
        t
        for t in listed
        if any(w.lower() in question.lower() and part in t for w, part, _ in script.score_rules)
    ]
    return {**question_names(script, question), "relation_types": picked}


def _question(prompt: str) -> str:
    """The last "Question:" line: the small model's prompt asks worked examples' ones first."""
    found = re.findall(r"Question:\s*(.+)", prompt)
    return found[-1].strip() if found else prompt


def score(script: Script, question: str, fact: str) -> float:
    for word, rel_part, value in script.score_rules:
        if word.lower() in question.lower() and rel_part in fact:
            return value
    return script.default_score


def scores(script: Script, prompt: str) -> dict[str, Any]:
    question = _question(prompt)
    facts = re.findall(r"^(\d+)\.\s+(.+)$", prompt, flags=re.MULTILINE)
    return {"scores": [{"index": int(i), "score": score(script, question, f)} for i, f in facts]}


def single_score(script: Script, prompt: str) -> dict[str, Any]:
    fact = re.search(r"Fact:\s*(.+)", prompt)
    return {"score": score(script, _question(prompt), fact.group(1) if fact else "")}


def _bigrams(text: str) -> set[str]:
    folded = re.sub(r"\W+", "", text.lower())
    return {folded[i : i + 2] for i in range(len(folded) - 1)}


def answer(prompt: str) -> str:
    """From the facts' lines (the capable model's prompt): the first fact in words. From the
    numbered sentences only (the small model's prompt): the sentence sharing the most character
    pairs with the question, cited."""
    facts = re.findall(
        r"^- (.+?) -\[(\w+)\]-> (.+?)((?: ?\[\d+\])*)\s*$", prompt, flags=re.MULTILINE
    )
    if not facts:
        asked_last = prompt.rsplit("Sentences:", 1)[-1]  # after the worked examples
        sources = re.findall(r"^\[(\d+)\] (.+)$", asked_last, flags=re.MULTILINE)
        if not sources:
            return "The graph does not say."
        asked = _bigrams(_question(prompt))
        number, text = max(sources, key=lambda s: len(asked & _bigrams(s[1])))
        return f"{text} [{number}]"
    start, rel, end, marks = facts[0]
    verb = rel.lower().replace("_", " ")
    if "(Japanese)" in prompt or "Reply in Japanese" in prompt:
        return f"{start}は{end}と「{verb}」の関係にあります。{marks.strip()}".strip()
    return f"{start} {verb} {end}. {marks.strip()}".strip()


def answer_choice(script: Script, prompt: str) -> str:
    """The first listed option that a scripted triple links to a name of the question; else
    the prompt's "do not say" reply."""
    question = _question(prompt)
    listed = re.search(r"^Options:\s*(.+)$", prompt, flags=re.MULTILINE)
    options = [o.strip() for o in listed.group(1).split(" / ")] if listed else []
    for option in options:
        for start, _, _, end, _ in script.triples:
            if (start == option and end in question) or (end == option and start in question):
                return option
    unknown = re.search(
        r"If the sentences do not say which option answers the question, "
        r"reply: (.+)$",
        prompt,
        flags=re.MULTILINE,
    )
    return unknown.group(1).strip() if unknown else ""


def _words(rel_type: str) -> str:
    return rel_type.replace("_", " ").lower()


def fact_check(script: Script, prompt: str) -> str:
    """yes when the asked "Fact: S relation O" is one of the script's triples, else no."""
    match = re.search(r"^Fact:\s*(.+)$", prompt, flags=re.MULTILINE)
    asked = match.group(1).strip() if match else ""
    known = {f"{s} {_words(rel)} {t}" for s, _, rel, t, _ in script.triples}
    return "yes" if asked in known else "no"


def _field(prompt: str, name: str) -> str:
    match = re.search(rf"^{name}:\s*(.+)$", prompt, flags=re.MULTILINE)
    return match.group(1).strip() if match else ""


def relation_pick(script: Script, prompt: str) -> str:
    """The script's type for the asked subject and object, if listed; else NONE."""
    listed = set(re.findall(r"^- ([A-Z][A-Z0-9_]*)$", prompt, flags=re.MULTILINE))
    subject, obj = _field(prompt, "Subject"), _field(prompt, "Object")
    for s, _, rel, t, _ in script.triples:
        if (s, t) == (subject, obj) and rel in listed:
            return rel
    return "NONE"


def argument_pick(script: Script, prompt: str) -> str:
    """The first script triple whose two ends are both listed names, as a JSON object."""
    names = set(re.findall(r"^- (.+)$", prompt, flags=re.MULTILINE))
    for s, _, _, t, _ in script.triples:
        if s in names and t in names:
            return json.dumps({"subject": s, "object": t}, ensure_ascii=False)
    return "{}"


def self_check(prompt: str) -> str:
    """The verifier's self-check (prompts/self_check.txt): yes when every word of the proposed
    answer (its final stop left out) stands in the sentences, else no."""
    sentences = prompt.rsplit("Sentences:", 1)[-1].split("\nQuestion:", 1)[0]
    proposed = _field(prompt, "Proposed answer").rstrip("。.")
    words = proposed.split() if " " in proposed else [proposed]
    return "yes" if proposed and all(w in sentences for w in words) else "no"


def respond(script: Script, prompt: str, tools: Sequence[dict[str, Any]] | None) -> dict[str, Any]:
    """The reply to one request: {"tool": name, "args": {...}} or {"content": text}."""
    names = _tool_names(tools)
    if not names and "Proposed answer:" in prompt:
        return {"content": self_check(prompt)}
    if not names and "Answer with one word: yes or no." in prompt:
        return {"content": fact_check(script, prompt)}
    if not names and "choosing from a fixed list of relation types" in prompt:
        return {"content": relation_pick(script, prompt)}
    if not names and "Give the subject (the one who acts)" in prompt:
        return {"content": argument_pick(script, prompt)}
    if not names and "reply with that option exactly" in prompt:
        return {"content": answer_choice(script, prompt)}
    if not names and "Translate the question about a story into" in prompt:
        return {"content": script.translations.get(_question(prompt), "")}
    if "DynamicGraph" in names:
        return {"tool": "DynamicGraph", "args": extract(script, _input_text(prompt))}
    if "QuestionAnalysis" in names:
        return {"tool": "QuestionAnalysis", "args": analysis(script, prompt)}
    if "QuestionEntities" in names:
        return {"tool": "QuestionEntities", "args": question_names(script, _question(prompt))}
    if "FactScores" in names:
        return {"tool": "FactScores", "args": scores(script, prompt)}
    if "SingleScore" in names:
        return {"tool": "SingleScore", "args": single_score(script, prompt)}
    if "DoctorProbe" in names:  # the Doctor's tool-calling check: name the animal
        animal = next((a for a in ("dog", "monkey", "pheasant") if a in prompt.lower()), "")
        return {"tool": "DoctorProbe", "args": {"animal": animal}}
    if names:
        return {"tool": names[0], "args": {}}
    return {"content": answer(prompt)}


def as_json(reply: dict[str, Any]) -> str:
    return json.dumps(reply, ensure_ascii=False)
