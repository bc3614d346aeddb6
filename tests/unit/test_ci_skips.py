"""The CI plugin (tests.helpers.ci_skips), run on tiny test files by pytest itself (`pytester`)."""

from __future__ import annotations

import pytest

TESTS = """
import pytest

def test_passes():
    pass

def test_needs_a_tool():
    pytest.skip("node is not on PATH")

@pytest.mark.skipif(True, reason="sudachipy not installed")
def test_marked():
    pass

@pytest.mark.xfail(reason="known bug", strict=True)
def test_expected_failure():
    assert False

@pytest.mark.neo4j
def test_contract():
    pass
"""
MODULE_SKIP = """
import pytest

pytest.importorskip("no_such_module_for_the_ci_test")

def test_never_collected():
    pass
"""
PLUGIN = ("-p", "tests.helpers.ci_skips", "-m", "not neo4j", "-p", "no:cacheprovider")


def _run(pytester: pytest.Pytester, *files: str) -> pytest.RunResult:
    pytester.makeini("[pytest]\nmarkers =\n    neo4j: a Neo4j test\n")
    for number, text in enumerate(files):
        pytester.makepyfile(**{f"test_case{number}": text})
    return pytester.runpytest(*PLUGIN, "-rA")


def test_in_ci_every_skip_fails_with_its_reason(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    result = _run(pytester, TESTS)
    # a skip in the test fails it; a skipif mark skips at setup, which becomes an error
    result.assert_outcomes(passed=1, failed=1, errors=1, xfailed=1, deselected=1)
    result.stdout.fnmatch_lines(
        [
            "*skipped in CI: node is not on PATH; install it with make deps*",
            "*skipped in CI: sudachipy not installed; install it with make deps*",
        ]
    )
    assert result.ret != 0


def test_in_ci_a_module_skip_fails_the_collection(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    result = _run(pytester, MODULE_SKIP)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*skipped in CI: could not import 'no_such_module_for_the_ci_test'*make deps*"]
    )
    assert result.ret != 0


def test_outside_ci_a_skip_stays_a_skip(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    result = _run(pytester, TESTS, MODULE_SKIP)
    result.assert_outcomes(passed=1, skipped=3, xfailed=1, deselected=1)
    assert "skipped in CI" not in result.stdout.str()
    assert result.ret == 0


def test_the_summary_names_the_deselected_tests(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    result = _run(pytester, TESTS)
    result.stdout.fnmatch_lines(
        [
            "*deselected (not run)*",
            "1 test(s) deselected by -m 'not neo4j':",
            "DESELECTED test_case0.py::test_contract",
        ]
    )


def test_tests_left_out_by_k_are_counted_not_named(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    pytester.makeini("[pytest]\nmarkers =\n    neo4j: a Neo4j test\n")
    pytester.makepyfile(test_case0=TESTS)
    result = pytester.runpytest(*PLUGIN, "-k", "passes")
    result.stdout.fnmatch_lines(
        ["DESELECTED test_case0.py::test_contract", "3 more deselected by -k"]
    )
    assert "DESELECTED test_case0.py::test_marked" not in result.stdout.str()
