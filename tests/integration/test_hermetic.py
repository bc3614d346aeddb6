"""The suite itself: hermetic (no developer environment, no `.env`), Neo4j only when asked for,
and red when ../shared is missing. Each case runs a small pytest session in a subprocess with
the project's own tests/conftest.py and a hostile environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOGUS = {
    "NEO4J_URI": "bolt://127.0.0.1:9",
    "NEO4J_PASSWORD": "bogus-password",
    "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
    "OPENAI_API_KEY": "sk-bogus",
    "AZURE_OPENAI_ENDPOINT": "https://bogus.invalid",
    "STORYGRAPH_DATA_DIR": "/nonexistent/bogus-data",
}
INNER_TESTS = '''
import os
from pathlib import Path

from storygraph.settings import Settings, get_settings


PREFIXES = ("STORYGRAPH_", "OPENAI_", "AZURE_", "NEO4J_")


def test_nothing_of_the_developer_reaches_a_test():
    # only what tests/conftest.py sets for every test: servers a command starts are not kept
    ours = {"STORYGRAPH_STORE_IDLE_S": "0", "STORYGRAPH_ENCODER_IDLE_S": "0"}
    assert {k: v for k, v in os.environ.items() if k.startswith(PREFIXES)} == ours
    assert not Path(".env").exists()
    for settings in (Settings(), get_settings()):
        assert settings.neo4j_uri is None and not settings.uses_neo4j
        assert settings.openai_base_url is None and settings.openai_api_key is None
        assert settings.azure_openai_endpoint is None
        assert settings.rerank_top_k != 3  # from the .env


def test_needs_the_shared_folder(shared_dir):
    assert shared_dir.is_dir()
'''


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(BOGUS)
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def _pytest(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_developer_env_and_dotenv_never_reach_a_test_and_missing_shared_fails(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"  # no ../shared beside it
    (project / "tests").mkdir(parents=True)
    shutil.copyfile(ROOT / "tests" / "conftest.py", project / "tests" / "conftest.py")
    (project / "tests" / "test_inner.py").write_text(INNER_TESTS, encoding="utf-8")
    dotenv = "\n".join(f"{k}={v}" for k, v in BOGUS.items()) + "\nSTORYGRAPH_RERANK_TOP_K=3\n"
    (project / ".env").write_text(dotenv, encoding="utf-8")
    done = _pytest(["tests"], project, _env())
    out = done.stdout + done.stderr
    assert "PASSED tests/test_inner.py::test_nothing_of_the_developer_reaches_a_test" in out, out
    assert "SKIPPED" not in out, out
    assert "test_needs_the_shared_folder" in out and "is missing" in out, out
    assert "1 passed" in out and "1 error" in out, out
    assert done.returncode != 0


def test_an_exported_neo4j_uri_does_not_select_the_neo4j_tests() -> None:
    done = _pytest(
        ["--collect-only", "-q", "tests/integration/test_store_contract.py"], ROOT, _env()
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    collected = [line for line in out.splitlines() if not line.startswith("DESELECTED ")]
    assert "[falkordb]" in out and not [line for line in collected if "[neo4j]" in line], out
    # deselected, and named as such in the summary (tests.helpers.ci_skips)
    named = "DESELECTED tests/integration/test_store_contract.py::test_importing_twice_changes"
    assert f"{named}_nothing[neo4j]" in out and "deselected by -m 'not neo4j'" in out, out


def test_the_neo4j_tests_fail_without_a_server_when_asked_for() -> None:
    env = {k: v for k, v in _env().items() if not k.startswith("NEO4J_")}
    target = "tests/integration/test_store_contract.py::test_importing_twice_changes_nothing"
    done = _pytest(["-m", "neo4j", "-q", target], ROOT, env)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "needs NEO4J_URI" in out and "SKIPPED" not in out, out
