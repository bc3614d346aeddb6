"""The chosen answer: the options it offers, and the grammar that reaches an OpenAI-compatible
server which, like llama.cpp, refuses a reply outside it (the real langchain-openai client from
the real factory; only the model's words are scripted)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from storygraph.llm.factory import build_chat_model
from storygraph.llm.grammar import choice_grammar
from storygraph.models import Citation, ResolvedEntity
from storygraph.qa.generation.answer import UNKNOWN
from storygraph.qa.generation.answer_choice import CHOICE_MAX_TOKENS, ChoiceAnswerer, options
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.question_type import detect_question_type
from storygraph.qa.retrieval.context import Sources, small_sources
from storygraph.settings import Settings
from tests.helpers.scripted_logic import Script
from tests.helpers.scripted_openai_server import RunningServer, start_in_thread

NAMES = ["桃太郎", "鬼", "鬼の大将", "犬", "猿", "きじ", "old man", "man"]
SOURCES = [
    Citation(1, "d:0001", "d.txt", "桃太郎は鬼の大将を組みふせました。"),
    Citation(2, "d:0002", "d.txt", "犬が先に立って、猿ときじがついて来ました。"),
    Citation(3, "d:0003", "d.txt", "The old man went to the mountains."),
    Citation(4, "d:0004", "d.txt", "猿がいました。"),
    Citation(5, "d:0005", "d.txt", "きじが飛んで来ました。"),
]


def _read(citations: list[Citation]) -> Sources:
    """The sources as the small model's context gives them: all, and the first ones read."""
    return Sources(list(citations), small_sources(citations))


def _analysis(question: str, ids: list[str]) -> QuestionAnalysis:
    language = "ja" if not question.isascii() else "en"
    return QuestionAnalysis(
        question=question,
        language=language,
        entities=tuple(ResolvedEntity(i, i, "dictionary") for i in ids),
        qtype=detect_question_type(question, ids, language=language),
        stems=frozenset(),
        related=frozenset(),
        terms=(),
    )


def test_options_are_the_graph_names_the_shown_sources_hold_in_order() -> None:
    found = options(_analysis("桃太郎を組みふせたのは誰？", ["桃太郎"]), SOURCES[:4], NAMES)
    # 桃太郎 is the question's own; 鬼 and "man" occur only inside 鬼の大将 and "old man";
    # nothing from source 5 (the small model is shown four sources)
    assert found == ["鬼の大将", "犬", "猿", "きじ", "old man"]
    found = options(_analysis("Who went to the mountains?", []), SOURCES[2:3], ["man", "ma"])
    assert found == ["man"]  # a whole word; "ma" only inside one
    alone = [*SOURCES[:1], Citation(2, "d:0009", "d.txt", "鬼が来た。")]
    assert options(_analysis("誰？", []), alone, NAMES) == ["桃太郎", "鬼の大将", "鬼"]


@pytest.fixture
def server() -> Iterator[RunningServer]:
    script = Script(triples=(("鬼の大将", "Character", "DEFEATED_BY", "桃太郎", "Character"),))
    running = start_in_thread(script, llama_cpp=True)
    yield running
    running.stop()


def _chooser(server: RunningServer) -> ChoiceAnswerer:
    settings = Settings(_env_file=None, llm_provider="embedded", llm_max_retries=0)  # type: ignore[call-arg]
    llm = build_chat_model(settings, embedded_base_url=server.base_url)
    assert llm is not None
    return ChoiceAnswerer(llm, lambda: NAMES)


def test_the_grammar_holds_the_model_to_the_options_and_the_answer_cites_the_source(
    server: RunningServer,
) -> None:
    chooser = _chooser(server)
    analysis = _analysis("桃太郎が組みふせたのは誰？", ["桃太郎"])
    assert chooser.fits(analysis, _read(SOURCES))
    tokens: list[str] = []
    text = chooser.answer(analysis, [], _read(SOURCES), [], tokens.append)
    assert text == "鬼の大将 [1]" and tokens == [text]
    body = server.requests[-1]
    offered = options(analysis, SOURCES[:4], NAMES)
    assert body["grammar"] == choice_grammar([*offered, UNKNOWN["ja"]])
    assert body["max_tokens"] == CHOICE_MAX_TOKENS
    assert "Options: 鬼の大将 / 犬 / 猿 / きじ / old man" in str(body["messages"])


def test_the_do_not_say_option_is_the_fixed_reply(server: RunningServer) -> None:
    chooser = _chooser(server)
    # no scripted triple links any option to the question's names: the model "does not know"
    analysis = _analysis("猿と一緒にいたのは誰？", ["猿"])
    assert chooser.answer(analysis, [], _read(SOURCES), []) == UNKNOWN["ja"]


def test_only_name_questions_with_two_options_are_chosen(server: RunningServer) -> None:
    chooser = _chooser(server)
    assert not chooser.fits(_analysis("桃太郎は何をした？", ["桃太郎"]), _read(SOURCES))  # what
    assert not chooser.fits(_analysis("Who went to the mountains?", []), _read(SOURCES[2:3]))  # one
    assert chooser.fits(_analysis("鬼の大将はどこにいた？", ["鬼の大将"]), _read(SOURCES))  # where


def test_fits_and_answer_read_the_graphs_names_once_per_question(server: RunningServer) -> None:
    chooser = _chooser(server)
    reads: list[int] = []

    def names() -> list[str]:
        reads.append(1)
        return NAMES

    chooser.graph_names = names
    analysis = _analysis("桃太郎が組みふせたのは誰？", ["桃太郎"])
    assert chooser.fits(analysis, _read(SOURCES))
    assert chooser.answer(analysis, [], _read(SOURCES), []) == "鬼の大将 [1]"
    assert len(reads) == 1
    chooser.fits(_analysis("猿と一緒にいたのは誰？", ["猿"]), _read(SOURCES))  # another question
    assert len(reads) == 2
