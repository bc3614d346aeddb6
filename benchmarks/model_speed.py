"""The embedded model's prompt and generation rates with the llama.cpp build that is installed.

    python -m benchmarks.model_speed [--runs 5] [--no-extra-bufts] [--model PATH] [--json]

Loads the model in this process (llama-cpp-python, no server), reads one fixed prompt of about
400 tokens (a story passage and a question, as the answer step sends) and writes 64 tokens
greedily, `--runs` times after one warm-up, and prints the medians of llama.cpp's own timings
(prompt tokens per second, generated tokens per second), the build's CPU features and whether
the weights went to the extra (repacked / AMX) buffers. `--no-extra-bufts` loads the weights
into the plain CPU buffer (llama-cpp-python's `use_extra_bufts = False`), the workaround
measured against a build without AMX in docs/BENCHMARKS.md. To compare two builds, run this once
with each on PYTHONPATH (`pip install --target DIR WHEEL`), alternating, on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

PASSAGE = (
    "むかし、むかし、あるところに、おじいさんとおばあさんがありました。まいにち、おじいさんは山へ"
    "しば刈りに、おばあさんは川へ洗濯に行きました。ある日、おばあさんが、川のそばで、せっせと"
    "洗濯をしていますと、川上から、大きな桃が一つ、「ドンブラコッコ、スッコッコ。」と流れて"
    "来ました。桃太郎は犬と猿ときじを家来にして、鬼が島へ鬼を退治しに行きました。"
)
QUESTION = "桃太郎の家来は誰ですか？文に書かれていることだけで、短く答えてください。"


def _prompt() -> str:
    return "\n".join([PASSAGE] * 3 + [QUESTION])


def measure(model: Path, runs: int, extra_bufts: bool, threads: int) -> dict[str, Any]:
    import llama_cpp
    import llama_cpp.llama_cpp as lib

    from storygraph.llm.llama_server import without_amx_buffers

    if not extra_bufts:
        without_amx_buffers(lib)  # the server's own guard: the plain CPU buffer
    started = time.perf_counter()
    llm = llama_cpp.Llama(
        str(model), n_ctx=2048, n_threads=threads, n_threads_batch=threads, verbose=False
    )
    load_s = time.perf_counter() - started
    prompt = _prompt()
    prompt_rates: list[float] = []
    gen_rates: list[float] = []
    n_prompt = n_gen = 0
    for run in range(runs + 1):
        llm.reset()
        lib.llama_perf_context_reset(llm._ctx.ctx)
        llm.create_completion(prompt, max_tokens=64, temperature=0.0)
        perf = lib.llama_perf_context(llm._ctx.ctx)
        if run == 0:
            continue  # warm-up
        n_prompt, n_gen = int(perf.n_p_eval), int(perf.n_eval)
        prompt_rates.append(1000.0 * perf.n_p_eval / max(perf.t_p_eval_ms, 1e-9))
        gen_rates.append(1000.0 * perf.n_eval / max(perf.t_eval_ms, 1e-9))
    info = llama_cpp.llama_print_system_info().decode()
    return {
        "build": " ".join(
            f for f in ("AVX2", "AVX512", "AMX_INT8", "REPACK") if f"{f} = 1" in info
        ),
        "extra_bufts": extra_bufts,
        "load_s": round(load_s, 2),
        "prompt_tokens": n_prompt,
        "generated_tokens": n_gen,
        "prompt_tok_s_median": round(statistics.median(prompt_rates), 1),
        "generation_tok_s_median": round(statistics.median(gen_rates), 1),
        "prompt_tok_s_all": [round(r, 1) for r in prompt_rates],
        "generation_tok_s_all": [round(r, 1) for r in gen_rates],
    }


def main(argv: list[str] | None = None) -> int:
    from storygraph.llm.model_files import model_path
    from storygraph.settings import Settings

    parser = argparse.ArgumentParser(prog="python -m benchmarks.model_speed", description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-extra-bufts", action="store_true")
    parser.add_argument("--model", type=Path)
    parser.add_argument("--json", action="store_true", help="one JSON object instead of a line")
    args = parser.parse_args(argv)
    model = args.model or model_path(Settings())
    result = measure(model, args.runs, not args.no_extra_bufts, args.threads)
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"build [{result['build']}] extra buffers {'on' if result['extra_bufts'] else 'off'}: "
            f"prompt {result['prompt_tok_s_median']} tok/s, generation "
            f"{result['generation_tok_s_median']} tok/s (medians of {args.runs}; "
            f"{result['prompt_tokens']} prompt, {result['generated_tokens']} generated tokens)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
