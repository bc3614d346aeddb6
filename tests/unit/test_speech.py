"""Who said what: quotations attributed by construction class (storygraph.text.speech).

Every sentence here is made up for the class it stands for; none is from an evaluation set."""

from __future__ import annotations

import pytest

from storygraph.ingest.frames.extractor import speech_facts
from storygraph.text.speech import (
    SAYING_STEMS_JA,
    SAYS,
    SPEECH_STEMS_JA,
    quotes_in,
    read_speech,
)


def _lines(text: str, names: tuple[str, ...] = ()) -> list[tuple[str, str, str, str]]:
    return [(s.speaker, s.listener, s.quote, s.pattern) for s in read_speech(text, names)]


@pytest.mark.parametrize(
    ("text", "names", "speaker", "listener", "pattern"),
    [
        # ja: 「…」と X が/は (Y に) 言った
        ("「こんにちは。」と狐が言いました。", ("狐",), "狐", "", "ja:quote-と-X"),
        ("「寒いね。」と、うさぎはかめにたずねました。", ("うさぎ", "かめ"), "うさぎ", "かめ",
         "ja:quote-と-X"),
        ("「待て。」と鬼の大将がさけびました。", ("鬼の大将",), "鬼の大将", "", "ja:quote-と-X"),
        # ja: X は (Y に) 「…」と言った
        ("すると狸は「どこへ行くの。」と聞きました。", ("狸",), "狸", "", "ja:X-quote-と"),
        ("熊は狐に向かって、「帰れ。」とどなりました。", ("熊", "狐"), "熊", "狐", "ja:X-quote-と"),
        # ja: an honorific cut to the story's name; the listener called at the line's start
        ("「太郎さん、おはよう。」と花子さんが言いました。", ("花子", "太郎"), "花子", "太郎",
         "ja:quote-と-X+vocative"),
        # ja: a sentence of saying, then the line on its own
        ("狐が熊に言いました。\n「山へ行こう。」", ("狐", "熊"), "狐", "熊", "ja:before"),
        # ja: a sentence of saying before the line (こう: the next one), or after it
        ("熊は窓を開け、ため息といっしょにこう言いました。\n「寒いな。」", ("熊",), "熊", "",
         "ja:before-こう言った"),
        ("「寒いな。」\n　熊は小声でつぶやきました。それから窓を閉めました。", ("熊",), "熊", "",
         "ja:after"),
        # ja: the speaker before a clause and a line break; と on the next line
        ("狸はおどろいて、\n「だれだ。」\n　と聞きました。", ("狸",), "狸", "", "ja:X-quote-と"),
        ("「だれだ。」\n　と狸はさけびました。", ("狸",), "狸", "", "ja:quote-と-X"),
        # ja: a te-form of saying shares its subject; the next sentence says who said so
        ("「帰ろう。」\n　こう言って、狸が立ちました。", ("狸",), "狸", "", "ja:quote-言って-X"),
        ("「帰ろう。」\n　狸がこういうと、みな立ちました。", ("狸",), "狸", "",
         "ja:quote-Xがこう言う"),
        # en: "…," said X (to Y) / "…," X replied
        ('"You are late," said the Badger to the Mole.', ("Badger", "Mole"), "Badger", "Mole",
         "en:quote-said-X"),
        ('"I am not," the Mole replied.', (), "Mole", "", "en:quote-said-X"),
        ('"Thief!" shrieked the Magpie.', (), "Magpie", "", "en:quote-said-X"),
        ("“Good morning,” said Old Tom.", (), "Old Tom", "", "en:quote-said-X"),
        # en: X said (to Y), "…" / X told Y: "…"
        ('The Badger said, "Sit down."', (), "Badger", "", "en:X-said-quote"),
        ('The Badger said to the Mole: "Sit down."', (), "Badger", "Mole", "en:X-said-quote"),
        ('The Owl told the Mole, "Look up."', (), "Owl", "Mole", "en:X-said-quote"),
        # en: a name called at the line's start is the listener
        ('"Mole, you are slow," said the Badger.', ("Mole", "Badger"), "Badger", "Mole",
         "en:quote-said-X+vocative"),
        ('The Owl spoke to the Mole.\n"Look up."', (), "Owl", "Mole", "en:before"),
        # en: the verb before its speaker, before the quote
        ('Then said the Badger, "Go home."', (), "Badger", "", "en:said-X-quote"),
        # en: a name then a word that is no part of it
        ('"Off we go!" cried Tom cheerfully.', (), "Tom", "", "en:quote-said-X"),
    ],
)
def test_each_construction_attributes_speaker_and_listener(
    text: str, names: tuple[str, ...], speaker: str, listener: str, pattern: str
) -> None:
    lines = _lines(text, names)
    assert [(s, li, p) for s, li, _, p in lines] == [(speaker, listener, pattern)]


