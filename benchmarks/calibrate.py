"""Calibration of the estimate's constants against the real embedded model.

- tokens per character of story text, by language, with the embedded model's own tokenizer
  (llama.cpp loading only the GGUF vocabulary; needs `llama_cpp` and the model file);
- with the embedded model server running: real extraction calls through the app's own
  `TransformerExtractor`, counting prompt / completion tokens through LangChain callbacks and
  timing them, so the fixed per-call instruction overhead is `prompt tokens - chunk tokens`.

The figures printed here are the ones `storygraph/estimate.py` keeps as its constants; the table
shows the fresh measurement next to the stored constant.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from benchmarks.common import (
    BenchResult,
    Table,
    app_data_dir,
    median,
    running_model_server,
    story_files,
)
from storygraph import estimate
from storygraph.ingest.pipeline import prepare
from storygraph.text.chunking import chunk_text


def _tokenizer() -> Any:
    try:
        from llama_cpp import Llama
    except ImportError:
        return None
    from storygraph.llm.model_files import model_path
    from storygraph.settings import Settings

    path = model_path(Settings())
    if not path.is_file():
        return None
    return Llama(str(path), vocab_only=True, verbose=False)


def _count(tokenizer: Any, text: str) -> int:
    return len(tokenizer.tokenize(text.encode("utf-8"), add_bos=False, special=False))


def _chunks(path: Path, size: int) -> tuple[str, list[str]]:
    prepared = prepare(path.name, path.read_bytes(), max_bytes=50 * 1024 * 1024)
    chunks = chunk_text(prepared.text, prepared.document_id, size, size // 8)
    return prepared.language, [c.text for c in chunks]


def tokens_per_char(tokenizer: Any, size: int = 200) -> dict[str, tuple[float, int]]:
    """Language -> (tokens per char over every chunk of the stories, chars measured)."""
    totals: dict[str, list[int]] = {}
    for path in story_files():
        language, texts = _chunks(path, size)
        acc = totals.setdefault(language, [0, 0])
        for text in texts:
            acc[0] += _count(tokenizer, text)
            acc[1] += len(text)
    return {lang: (tok / chars, chars) for lang, (tok, chars) in totals.items() if chars}


class _Capture:
    """Records what the pipeline sends to the model and what the scripted model answers."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.replies: list[str] = []


def captured_extraction(tokenizer: Any, per_language: int) -> list[dict[str, Any]]:
    """Real LLMGraphTransformer prompts (messages + tool schema) tokenized by the real tokenizer.

    The scripted model stands in only to catch the request: the prompt is the exact text the
    transformer builds, and the completion is the tool call a model returns for the triples
    found in the chunk, both counted with the embedded model's tokenizer. The chat template's
    own few tokens per message are not included.
    """
    from langchain_core.messages import AIMessage

    from storygraph.ingest.llm_extraction import TransformerExtractor
    from storygraph.llm.usage import UsageCounter
    from storygraph.models import Chunk
    from tests.helpers.scripted_model import ScriptedChatModel

    capture = _Capture()

    class CapturingModel(ScriptedChatModel):
        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                      **kwargs: Any) -> Any:  # fmt: skip
            tools = json.dumps(kwargs.get("tools") or [], ensure_ascii=False)
            text = "\n".join(str(m.content) for m in messages)
            capture.prompts.append(text + "\n" + tools)
            result = super()._generate(messages, stop, run_manager, **kwargs)
            message = result.generations[0].message
            calls = message.tool_calls if isinstance(message, AIMessage) else []
            capture.replies.append(
                json.dumps([c["args"] for c in calls], ensure_ascii=False)
                if calls
                else str(message.content)
            )
            return result

    extractor = TransformerExtractor(CapturingModel(), attempts=1)
    samples: list[dict[str, Any]] = []
    for path in story_files():
        language, texts = _chunks(path, 200)
        for i, text in enumerate(texts[:per_language]):
            chunk = Chunk(f"cal:{i}", "cal", i, text, 0, len(text))
            before = len(capture.prompts)
            extractor.extract(chunk, language, [UsageCounter()])
            prompt = "".join(capture.prompts[before:])
            reply = "".join(capture.replies[before:])
            samples.append(
                {
                    "language": language,
                    "chars": len(text),
                    "chunk_tokens": _count(tokenizer, text),
                    "prompt_tokens": _count(tokenizer, prompt),
                    "completion_tokens": _count(tokenizer, reply),
                }
            )
    return samples


