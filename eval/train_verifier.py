"""Fit the verifier's calibrated model on dev runs, choose its threshold on dev, and report.

    PYTHONPATH=. python eval/train_verifier.py --dev RUN.json:QUESTIONS.jsonl[:PREMISE.json] ... \
        [--write storygraph/qa/verify/weights.json] \
        [--test RUN.json:QUESTIONS.jsonl[:PREMISE.json] ...] [--diagram docs/img/reliability.png]

A run is a saved `eval-e2e --json` run whose answers carry the verifier's signals (any
`STORYGRAPH_VERIFY` mode records them). Each model-written answer the verifier judged is one
row: its signals, and whether the answer *as the model wrote it* is right by the strict rule
(storygraph.evaluation.answer_scoring.score_strict, with the set's accepted and wrong answers).
A run saved before the premise check (2026-12-03) holds the rule check's verdict where the
premise check's now stands; `PREMISE.json` (eval/premise_replay.py: today's premise check per
question id, over what the small model reads, no model call) gives today's in its place.

- **Fit**: a logistic regression per family (storygraph.qa.verify.calibration.fit): "embedded"
  reads every signal; "other" (any model but the embedded one) every signal but the small
  model's token probabilities, which another model's are not on the scale of.
- **Threshold**: chosen on the dev rows' *out-of-fold* confidences (leave one story out: each
  story's answers scored by a model fitted without that story, as a new story would be), the
  one that shows the most right answers while the answers shown stay at least `--precision`
  right (0.85 by default). `--precision rule` applies the standing threshold rule
  (docs/EVALUATION.md, "The threshold rule") per family: the highest of `RULE_TARGETS` whose
  out-of-fold strict is at most `RULE_SLACK` of the dev questions below the strict at the
  lowest target.
- **Report**: what the gate would show on each run, from the recorded answers (module
  storygraph.qa.verify.gate's rule: above the threshold the model's answer is shown as
  supported; below it the answer is withheld, "not sure" or "the story does not say", right
  only for an unanswerable question; an answer a run before 2026-12-06 withheld by its
  cross-language "rendering" check, a whole Japanese sentence for an English question, is shown
  as today's code shows it, quoted, unless `--rendering-check` asks for that run's own figures,
  `Row.not_rendered`): strict accuracy, precision of what is shown as
  supported, right shown / right written. The ablation refits without each signal in turn.
  Test runs are only ever summed up here: no test answer is printed.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

from storygraph.evaluation.answer_scoring import score_strict
from storygraph.evaluation.saved_runs import read_run
from storygraph.qa.question.translation import DictionaryTranslator
from storygraph.qa.verify.calibration import WEIGHTS, Calibration, fit, load
from storygraph.qa.verify.evidence import Evidence
from storygraph.qa.verify.gate import NO_PREMISE, TOLD
from storygraph.qa.verify.signals import SIGNALS, read_signals, same_script
from storygraph.text.jmdict import open_dictionary
from storygraph.text.language import is_japanese_text

LOGPROB_SIGNALS = ("mean_logprob", "min_logprob", "head_logprob", "answer_logprob", "self_check")
"""Read from the small model's token probabilities: a capable model's are on another scale, so
the "other" family is fitted without them (and its model is not asked the self-check)."""


RENDERING = "support check (rendering)"
"""The warning of an answer the cross-language rendering withheld (`Row.not_rendered`)."""


@dataclass(frozen=True)
class Row:
    """One question of a run: the verifier's signals on the model's answer (None: not judged),
    whether that answer is right, and what a question the verifier did not judge showed (the
    model declined, or its answer was cut)."""

    run: str
    story: str
    unanswerable: bool
    signals: dict[str, float | None] | None
    model_right: bool
    shown_supported: bool
    shown_right: bool
    not_rendered: bool = False
    """The run withheld the answer after the verifier passed it: an English question's answer
    written as a whole Japanese sentence, which a word-by-word rendering misreads (the
    "rendering" check of storygraph.qa.generation.answer_crosslang until 2026-12-06; today such
    an answer is shown quoted). Set only with `--rendering-check`: a replay that passes it
    withholds it too."""


def load_run(spec: str, rendering_check: bool = False) -> list[Row]:
    """A saved run's rows (module doc); `rendering_check`: an answer the run withheld by the
    "rendering" check (removed 2026-12-06) stays withheld, as that run showed it."""
    run_path, _, rest = spec.partition(":")
    questions_path, _, premise_path = rest.partition(":")
    questions = {
        q["id"]: q
        for q in (
            json.loads(line)
            for line in Path(questions_path).read_text(encoding="utf-8").splitlines()
            if line.strip()
        )
    }
    premise = json.loads(Path(premise_path).read_text(encoding="utf-8")) if premise_path else None
    rows = []
    for r in read_run(Path(run_path))["questions"]:
        q = questions[r["id"]]
        judged = r.get("verifier") or None
        unanswerable = bool(q.get("unanswerable"))
        model_right = False
        if judged is not None:
            own = score_strict(
                judged["answer"], q["answers"], q.get("wrong", ()), unanswerable=unanswerable
            )
            model_right = bool(own.correct)
        signals = _signals(judged, premise.get(r["id"]) if premise is not None else False)
        # an answer the candidate step (removed 2026-12-03) showed after the model declined
        candidate = any("the answer shown is" in w for w in r.get("warnings", ()))
        rows.append(
            Row(
                run=Path(run_path).stem,
                story=str(r.get("story", "")),
                unanswerable=unanswerable,
                signals=signals,
                model_right=model_right,
                shown_supported=bool(r.get("supported")) and not candidate,
                shown_right=unanswerable if candidate else bool(r.get("strict_correct")),
                not_rendered=rendering_check and any(RENDERING in w for w in r.get("warnings", ())),
            )
        )
    return rows


def _signals(
    judged: dict[str, Any] | None, premise: str | bool | None
) -> dict[str, float | None] | None:
    """Every signal of today's code, read from the evidence the run kept (a run that kept none:
    the signals it recorded), with today's premise verdict when one is given (`premise`: its
    reason, or None when the act is told; False: none given)."""
    if judged is None:
        return None
    if not judged.get("evidence"):
        return dict(judged["signals"])
    evidence = Evidence.from_json(judged["evidence"])
    if "asked_forms" not in judged["evidence"]:
        evidence = replace(evidence, asked_forms=_asked_forms(evidence))
    if premise is not False:
        evidence = replace(evidence, rule=NO_PREMISE if premise else TOLD)
    return read_signals(evidence)


@cache
def _translator() -> DictionaryTranslator:
    dictionary = open_dictionary()
    if dictionary is None:
        raise SystemExit("JMdict (the jamdict-data package) is not installed")
    return DictionaryTranslator(dictionary)


def _asked_forms(evidence: Evidence) -> tuple[tuple[str, ...], ...]:
    """A run saved before 2026-12-06 kept no `Evidence.asked_forms`: a question in another
    script than what the model read gets them from the dictionary, as the app's default
    translation (`STORYGRAPH_QUESTION_TRANSLATION=dictionary`, no model call) made them."""
    if not evidence.read or same_script(evidence.question, evidence.read):
        return ()
    source, target = ("ja", "en") if is_japanese_text(evidence.question) else ("en", "ja")
    translation = _translator().translate(evidence.question, source, target, [])
    return translation.word_forms if translation is not None else ()


def judged(rows: Sequence[Row]) -> list[Row]:
    return [r for r in rows if r.signals is not None]


def fit_rows(rows: Sequence[Row], features: Sequence[str]) -> Calibration:
    rows = judged(rows)
    return fit([r.signals or {} for r in rows], [r.model_right for r in rows], features)


def _fold(row: Row, folds: str) -> str:
    """What one fold leaves out: "story" (each story's answers judged by a model fitted without
    that story) or "set" (each run's answers judged by a model fitted on the other runs: new
    stories *and* questions written by someone else, as the held-out sets are). `--folds`."""
    return row.run if folds == "set" else row.story


def out_of_fold(
    rows: Sequence[Row], features: Sequence[str], folds: str = "story"
) -> dict[int, float]:
    """Each judged row's confidence from a model fitted without its fold (`folds`: see `_fold`)."""
    got: dict[int, float] = {}
    for fold in sorted({_fold(r, folds) for r in rows if r.signals is not None}):
        train = [r for r in rows if _fold(r, folds) != fold]
        model = fit_rows(train, features)
        for i, r in enumerate(rows):
            if _fold(r, folds) == fold and r.signals is not None:
                got[i] = model.confidence(r.signals)
    return got