@pytest.mark.parametrize(
    "text",
    [
        "狐は『星の歌』という本を読みました。",  # a title, no one speaks
        "「明日は雨だろう。」と思いました。",  # a thought, no speaker
        "「明日は雨だろう。」と狐は思いました。",  # a thought is no line
        "「山だ、山だ。」",  # a line alone, no sentence of saying before it
        "狐は山へいきました。\n「さあ行こう。」",  # a sentence of going (いき) is no saying
        "狐は、\n「しめた。」\n　と言わないばかりの顔をしました。",  # not said
        "「寒いな。」\n　熊はこう答えました。\n「夏だよ。」"[:-6],  # こう: the line after
        'She read a book called "The Long Road" in bed.',
        '"How odd," thought the Mole.',
        '"Come here," he said.',  # a pronoun speaker is left unattributed
        'The Mole went home. "Sit down."',
        '"Sit down."\n\nThe Mole only laughed.',  # the next paragraph attributes nothing
        'In the spring he said to the Mole, "Sit down."',  # a pronoun speaker, words before it
    ],
)
def test_quotes_outside_the_constructions_are_left_unattributed(text: str) -> None:
    assert _lines(text, ("狐", "Mole")) == []


def test_a_line_cut_by_its_attribution_is_one_line_to_its_end() -> None:
    text = "“What I meant,” said the Stork in a huff, “was that we should swim.” Then all swam."
    (line,) = read_speech(text)
    assert line.speaker == "Stork"
    assert line.quote == "What I meant, … was that we should swim."
    assert line.sentence.endswith("we should swim.”")
    assert text.startswith(line.sentence)


def test_two_speakers_taking_turns_speak_to_each_other() -> None:
    text = (
        '"Hello," said the Badger.\n\n"Hello to you," said the Mole.\n\n* * *\n\n'
        '"Who is there?" said the Owl.'
    )
    lines = read_speech(text, ("Badger", "Mole", "Owl"))
    assert [(s.speaker, s.listener) for s in lines] == [
        ("Badger", "Mole"),
        ("Mole", "Badger"),
        ("Owl", ""),  # after a scene break: no one to turn to
    ]
    assert lines[0].pattern.endswith("+turn")


def test_an_interjection_opening_a_line_calls_no_one() -> None:
    (line,) = read_speech('"Well, I never," said the Mole.', ("well", "Mole"))
    assert (line.speaker, line.listener) == ("Mole", "")


def test_a_line_after_another_starts_its_own_sentence() -> None:
    text = '"Go," said the Owl. "Why?" said the Mole.'
    lines = read_speech(text, ("Owl", "Mole"))
    assert [line.sentence for line in lines] == ['"Go," said the Owl.', '"Why?" said the Mole.']


def test_a_third_speaker_around_a_line_leaves_its_listener_unsaid() -> None:
    text = (
        "「行こう。」と狐が言いました。\n「いやだ。」と熊が言いました。\n"
        "「おれも。」と狸が言いました。"
    )
    lines = read_speech(text, ("狐", "熊", "狸"))
    assert [(s.speaker, s.listener) for s in lines] == [("狐", ""), ("熊", ""), ("狸", "")]
    two = read_speech(text.rsplit("\n", 1)[0], ("狐", "熊", "狸"))
    assert [(s.speaker, s.listener) for s in two] == [("狐", "熊"), ("熊", "狐")]


def test_a_japanese_line_s_sentence_runs_to_the_end_of_its_attribution() -> None:
    text = "「だれだ。」\n　と狸はさけんで、逃げました。次の日になりました。"
    (line,) = read_speech(text, ("狸",))
    assert line.sentence == "「だれだ。」\n　と狸はさけんで、逃げました。"


