"""The qa wing's shape (docs/ISSUES.md#engine-parts): six rooms, no module over `MAX_LINES`, it
imports nothing from the ingest wing, and only the question's analysis reads the question's
language (the support check reads the answer's and its sources')."""

from __future__ import annotations

import ast
from pathlib import Path

QA = Path(__file__).resolve().parents[2] / "storygraph" / "qa"


ROOMS = {"question", "retrieval", "generation", "verify", "scope", "pipeline"}
"""The wing's rooms by role (issue 43): read the question, retrieve, write, verify, choose the
stories, and the pipeline that composes and runs them."""

MAX_LINES = 600
"""No module of the wing is longer (issue 43): a newcomer reads one whole, and a module that
grows past it is split by what its parts do."""


def _trees() -> dict[str, ast.Module]:
    return {
        p.relative_to(QA).as_posix(): ast.parse(p.read_text(encoding="utf-8"))
        for p in sorted(QA.rglob("*.py"))
    }


def test_the_wing_is_its_rooms_and_nothing_else_at_its_top() -> None:
    top = {p.name for p in QA.iterdir() if not p.name.startswith((".", "__"))}
    assert top == ROOMS


def test_no_module_of_the_wing_is_over_max_lines() -> None:
    lengths = {
        p.relative_to(QA).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
        for p in sorted(QA.rglob("*.py"))
    }
    assert len(lengths) > 10
    assert {name: n for name, n in lengths.items() if n > MAX_LINES} == {}


def test_qa_imports_nothing_from_ingest() -> None:
    found = [
        (name, node.module)
        for name, tree in _trees().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("storygraph.ingest")
    ]
    assert len(_trees()) > 10 and found == []


def test_only_the_analysis_detects_the_question_s_language() -> None:
    callers = {
        name
        for name, tree in _trees().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "detect_language"
    }
    # The other languages the stages read are handed to them: the answer's by the answer step
    # (checks.judge_reply), a source's and the graph names' by their documents (stored at ingest).
    assert callers == {"question/analysis.py"}


def test_the_verify_room_reads_no_question_structure_itself() -> None:
    """The question is read once, in qa/question (issue 43): the premise check asks the question
    room's `QuestionParser` (question/checked.py) for the question's structure and the analysis
    as it reads it, and imports none of question_structure's parse readers (`read_*`)."""
    verify = {name: tree for name, tree in _trees().items() if name.startswith("verify/")}
    found = [
        (name, alias.name)
        for name, tree in verify.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").startswith("storygraph.qa.question.")
        for alias in node.names
        if alias.name.startswith(("read_", "asked_in_"))
    ]
    assert len(verify) > 5 and found == []
    asks = {
        name
        for name, tree in verify.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and node.module == "storygraph.qa.question.checked"
        and any(alias.name == "QuestionParser" for alias in node.names)
    }
    assert asks == {"verify/premise.py"}


REGEX_CALLS = frozenset(
    {"search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}
)
"""A compiled pattern's (or `re`'s) calls that read a text."""


def _reads_question(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "question" for n in ast.walk(node))


def test_the_verify_room_matches_no_pattern_against_the_question_s_text() -> None:
    """The question's words are read in qa/question (issue 43): what they ask (a name, whose, a
    choice, a reason), the question word's particle and the verb after it, and the words a
    participant is written with across languages are the question room's
    (question/question_words.py, `QuestionAnalysis`'s properties, question/checked.py); the
    support check matches no pattern against `.question` and detects no question type."""
    verify = {name: tree for name, tree in _trees().items() if name.startswith("verify/")}
    found = [
        (name, node.lineno)
        for name, tree in verify.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in REGEX_CALLS
        and any(_reads_question(a) for a in [*node.args, *(k.value for k in node.keywords)])
    ]
    assert len(verify) > 5 and found == []
    typed = [
        (name, alias.name)
        for name, tree in verify.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name == "detect_question_type"
    ]
    assert typed == []


def test_the_premise_check_reads_the_question_s_text_only_through_the_question_room() -> None:
    """In the premise check and its helpers (verify/premise.py, verify/support*.py) the
    question's text is handed only to the question room's parser (`parser.structure(
    analysis.question, …)`); its words and roles come from qa/question (`QuestionAnalysis`), so
    no helper or variable there reads `.question` again. (The verifier's signals read the
    recorded `Evidence.question`, the calibrated model's input; the gate hands it on to them.)"""
    found: list[tuple[str, int]] = []
    checked = [n for n in _trees() if n == "verify/premise.py" or n.startswith("verify/support")]
    assert "verify/premise.py" in checked
    for name in checked:
        tree = _trees()[name]
        handed = {
            id(arg)
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "structure"
            for arg in node.args[:1]
        }
        found.extend(
            (name, node.lineno)
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and node.attr == "question"
            and isinstance(node.ctx, ast.Load)
            and id(node) not in handed
        )
    assert found == []
