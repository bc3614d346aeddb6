"""The processor's instruction sets, and the llama.cpp build that is safe on it.

llama.cpp built with `-march=native` on a CPU with AMX (Intel Xeon 4th generation on) compiles
its AMX matrix kernels and loads Q4_K_M weights into the AMX buffer type, and the server dies
with a segmentation fault at the first completion (llama.cpp issue 20824; docs/ISSUES.md,
"The model server crashes on CPUs with AMX"). So on x86-64 StoryGraph builds llama.cpp with
`GGML_NATIVE=OFF` and names the instruction sets itself: every one the CPU has (AVX2, FMA,
F16C, BMI2, AVX-512 and its VNNI / VBMI / BF16 parts, AVX-VNNI) except AMX. The CPU_REPACK
buffer (the fast Q4 layout) stays on; docs/BENCHMARKS.md has the rates of both routes.
"""

from __future__ import annotations

import platform
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
AMX_FLAGS = frozenset({"amx_tile", "amx_int8", "amx_bf16"})
# cpuinfo flag -> the ggml CMake option that turns it on (GGML_NATIVE=OFF turns on SSE4.2, AVX,
# AVX2, BMI2, FMA and F16C by default: they are named here so a CPU without them gets them off).
_ISA_OPTIONS = (
    ("sse4_2", "GGML_SSE42"),
    ("avx", "GGML_AVX"),
    ("avx2", "GGML_AVX2"),
    ("bmi2", "GGML_BMI2"),
    ("fma", "GGML_FMA"),
    ("f16c", "GGML_F16C"),
    ("avx_vnni", "GGML_AVX_VNNI"),
    ("avx512f", "GGML_AVX512"),
    ("avx512vbmi", "GGML_AVX512_VBMI"),
    ("avx512_vnni", "GGML_AVX512_VNNI"),
    ("avx512_bf16", "GGML_AVX512_BF16"),
)
_AMX_OPTIONS = ("GGML_AMX_TILE", "GGML_AMX_INT8", "GGML_AMX_BF16")


def cpu_flags(cpuinfo: Path = CPUINFO) -> frozenset[str]:
    """The first processor's flags in /proc/cpuinfo (empty where there is none)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def has_amx(flags: frozenset[str]) -> bool:
    return bool(AMX_FLAGS & flags)


def llama_isa_cmake_args(flags: frozenset[str], machine: str | None = None) -> str:
    """The CMake options for a llama.cpp build without AMX on this CPU: on x86-64 with known
    flags, GGML_NATIVE off and each instruction set on or off as the CPU has it, AMX off;
    elsewhere (ARM, or no /proc/cpuinfo) nothing, which keeps llama.cpp's native build."""
    machine = (machine or platform.machine()).lower()
    if machine not in ("x86_64", "amd64") or not flags:
        return ""
    options = ["-DGGML_NATIVE=OFF"]
    options += [f"-D{option}={'ON' if flag in flags else 'OFF'}" for flag, option in _ISA_OPTIONS]
    options += [f"-D{option}=OFF" for option in _AMX_OPTIONS]
    return " ".join(options)


def build_has_amx(system_info: str) -> bool:
    """llama.cpp's `llama_print_system_info()` says its CPU backend was built with AMX
    ("AMX_INT8 = 1")."""
    compact = system_info.replace(" ", "")
    return "AMX_INT8=1" in compact
