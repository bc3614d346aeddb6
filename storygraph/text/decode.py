"""Turn uploaded bytes into clean text: detect the encoding, refuse binaries, tidy controls.

Order of attempts: BOMs (UTF-32/UTF-8/UTF-16), magic numbers of common binaries, UTF-16
without BOM (told by where the NUL bytes sit), ISO-2022-JP, strict UTF-8, then CP932 vs EUC-JP
(whichever decodes strictly and reads more like Japanese), and charset-normalizer last.
"""

from __future__ import annotations

import codecs
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from storygraph.errors import InputError

SAMPLE_BYTES = 8192
MAX_CONTROL_SHARE = 0.1
MIN_JAPANESE_SCORE = 0.5
WESTERN_DEFAULT = "cp1252"

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"PK\x03\x04", "ZIP archive or Office document"),
    (b"PK\x05\x06", "ZIP archive"),
    (b"%PDF-", "PDF document"),
    (b"\x1f\x8b", "gzip archive"),
)
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_JAPANESE_CODECS = ("cp932", "euc_jp")
_JAPANESE_FALLBACK_CODECS = ("shift_jis_2004", "euc_jis_2004")
_KEPT_CONTROLS = frozenset("\n\t")
_NEWLINES = str.maketrans({"\x85": "\n", "\u2028": "\n", "\u2029": "\n"})


@dataclass(frozen=True)
class DecodedText:
    """Decoded, cleaned text and the codec that produced it."""

    text: str
    encoding: str


def decode_bytes(data: bytes, name: str = "") -> DecodedText:
    """Decode an uploaded file; raise InputError if it is empty, binary or undecodable."""
    label = f"'{name}'" if name else "The file"
    if not data:
        raise InputError(f"{label} is empty (0 bytes).", "Choose a text file that has the story.")
    raw, encoding = _decode(data, label)
    if _control_share(raw) > MAX_CONTROL_SHARE:
        raise _binary_error(label, "many control characters")
    text = clean_text(raw)
    if not text.strip():
        raise InputError(
            f"{label} contains only whitespace.", "Choose a text file that has the story."
        )
    return DecodedText(text=text, encoding=encoding)


