"""JMdict's word lookup (storygraph.text.jmdict) reads one entry's glosses by its id: the plan
SQLite takes for it searches the senses of that entry, not every English gloss of the dictionary
(which cost 0.1-0.16 s a word of a Japanese question translated for an English story)."""

from __future__ import annotations

from storygraph.text.jmdict import _GLOSSES, open_dictionary


def test_a_words_glosses_are_read_by_its_entry_not_by_a_scan_of_the_glosses() -> None:
    dictionary = open_dictionary()
    assert dictionary is not None, "jamdict-data is a pinned requirement"
    plan = " / ".join(
        row[3] for row in dictionary._db.execute("EXPLAIN QUERY PLAN " + _GLOSSES, (1,))
    )
    assert "Sense_idseq" in plan and "SenseGloss_sid" in plan, plan
    assert "SenseGloss_lang" not in plan, plan
    assert dictionary.english_for("桃")[0] == "peach"