def test_names_snap_to_the_story_spelling_and_evidence_is_the_text() -> None:
    text = "森の中で、\n「きのこをください。」と子狐がお母さん狐に言いました。"
    (line,) = read_speech(text, ("子狐", "お母さん狐", "森"))
    assert (line.speaker, line.listener) == ("子狐", "お母さん狐")
    assert text[line.start :].startswith(line.sentence)
    assert "「きのこをください。」" in line.sentence


def test_lines_with_a_listener_become_says_facts_with_their_sentence() -> None:
    text = '"Run," said the Badger to the Mole.\n\nCHAPTER II\n\n"Why?" the Owl asked.'
    facts = speech_facts(text, ("Badger", "Mole", "Owl"))
    assert [(f.subject, f.relation, f.object) for f in facts] == [("Badger", SAYS, "Mole")]
    assert facts[0].sentence == '"Run," said the Badger to the Mole.'
    assert quotes_in(facts[0].sentence) == ["Run,"]


def test_says_is_one_vocabulary_row_read_by_questions_and_never_typed_from_a_verb_alone() -> None:
    from storygraph.qa.question.relation_words import question_stems, related_stems, type_stems
    from storygraph.text.vocabulary import relation_type_for

    for word, language in (("言う", "ja"), ("たずねる", "ja"), ("said", "en"), ("reply", "en")):
        assert relation_type_for(word, language) == "TALKS_TO", word
    for question in ("兎は狐に何と言った？", "What did the Rabbit say to the Fox?"):
        assert type_stems(SAYS) & question_stems(question), question
    assert type_stems(SAYS) <= related_stems(question_stems("What did the Mole reply?"))


@pytest.mark.parametrize(
    ("question", "language", "speech"),
    [
        ("兎は狐に何と言った？", "ja", True),
        ("熊は何と答えましたか。", "ja", True),
        ("「山へ行こう」と言ったのは誰？", "ja", True),
        ("誰が「待て」と叫んだ？", "ja", True),
        ("狐は何を食べた？", "ja", False),
        ("狐は何という名前？", "ja", False),  # a name's いう, no one speaks
        ("熊は何と言う名前ですか？", "ja", False),
        ("狐は誰と話した？", "ja", False),  # a partner, not a line
        ("What did the Mole say to the Badger?", "en", True),
        ("Who shouted at the Owl?", "en", True),
        ("What were the Mole's last words?", "en", True),
        ("What song did the Mole ask the Owl to sing?", "en", True),
        ("How did the Mole say he crossed the river?", "en", True),
        ("狸はどう答えた？", "ja", True),
        ("狸はどうした？", "ja", False),
        ("Which cake did the Mole want?", "en", False),
        ("What did the Mole eat?", "en", False),
        ("Who is the oldest?", "en", False),
    ],
)
def test_a_question_about_a_line_of_speech_is_a_class_of_its_own(
    question: str, language: str, speech: bool
) -> None:
    from storygraph.qa.question.question_type import asks_for_speech, detect_question_type

    assert asks_for_speech(question, language=language) is speech
    assert detect_question_type(question, language=language).speech is speech


def test_who_asked_a_line_asks_for_the_speaker_whatever_other_question_word_it_holds() -> None:
    from storygraph.qa.question.question_type import detect_question_type

    found = detect_question_type("Who asked where the Owl was going?", ["Owl"], language="en")
    assert (found.kind, found.speech) == ("who", True)


def test_a_stored_line_is_what_a_question_about_speech_prefers() -> None:
    from storygraph.qa.question.question_type import detect_question_type
    from storygraph.qa.retrieval.type_priors import speech_prior

    asked = detect_question_type("What did the Mole say?", ["Mole"], language="en")
    other = detect_question_type("What did the Mole eat?", ["Mole"], language="en")
    assert speech_prior(asked, SAYS) > 0 == speech_prior(asked, "TALKS_TO")
    assert speech_prior(other, SAYS) == 0


