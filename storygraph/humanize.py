"""Numbers for people: durations in minutes and seconds, plurals, dates without ISO noise."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from storygraph.models import Usage

_IRREGULAR = {"story": "stories", "entity": "entities", "query": "queries"}


def plural(count: int, word: str, plural_form: str = "") -> str:
    """`1 document`, `2 documents`, `1 story`, `3 stories` (count with thousands separators)."""
    if count == 1:
        return f"1 {word}"
    return f"{count:,} {plural_form or _IRREGULAR.get(word, word + 's')}"


def tokens_text(usage: Usage) -> str:
    """A usage's token count as a user should read it: "1,234", "not reported" when no call
    reported its tokens, "≥ 1,234 (2 calls not reported)" when some did not."""
    total = f"{usage.total_tokens:,}"
    if usage.known_tokens is not None:
        return total
    if usage.total_tokens == 0:
        return "not reported"
    return f"≥ {total} ({plural(usage.unreported, 'call')} not reported)"


def duration(seconds: float | None) -> str:
    """`40 ms`, `2.4 s`, `12 s`, `3 min 27 s`, `1 h 02 min`; "–" when unknown."""
    if seconds is None or seconds < 0:
        return "–"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 10:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def now_iso(timespec: str = "seconds") -> str:
    """The current time in UTC, ISO 8601, for storing (`timespec` as `datetime.isoformat`)."""
    return datetime.now(UTC).isoformat(timespec=timespec)


def parse_iso(value: str) -> datetime | None:
    """A stored ISO timestamp as an aware datetime (UTC when it names no zone); None for text
    that is not one."""
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (AttributeError, ValueError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def human_date(value: str, *, now: datetime | None = None) -> str:
    """A stored ISO timestamp as `today 14:05`, `yesterday 09:12` or `3 Nov 2026 14:05`
    (local time). Text that is not a timestamp comes back unchanged."""
    parsed = parse_iso(value)
    if parsed is None:
        return value
    when = parsed.astimezone()
    today = (now or datetime.now(UTC)).astimezone().date()
    clock = when.strftime("%H:%M")
    days = (today - when.date()).days
    if days == 0:
        return f"today {clock}"
    if days == 1:
        return f"yesterday {clock}"
    return f"{when.day} {when.strftime('%b %Y')} {clock}"