@dataclass(frozen=True)
class Shown:
    questions: int
    strict: int
    shown: int
    shown_right: int
    written_right: int
    written_right_shown: int
    unanswerable: int
    declined: int

    def line(self) -> str:
        precision = self.shown_right / self.shown if self.shown else float("nan")
        return (
            f"strict {self.strict}/{self.questions} ({self.strict / self.questions:.2f}), "
            f"precision {self.shown_right}/{self.shown} ({precision:.2f}), "
            f"right shown/written {self.written_right_shown}/{self.written_right}, "
            f"unanswerable declined {self.declined}/{self.unanswerable}"
        )


def simulate(rows: Sequence[Row], confidence: dict[int, float] | None, threshold: float) -> Shown:
    """What the gate shows (module doc); `confidence` None: every answer as the run showed it."""
    strict = shown = shown_right = written = written_shown = unanswerable = declined = 0
    for i, r in enumerate(rows):
        if confidence is None or i not in confidence:
            supported, right = r.shown_supported, r.shown_right
        elif confidence[i] >= threshold and not r.not_rendered:
            supported, right = True, r.model_right
        else:
            supported, right = False, r.unanswerable  # withheld: right only when unanswerable
        strict += right
        shown += supported
        shown_right += supported and right
        if not r.unanswerable and r.model_right:
            written += 1
            written_shown += supported and right
        if r.unanswerable:
            unanswerable += 1
            declined += right
    return Shown(len(rows), strict, shown, shown_right, written, written_shown, unanswerable,
                 declined)  # fmt: skip