def test_a_model_s_extraction_gets_the_chunk_s_lines_with_its_own_names() -> None:
    from storygraph.ingest.frames.extractor import with_speech_lines
    from storygraph.models import Chunk, ChunkExtraction, ExtractedEntity

    text = '"Run," said the Badger to the Mole.'
    chunk = Chunk(id="d:0", document_id="d", index=0, text=text, start=0, end=len(text))
    extraction = ChunkExtraction(chunk=chunk, entities=[ExtractedEntity("Badger", "Animal", "d:0")])
    result = with_speech_lines(extraction)
    assert [(r.source, r.type, r.target, r.evidence) for r in result.relations] == [
        ("Badger", SAYS, "Mole", text)
    ]
    assert [(e.name, e.type) for e in result.entities] == [
        ("Badger", "Animal"),
        ("Mole", "Character"),
    ]


def test_a_quote_right_after_an_attribution_goes_on_with_that_speaker() -> None:
    text = '"I am no mole!" said the Vole crossly. "Let me be!"\n"Why?" asked the Owl.'
    lines = read_speech(text, ("Vole", "Owl"))
    assert [(s.speaker, s.quote, s.pattern.split("+")[0]) for s in lines] == [
        ("Vole", "I am no mole!", "en:quote-said-X"),
        ("Vole", "Let me be!", "en:continued"),
        ("Owl", "Why?", "en:quote-said-X"),
    ]
    # the line before ends in its own quote: who goes on is not said
    assert [s.quote for s in read_speech('The Vole said, "No." "Yes."', ("Vole",))] == ["No."]


def test_a_sentence_of_saying_between_two_lines_goes_by_its_pointing_word() -> None:
    forward = "「寒いな。」\n　熊はこう答えました。\n「夏だよ。」"
    back = "「寒いな。」\n　熊はそう言いました。\n「夏だよ。」"
    plain = "「寒いな。」\n　熊は言いました。\n「夏だよ。」"
    assert [(s.speaker, s.quote) for s in read_speech(forward, ("熊",))] == [("熊", "夏だよ。")]
    assert [(s.speaker, s.quote) for s in read_speech(back, ("熊",))] == [("熊", "寒いな。")]
    assert read_speech(plain, ("熊",)) == []  # which line it is, the story does not say


def test_an_english_one_word_speaker_is_the_story_s_one_longer_name() -> None:
    (line,) = read_speech('"Late!" said the Rabbit.', ("Grey Rabbit", "Owl"))
    assert line.speaker == "Grey Rabbit"
    (line,) = read_speech('"Late!" said the Rabbit.', ("Grey Rabbit", "Brown Rabbit"))
    assert line.speaker == "Rabbit"  # two longer names: which one, the line does not say


def test_lines_of_a_conversation_in_paragraphs_of_their_own_take_turns() -> None:
    text = '"Who are you?" said the Worm.\n\n"A mole," said Bess.\n\n"Why?" said the Worm.'
    lines = read_speech(text, ("Worm", "Bess"))
    assert [(s.speaker, s.listener) for s in lines] == [
        ("Worm", "Bess"),
        ("Bess", "Worm"),
        ("Worm", "Bess"),
    ]


def test_a_name_called_with_an_honorific_is_the_story_s_bare_name() -> None:
    text = "狸は、\n「熊さん、熊さん、どこへ行くの。」\n　とたずねました。"
    (line,) = read_speech(text, ("狸", "熊", "熊さん"))
    assert (line.speaker, line.listener) == ("狸", "熊")


def test_a_katakana_speaker_the_reader_missed_and_a_name_written_with_its_owner() -> None:
    text = "「帰ろう。」とポポが言いました。\n「まだだ。」と熊が言いました。"
    lines = read_speech(text, ("森の熊", "狸"))
    assert [s.speaker for s in lines] == ["ポポ", "森の熊"]
    # a hiragana or kanji word no name of the story is stays unattributed
    assert read_speech("「帰ろう。」とだれかが言いました。", ("狸",)) == []


# --- first-person narrative dialogue and the verbs of saying beyond 言う -----------------------