def clean_text(text: str) -> str:
    """Normalise line endings to LF and drop control characters other than LF and tab."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").translate(_NEWLINES)
    text = text.removeprefix("\ufeff")
    return "".join(ch for ch in text if not _is_dropped_control(ch))


def looks_binary(data: bytes) -> bool:
    """True for bytes that are clearly not a text file (magic number, stray NULs, controls)."""
    if _binary_kind(data) is not None:
        return True
    if any(data.startswith(bom) for bom, _ in _BOMS):
        return False
    sample = data[:SAMPLE_BYTES]
    if b"\x00" in sample:
        return _decode_utf16_without_bom(data) is None
    return _control_byte_share(sample) > MAX_CONTROL_SHARE


def _decode(data: bytes, label: str) -> tuple[str, str]:
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return _decode_with_bom(data, codec, label)
    kind = _binary_kind(data)
    if kind is not None:
        raise _binary_error(label, kind)
    if b"\x00" in data:
        found = _decode_utf16_without_bom(data)
        if found is None:
            raise _binary_error(label, "NUL bytes")
        return found
    if _control_byte_share(data[:SAMPLE_BYTES]) > MAX_CONTROL_SHARE:
        raise _binary_error(label, "many control bytes")
    found = _decode_text_codecs(data)
    if found is None:
        raise InputError(
            f"{label} could not be decoded as text (not UTF-8, UTF-16, Shift_JIS or EUC-JP).",
            "Save the file as UTF-8 and upload it again.",
        )
    return found


def _decode_with_bom(data: bytes, codec: str, label: str) -> tuple[str, str]:
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{label} starts with a {codec.upper()} byte-order mark but is not valid {codec}.",
            "Save the file again as UTF-8 and upload it again.",
        ) from exc
    if codec == "utf-16":
        codec = "utf-16-le" if data.startswith(codecs.BOM_UTF16_LE) else "utf-16-be"
    return text, codec


def _decode_text_codecs(data: bytes) -> tuple[str, str] | None:
    if b"\x1b$B" in data or b"\x1b$@" in data:
        found = _strict(data, "iso2022_jp")
        if found is not None:
            return found
    found = _strict(data, "utf-8")
    if found is not None:
        return found
    japanese = _best_japanese(data, _JAPANESE_CODECS) or _best_japanese(
        data, _JAPANESE_FALLBACK_CODECS
    )
    if japanese is not None and japanese[2] >= MIN_JAPANESE_SCORE:
        return japanese[0], japanese[1]
    guessed = _charset_normalizer_guess(data)
    if japanese is not None and (guessed is None or _prefer_japanese(japanese[2], guessed, data)):
        return japanese[0], japanese[1]
    return guessed


def _prefer_japanese(score: float, guessed: tuple[str, str], data: bytes) -> bool:
    """A weak but positive Japanese decode beats any guess but an ASCII-based single-byte one.

    charset-normalizer is consulted for single-byte legacy text (cp1252, cp1251, ...). Such
    a codec gives one character per byte and keeps ASCII bytes as they are; a multi-byte
    guess (Big5, UTF-16) or an EBCDIC one (cp875) on the same bytes is noise.
    """
    text = guessed[0]
    single_byte_ascii = len(text) == len(data) and all(
        text[i] == chr(b) for i, b in enumerate(data) if b < 0x80
    )
    return score > 0 and not single_byte_ascii


def _strict(data: bytes, codec: str) -> tuple[str, str] | None:
    try:
        return data.decode(codec), codec
    except (UnicodeDecodeError, LookupError):
        return None


def _best_japanese(data: bytes, codecs_: Iterable[str]) -> tuple[str, str, float] | None:
    """Strictly decode with each codec; keep the most Japanese-looking (ties: first codec)."""
    best: tuple[str, str, float] | None = None
    for codec in codecs_:
        found = _strict(data, codec)
        if found is None:
            continue
        score = japanese_score(found[0])
        if best is None or score > best[2]:
            best = (found[0], codec, score)
    return best


def japanese_score(text: str) -> float:
    """Mean plausibility of the non-ASCII characters as Japanese prose (about -2 .. 1)."""
    weights = [_char_weight(ch) for ch in text if ord(ch) > 0x7F]
    return sum(weights) / len(weights) if weights else 1.0


def _charset_normalizer_guess(data: bytes) -> tuple[str, str] | None:
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # pragma: no cover - it is a dependency, but stay usable without it
        return None
    matches = from_bytes(data)
    best = matches.best()
    if best is None or best.encoding is None:
        return None
    for match in matches:  # among equally good guesses, prefer the Western default
        if (
            match.encoding == WESTERN_DEFAULT
            and match.chaos <= best.chaos
            and match.coherence >= best.coherence
        ):
            return str(match), match.encoding
    return str(best), best.encoding


def _decode_utf16_without_bom(data: bytes) -> tuple[str, str] | None:
    """Decode NUL-bearing bytes as UTF-16 LE or BE when one of them reads like real text."""
    if len(data) % 2:
        return None
    candidates = [
        found for codec in ("utf-16-le", "utf-16-be") if (found := _strict(data, codec)) is not None
    ]
    scored = [(_text_score(text[:SAMPLE_BYTES]), text, codec) for text, codec in candidates]
    scored = [s for s in scored if _control_share(s[1][:SAMPLE_BYTES]) <= MAX_CONTROL_SHARE]
    if not scored:
        return None
    score, text, codec = max(scored, key=lambda s: s[0])
    return (text, codec) if score >= MIN_JAPANESE_SCORE else None


def _text_score(text: str) -> float:
    """Mean plausibility of all characters as text (ASCII counts fully)."""
    if not text:
        return 0.0
    return sum(_any_char_weight(ch) for ch in text) / len(text)


def _any_char_weight(ch: str) -> float:
    if ch in "\n\r\t" or " " <= ch <= "~":
        return 1.0
    return _char_weight(ch)


@lru_cache(maxsize=8192)
def _char_weight(ch: str) -> float:
    code = ord(ch)
    if 0x3041 <= code <= 0x309F:
        return 1.0
    if 0x30A0 <= code <= 0x30FF:
        return 0.9
    if 0x3000 <= code <= 0x303F or 0xFF01 <= code <= 0xFF5E:
        return 0.8
    if 0xFF61 <= code <= 0xFF9F:
        return -1.0
    if 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0xF900 <= code <= 0xFAFF:
        return _kanji_weight(ch)
    category = unicodedata.category(ch)
    if category in ("Cc", "Cn", "Cs"):
        return -2.0
    if category == "Co":
        return -2.0
    if 0xA0 <= code <= 0x17F:
        return 0.3
    return 0.0


def _kanji_weight(ch: str) -> float:
    """Level-1 JIS kanji (common) weigh 1.0, other JIS X 0208 kanji 0.4, the rest 0.1."""
    try:
        encoded = ch.encode("cp932")
    except UnicodeEncodeError:
        return 0.1
    return 1.0 if 0x889F <= int.from_bytes(encoded, "big") <= 0x9872 else 0.4


def _binary_kind(data: bytes) -> str | None:
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            return kind
    return None


def _control_byte_share(sample: bytes) -> float:
    if not sample:
        return 0.0
    bad = sum(1 for b in sample if (b < 0x20 and b not in b"\t\n\r\x0b\x0c\x1a\x1b") or b == 0x7F)
    return bad / len(sample)


def _control_share(text: str) -> float:
    sample = text[:SAMPLE_BYTES]
    if not sample:
        return 0.0
    bad = sum(1 for ch in sample if _is_dropped_control(ch) and ch not in "\r\x0b\x0c\x85")
    return bad / len(sample)


def _is_dropped_control(ch: str) -> bool:
    return ch not in _KEPT_CONTROLS and unicodedata.category(ch) == "Cc"


def _binary_error(label: str, kind: str) -> InputError:
    return InputError(
        f"{label} looks like a binary file ({kind}), not text.",
        "Upload the story as a plain-text .txt file (UTF-8 or Shift_JIS).",
    )