def choose_threshold(rows: Sequence[Row], confidence: dict[int, float], precision: float) -> float:
    """The threshold that shows the most right answers at `precision` or better (else the one
    of the best precision)."""
    best: tuple[tuple[int, int, float], float] | None = None
    for step in range(5, 100):
        t = step / 100
        got = simulate(rows, confidence, t)
        prec = got.shown_right / got.shown if got.shown else 0.0
        key = (int(prec >= precision), got.strict if prec >= precision else 0, prec)
        if best is None or key > best[0]:
            best = (key, t)
    assert best is not None
    return best[1]


RULE_TARGETS = (0.70, 0.75, 0.80)
RULE_SLACK = 0.02
"""The standing threshold rule's precision targets and the share of dev questions its higher
targets may cost in strict answers (11 of 553)."""


def rule_precision(rows: Sequence[Row], confidence: dict[int, float]) -> float:
    """The precision target the standing threshold rule takes (module doc, `--precision rule`)."""
    strict = {
        target: simulate(rows, confidence, choose_threshold(rows, confidence, target)).strict
        for target in RULE_TARGETS
    }
    floor = strict[RULE_TARGETS[0]] - RULE_SLACK * len(rows)
    return max(target for target in RULE_TARGETS if strict[target] >= floor)


def by_precision(
    rows: Sequence[Row], confidence: dict[int, float], targets: Sequence[float]
) -> list[str]:
    """For each precision target, the most right answers shown at that precision or better, out
    of fold (a feature set's whole curve: one target's threshold is a knife edge on few rows)."""
    out = []
    for target in targets:
        best: tuple[tuple[int, int], float, Shown] | None = None
        for step in range(5, 100):
            got = simulate(rows, confidence, step / 100)
            if got.shown and got.shown_right / got.shown >= target:
                key = (got.written_right_shown, got.strict)
                if best is None or key > best[0]:
                    best = (key, step / 100, got)
        if best is None:
            out.append(f">={target:.2f}: none")
        else:
            g = best[2]
            out.append(f">={target:.2f}: {g.written_right_shown}/{g.written_right} "
                       f"({g.shown_right}/{g.shown}, t {best[1]:.2f})")  # fmt: skip
    return out


def compare_extras(rows: Sequence[Row], base: Sequence[str], extras: Sequence[str]) -> None:
    """Prints, out of fold by story at the standing threshold rule, `base` refitted on `rows`,
    then with each set of extra signals (`extras`: names comma-separated, each in the signals
    table): its AUC, operating point and the right answers shown at each precision target. The
    dev-only measure of a candidate signal (eval/meaning_signals.py, eval/role_signals.py)."""
    for extra in [[], *(e.split(",") for e in extras)]:
        oof = out_of_fold(rows, [*base, *extra])
        target = rule_precision(rows, oof)
        threshold = choose_threshold(rows, oof, target)
        print(
            f"{'+'.join(extra) or 'the nine'}: AUC {auc(rows, oof):.4f}, P {target} "
            f"t {threshold}: {simulate(rows, oof, threshold).line()}"
        )
        print("   ", "; ".join(by_precision(rows, oof, (0.70, 0.75, 0.80))))


