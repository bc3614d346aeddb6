"""Entity types by animacy (issue 29): what the grammar of a story says is alive, read off the
real GiNZA and spaCy parses, and the one type per name `entity_kinds` gives from it."""

from __future__ import annotations

from storygraph.ingest.frames import AnimacyCue, ProposedFact
from storygraph.ingest.frames import en as en_reader
from storygraph.ingest.frames import ja as ja_reader
from storygraph.ingest.frames.extractor import ParserExtractor, animate, entity_kinds
from storygraph.models import Chunk


def cues(text: str) -> set[tuple[str, bool, str]]:
    return {(c.name, c.animate, c.cue) for c in ja_reader.read_document(text).cues}


def story_types(text: str, language: str = "ja") -> dict[str, str]:
    extractor = ParserExtractor()
    extractor.begin_document(text, language)
    chunk = Chunk("doc:0000", "doc", 0, text, 0, len(text))
    return {e.name: e.type for e in extractor.extract(chunk, language, []).entities}


def test_iru_says_alive_and_aru_says_thing() -> None:
    found = cues("山に鬼がいました。浜に船がありました。")
    assert ("鬼", True, "いる") in found
    assert ("船", False, "ある") in found
    # いる after a te-form is the progressive, not being somewhere
    assert not {c for c in cues("桃が流れていました。") if c[0] == "桃"}


def test_counters_honorifics_and_names_called() -> None:
    found = cues("三匹の鬼が来ました。まつの木を一本うえました。")
    assert {("鬼", True, "counter"), ("まつの木", False, "counter")} <= found
    assert ("桃太郎", True, "honorific") in cues("桃太郎さんはどこへ行きますか。")
    # a plural suffix of beings: 鬼ども are alive, so is 鬼 (桃太郎: 鬼 beside 鬼ども)
    assert ("鬼", True, "plural") in cues("鬼どもは逃げ出しました。")
    assert not cues("私どもは行きます。子どもが来ました。") & {("私", True, "plural")}
    said = cues("白は「花咲かじじい、こちらへ。」と言いました。")
    assert ("花咲かじじい", True, "vocative") in said


def test_the_subject_of_saying_and_feeling_also_through_a_chain_and_a_zero_subject() -> None:
    assert ("白", True, "-がる") in cues("白は苦しがって、土をひっかきました。")
    assert ("犬", True, "speech") in cues("犬は「どちらへ。」とたずねました。")
    # the quote's verb has no subject of its own: the paragraph's topic the facts fill in
    assert ("猿", True, "speech") in cues("猿は木から下りて来ました。「どちらへ。」と言いました。")
    assert ("おばあさん", True, "feeling") in cues("おばあさんは大そうよろこびました。")


def test_no_cue_from_a_name_given_or_a_relative_clause() -> None:
    # 鬼が島という所: no one speaks; 鳴く声 / 人間のいる国: the modified noun is no subject
    names = {c[0] for c in cues("鬼が島という所がある。しかの鳴く声がきこえました。")}
    assert "鬼が島" not in {c[0] for c in cues("鬼が島という所がある。") if c[1]}
    assert "声" not in names
    assert "国" not in {c[0] for c in cues("人間のいる国へ流れていた。") if c[1]}


def test_weights_one_mark_or_a_verb_in_two_sentences() -> None:
    def cue(name: str, start: int, *, alive: bool = True, marked: bool = False) -> AnimacyCue:
        return AnimacyCue(name, alive, "x", start, marked)

    assert animate([cue("鬼", 0, marked=True)]) == {"鬼"}
    assert animate([cue("桃", 0)]) == set()  # a peach that "says" its sound once
    assert animate([cue("白", 0), cue("白", 9)]) == {"白"}
    assert animate([cue("白", 0), cue("白", 0)]) == set()  # one sentence, however many cues
    things = [cue("船", 0), cue("船", 9), cue("船", 20, alive=False, marked=True)]
    assert animate(things) == set()  # as heavy for thing as for alive: not alive


def test_the_dog_is_a_character_and_the_dead_tree_is_not() -> None:
    # 花咲爺 (issue 29): 白 acts on objects and feels; 枯れ木 only has flowers bloom on it
    text = (
        "白も、おじいさんとおばあさんに、それはよくなついていました。"
        "白はおじいさんのすそをくわえて、畑のすみまでつれて行きました。"
        "欲ばりおじいさんが白をひっぱりますと、白は苦しがって、そこらの土をひっかきました。"
        "おじいさんが灰をまきますと、枯れ木に花が咲きました。"
        "枯れ木は花をつけて、枝を広げました。"
    )
    types = story_types(text)
    assert types["白"] == "Character"
    assert types.get("枯れ木", "Entity") != "Character"


def test_acting_on_objects_in_two_sentences_alone_makes_no_character() -> None:
    # the rule this replaces made a tree that bears fruit and spreads its branches a Character
    def acts(name: str, start: int) -> ProposedFact:
        return ProposedFact(name, "", "実", "つける", "s", start, "は-を")

    kinds = entity_kinds([acts("木", 0), acts("木", 20)])
    assert kinds["木"] == "Entity"
    # with one more weak cue (the subject of a verb of saying once) it is someone
    said = AnimacyCue("皇子", True, "speech", 40)
    assert entity_kinds([acts("皇子", 0), acts("皇子", 20)], [said])["皇子"] == "Character"
    assert entity_kinds([acts("皇子", 0)], [said])["皇子"] == "Entity"
    kinds = entity_kinds([acts("うさぎ", 0)], [AnimacyCue("うさぎ", True, "いる", 0, True)])
    assert kinds["うさぎ"] == "Character"


def test_english_he_she_who_and_speakers_are_alive_and_a_subject_alone_is_not() -> None:
    text = (
        "A Wolf came upon a Lamb astray. The lamb, who was drinking, looked up. "
        "The rope broke and the mouse ran to the lion. The mouse said that he would help. "
        "The day came when the hunters caught the lion."
    )
    reading = en_reader.read_document(text)
    found = {(c.name, c.animate, c.cue) for c in reading.cues}
    assert ("Lamb", True, "who") in found or ("lamb", True, "who") in found
    assert ("mouse", True, "speech") in found
    types = story_types(text, "en")
    assert types.get("mouse") == "Character"
    assert types.get("rope", "Entity") != "Character"
    assert types.get("day", "Entity") != "Character"


def test_who_leads_another_is_someone_whatever_the_dictionary_tags_the_name() -> None:
    # Sudachi tags 貞光 a place name; as the doer of a companion fact it is a Character
    text = "金太郎は貞光のあとについて行きました。貞光は金太郎を連れて都へ帰りました。"
    assert story_types(text)["貞光"] == "Character"
