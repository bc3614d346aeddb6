"""A pytest plugin (registered by tests/conftest.py): under CI a skipped test is a failure, and
the summary lists the tests deselected by marker.

A test that skips because a tool is missing (Node for the Cypher dialect check, Chromium for the
browser tests, SudachiPy, llama-cpp-python) tests nothing, and a green CI run would hide that.
With `CI=true` in the environment (`.ci/run` runs `make test` so) every skip report, of a test or
of a whole module (`pytest.importorskip`), becomes a failure that says what was missing. An
expected failure (`xfail`) is not a skip and is left alone. The Neo4j contract tests are not
skipped but deselected by marker (`-m 'not neo4j'` in pyproject.toml): the terminal summary names
each deselected test, so what did not run is on the page.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest

FIX = "install it with make deps"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def _reason(longrepr: Any) -> str:
    """The reason of a skip report: pytest keeps it as (path, line, "Skipped: reason")."""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _fail_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail") and in_ci():
        report.outcome = "failed"
        report.longrepr = f"skipped in CI: {_reason(report.longrepr)}; {FIX}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    outcome = yield
    _fail_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, None]:
    outcome = yield
    _fail_skip(outcome.get_result())


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Name each test a marker expression deselected (the Neo4j ones under `-m 'not neo4j'`);
    count the ones `-k` left out (a developer's own choice, not a gap of the suite)."""
    deselected = terminalreporter.stats.get("deselected", [])
    if not deselected:
        return
    markexpr = terminalreporter.config.option.markexpr or ""
    by_marker = [
        item for item in deselected if any(m.name in markexpr for m in item.iter_markers())
    ]
    terminalreporter.section("deselected (not run)", sep="-")
    if by_marker:
        terminalreporter.write_line(f"{len(by_marker)} test(s) deselected by -m {markexpr!r}:")
        for item in by_marker:
            terminalreporter.write_line(f"DESELECTED {item.nodeid}")
    if len(deselected) > len(by_marker):
        terminalreporter.write_line(f"{len(deselected) - len(by_marker)} more deselected by -k")
