"""Settings come from one place, and .env.example documents every one of them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from storygraph.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def _env_names() -> set[str]:
    names: set[str] = set()
    for field in Settings.model_fields.values():
        alias = field.validation_alias
        choices = getattr(alias, "choices", None)
        assert choices, f"every setting needs an environment name: {field}"
        names.add(str(choices[0]))
    return names


def test_env_example_lists_every_setting_and_nothing_else() -> None:
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    documented = set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", text, flags=re.MULTILINE))
    assert documented == _env_names()


def test_every_documented_setting_has_a_comment_above_it() -> None:
    lines = (ROOT / ".env.example").read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if re.match(r"^# [A-Z][A-Z0-9_]+=", line):
            block = lines[max(0, i - 6) : i]
            assert any(
                b.startswith("# ") and not re.match(r"^# [A-Z][A-Z0-9_]+=", b) for b in block
            ), f"no explanation near {line}"


def test_defaults_need_no_configuration(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no .env here
    for name in _env_names():
        monkeypatch.delenv(name, raising=False)
    settings = Settings()
    assert settings.resolved_provider() == "embedded"
    assert not settings.uses_neo4j
    assert settings.effective_chunk_size() == 200


@pytest.mark.parametrize(
    ("env", "provider"),
    [
        ({"OPENAI_API_KEY": "sk-test"}, "openai"),
        ({"OPENAI_BASE_URL": "http://localhost:8000/v1"}, "openai_compatible"),
        ({"AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com"}, "azure"),
        ({"STORYGRAPH_NO_LLM": "true", "OPENAI_API_KEY": "sk-test"}, "none"),
        ({"STORYGRAPH_LLM_PROVIDER": "embedded", "OPENAI_API_KEY": "sk-test"}, "embedded"),
    ],
)
def test_provider_is_chosen_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: dict[str, str], provider: str
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in _env_names():
        monkeypatch.delenv(name, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert Settings().resolved_provider() == provider


def test_env_file_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for name in _env_names():
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".env").write_text("STORYGRAPH_RERANK_TOP_K=7\nNEO4J_URI=bolt://db:7687\n")
    settings = Settings()
    assert settings.rerank_top_k == 7
    assert settings.uses_neo4j


def test_secrets_are_not_shown(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret")
    monkeypatch.setenv("NEO4J_PASSWORD", "hunter2-secret")
    shown = repr(Settings()) + str(Settings())
    assert "sk-very-secret" not in shown
    assert "hunter2-secret" not in shown


def test_invalid_values_are_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STORYGRAPH_RERANK_MIN_SCORE", "11")
    with pytest.raises(ValueError, match=r"rerank_min_score|STORYGRAPH_RERANK_MIN_SCORE"):
        Settings()