_PROMPT_RE = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
_EVAL_RE = re.compile(r"\beval time =\s*([\d.]+) ms /\s*(\d+) runs")
_PREFIX_RE = re.compile(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens")


def server_log_speeds(log: Path, min_prompt: int = 200) -> dict[str, Any] | None:
    """Prompt / generation speed of the real requests in the llama.cpp server log.

    Only requests that evaluated at least `min_prompt` new prompt tokens count (short ones are
    dominated by a cached prefix). The log is the app's own (`<data>/logs/llm-server.log`).
    """
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    prompt_rates: list[float] = []
    gen_rates: list[float] = []
    prompt_sizes: list[int] = []
    completion_sizes: list[int] = []
    pending_prompt: tuple[float, int] | None = None
    for line in text.splitlines():
        if m := _PREFIX_RE.search(line):
            prompt_sizes.append(int(m.group(1)) + int(m.group(2)))
        elif m := _PROMPT_RE.search(line):
            pending_prompt = (float(m.group(1)), int(m.group(2)))
        elif (m := _EVAL_RE.search(line)) and pending_prompt is not None:
            p_ms, p_tok = pending_prompt
            g_ms, g_tok = float(m.group(1)), int(m.group(2))
            pending_prompt = None
            if p_tok >= min_prompt and p_ms > 0 and g_ms > 0:
                prompt_rates.append(p_tok / p_ms * 1000)
                gen_rates.append(g_tok / g_ms * 1000)
                completion_sizes.append(g_tok)
    if not prompt_rates:
        return None
    return {
        "requests": len(prompt_rates),
        "prompt_tok_s_median": median(prompt_rates),
        "prompt_tok_s_best": max(prompt_rates),
        "gen_tok_s_median": median(gen_rates),
        "gen_tok_s_best": max(gen_rates),
        "prompt_tokens_median": median([float(x) for x in prompt_sizes if x >= min_prompt]),
        "completion_tokens_median": median([float(x) for x in completion_sizes]),
    }


def real_extraction(url: str, tokenizer: Any) -> list[dict[str, Any]]:
    """One real extraction call per language through the app's TransformerExtractor."""
    from benchmarks.common import real_chat_model
    from storygraph.ingest.llm_extraction import TransformerExtractor
    from storygraph.llm.usage import UsageCounter
    from storygraph.models import Chunk

    extractor = TransformerExtractor(real_chat_model(url), attempts=1)
    samples: list[dict[str, Any]] = []
    for language in ("ja", "en"):
        _, texts = _chunks(story_files(language)[0], 200)
        text = texts[min(2, len(texts) - 1)]
        counter = UsageCounter()
        chunk = Chunk("cal:0", "cal", 0, text, 0, len(text))
        started = time.perf_counter()
        error = ""
        try:
            relations = len(extractor.extract(chunk, language, [counter]).relations)
        except Exception as exc:  # noqa: BLE001 - a model fault is a finding too
            error, relations = " ".join(f"{type(exc).__name__}: {exc}".split())[:200], 0
        usage = counter.snapshot()
        samples.append(
            {
                "language": language,
                "chars": len(text),
                "chunk_tokens": _count(tokenizer, text) if tokenizer else None,
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "seconds": time.perf_counter() - started,
                "relations": relations,
                "error": error,
            }
        )
    return samples


def run(quick: bool = False) -> BenchResult:
    tables: list[Table] = []
    data: dict[str, Any] = {}
    tokenizer = _tokenizer()
    t = Table(
        "Calibration: tokens per character of story text (embedded model's tokenizer)",
        ["language", "chars measured", "tokens/char (fresh)", "tokens/char (estimate.py)", "ratio"],
    )
    t2 = Table(
        "Calibration: tokens of one extraction call (LLMGraphTransformer prompt as sent)",
        ["language", "calls", "chunk chars", "chunk tokens", "prompt tokens", "overhead tokens",
         "completion tokens", "overhead (estimate.py)", "completion (estimate.py)"],
    )  # fmt: skip
    if tokenizer is None:
        t.notes.append("skipped: llama_cpp or the model file is not installed")
        t2.notes.append("skipped: llama_cpp or the model file is not installed")
    else:
        measured = tokens_per_char(tokenizer)
        data["tokens_per_char"] = {k: v[0] for k, v in measured.items()}
        for lang, (tpc, chars) in sorted(measured.items()):
            stored = estimate.TOKENS_PER_CHAR.get(lang, estimate.TOKENS_PER_CHAR["en"])
            t.add(lang, chars, round(tpc, 3), stored, round(tpc / stored, 2))
        t.notes.append(
            "every 200-char chunk of shared/stories, tokenized by llama.cpp (vocab only)"
        )
        samples = captured_extraction(tokenizer, 2 if quick else 6)
        data["extraction_samples"] = samples
        for lang in sorted({s["language"] for s in samples}):
            mine = [s for s in samples if s["language"] == lang]
            overhead = median([float(s["prompt_tokens"] - s["chunk_tokens"]) for s in mine])
            t2.add(
                lang,
                len(mine),
                median([float(s["chars"]) for s in mine]),
                median([float(s["chunk_tokens"]) for s in mine]),
                median([float(s["prompt_tokens"]) for s in mine]),
                overhead,
                median([float(s["completion_tokens"]) for s in mine]),
                estimate.INSTRUCTION_TOKENS.get(lang),
                estimate.COMPLETION_TOKENS.get(lang),
            )
        t2.notes.append(
            "medians over the first chunks of every story; prompt = the transformer's messages "
            "+ tool schema exactly as sent, counted with the real tokenizer (the chat "
            "template adds a few more); completion = the tool call for the chunk's scripted "
            "triples, counted the same way"
        )
    tables.extend([t, t2])

    t3 = Table(
        "Calibration: embedded model speed on this machine (llama.cpp server log)",
        ["requests", "prompt tok/s median", "prompt tok/s best", "generation tok/s median",
         "generation tok/s best", "prompt tokens median", "completion tokens median"],
    )  # fmt: skip
    speeds = server_log_speeds(app_data_dir() / "logs" / "llm-server.log")
    if speeds is None:
        t3.notes.append("no llama.cpp server log with real requests in the app's data dir")
    else:
        data["server_log"] = speeds
        t3.add(*speeds.values())
        t3.notes.append(
            f"estimate.py uses {estimate.PROMPT_TOKENS_PER_S:.0f} / "
            f"{estimate.GENERATION_TOKENS_PER_S:.0f} tok/s (design §6, an idle machine); the "
            "log's requests ran on a machine shared with other test runs"
        )
    tables.append(t3)

    server = running_model_server()
    if server is not None and not quick:
        t4 = Table(
            "Calibration: real extraction calls through the app's TransformerExtractor",
            ["language", "chunk chars", "chunk tokens", "prompt tokens", "completion tokens",
             "seconds", "relations / error"],
        )  # fmt: skip
        real = real_extraction(server[0], tokenizer)
        data["real_extraction"] = real
        for s in real:
            t4.add(
                s["language"], s["chars"], s["chunk_tokens"], s["prompt_tokens"],
                s["completion_tokens"], round(s["seconds"], 1), s["error"] or s["relations"],
            )  # fmt: skip
        t4.notes.append("tokens as the server reports them through LangChain callbacks")
        tables.append(t4)
    return BenchResult("calibrate", tables, data=data)
