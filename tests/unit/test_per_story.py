"""qa/scope/per_story.py: the scopes of a per-story answer, its head lines read back, and the
citations a reader does not see under their own story's name."""

from __future__ import annotations

from storygraph.models import Citation
from storygraph.qa.scope.per_story import (
    cited_stories,
    misplaced_citations,
    renumbered,
    source_scopes,
    split_by_story,
    story_head,
    story_scopes,
)
from storygraph.qa.scope.scope import MAX_STORIES, Scope, narrow
from tests.unit.test_scope import NAMES


def _cite(number: int, document: str) -> Citation:
    return Citation(number, f"c{number}", document, "…")


def test_stories_that_tie_get_a_scope_each_and_one_story_keeps_its_own() -> None:
    tie = narrow(["おじいさん"], NAMES, ())
    assert tie.tied == ("h", "m")
    scopes = story_scopes(tie)
    assert [(s.documents, s.keys) for s in scopes] == [
        (("h",), ("h:おじいさん",)),
        (("m",), ("m:おじいさん",)),
    ]
    one = narrow(["桃太郎", "おじいさん"], NAMES, ())
    assert one.tied == () and story_scopes(one) == [one]


def test_a_linked_twin_of_a_story_that_did_not_tie_comes_along_in_each_part() -> None:
    scope = Scope(keys=("a:x", "b:x", "c:y"), documents=("a", "b", "c"), tied=("a", "b"))
    assert [(s.documents, s.keys) for s in story_scopes(scope)] == [
        (("a", "c"), ("a:x", "c:y")),
        (("b", "c"), ("b:x", "c:y")),
    ]


def test_the_parts_are_read_back_by_their_head_lines_in_either_language() -> None:
    text = "\n\n".join(
        [
            f"{story_head('momotaro.txt', japanese=True)}\nしば刈り[1]",
            f"{story_head('kobutori.txt', japanese=True)}\n木を切り[2]",
        ]
    )
    assert [(n, p.strip()) for n, p in split_by_story(text)] == [
        ("momotaro.txt", "しば刈り[1]"),
        ("kobutori.txt", "木を切り[2]"),
    ]
    english = f"{story_head('fox.txt', japanese=False)}\nThe grapes [1]"
    assert split_by_story(english)[0][0] == "fox.txt"
    assert split_by_story("An answer about one story [1]") == [
        (None, "An answer about one story [1]")
    ]


def test_a_citation_is_misplaced_unless_it_is_under_its_own_storys_name() -> None:
    text = (
        f"{story_head('a.txt', japanese=True)}\n答え[1]\n"
        f"{story_head('b.txt', japanese=True)}\n答え[2][3]"
    )
    cited = [_cite(1, "a.txt"), _cite(2, "b.txt"), _cite(3, "a.txt"), _cite(4, "b.txt")]
    # [3] is a.txt's but under b.txt; [4], listed with no mark, falls in b.txt's part
    assert misplaced_citations(text, cited, "a.txt") == []
    assert [c.number for c in misplaced_citations(text, cited, "b.txt")] == [3]
    # a story with no part of its own (a linked twin's), listed with no mark: by its number
    twin = [_cite(1, "a.txt"), _cite(2, "b.txt"), _cite(3, "b.txt"), _cite(4, "c.txt")]
    assert [c.number for c in misplaced_citations(text, twin, "b.txt")] == [4]
    # jaf:issunboshi:08: the second part marked only [12]; its unmarked sources 6-11 are its
    # own story's, not the part before's (whose last mark is [1])
    head_a, head_b = story_head("a.txt", japanese=True), story_head("b.txt", japanese=True)
    text = f"{head_a}\n答え[1]\n{head_b}\n答え[12]"
    parts = [_cite(n, "a.txt" if n <= 5 else "b.txt") for n in range(1, 17)]
    assert misplaced_citations(text, parts, "c.txt") == []
    # an answer about one story: any other story's citation is misplaced
    assert misplaced_citations("答え[1][2]", cited[:2], "a.txt") == [cited[1]]
    assert misplaced_citations("答え[1]", cited[:1], "a.txt") == []


def test_a_parts_marks_and_citations_are_numbered_on() -> None:
    text, cited = renumbered("x[1] y[2]", [_cite(1, "b"), _cite(2, "b")], 3)
    assert text == "x[4] y[5]" and [c.number for c in cited] == [4, 5]
    # a mark naming none of the part's sources would name the next part's: dropped
    text, _ = renumbered("x[1] y[3]", [_cite(1, "a"), _cite(2, "a")], 0)
    assert text == "x[1] y"


def test_an_undecided_questions_sources_give_a_scope_per_story_they_came_from() -> None:
    cited = [
        Citation(1, "t:0", "taketori.txt", "…"),
        Citation(2, "", "", "a fact with no chunk"),
        Citation(3, "s:4", "sarukani.txt", "…"),
        Citation(4, "t:2", "taketori.txt", "…"),
    ]
    assert cited_stories(cited) == ["t", "s"]  # in the order first cited
    scope = Scope(keys=("t:親",), documents=("t",), undecided=True)
    scopes = source_scopes(scope, ["t", "s", "a", "b"])
    assert len(scopes) == MAX_STORIES
    # each part cites its own story only; one holding none of the names starts from none
    assert [(s.documents, s.keys) for s in scopes] == [
        (("t",), ("t:親",)),
        (("s",), ()),
    ]
