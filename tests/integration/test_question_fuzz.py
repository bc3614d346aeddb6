"""No question hangs (issue 39): a few hundred generated questions, asked through the engine the
embedded default gets (the small model's parts, the parser's question structure and frames in
the support check) over a real embedded store holding a small Japanese and a small English
story read by the parser. The model is scripted at its boundary. Every question gets an answer
and none runs past the answer's deadline (storygraph.qa.pipeline.deadline).

The questions are random mixes of the stories' words and names, particles, question words,
punctuation (、。？！?!「」), several sentences, both languages, near-empty strings and very long
ones, drawn from `random.Random(SEED)`: the same questions on every run."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

import pytest

from storygraph.ingest.frames.extractor import ParserExtractor
from storygraph.llm.factory import ModelInfo
from storygraph.qa.pipeline.deadline import TOO_LONG
from storygraph.qa.pipeline.engine import QAEngine
from storygraph.qa.pipeline.factory import build_engine
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.services import (
    Services,
    build_services,
    question_structure,
    sentence_frames,
)
from storygraph.settings import Settings
from tests.helpers.scripted_model import ScriptedChatModel

SEED = 39
QUESTIONS = 220
SMALL = ModelInfo("embedded", "scripted-small", capable=False)
STORIES = {
    "ja": ("ja/momotaro_kusuyama.txt", 1400),
    "en": ("en/aesop__the_hare_and_the_tortoise.txt", 1200),
}
"""Each story's file under ../shared/stories, and how many of its first characters are kept."""

PARTICLES = ["は", "が", "を", "に", "へ", "と", "の", "から", "で", "も", "って", "たら", "のは"]
ASKING_JA = ["誰", "だれ", "何", "なに", "何か", "どこ", "いつ", "どう", "どんな", "何者"]
ASKING_EN = ["who", "what", "where", "when", "why", "whom", "how", "which"]
PUNCTUATION = ["、", "。", "？", "！", "?", "!", "「", "」", "…", " "]
ODD = ["", " ", "？", "?", "。", "「」", "！？", "。。。", "\n", "誰", "who", "何か。", "誰？誰？"]


@pytest.fixture(scope="module")
def store_engine(
    tmp_path_factory: pytest.TempPathFactory, shared_dir: Path
) -> Iterator[tuple[Services, QAEngine, dict[str, list[str]]]]:
    """The store with both stories (parser, no model), the small model's engine over it with the
    parser's readers as the app gets them, and each language's words to draw from."""
    data = tmp_path_factory.mktemp("fuzz") / "data"
    settings = Settings(_env_file=None, data_dir=data, no_llm=True)  # type: ignore[call-arg]
    services = build_services(settings, extractor=ParserExtractor())
    words: dict[str, list[str]] = {}
    for language, (path, size) in STORIES.items():
        text = (shared_dir / "stories" / path).read_text(encoding="utf-8")[:size]
        report = services.ingestor().ingest_bytes(Path(path).name, text.encode("utf-8"))
        assert report.status == "added", report.message
        words[language] = _words(text, language)
    names = [str(row["id"]) for row in services.store.entity_names()]
    assert names
    for name in names:
        words["ja" if re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", name) else "en"].append(name)
    # The parser's readers as services.qa() hands them over, the sources' frames and clauses
    # read once per sentence: the two stories' few sentences come back in every answer (and a
    # checker built for a question's scope reads them again). Each question's own structure,
    # where the walk hung, is read every time.
    engine = build_engine(
        services.store,
        ScriptedChatModel(),
        SMALL,
        embedder=None,
        frames=lru_cache(maxsize=None)(sentence_frames),
        questions=question_structure,
    )
    yield services, engine, words
    services.close()


def _words(text: str, language: str) -> list[str]:
    if language == "ja":  # runs of one script: 桃, おばあさん, ドンブラコッコ
        found = re.findall(r"[\u4e00-\u9fff々]+|[\u3041-\u309f]+|[\u30a0-\u30ff]+", text)
    else:
        found = re.findall(r"[A-Za-z']+", text)
    return sorted(set(found))


def _sentence(rng: random.Random, words: dict[str, list[str]], language: str) -> str:
    """One random sentence: the language's words, particles and question words, punctuated."""
    pool = words[language] + (PARTICLES + ASKING_JA if language == "ja" else ASKING_EN)
    if rng.random() < 0.2:  # now and then a word of the other language
        pool = pool + words["en" if language == "ja" else "ja"][:40]
    chosen = [rng.choice(pool) for _ in range(rng.randint(1, 12))]
    inner = [w + (rng.choice(PUNCTUATION) if rng.random() < 0.15 else "") for w in chosen]
    glue = "" if language == "ja" else " "
    return glue.join(inner) + rng.choice(["？", "?", "。", "！", "!", "", "」"])


def _shaped(rng: random.Random, words: dict[str, list[str]]) -> str:
    """A question shaped as the ones that hung: a subordinate clause, 何か before the asked
    part, a question word in a later sentence."""
    a, b, c = (rng.choice(words["ja"]) for _ in range(3))
    shapes = [
        f"{a}が{b}に何か言った後、{c}を連れて行ったのは誰？",
        f"{a}は何か。{b}を見つけたのは誰？",
        f"{a}が何かを{b}たとき、{c}と一緒に帰ったのは誰ですか？",
        f"{a}。{b}。{c}は誰？",
        f"「{a}」と言って{b}から何か{c}のは、だれ？何？",
    ]
    return rng.choice(shapes)


def questions(words: dict[str, list[str]]) -> list[str]:
    rng = random.Random(SEED)
    made = list(ODD)
    for language in ("ja", "en", "ja", "en"):  # very long: a few thousand characters
        made.append("".join(_sentence(rng, words, language) for _ in range(rng.randint(60, 90))))
    while len(made) < QUESTIONS:
        if rng.random() < 0.1:
            made.append(_shaped(rng, words))
        else:
            language = rng.choice(["ja", "ja", "en"])
            count = rng.choice([1, 1, 1, 2, 3, 4])
            made.append("".join(_sentence(rng, words, language) for _ in range(count)))
    return made


@pytest.mark.timeout(600)  # a question that never returns fails here, not at the suite's 900 s
def test_every_generated_question_gets_an_answer_within_the_deadline(
    store_engine: tuple[Services, QAEngine, dict[str, list[str]]],
) -> None:
    _, engine, words = store_engine
    asked = questions(words)
    assert len(asked) >= 200 and len(set(asked)) > 200
    assert any(len(q) > 2000 for q in asked) and any("何か" in q for q in asked)
    options = QAOptions()  # the app's default deadline
    late = TOO_LONG.format(seconds=options.deadline_s)
    for question in asked:
        answer = engine.ask(question, options)
        assert answer.answer.strip(), question
        assert late not in answer.warnings, question
        assert "deadline" not in [s.name for s in answer.steps], question
