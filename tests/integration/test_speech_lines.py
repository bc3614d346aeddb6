"""Who said what (issue #41 item 3) on the real embedded FalkorDB: two made-up stories (ja and
en) ingested by the parser, no model; their lines stored as SAYS facts with the quote's
sentence; the engine, with the model faked at the model boundary, answers what one character
said to another citing that sentence; the support check confirms the line's words, refuses
another speaker's line, and the entity page lists a character's lines."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from storygraph.ingest.frames.extractor import ParserExtractor
from storygraph.library.entity_pages import EntityPages
from storygraph.llm.factory import ModelInfo
from storygraph.models import Answer
from storygraph.qa.pipeline.engine import QAOptions
from storygraph.qa.pipeline.factory import build_engine
from storygraph.qa.scope.per_story import story_head
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from storygraph.store.reading import reading_for
from tests.helpers import scripted_logic
from tests.helpers.scripted_model import ScriptedChatModel

JA = """狐と熊

ある日、狐が森で熊に会いました。
「熊さん、どこへ行くのですか。」と狐が熊にたずねました。
熊は「山へはちみつを取りに行くのです。」と答えました。

＊

夕方、狐は川のそばで兎に会いました。
兎は狐に「明日はいっしょに遊ぼう。」と言いました。
"""
EN = """The Fox and the Bear

One morning the Fox met the Bear in the forest. "Where are you going?" asked the Fox.
"I am going to the hill for honey," the Bear replied.

* * *

In the evening the Fox met the Rabbit by the river.
The Rabbit said to the Fox, "Let us play tomorrow."

* * *

At night the Owl sat in the old oak. "The river is rising!" cried the Owl.
"""
SMALL = ModelInfo("embedded", "scripted-small", capable=False)
EN_HEAD = story_head("fox_en.txt", japanese=False)


@pytest.fixture(scope="module")
def told(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    data = tmp_path_factory.mktemp("speech") / "data"
    settings = Settings(_env_file=None, data_dir=data, no_llm=True)  # type: ignore[call-arg]
    built = build_services(settings, extractor=ParserExtractor())
    for name, text in (("fox_ja.txt", JA), ("fox_en.txt", EN)):
        report = built.ingestor().ingest_bytes(name, text.encode("utf-8"))
        assert report.status == "added", report.message
    yield built
    built.close()


def _says(services: Services) -> dict[tuple[str, str], list[str]]:
    rels = services.store.export_graph()["relationships"]
    return {(r["source"], r["target"]): r["evidence"] for r in rels if r["type"] == "SAYS"}


def _ask(services: Services, question: str, reply: str) -> Answer:
    """The engine with the small model faked: its written answer is `reply`."""
    model = ScriptedChatModel(
        script=scripted_logic.Script(triples=()), faults={"answer": f"text:{reply}"}
    )
    engine = build_engine(services.store, model, SMALL, embedder=None)
    return engine.ask(question, QAOptions(verify="label"))


def test_lines_are_stored_as_says_facts_with_the_quote_s_sentence(told: Services) -> None:
    says = _says(told)
    assert says[("兎", "狐")] == ["兎は狐に「明日はいっしょに遊ぼう。」と言いました。"]
    assert says[("狐", "熊")] == ["「熊さん、どこへ行くのですか。」と狐が熊にたずねました。"]
    assert says[("熊", "狐")] == ["熊は「山へはちみつを取りに行くのです。」と答えました。"]
    assert says[("Rabbit", "Fox")] == ['The Rabbit said to the Fox, "Let us play tomorrow."']
    assert says[("Fox", "Bear")] == ['"Where are you going?" asked the Fox.']
    # no listener named: the other one of the conversation (up to the scene break), taking turns
    assert says[("Bear", "Fox")] == ['"I am going to the hill for honey," the Bear replied.']
    types = {n["id"]: n["type"] for n in told.store.export_graph()["nodes"]}
    assert {types[n] for n in ("兎", "狐", "熊", "Rabbit", "Fox", "Bear")} == {"Character"}


@pytest.mark.parametrize(
    ("question", "reply", "sentence"),
    [
        ("兎は狐に何と言った？", "明日はいっしょに遊ぼう [1]", "「明日はいっしょに遊ぼう。」"),
        ("熊は何と答えた？", "「山へはちみつを取りに行くのです。」と答えました。[1]", "はちみつ"),
        ("What did the Rabbit say to the Fox?", "Let us play tomorrow. [1]", "Let us play"),
        ('Who said "Let us play tomorrow"?', "The Rabbit [1]", "The Rabbit said"),
        ("Who said that they should play tomorrow?", "The Rabbit [1]", "The Rabbit said"),
    ],
)
def test_what_one_said_is_read_from_the_line_and_judged(
    told: Services, question: str, reply: str, sentence: str
) -> None:
    """The sentence with the line is among the sources the model reads (its SAYS fact and the
    sentence search find it), and the model's reply is the verifier's to judge."""
    answer = _ask(told, question, reply)
    read = next(s.detail["sources_read"] for s in answer.steps if s.name == "answer")
    assert any(sentence in c.text for c in answer.citations[:read]), answer.citations
    assert answer.support is not None and answer.support.check == "verifier", answer.support


def test_without_a_model_the_facts_answer_gives_the_line(told: Services) -> None:
    engine = build_engine(told.store, None, ModelInfo("none", "", capable=False), embedder=None)
    answer = engine.ask("兎は狐に何と言った？", QAOptions(no_llm=True))
    assert "兎 → 言う → 狐: 「明日はいっしょに遊ぼう。」" in answer.answer


def test_the_entity_page_lists_a_character_s_lines(told: Services) -> None:
    pages = EntityPages(told.store)
    (key,) = [k for k in pages.resolve("熊") if k]
    page = pages.page(key)
    assert [(line.quote, line.listener) for line in page.lines] == [
        ("山へはちみつを取りに行くのです。", "狐")
    ]
    assert page.to_json()["lines"][0]["sentence"].startswith("熊は「山へ")
    rabbit = pages.page(pages.resolve("Rabbit@fox_en.txt")[0])
    assert [line.quote for line in rabbit.lines] == ["Let us play tomorrow."]


def test_the_command_line_entity_page_prints_the_lines(
    told: Services, capsys: pytest.CaptureFixture[str]
) -> None:
    from storygraph.cli import _print_page

    pages = EntityPages(told.store)
    _print_page(pages.page(pages.resolve("Fox@fox_en.txt")[0]), False)
    assert "「Where are you going?」 → Bear" in capsys.readouterr().out


def test_a_declined_question_about_a_line_the_story_has_is_not_one_with_no_premise(
    told: Services,
) -> None:
    """The model declines what the Rabbit said: a question about a line is not read for an act
    told of no one (storygraph.qa.verify.premise), so the verdict is "declined", not "the story
    does not say"."""
    answer = _ask(told, "兎は狐に何と言った？", "わかりません。")
    assert answer.support is not None and answer.support.verdict == "declined"


