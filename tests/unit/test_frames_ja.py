"""The Japanese frame reader on hand-made sentences, one construction each (real GiNZA parse)."""

from __future__ import annotations

import pytest

from storygraph.errors import ModelError
from storygraph.ingest.frames import ProposedFact
from storygraph.ingest.frames.extractor import (
    ParserExtractor,
    facts_to_extraction,
    reader_for,
)
from storygraph.ingest.frames.ja import read_facts
from storygraph.models import Chunk

Triple = tuple[str, str, str]


def triples(text: str) -> set[Triple]:
    return {(f.subject, f.relation, f.object) for f in read_facts(text)}


def names(text: str) -> set[str]:
    return {n for f in read_facts(text) for n in (f.subject, f.object)}


def test_case_particles_give_subject_object_and_goal() -> None:
    found = triples("桃太郎は犬にきびだんごをやりました。")
    assert ("桃太郎", "GIVES", "きびだんご") in found
    assert ("桃太郎", "GIVES", "犬") in found
    assert triples("おばあさんは川へ行きました。") == {("おばあさん", "GOES_TO", "川")}


def test_coordinated_subjects_give_one_fact_each() -> None:
    found = triples("おじいさんとおばあさんが桃を食べました。")
    assert {("おじいさん", "EATS", "桃"), ("おばあさん", "EATS", "桃")} <= found


def test_te_chain_shares_its_subject() -> None:
    found = triples("犬はきびだんごをもらって、桃太郎について行きました。")
    assert ("犬", "RECEIVES", "きびだんご") in found
    assert ("犬", "FOLLOWS", "桃太郎") in found  # ついて行く is one predicate, not 行く


def test_relative_clause_fills_its_gap_with_the_modified_noun() -> None:
    assert ("鬼", "LIVES_IN", "鬼が島") in triples("鬼が島に住む鬼を退治しに行きます。")


def test_zero_subject_comes_from_the_topic_of_the_same_paragraph_only() -> None:
    same = triples("桃太郎は山へ行きました。そして、鬼を退治しました。")
    assert ("桃太郎", "DEFEATS", "鬼") in same
    new_paragraph = triples("桃太郎は山へ行きました。\n　そして、鬼を退治しました。")
    assert ("桃太郎", "GOES_TO", "山") in new_paragraph
    assert not any(t[2] == "鬼" for t in new_paragraph)  # no subject guessed across the break


def test_a_paragraph_after_a_line_of_speech_starts_afresh() -> None:
    said = "桃太郎は、\n「ついて来い。」\nと言って、きびだんごをもらいました。"
    assert ("桃太郎", "RECEIVES", "きびだんご") in triples(said)  # と…: the sentence goes on
    text = "桃太郎は、\n「ついて来い。」\nと言いました。\n「はい。」\n　きびだんごをもらいました。"
    assert not triples(text)  # a new paragraph: no one named, no one guessed


def test_even_if_clauses_keep_their_own_subject() -> None:
    # 〜ても is not a te-chain: 宝物 is the subject of 分ける only
    found = triples("鬼が島を征伐しても、宝物は分けません。")
    assert ("宝物", "DEFEATS", "鬼が島") not in found


def test_speech_is_its_own_clause_and_does_not_leak_its_topic() -> None:
    text = "「犬は山へ行った。」と言って、鬼を退治しました。"
    facts = read_facts(text)
    found = {(f.subject, f.relation, f.object) for f in facts}
    assert ("犬", "GOES_TO", "山") in found
    assert not any(f.object == "鬼" for f in facts)  # the speech's 犬 is not the narrator's
    speech = next(f for f in facts if f.subject == "犬")
    assert speech.sentence == "犬は山へ行った。"
    assert text[speech.start : speech.start + len(speech.sentence)] == speech.sentence

    narrated = triples("桃太郎は、「犬は山へ行った。」と言って、鬼を退治しました。")
    assert ("桃太郎", "DEFEATS", "鬼") in narrated
    assert ("犬", "DEFEATS", "鬼") not in narrated


def test_passive_reads_the_ni_noun_as_the_doer() -> None:
    facts = read_facts("鬼の大将も、とうとう桃太郎に組みふせられて、降参しました。")
    found = {(f.subject, f.relation, f.object) for f in facts}
    assert ("桃太郎", "DEFEATS", "鬼の大将") in found
    assert ("鬼の大将", "DEFEATS", "桃太郎") not in found
    assert next(f for f in facts if f.relation == "DEFEATS").pattern.startswith("passive:")