@pytest.mark.parametrize(
    ("text", "speaker", "quote"),
    [
        # a sentence of saying after the line, with こう, narration after it: the line before
        ("「雨はもう上がりましたよ。」\n　窓のそばのポロはのんきにこう言いました。しかし空は暗い。",
         "ポロ", "雨はもう上がりましたよ。"),
        ("「橋はどこです？」\n　僕は宿の主人の顔を見ながら、こう尋ねました。主人は黙っていました。",
         "僕", "橋はどこです？"),  # the narrator asks
        ("「…そうかね。」とポロは言うのです。", "ポロ", "…そうかね。"),
        ("ポロは「橋はない。」と答えました。", "ポロ", "橋はない。"),
        ("「火事だ！」とポロは叫びました。", "ポロ", "火事だ！"),
        ("「もう遅い。」とポロは呟きました。", "ポロ", "もう遅い。"),
        ("「どうぞ。」と女中が申しました。", "女中", "どうぞ。"),
        ("「よろしい。」と先生がおっしゃいました。", "先生", "よろしい。"),
        ("「明日また来ます。」とポロは話しました。", "ポロ", "明日また来ます。"),
        ("「あなたの国にも橋はありますか？」とポロは僕に質問しました。", "ポロ",
         "あなたの国にも橋はありますか？"),
        ("ポロは煙草をくわえ、こう僕に問いかけました。\n「君は学生かね？」", "ポロ",
         "君は学生かね？"),
        ("「それから？」\n　ポロは小声でつけ加えました。それきり黙りました。", "ポロ",
         "それから？"),
        ('"It is late," the Owl answered.', "Owl", "It is late,"),
        ('"Is it?" asked the Mole.', "Mole", "Is it?"),
        ('"Help!" cried the Mole.', "Mole", "Help!"),
        ('"No," the Owl replied.', "Owl", "No,"),
        ('"Run!" shouted the Mole.', "Mole", "Run!"),
        ('"Hush," whispered the Owl.', "Owl", "Hush,"),
        ('"How odd," remarked the Owl.', "Owl", "How odd,"),
        ('"And then," the Owl went on, "we slept."', "Owl", "And then, … we slept."),
        ('"Also cake," added the Mole.', "Mole", "Also cake,"),
        ('The Owl says, "Come in."', "Owl", "Come in."),
    ],
)
def test_first_person_narrative_dialogue_and_every_verb_of_saying(
    text: str, speaker: str, quote: str
) -> None:
    lines = read_speech(text, ("ポロ", "僕", "主人", "Owl", "Mole", "女中", "先生"))
    assert [(s.speaker, s.quote) for s in lines] == [(speaker, quote)]


@pytest.mark.parametrize(
    "text",
    [
        # こう at the text's end: the line it points at may be in the next chunk
        "「橋はどこです？」\n　ポロはこう尋ねました。",
        # a passive sentence of saying: the other one said it
        "「帰りたまえ。」\n　ポロは主人にこう言われました。それから帰りました。",
        "ポロは主人にこう言われました。\n「帰りたまえ。」",
        # negated
        "「帰りたまえ。」\n　ポロは何も答えませんでした。",
    ],
)
def test_a_passive_negated_or_cut_sentence_of_saying_attributes_no_line(text: str) -> None:
    assert read_speech(text, ("ポロ", "主人")) == []


# --- a line several speakers say together ----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "names", "speakers"),
    [
        ("「雨だ、雨だ。」と狐と狸が言いました。", ("狐", "狸"), ["狐", "狸"]),
        ("「雨だ。」と、狐も狸も言いました。", ("狐", "狸"), ["狐", "狸"]),
        ("「雨だ。」と、おじいさんもおばあさんも言いました。", (), ["おじいさん", "おばあさん"]),
        ("「雨だ。」と、狐と、狸と、熊がさけびました。", ("狐", "狸", "熊"), ["狐", "狸", "熊"]),
        ("狐と狸は「雨だ。」と言いました。", ("狐", "狸"), ["狐", "狸"]),
        ("狐と狸は顔を見合わせて、こう言いました。\n「雨だ。」", ("狐", "狸"), ["狐", "狸"]),
        ("「雨だ。」\n　狐と狸は、こう言って笑いました。", ("狐", "狸"), ["狐", "狸"]),
        ('"It is raining," said the Cat and the Fox.', ("Cat", "Fox"), ["Cat", "Fox"]),
        ('"Rain!" cried Tom, Bess and the Owl.', (), ["Tom", "Bess", "Owl"]),
        ('"Rain," the Cat and the Fox replied.', (), ["Cat", "Fox"]),
        ('The Cat and the Fox said, "Rain."', (), ["Cat", "Fox"]),
    ],
)
def test_every_speaker_a_line_names_gets_the_line(
    text: str, names: tuple[str, ...], speakers: list[str]
) -> None:
    lines = read_speech(text, names)
    assert [s.speaker for s in lines] == speakers
    assert len({(s.quote, s.sentence) for s in lines}) == 1