def test_a_line_said_to_no_one_named_is_read_from_the_sentences(told: Services) -> None:
    """No SAYS fact (no listener), but the sentence with the line is among what the model reads,
    and a declining model's question is not one with no premise."""
    assert not [k for k in _says(told) if k[0] == "Owl"]
    answer = _ask(told, "What did the Owl cry?", "The river is rising! [1]")
    read = next(s.detail["sources_read"] for s in answer.steps if s.name == "answer")
    assert any("The river is rising!" in c.text for c in answer.citations[:read])
    declined = _ask(told, "What did the Owl cry?", "I do not know.")
    assert declined.support is not None and declined.support.verdict == "declined"


def test_the_entity_page_lists_lines_said_to_no_one_named_too(told: Services) -> None:
    pages = EntityPages(told.store)
    owl = pages.page(pages.resolve("Owl@fox_en.txt")[0])
    assert owl is not None
    assert [(line.quote, line.listener) for line in owl.lines] == [("The river is rising!", "")]


def test_a_line_is_placed_in_story_time_as_narration(told: Services) -> None:
    """What a character says is no event yet ("said" positions), but that it says it is."""
    rels = told.store.export_graph()["relationships"]
    says = next(r for r in rels if r["type"] == "SAYS" and r["source"] == "兎")
    assert says["story_order"] and not str(says["story_order"]).endswith(":said")


CHAPTERED = """The Fox and the Crow

Chapter 1

One morning the Fox met the Crow in the forest.
The Fox said to the Crow, "Your feathers are very fine."

Chapter 2

In the evening the Fox met the Crow again by the river.
The Fox said to the Crow, "The cheese is mine now."
"""


def test_an_entity_page_within_a_reading_position_lists_no_later_line(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    data = tmp_path_factory.mktemp("speech_chapters") / "data"
    settings = Settings(_env_file=None, data_dir=data, no_llm=True)  # type: ignore[call-arg]
    built = build_services(settings, extractor=ParserExtractor())
    try:
        report = built.ingestor().ingest_bytes("crow.txt", CHAPTERED.encode("utf-8"))
        assert report.status == "added", report.message
        pages = EntityPages(built.store)
        whole = pages.page("Fox")
        assert whole is not None
        assert [line.quote for line in whole.lines] == [
            "Your feathers are very fine.",
            "The cheese is mine now.",
        ]
        first = pages.page("Fox", reading=reading_for(built.store, 1))
        assert first is not None
        assert [line.quote for line in first.lines] == ["Your feathers are very fine."]
        assert "cheese" not in str(first.to_json()["lines"])
        # each line says where in the book it is, as the chat's sources do
        assert [whole.place(line.chunk).split(" #")[0] for line in whole.lines] == [
            "Chapter 1",
            "Chapter 2",
        ]
        assert whole.place(None) == "" and set(whole.chapters.values()) == {
            "Chapter 1",
            "Chapter 2",
        }
    finally:
        built.close()
