#!/usr/bin/env python
"""Install the embedded model (llama.cpp server + verified GGUF). Idempotent.

Same as `python -m storygraph.llm.install`; see that module for the options.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    runpy.run_module("storygraph.llm.install", run_name="__main__", alter_sys=True)
