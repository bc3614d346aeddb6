"""The model's ingest speed as measured on this machine, kept per data directory and model.

After every ingest that extracted something, `RateBook.record` adds what it cost (tokens,
seconds, chunks) to `<data dir>/state/model_rates.json`; the estimate before the next ingest
divides its expected tokens by the measured tokens per second (storygraph.estimate). The rate is
the sum over the last `KEEP` ingests of that model, so one unusually slow run does not dominate.
Retried calls are in the tokens and the seconds, so the rate includes their cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from storygraph.humanize import now_iso
from storygraph.locks import write_lock
from storygraph.models import IngestReport
from storygraph.state_files import read_json, state_dir, write_json_atomic

RATES_FILE = "model_rates.json"

KEEP = 5
MIN_SECONDS = 1.0
"""Ingests shorter than this say nothing reliable about speed and are not recorded."""


@dataclass(frozen=True)
class MeasuredRate:
    model: str
    tokens: int
    seconds: float
    chunks: int
    ingests: int
    updated_at: str

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds else 0.0

    @property
    def seconds_per_chunk(self) -> float:
        return self.seconds / self.chunks if self.chunks else 0.0


class RateBook:
    """The measured rates of one data directory."""

    def __init__(self, data_dir: Path | str) -> None:
        self.path = state_dir(data_dir) / RATES_FILE

    def _runs(self) -> dict[str, list[dict[str, object]]]:
        data, _warning = read_json(self.path)
        runs = (data or {}).get("models", {}) if isinstance(data, dict) else {}
        return runs if isinstance(runs, dict) else {}

    def get(self, model: str) -> MeasuredRate | None:
        """The measured rate of `model`, or None before its first recorded ingest."""
        runs = self._runs().get(model) or []
        if not runs:
            return None
        tokens = sum(int(r.get("tokens", 0)) for r in runs)  # type: ignore[call-overload]
        seconds = sum(float(r.get("seconds", 0.0)) for r in runs)  # type: ignore[arg-type]
        chunks = sum(int(r.get("chunks", 0)) for r in runs)  # type: ignore[call-overload]
        if tokens <= 0 or seconds <= 0:
            return None
        return MeasuredRate(model, tokens, seconds, chunks, len(runs), str(runs[-1].get("at")))

    def record(self, model: str, report: IngestReport) -> MeasuredRate | None:
        """Add one finished ingest to the model's rate (only ingests that called the model)."""
        tokens = report.usage.known_tokens  # a call that reported none would make it too fast
        if report.status != "added" or not tokens or report.seconds < MIN_SECONDS:
            return None
        run = {
            "tokens": tokens,
            "seconds": round(report.seconds, 3),
            "chunks": report.chunks,
            "calls": report.usage.calls,
            "at": now_iso(),
        }
        with write_lock(self.path.parent, "rates.lock"):  # other sessions and processes
            runs = self._runs()
            runs[model] = [*(runs.get(model) or []), run][-KEEP:]
            write_json_atomic(self.path, {"format": 1, "models": runs})
        return self.get(model)