@pytest.mark.parametrize(
    ("text", "names", "speakers"),
    [
        # not a list: a clause before the name (with whom, where)
        ("「雨だ。」と狐と一緒に狸が言いました。", ("狐", "狸"), ["狸"]),
        # a new clause after the speaker: the other one does something else
        ('"Rain," said the Cat, and the Fox laughed.', ("Cat", "Fox"), ["Cat"]),
        ('"Rain," said the Cat and the Fox together.', ("Cat", "Fox"), ["Cat"]),
    ],
)
def test_a_name_outside_the_list_of_speakers_gets_no_line(
    text: str, names: tuple[str, ...], speakers: list[str]
) -> None:
    assert [s.speaker for s in read_speech(text, names)] == speakers


def test_speakers_saying_a_line_together_speak_to_no_one_by_turns() -> None:
    text = "「行こう。」と狐と狸が言いました。\n「いやだ。」と熊が言いました。"
    lines = read_speech(text, ("狐", "狸", "熊"))
    assert [(s.speaker, s.listener) for s in lines] == [("狐", ""), ("狸", ""), ("熊", "")]
    text = '"Go," said the Cat and the Fox. "Now."'
    lines = read_speech(text, ("Cat", "Fox"))
    assert [(s.speaker, s.quote) for s in lines] == [
        ("Cat", "Go,"), ("Fox", "Go,"), ("Cat", "Now."), ("Fox", "Now.")
    ]


def test_a_clause_ending_in_a_verb_before_the_speaker_is_no_second_speaker() -> None:
    text = "それを見ると熊は、こう言いました。\n「雨だ。」"
    assert [s.speaker for s in read_speech(text, ("狸", "熊"))] == ["熊"]
    text = "「雨だ。」\n　こう言って、一度跳ねますと狸が笑いました。"
    assert [s.speaker for s in read_speech(text, ("狸",))] == ["狸"]


# --- a dialogue going on: the narration before a line, and turns -----------------------------


def _who(text: str, names: tuple[str, ...]) -> list[tuple[str, str, str]]:
    return [(s.speaker, s.listener, s.pattern.split("+")[0]) for s in read_speech(text, names)]


def test_a_line_after_narration_of_one_name_acting_toward_another_is_that_name_s() -> None:
    text = "狸は熊のそばへ来ました。\n「おなかがすいたよ。」"
    (line,) = read_speech(text, ("狸", "熊"))
    assert (line.speaker, line.listener, line.pattern) == ("狸", "熊", "ja:narration-before")
    assert line.sentence == text and line.start == 0
    # the line calls the other one by name
    text = "狸は山から帰ってきました。\n「熊さん、ただいま。」"
    assert _who(text, ("狸", "熊")) == [("狸", "熊", "ja:narration-before")]


@pytest.mark.parametrize(
    "text",
    [
        "狸は山へ行きました。\n「おなかがすいたよ。」",  # no one else: a thought, a song?
        "狸が帰ると、熊は戸を開けました。\n「おなかがすいたよ。」",  # two subjects
        "狸は熊にしかられました。\n「おなかがすいたよ。」",  # passive: the other acts
        "狸は熊の声を聞きました。\n「おなかがすいたよ。」",  # heard: the line may be the voice
        "狸は熊のそばへ来ました。\n「おなかがすいたよ。」と鳥が言いました。",  # said by another
        "狸は熊のそばへ来ましたが、\n熊は「おなかがすいたよ。」と言いました。",
        "狸は熊のそばへ来ました。\n「狸さん、おなかがすいたよ。」",  # it calls the subject
        "「どこへ行くの？」\n　狸は熊のほうへ目を向けました。\n「山だよ。」",  # after a question
    ],
)
def test_narration_before_a_line_says_nothing_when_it_is_not_one_name_s_act(text: str) -> None:
    assert [s.speaker for s in read_speech(text, ("狸", "熊", "鳥"))] in ([], ["熊"], ["鳥"])
    assert all(s.pattern != "ja:narration-before" for s in read_speech(text, ("狸", "熊", "鳥")))


