"""The app has the embedded model read the answer prompt's fixed part before the first question
(docs/ISSUES.md#prompt-prefix). Real Services on the real embedded FalkorDB; the model server is the
scripted OpenAI-compatible one, which records every request (the model boundary)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storygraph.errors import StoreError
from storygraph.ingest.graph_io import import_graph, load_graph_file
from storygraph.models import DocumentInfo
from storygraph.services import Services, build_services, read_ahead_languages
from storygraph.settings import Settings
from tests.helpers import model_install
from tests.helpers.model_install import InstallingThenReady
from tests.helpers.scripted_openai_server import RunningServer, start_in_thread

pytestmark = pytest.mark.timeout(120)

starter = model_install.starter
installing = model_install.services  # embedded model configured, still being installed


class RunningAt:
    """An `EmbeddedStarter` whose server is already up at `url` (the scripted server)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __call__(self, settings: Settings) -> tuple[Any, str]:
        return self, ""

    crash_notice = ""  # never crashes

    def ensure_running(self) -> str:
        return self.url

    def fault(self) -> None:
        return None

    def worked(self) -> None:
        pass


@pytest.fixture
def server() -> Iterator[RunningServer]:
    running = start_in_thread(llama_cpp=True)
    yield running
    running.stop()


def _services(tmp_path: Path, url: str) -> Services:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        data_dir=tmp_path / "data",
        llm_provider="embedded",
        model_dir=None,
        llm_max_retries=0,
    )
    return build_services(settings, embedded=RunningAt(url))


def _doc(language: str) -> DocumentInfo:
    return DocumentInfo(id=language, name="s.txt", sha256="0", language=language, chars=1)


def test_the_read_ahead_is_the_first_question_s_own_prefix(
    tmp_path: Path, server: RunningServer, shared_dir: Path
) -> None:
    services = _services(tmp_path, server.base_url)
    try:
        import_graph(services.store, load_graph_file(shared_dir / "eval" / "seed_graph.json"))
        services.keep_answers_warm()
        assert services.warm_thread is not None
        services.warm_thread.join(30)
        assert len(server.requests) == 2  # both languages, one token each
        ahead, other = server.requests
        assert ahead["max_tokens"] == 1 and not ahead.get("stream")
        assert other["max_tokens"] == 1 and not other.get("stream")
        assert "Japanese" in ahead["messages"][0]["content"]  # no stories yet: Japanese first
        assert "English" in other["messages"][0]["content"]

        services.qa().ask("桃太郎を倒したのは誰？")
        asked = server.requests[-1]
        assert asked.get("stream") and asked is not ahead
        # everything before the question's own turn is what was read ahead, word for word
        assert asked["messages"][:-1] == ahead["messages"][:-1]
        head = ahead["messages"][-1]["content"].split("(none)")[0]
        assert head and asked["messages"][-1]["content"].startswith(head)
    finally:
        services.close()


def test_no_read_ahead_unless_the_app_asks_and_none_for_a_capable_model(
    tmp_path: Path, server: RunningServer
) -> None:
    services = _services(tmp_path, server.base_url)
    try:
        assert services.warm_thread is None and server.requests == []  # the CLI's case
    finally:
        services.close()
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        data_dir=tmp_path / "capable",
        llm_provider="openai_compatible",
        openai_base_url=server.base_url,
        llm_model="some-7b",
        llm_capable=True,
    )
    capable = build_services(settings)
    try:
        capable.keep_answers_warm()
        assert capable.warm_thread is None and server.requests == []  # not our server to load
    finally:
        capable.close()


def test_a_server_that_does_not_answer_is_a_warning_not_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    services = _services(tmp_path, "http://127.0.0.1:9/v1")  # nothing listens on port 9
    try:
        with caplog.at_level(logging.WARNING, logger="storygraph.services"):
            services.keep_answers_warm()
            assert services.warm_thread is not None
            services.warm_thread.join(60)
        assert not services.warm_thread.is_alive()
        assert "reading the answer prompt ahead failed" in caplog.text
    finally:
        services.close()


def test_a_store_that_cannot_list_its_stories_reads_the_japanese_prompt_ahead_and_says_so(
    tmp_path: Path, server: RunningServer, caplog: pytest.LogCaptureFixture, monkeypatch: Any
) -> None:
    services = _services(tmp_path, server.base_url)

    def down() -> list[DocumentInfo]:
        raise StoreError("the graph store is not answering", "start it again")

    monkeypatch.setattr(services.store, "list_documents", down)
    try:
        with caplog.at_level(logging.WARNING, logger="storygraph.services"):
            services.keep_answers_warm()
            assert services.warm_thread is not None
            services.warm_thread.join(30)
        assert "could not list the stories" in caplog.text
        assert "Japanese" in server.requests[0]["messages"][0]["content"]
    finally:
        services.close()


def test_a_model_installed_later_is_read_ahead_once_it_is_picked_up(
    installing: Services, starter: InstallingThenReady
) -> None:
    installing.keep_answers_warm()
    assert installing.warm_thread is None  # no model yet: nothing to read
    starter.ready = True
    assert installing.llm() is not None  # picked up
    assert installing.warm_thread is not None
    installing.warm_thread.join(30)
    assert not installing.warm_thread.is_alive()


@pytest.mark.parametrize(
    ("languages", "first"),
    [([], "ja"), (["en"], "en"), (["en", "ja"], "ja"), (["en", "en", "ja"], "en"), (["ja"], "ja")],
)
def test_the_read_ahead_starts_with_the_language_of_most_stories(
    languages: list[str], first: str
) -> None:
    order = read_ahead_languages([_doc(x) for x in languages])
    assert order[0] == first and sorted(order) == ["en", "ja"]