def test_causative_reads_the_causee_as_the_doer() -> None:
    found = triples("母親は子供に野菜を食べさせた。")
    assert ("子供", "EATS", "野菜") in found
    assert ("母親", "EATS", "野菜") not in found
    # a verb causative by its own form: 従える is "make follow"
    led = triples("桃太郎は、犬をしたがえて、山へ行きました。")
    assert ("犬", "FOLLOWS", "桃太郎") in led
    held = triples("桃太郎は旗を片手に、三匹の家来を従えて、進みました。")
    assert ("家来", "FOLLOWS", "桃太郎") in held and ("片手", "FOLLOWS", "家来") not in held


def test_te_morau_reads_the_ni_noun_as_the_doer() -> None:
    assert ("犬", "HELPS", "桃太郎") in triples("桃太郎は犬に助けてもらいました。")
    made = triples("金太郎は母におむすびをこしらえてもらいました。")
    assert ("母", "MAKES", "おむすび") in made
    assert not any(t[0] == "金太郎" and t[1] == "MAKES" for t in made)


def test_a_relative_clause_of_a_thing_taking_verb_has_the_noun_as_its_object() -> None:
    found = triples("金太郎は、母にもらったまさかりをかついで歩きました。")
    assert ("金太郎", "RECEIVES", "まさかり") in found
    assert ("まさかり", "RECEIVES", "母") not in found


def test_pronouns_and_formal_nouns_are_left_out_not_guessed() -> None:
    assert names("彼は鬼を退治しました。") <= {"鬼"}
    assert "彼" not in names("彼は鬼を退治しました。")
    assert "それ" not in names("桃太郎はそれを犬にやりました。")
    assert "こと" not in names("桃太郎はそのことを犬に話しました。")


def test_compounds_and_owned_names_are_kept_as_written() -> None:
    assert "鬼の大将" in names("桃太郎は鬼の大将を退治しました。")
    assert "おじいさん" in names("おじいさんは山へ行きました。")
    # a position noun stands for its owner: 山の上 is 山
    assert ("桃太郎", "GOES_TO", "山") in triples("桃太郎は山の上へ行きました。")


def test_relational_noun_predicate_reads_its_owner() -> None:
    assert ("犬", "BECOMES_COMPANION_OF", "桃太郎") in triples("犬が桃太郎の家来になりました。")


def test_existence_in_a_place_reads_as_living_there_for_people_only() -> None:
    found = triples("山に鬼がいました。")
    assert ("鬼", "LIVES_IN", "山") in found
    # "Xという Y" names Y; ある says where a person is only when the name shows a person
    named = triples("丹後の国水の江の浦に、浦島太郎というりょうしがありました。")
    assert ("浦島太郎", "LIVES_IN", "水の江の浦") in named
    assert not {t for t in triples("お城の中に宝物がありました。") if t[1] == "LIVES_IN"}


def test_desire_adjective_reads_the_ga_noun_as_what_is_wanted() -> None:
    assert ("猿", "WANTS", "おむすび") in triples("猿はおむすびがほしくってなりません。")


def test_a_topic_earlier_in_the_sentence_fills_a_later_zero_subject() -> None:
    found = triples("けれど猿はおむすびがほしくってならないので、かにに話しました。")
    assert ("猿", "WANTS", "おむすび") in found


def test_speech_without_an_addressee_is_addressed_to_the_other_one_in_the_sentence() -> None:
    facts = read_facts("桃太郎がふり返ると、犬はていねいに、「どちらへ。」とたずねました。")
    addressed = [f for f in facts if f.pattern == "speech:addressee"]
    assert [(f.subject, f.relation, f.object) for f in addressed] == [
        ("犬", "TALKS_TO", "桃太郎")
    ]


def test_a_speech_that_calls_someone_by_name_is_addressed_to_them() -> None:
    facts = read_facts("桃太郎は、「おばあさん、今帰ったよ。」と言いました。")
    assert [(f.subject, f.relation, f.object, f.pattern) for f in facts] == [
        ("桃太郎", "TALKS_TO", "おばあさん", "speech:vocative")
    ]
    # an honorific is cut when the bare name is written elsewhere: 桃太郎さん is 桃太郎
    text = "桃太郎は山へ行きました。\n　犬は、「桃太郎さん、どちらへ。」とたずねました。"
    assert ("犬", "TALKS_TO", "桃太郎") in triples(text)
    assert not triples("おばあさんは、「まあ、今帰ったよ。」と言いました。")