def test_a_line_alone_after_a_line_to_someone_is_that_one_s_answer_and_turns_go_on() -> None:
    text = "「どこへ行くの。」と狸が熊にたずねました。\n「山へ行くのさ。」\n「ぼくも行こう。」"
    assert _who(text, ("狸", "熊")) == [
        ("狸", "熊", "ja:quote-と-X"), ("熊", "狸", "ja:turn"), ("狸", "熊", "ja:turn"),
    ]
    text = '"Where to?" the Badger asked the Mole.\n\n"Home."\n\n"May I come?"'
    assert _who(text, ("Badger", "Mole")) == [
        ("Badger", "Mole", "en:quote-said-X"), ("Mole", "Badger", "en:turn"),
        ("Badger", "Mole", "en:turn"),
    ]


def test_after_two_speakers_named_one_after_the_other_their_turns_alternate() -> None:
    text = (
        "「行こう。」と狐が言いました。\n「いやだ。」と熊が言いました。\n「なぜだ。」\n"
        "「寒いからさ。」"
    )
    assert [(s, li) for s, li, _ in _who(text, ("狐", "熊"))] == [
        ("狐", "熊"), ("熊", "狐"), ("狐", "熊"), ("熊", "狐"),
    ]
    text = '"Go," said the Owl.\n\n"No," said the Mole.\n\n"Why not?"\n\n"It is late."'
    assert [(s, p) for s, _, p in _who(text, ("Owl", "Mole"))] == [
        ("Owl", "en:quote-said-X"), ("Mole", "en:quote-said-X"), ("Owl", "en:turn"),
        ("Mole", "en:turn"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        # narration between the lines ends the turns
        "「どこへ行くの。」と狸が熊にたずねました。\n　雨がふってきました。\n「山へ行くのさ。」",
        '"Where to?" the Badger asked the Mole.\n\nThe wind rose.\n\n"Home."',
        # one speaker named and no one spoken to: whose the next line is, the story does not say
        "「行こう。」と狐が言いました。\n「いやだ。」",
        '"Go," said the Owl.\n\n"No."',
        # a scene break
        '"Where to?" the Badger asked the Mole.\n\n\n* * *\n\n"Home."',
        # a line several said together starts no turns
        "「行こう。」と狐と狸が熊に言いました。\n「いやだ。」",
    ],
)
def test_turns_are_taken_only_in_an_unbroken_dialogue_of_two(text: str) -> None:
    assert all(not s.pattern.endswith(":turn")
               for s in read_speech(text, ("狐", "狸", "熊", "Badger", "Mole", "Owl")))


def test_narration_going_on_after_an_attribution_ends_the_turns() -> None:
    text = (
        '"Go," said the Owl.\n\n"Where?" asked the Mole; and turning away from the Owl, he '
        'called to the Badger:\n\n"Are you coming?"'
    )
    lines = read_speech(text, ("Owl", "Mole", "Badger"))
    assert [s.quote for s in lines] == ["Go,", "Where?"]


def test_an_attribution_then_a_quote_in_its_paragraph_goes_on_and_in_the_next_answers() -> None:
    same = '"Where?" the Owl asked the Mole. "Nobody is here yet."'
    assert [s.speaker for s in read_speech(same, ("Owl", "Mole"))] == ["Owl", "Owl"]
    other = '"Where?" the Owl asked the Mole.\n\n"Home."'
    assert [(s.speaker, s.pattern) for s in read_speech(other, ("Owl", "Mole"))][1] == (
        "Mole", "en:turn"
    )


def test_an_english_line_on_the_next_row_of_its_paragraph_is_no_turn() -> None:
    text = 'The Owl said to the Mole, "Go home."\n"Rain is coming."'
    lines = read_speech(text, ("Owl", "Mole"))
    assert all(not s.pattern.endswith(":turn") for s in lines)


def test_every_verb_that_makes_a_sentence_of_saying_is_a_verb_of_saying() -> None:
    assert all(any(s.startswith(p) for p in SPEECH_STEMS_JA) for s in SAYING_STEMS_JA)
