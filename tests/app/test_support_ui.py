"""The chat marks each answer: checked by a source, or not sure (and why), and a misread answer
is not shown as the answer (issue #27 items 2, 5, 6). Real Streamlit (AppTest), the real parser
frames, the model scripted at its boundary."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pages.chat import TOP_K_KEY, TOP_K_MAX
from storygraph.llm.factory import ModelInfo
from storygraph.qa.pipeline.factory import SMALL_TOP_K
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from tests.app.test_app import SAMPLE, _app, _ask, services  # noqa: F401 - the fixture
from tests.helpers import scripted_logic
from tests.helpers.scripted_model import ScriptedChatModel

SMALL = ModelInfo("embedded", "scripted-small", capable=False)


def _reply_naming(name: str, must: str) -> object:
    """A scripted small model that answers `name`, citing the first source holding `must`."""

    def answer(prompt: str) -> str:
        asked = prompt.rsplit("Sentences:", 1)[-1]
        for number, text in re.findall(r"^\[(\d+)\] (.+)$", asked, flags=re.MULTILINE):
            if must in text:
                return f"{name}です。[{number}]"
        return f"{name}です。[1]"

    return answer


def _support_lines(at) -> list[str]:  # type: ignore[no-untyped-def]
    """The verdict's line under the answer, without its icon and colour
    (":material/…: :green[…]")."""
    return [line for _, line in _marks(at)]


def _marks(at) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """The verdict's colour and line under the latest answer."""
    lines = []
    for m in at.chat_message[-1].markdown:
        found = re.fullmatch(r":material/\w+: :(\w+)\[(.*)\]", str(m.value), flags=re.DOTALL)
        if found:
            lines.append((found.group(1), found.group(2).replace("\\", "")))
    return lines


def _check_lines(at) -> list[str]:  # type: ignore[no-untyped-def]
    """The support check's own words, in the Details' developer tab."""
    lead = "**Support check:** "
    values = [str(m.value) for m in at.chat_message[-1].markdown]
    return [v.removeprefix(lead).replace("\\", "") for v in values if v.startswith(lead)]


def _changed(at) -> list[str]:  # type: ignore[no-untyped-def]
    """The sentence saying what replaced the model's answer, and why."""
    lead = ":material/swap_horiz: "
    values = [str(m.value) for m in at.chat_message[-1].markdown]
    return [v.removeprefix(lead).replace("\\", "") for v in values if v.startswith(lead)]


def _asked(  # type: ignore[no-untyped-def]
    services: Services,  # noqa: F811 - the fixture's name
    monkeypatch: pytest.MonkeyPatch,
    question: str,
    reply: object,
):
    """The chat after asking `question` about the sample story, the model replying `reply`."""
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    monkeypatch.setattr(scripted_logic, "answer", reply)
    return _ask(_app(services), question)


def test_a_supported_answer_is_marked_checked_by_its_source(
    services: Services,  # noqa: F811 - the fixture
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = _asked(services, monkeypatch, "桃太郎の仲間は誰？", _reply_naming("犬", "ついて"))
    lines = _support_lines(at)
    assert len(lines) == 1, lines
    # the reader's line: which source says so, in the question's language
    assert re.fullmatch(r"確認済み：文\[\d+\]にそう書かれています。", lines[0]), lines[0]
    # the verifier's confidence and why: one level deeper
    checks = _check_lines(at)
    assert re.fullmatch(r"checked: confidence 0\.\d\d: .+", checks[0]), checks
    assert "犬です。" in at.chat_message[-1].markdown[0].value
    assert _changed(at) == []  # nothing replaced the model's answer


def test_a_misread_answer_is_not_shown_and_the_line_says_why(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the embedded small model as it runs (token probabilities, the self-check): it names
    # someone the sentence it cites does not, for an act the story tells of no one
    small = build_services(
        Settings(data_dir=tmp_path / "small"), llm=ScriptedChatModel(logprobs=True), info=SMALL
    )
    try:
        at = _asked(small, monkeypatch, "桃太郎を倒したのは誰？", _reply_naming("魚屋", "猿"))
    finally:
        small.close()
    shown = str(at.chat_message[-1].markdown[0].value)
    assert not shown.startswith("魚屋")
    assert shown.startswith("この話の文からは分かりません。")
    lines = _support_lines(at)
    assert lines == ["この話の文には書かれていません。"], lines
    # the flip is said, in one plain sentence: what the model wrote and why it is not shown
    assert _changed(at) == [
        "モデルの最初の答え「魚屋」は表示していません："
        "この話の文には「桃太郎を倒したのは誰？」の答えが書かれていません。"
    ], _changed(at)
    assert _check_lines(at)[0].startswith("the story does not say: "), _check_lines(at)


def test_the_top_k_control_offers_what_the_model_reads(
    services: Services,  # noqa: F811 - the fixture
    tmp_path: Path,
) -> None:
    # a capable model reads the setting's number of facts
    at = _app(services)
    control = next(n for n in _controls(at) if n.key == TOP_K_KEY)
    assert control.value == Settings().rerank_top_k and control.max == TOP_K_MAX
    # the small embedded model reads at most SMALL_TOP_K: the control offers no more
    small = build_services(
        Settings(data_dir=tmp_path / "small"), llm=ScriptedChatModel(), info=SMALL
    )
    try:
        control = next(n for n in _controls(_app(small)) if n.key == TOP_K_KEY)
        assert control.value == SMALL_TOP_K and control.max == SMALL_TOP_K
    finally:
        small.close()


def _controls(at):  # type: ignore[no-untyped-def]
    """The chat tab's number inputs."""
    if not at.number_input:
        from app import TAB_KEY  # the chat tab holds the control

        at.session_state[TAB_KEY] = "Chat"
        at.run()
    return at.number_input
