"""What the app remembers per data directory: the conversation, the last ingest report, and
the model's measured ingest speed.

Small JSON files under `<data dir>/state/`, each written atomically (a temporary file in the same
directory, then `os.replace`), so a crash mid-write leaves the previous version intact. A file
that cannot be read is moved aside as `<name>.unreadable` and the loader says so in its warning;
nothing is silently dropped. No Streamlit here: the pages call these functions.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from storygraph.humanize import now_iso, parse_iso
from storygraph.locks import write_lock
from storygraph.models import (
    Answer,
    Citation,
    Fact,
    IngestReport,
    ResolvedEntity,
    Support,
    TraceStep,
    Usage,
)
from storygraph.state_files import read_json, state_dir, write_json_atomic

log = logging.getLogger(__name__)

CHAT_FILE = "chat_history.json"
REPORTS_FILE = "ingest_reports.json"
MAX_TURNS = 100
"""The conversation keeps its last MAX_TURNS turns (older ones are dropped when saving)."""
FORMAT = 1


# --- answers and reports as JSON -------------------------------------------------------------
def _usage(data: Any) -> Usage:
    data = data or {}
    return Usage(
        int(data.get("calls", 0)),
        int(data.get("prompt_tokens", 0)),
        int(data.get("completion_tokens", 0)),
        int(data.get("unreported", 0)),
    )


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = set(cls.__dataclass_fields__)  # type: ignore[attr-defined]
    return {k: v for k, v in data.items() if k in names}


def answer_to_json(answer: Answer) -> dict[str, Any]:
    """Every field of the Answer (unlike `Answer.to_json`, which is the CLI's summary)."""
    return asdict(answer)


def answer_from_json(data: dict[str, Any]) -> Answer:
    """The Answer back from `answer_to_json`; unknown keys (a newer version) are ignored."""
    nested = ("entities", "facts", "citations", "steps", "usage", "support")
    answer = Answer(**_known(Answer, {k: v for k, v in data.items() if k not in nested}))
    answer.entities = [
        ResolvedEntity(**_known(ResolvedEntity, e)) for e in data.get("entities", [])
    ]
    answer.facts = [Fact(**_known(Fact, f)) for f in data.get("facts", [])]
    answer.citations = [Citation(**_known(Citation, c)) for c in data.get("citations", [])]
    answer.steps = [
        TraceStep(
            str(s.get("name", "")),
            float(s.get("seconds", 0.0)),
            dict(s.get("detail") or {}),
            _usage(s.get("usage")),
        )
        for s in data.get("steps", [])
    ]
    answer.usage = _usage(data.get("usage"))
    answer.support = _support(data.get("support"))
    return answer


def _support(data: Any) -> Support | None:
    """The support check's verdict back from `asdict` (None: an answer saved before it)."""
    if not isinstance(data, dict):
        return None
    # a chat saved before the candidate step was removed keeps `candidates` and `answered_by`:
    # they are not read (the answer's text and verdict are)
    fields = _known(Support, data)
    fields["named"] = tuple(fields.get("named") or ())
    return Support(**fields)


def report_from_json(data: dict[str, Any]) -> IngestReport:
    fields = _known(IngestReport, {k: v for k, v in data.items() if k != "usage"})
    report = IngestReport(**fields)
    report.usage = _usage(data.get("usage"))
    return report


# --- the conversation ------------------------------------------------------------------------
@dataclass
class ChatTurn:
    """One question and what came back: an answer, or an error with what to do next."""

    question: str
    answer: Answer | None = None
    error: str = ""
    hint: str = ""
    # Milliseconds: two questions asked within a second are still told apart and kept in order.
    asked_at: str = field(default_factory=lambda: now_iso("milliseconds"))
    stories: list[str] = field(default_factory=list)
    """The document ids the question was scoped to (empty: every story; qa/scope/scope.py)."""
    until: int | None = None
    """The last chapter of `read` the reader had read when asking (None: all of it;
    storygraph.store.reading)."""
    read: str = ""
    """The story (document id) `until` is a position in ("" when the question had none): the
    chat's "I have read up to" picker of a story starts from its last turn's position."""

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": answer_to_json(self.answer) if self.answer is not None else None,
            "error": self.error,
            "hint": self.hint,
            "asked_at": self.asked_at,
            "stories": list(self.stories),
            "until": self.until,
            "read": self.read,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChatTurn:
        raw = data.get("answer")
        return cls(
            question=str(data.get("question", "")),
            answer=answer_from_json(raw) if raw else None,
            error=str(data.get("error", "")),
            hint=str(data.get("hint", "")),
            asked_at=str(data.get("asked_at", "")),
            stories=[str(s) for s in data.get("stories") or []],
            until=_chapter(data.get("until")),
            read=str(data.get("read") or ""),
        )


def _chapter(value: Any) -> int | None:
    """A saved reading position: a chapter number, else None (the whole story)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def last_until(turns: Sequence[ChatTurn], story: str) -> int | None:
    """The reading position in `story` of the conversation's last question that had one."""
    return next((t.until for t in reversed(turns) if t.read == story), None)


def load_conversation(data_dir: Path | str) -> tuple[list[ChatTurn], str]:
    """The saved conversation of this data directory, and a warning if it could not be read."""
    data, warning = read_json(state_dir(data_dir) / CHAT_FILE)
    if not data:
        return [], warning
    try:
        return [ChatTurn.from_json(t) for t in data.get("turns", [])], ""
    except (AttributeError, TypeError, ValueError) as exc:
        return [], f"{CHAT_FILE} has an unexpected shape ({type(exc).__name__}); starting afresh"


def save_conversation(data_dir: Path | str, turns: Sequence[ChatTurn]) -> None:
    kept = list(turns)[-MAX_TURNS:]
    write_json_atomic(
        state_dir(data_dir) / CHAT_FILE,
        {"format": FORMAT, "turns": [t.to_json() for t in kept]},
    )


def append_turn(data_dir: Path | str, turn: ChatTurn) -> list[ChatTurn]:
    """Add one turn to the saved conversation and return it. Reads the file again under a lock,
    so turns other sessions saved meanwhile are kept (one conversation per data directory)."""
    with write_lock(state_dir(data_dir), "chat.lock"):
        turns, _warning = load_conversation(data_dir)
        _insert_in_order(turns, turn)
        save_conversation(data_dir, turns)
    return turns[-MAX_TURNS:]


def _insert_in_order(turns: list[ChatTurn], turn: ChatTurn) -> None:
    """Put `turn` after every turn asked before it. Turns are saved when they end, not in the
    order they were asked: a question cut short by a newer one (Streamlit runs the newer one at
    once, in a new thread) is saved after the newer one's answer but belongs before it."""
    when = parse_iso(turn.asked_at)
    at = len(turns)
    while when is not None and at > 0:
        before = parse_iso(turns[at - 1].asked_at)
        if before is None or before <= when:
            break
        at -= 1
    turns.insert(at, turn)


def clear_conversation(data_dir: Path | str) -> None:
    (state_dir(data_dir) / CHAT_FILE).unlink(missing_ok=True)


# --- the last ingest -------------------------------------------------------------------------
@dataclass
class IngestRecord:
    """The last ingest that stored something, with the estimate made just before it."""

    reports: list[IngestReport]
    estimate: dict[str, Any] | None = None
    finished_at: str = field(default_factory=now_iso)


def load_last_ingest(data_dir: Path | str) -> tuple[IngestRecord | None, str]:
    data, warning = read_json(state_dir(data_dir) / REPORTS_FILE)
    if not data:
        return None, warning
    try:
        return (
            IngestRecord(
                [report_from_json(r) for r in data.get("reports", [])],
                data.get("estimate"),
                str(data.get("finished_at", "")),
            ),
            "",
        )
    except (AttributeError, TypeError, ValueError) as exc:
        return None, f"{REPORTS_FILE} has an unexpected shape ({type(exc).__name__})"


def save_last_ingest(
    data_dir: Path | str, reports: Sequence[IngestReport], estimate: dict[str, Any] | None
) -> bool:
    """Keep this batch as "the last ingest" unless every file failed (then the previous
    successful report stays). True when it was saved."""
    if not reports or all(r.status == "failed" for r in reports):
        return False
    record = IngestRecord(list(reports), estimate)
    write_json_atomic(
        state_dir(data_dir) / REPORTS_FILE,
        {
            "format": FORMAT,
            "reports": [r.to_json() for r in record.reports],
            "estimate": estimate,
            "finished_at": record.finished_at,
        },
    )
    return True