def test_a_body_part_with_an_owner_stands_for_the_owner() -> None:
    assert ("桃太郎", "RIDES", "鬼") in triples("桃太郎は鬼の背中にまたがりました。")


def test_what_did_not_happen_is_no_fact() -> None:
    assert not triples("桃太郎は山へ行きませんでした。")
    assert ("桃太郎", "GOES_TO", "山") in triples("桃太郎は山へ行きました。")


def test_a_pronoun_subject_is_not_replaced_by_the_topic() -> None:
    # だれも is the subject of 居る: the topic 鬼 must not be guessed in its place
    found = triples("鬼はお城に住んでいました。しかしだれも玄関にいました。")
    assert ("鬼", "LIVES_IN", "お城") in found
    assert not any(t[2] == "玄関" for t in found)


def test_a_table_word_inside_a_compound_verb_does_not_type_it() -> None:
    # 振り上げる holds 上げる (a GIVES form) but is not giving
    assert not any(t[1] == "GIVES" for t in triples("一寸法師は刀を振り上げました。"))
    assert ("一寸法師", "DEFEATS", "鬼") in triples("一寸法師は鬼を退治しました。")


def test_untyped_predicates_keep_an_empty_relation() -> None:
    facts = read_facts("桃太郎は石を磨きました。")
    assert facts and all(f.relation == "" for f in facts)
    assert facts[0].predicate


def test_empty_text_reads_nothing() -> None:
    assert read_facts("") == [] and read_facts("　\n") == []


# --- the extractor ---------------------------------------------------------------------------


def _chunk(text: str) -> Chunk:
    return Chunk(id="doc:0000", document_id="doc", index=0, text=text, start=0, end=len(text))


def test_parser_extractor_gives_relations_with_evidence_and_origin() -> None:
    text = "犬はきびだんごをもらって、桃太郎について行きました。桃太郎は石を磨きました。"
    result = ParserExtractor(verb_types=False).extract(_chunk(text), "ja", [])
    rels = {(r.source, r.type, r.target): r for r in result.relations}
    follows = rels[("犬", "FOLLOWS", "桃太郎")]
    assert follows.evidence == "犬はきびだんごをもらって、桃太郎について行きました。"
    assert follows.chunk_id == "doc:0000" and follows.origin == "parser"
    assert {e.name for e in result.entities} >= {"犬", "桃太郎", "きびだんご"}
    assert all(e.origin == "parser" for e in result.entities)
    assert result.untyped >= 1  # 磨く is not in the verb table: dropped, counted


def test_untyped_facts_are_counted_and_entity_types_prefer_specific_votes() -> None:
    facts = [
        ProposedFact("犬", "FOLLOWS", "桃太郎", "ついて行く", "s", 0, "p", "Entity", "Character"),
        ProposedFact("犬", "", "石", "磨く", "s", 0, "は-を"),
        ProposedFact("桃太郎", "GOES_TO", "山", "行く", "s", 0, "は-へ", "Entity", "Place"),
    ]
    result = facts_to_extraction(_chunk("s"), facts)
    assert result.untyped == 1
    assert [r.type for r in result.relations] == ["FOLLOWS", "GOES_TO"]
    kinds = {e.name: e.type for e in result.entities}
    assert kinds == {"犬": "Entity", "桃太郎": "Character", "山": "Place"}


def test_verb_types_keep_a_fact_the_table_lacks_under_its_own_verb() -> None:
    facts = [
        ProposedFact("犬", "FOLLOWS", "桃太郎", "ついて行く", "s", 0, "p"),
        ProposedFact("犬", "", "石", "磨く", "犬は石を磨きました。", 0, "は-を"),
    ]
    result = facts_to_extraction(_chunk("s"), facts, verb_types=True)
    assert result.untyped == 1
    kept = {(r.source, r.type, r.target): r.evidence for r in result.relations}
    assert kept[("犬", "MIGAKU", "石")] == "犬は石を磨きました。"
    assert ParserExtractor().name == "parser+verbs"
    assert ParserExtractor(verb_types=False).name == "parser"


def test_a_language_without_a_reader_is_a_clear_error() -> None:
    with pytest.raises(ModelError, match="no reader for language 'fr'"):
        reader_for("fr")