def auc(rows: Sequence[Row], confidence: dict[int, float]) -> float:
    pos = [confidence[i] for i, r in enumerate(rows) if i in confidence and r.model_right]
    neg = [confidence[i] for i, r in enumerate(rows) if i in confidence and not r.model_right]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def reliability(
    rows: Sequence[Row], confidence: dict[int, float], bins: int = 5
) -> list[tuple[float, float, int]]:
    """(mean confidence, share right, count) per equal-width confidence bin."""
    out = []
    for b in range(bins):
        inside = [
            (confidence[i], r.model_right)
            for i, r in enumerate(rows)
            if i in confidence and min(int(confidence[i] * bins), bins - 1) == b
        ]
        if inside:
            mean = sum(c for c, _ in inside) / len(inside)
            out.append((mean, sum(y for _, y in inside) / len(inside), len(inside)))
    return out


def draw_reliability(points: Sequence[tuple[float, float, int]], path: Path, title: str) -> None:
    """A reliability diagram as a PNG (Pillow, which Streamlit brings)."""
    from PIL import Image, ImageDraw

    size, pad = 420, 50
    image = Image.new("RGB", (size + 2 * pad, size + 2 * pad), "white")
    draw = ImageDraw.Draw(image)

    def at(x: float, y: float) -> tuple[float, float]:
        return pad + x * size, pad + (1 - y) * size

    draw.rectangle([at(0, 1), at(1, 0)], outline="black")
    draw.line([at(0, 0), at(1, 1)], fill="gray", width=1)
    for tick in range(0, 11, 2):
        v = tick / 10
        draw.text((at(v, 0)[0] - 8, pad + size + 6), f"{v:.1f}", fill="black")
        draw.text((pad - 30, at(0, v)[1] - 6), f"{v:.1f}", fill="black")
    for conf, right, count in points:
        x, y = at(conf, right)
        r = 3 + min(12, math.sqrt(count))
        draw.ellipse([x - r, y - r, x + r, y + r], fill="steelblue", outline="black")
        draw.text((x + r + 2, y - 6), str(count), fill="black")
    draw.text((pad, 12), title, fill="black")
    draw.text((pad + size // 2 - 60, pad + size + 24), "confidence (bin mean)", fill="black")
    draw.text((4, pad - 24), "share right", fill="black")
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)


def family_features(family: str, features: Sequence[str]) -> list[str]:
    return [f for f in features if family == "embedded" or f not in LOGPROB_SIGNALS]


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dev", nargs="+", required=True, metavar="RUN.json:QUESTIONS.jsonl")
    parser.add_argument("--test", nargs="*", default=[], metavar="RUN.json:QUESTIONS.jsonl")
    parser.add_argument("--features", nargs="*", default=list(SIGNALS))
    parser.add_argument(
        "--precision", default="0.85",
        help="the precision the threshold keeps on dev, or 'rule' (the standing threshold rule)",
    )  # fmt: skip
    parser.add_argument(
        "--folds", choices=("story", "set"), default="story",
        help="leave one story out (default) or one run (set) out when judging out of fold",
    )  # fmt: skip
    parser.add_argument("--replay", nargs="*", type=Path, default=[], metavar="WEIGHTS.json",
                        help="also replay saved weights as they are (an earlier commit's) on "
                        "dev and test")  # fmt: skip
    parser.add_argument("--rendering-check", action="store_true",
                        help="withhold again what a run's cross-language rendering check "
                        "withheld (removed 2026-12-06): that run's own figures")  # fmt: skip
    parser.add_argument("--write", type=Path, help=f"write the weights (the app's: {WEIGHTS})")
    parser.add_argument("--diagram", type=Path, help="draw the test runs' reliability diagram")
    args = parser.parse_args(argv)

    dev = [row for spec in args.dev for row in load_run(spec, args.rendering_check)]
    tests = {
        Path(spec.partition(":")[0]).stem: load_run(spec, args.rendering_check)
        for spec in args.test
    }
    print(f"dev: {len(dev)} questions, {len(judged(dev))} model answers judged, "
          f"{sum(r.model_right for r in judged(dev))} of them right")  # fmt: skip

    calibrations: dict[str, Calibration] = {}
    for family in ("embedded", "other"):
        features = family_features(family, args.features)
        folds = out_of_fold(dev, features, args.folds)
        precision = (
            rule_precision(dev, folds) if args.precision == "rule" else float(args.precision)
        )
        threshold = choose_threshold(dev, folds, precision)
        model = replace(fit_rows(dev, features), threshold=threshold)
        model = replace(
            model,
            trained={
                "date": date.today().isoformat(),
                "dev_runs": [spec.partition(":")[0] for spec in args.dev],
                "judged": len(judged(dev)),
                "right": sum(r.model_right for r in judged(dev)),
                "precision_target": precision,
                "dev_out_of_fold_auc": round(auc(dev, folds), 3),
                "folds": args.folds,
                "command": "PYTHONPATH=. python eval/train_verifier.py " + " ".join(argv),
            },
        )
        calibrations[family] = model
        print(f"\n## {family}: threshold {threshold:.2f} (chosen out of fold on dev at precision "
              f"{precision:.2f}), out-of-fold AUC {auc(dev, folds):.3f}")  # fmt: skip
        print("as run (dev):             " + simulate(dev, None, 0.5).line())
        print("gate, out of fold (dev):  " + simulate(dev, folds, threshold).line())
        print("right shown/written by precision (dev, out of fold): "
              + "; ".join(by_precision(dev, folds, (0.70, 0.75, 0.80, 0.85))))  # fmt: skip
        for run in dict.fromkeys(r.run for r in dev):
            mine = [i for i, r in enumerate(dev) if r.run == run]
            rows = [dev[i] for i in mine]
            conf = {k: folds[i] for k, i in enumerate(mine) if i in folds}
            print(f"  {run}: gate  {simulate(rows, conf, threshold).line()}")
        if family == "embedded":
            for name, rows in tests.items():
                conf = {i: model.confidence(r.signals) for i, r in enumerate(rows) if r.signals}
                print(f"as run ({name}):        " + simulate(rows, None, 0.5).line())
                print(f"gate, replayed ({name}): " + simulate(rows, conf, threshold).line()
                      + f", AUC {auc(rows, conf):.3f}")  # fmt: skip
                if args.diagram:
                    points = reliability(rows, conf)
                    draw_reliability(points, args.diagram, f"verifier confidence on {name}")
                    print(f"reliability ({name}): " + ", ".join(
                        f"{c:.2f}->{y:.2f} (n={n})" for c, y, n in points))  # fmt: skip
            print("\nablation (each signal left out; refitted; threshold rechosen on dev):")
            print("| left out | dev strict (oof) | dev precision | dev AUC | "
                  + " | ".join(f"{n} strict | {n} precision" for n in tests) + " |")  # fmt: skip
            for gone in ["(none)", *features]:
                kept = [f for f in features if f != gone]
                oof = out_of_fold(dev, kept, args.folds)
                t = choose_threshold(dev, oof, precision)
                d = simulate(dev, oof, t)
                cells = [gone, f"{d.strict}/{d.questions}",
                         f"{d.shown_right}/{d.shown}", f"{auc(dev, oof):.3f}"]  # fmt: skip
                refit = replace(fit_rows(dev, kept), threshold=t)
                for rows in tests.values():
                    conf = {i: refit.confidence(r.signals) for i, r in enumerate(rows) if r.signals}
                    s = simulate(rows, conf, t)
                    cells += [f"{s.strict}/{s.questions}", f"{s.shown_right}/{s.shown}"]
                print("| " + " | ".join(cells) + " |")

    for path in args.replay:
        saved = load(path)["embedded"]
        print(f"\n## replayed: {path}'s embedded weights as they are (threshold "
              f"{saved.threshold:.2f})")  # fmt: skip
        for name, rows in {"dev": dev, **tests}.items():
            conf = {i: saved.confidence(r.signals) for i, r in enumerate(rows) if r.signals}
            print(f"{name}: " + simulate(rows, conf, saved.threshold).line()
                  + f", AUC {auc(rows, conf):.3f}")  # fmt: skip

    if args.write:
        payload = {"families": {k: v.to_json() for k, v in calibrations.items()}}
        args.write.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n")
        print(f"\nwrote {args.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