def test_an_unclosed_quote_ends_at_a_blank_line() -> None:
    # the narration resumes after the blank line, its topic (おばあさん) set before the song
    text = "おばあさんはそこで、\n\n「あっちの水は、かあらいぞ。\n\n　と歌って、桃を拾いました。"
    assert ("おばあさん", "PICKS_UP", "桃") in triples(text)


def test_verb_table_round_trip_types_read_are_types_questions_ask_for() -> None:
    from storygraph.qa.retrieval.relation_types import lexical_pick
    from storygraph.text.vocabulary import relation_types

    text = (
        "犬はきびだんごをもらって、桃太郎について行きました。"
        "鬼の大将も、とうとう桃太郎に組みふせられました。"
    )
    read = sorted({f.relation for f in read_facts(text) if f.relation})
    assert set(read) <= set(relation_types())
    assert "FOLLOWS" in lexical_pick("桃太郎の仲間は誰？", read, ["桃太郎"])
    assert "DEFEATS" in lexical_pick("鬼の大将を倒したのは誰？", read, ["鬼の大将"])


def test_the_parser_extractor_version_is_a_stable_hash_of_its_sources() -> None:
    from storygraph.ingest.frames import extractor

    version = ParserExtractor().version
    assert version == ParserExtractor(verb_types=False).version
    assert version.startswith("2-") and len(version) > 8
    extractor.reader_version.cache_clear()
    assert extractor.reader_version() == version  # stable while the source is the same


# --- issue 29: junk entities and one type per entity ---------------------------------------


def test_a_bare_suru_act_noun_is_no_participant() -> None:
    # 力だめしをする / 見はりをする: the noun names what is done, it is nobody's object
    assert not {"力だめし"} & names("桃太郎は外国へ出かけて、力だめしをしてみたくなりました。")
    watching = "鬼の兵隊は、とくいらしい様子をして、見はりをしていました。"
    assert not {"見はり", "様子"} & names(watching)
    # a verbal noun's する still reads as its verb, and other facts stay
    found = triples("犬はおじぎをして、桃太郎について行きました。")
    assert ("犬", "FOLLOWS", "桃太郎") in found


def test_a_resultative_te_aru_names_no_doer() -> None:
    # 船がつないであった: someone tied the boat; the boat tied nothing, least of all ぐあい
    assert read_facts("そこには、ちょうどいいぐあいに、船が一そうつないでありました。") == []


def test_a_verb_stem_written_onto_a_noun_is_part_of_that_word() -> None:
    # かくれ笠 is a hat of invisibility, not a hat that hides in something
    text = (
        "鬼の大将は約束のとおり、お城から、かくれみのに、かくれ笠、うちでの小づちに如意宝珠、"
        "世界でいちばん貴い宝物を山のように車に積んで出してきました。"
    )
    facts = read_facts(text)
    assert not [f for f in facts if "笠" in (f.subject, f.object)]
    assert ("鬼の大将", "宝物") in {(f.subject, f.object) for f in facts}


def test_a_purpose_or_manner_noun_is_no_place() -> None:
    assert triples("おじいさんは山へ草刈りに行きました。") == {("おじいさん", "GOES_TO", "山")}
    assert triples("おじいさんは海へ魚釣りに出かけました。") == {("おじいさん", "GOES_TO", "海")}
    assert not {"刈り", "しば刈り"} & names("おじいさんは山へしば刈りに行きました。")
    ridden = read_facts("桃太郎は鬼の背中に、馬乗りにまたがりました。")
    assert "馬乗り" not in {f.object for f in ridden}
    assert {f.object_type for f in ridden if f.object == "鬼"} <= {"Entity", "Character"}


def test_one_type_per_entity_for_the_whole_story() -> None:
    # the dog only takes a dumpling in the second chunk: still the Character the first makes it
    first = "犬は桃太郎について行きました。"
    text = first + "犬はきびだんごをもらいました。"
    extractor = ParserExtractor()
    extractor.begin_document(text, "ja")
    chunks = [
        Chunk("doc:0000", "doc", 0, first, 0, len(first)),
        Chunk("doc:0001", "doc", 1, text[len(first) :], len(first), len(text)),
    ]
    kinds = [{e.name: e.type for e in extractor.extract(c, "ja", []).entities} for c in chunks]
    assert kinds[0]["犬"] == kinds[1]["犬"] == "Character"
    assert kinds[1]["きびだんご"] == "Object"
