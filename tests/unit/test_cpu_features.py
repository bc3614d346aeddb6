"""The llama.cpp build options for a CPU (storygraph.llm.cpu_features): every instruction set
the CPU has except AMX, whose kernels crash the model server (docs/ISSUES.md#amx-crash)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from storygraph.llm.cpu_features import (
    build_has_amx,
    cpu_flags,
    has_amx,
    llama_isa_cmake_args,
)
from storygraph.llm.install import build_cache_dir, llama_build_environment
from storygraph.llm.llama_server import guard_amx

SAPPHIRE_RAPIDS = frozenset(
    [
        "fpu",
        "sse4_2",
        "avx",
        "avx2",
        "bmi2",
        "fma",
        "f16c",
        "avx512f",
        "avx512_vnni",
        "avx512_bf16",
        "avx512vbmi",
        "avx_vnni",
        "amx_tile",
        "amx_int8",
        "amx_bf16",
    ]
)
EPYC_AVX2 = frozenset(["fpu", "sse4_2", "avx", "avx2", "bmi2", "fma", "f16c"])


def test_flags_are_read_from_cpuinfo(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx2 amx_tile\n\nprocessor\t: 1\n")
    assert cpu_flags(info) == {"fpu", "avx2", "amx_tile"}
    assert cpu_flags(tmp_path / "missing") == frozenset()


def test_an_amx_cpu_gets_its_avx512_but_no_amx() -> None:
    args = llama_isa_cmake_args(SAPPHIRE_RAPIDS, "x86_64").split()
    assert "-DGGML_NATIVE=OFF" in args
    for on in ("AVX2", "AVX512", "AVX512_VNNI", "AVX512_BF16", "AVX512_VBMI", "AVX_VNNI"):
        assert f"-DGGML_{on}=ON" in args
    for amx in ("AMX_TILE", "AMX_INT8", "AMX_BF16"):
        assert f"-DGGML_{amx}=OFF" in args
    assert has_amx(SAPPHIRE_RAPIDS) and not has_amx(EPYC_AVX2)


def test_an_avx2_cpu_gets_no_avx512_and_arm_keeps_the_native_build() -> None:
    args = llama_isa_cmake_args(EPYC_AVX2, "x86_64").split()
    assert "-DGGML_AVX2=ON" in args and "-DGGML_AVX512=OFF" in args
    assert llama_isa_cmake_args(EPYC_AVX2, "aarch64") == ""
    assert llama_isa_cmake_args(frozenset(), "x86_64") == ""  # unknown CPU: llama.cpp decides


def test_the_users_cmake_args_come_last_and_key_the_build_cache() -> None:
    env = llama_build_environment({"CMAKE_ARGS": "-DGGML_AVX512=ON"}, SAPPHIRE_RAPIDS)
    assert env["CMAKE_ARGS"].endswith("-DGGML_AVX512=ON")  # the user's own wins
    assert "-DLLAVA_BUILD=OFF" in env["CMAKE_ARGS"] and "-DGGML_AMX_INT8=OFF" in env["CMAKE_ARGS"]
    other = llama_build_environment({}, EPYC_AVX2)
    assert build_cache_dir(env) != build_cache_dir(other)
    assert build_cache_dir(other) == build_cache_dir(llama_build_environment({}, EPYC_AVX2))


def test_an_amx_build_on_an_amx_cpu_loads_without_extra_buffers() -> None:
    info = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | REPACK = 1 |"
    assert build_has_amx(info) and not build_has_amx("CPU : AVX2 = 1 | REPACK = 1 |")
    module = SimpleNamespace(
        llama_model_default_params=lambda: SimpleNamespace(use_extra_bufts=True)
    )
    assert not guard_amx(info, EPYC_AVX2, module)  # no AMX on the CPU: nothing to guard
    assert module.llama_model_default_params().use_extra_bufts
    assert guard_amx(info, SAPPHIRE_RAPIDS, module)
    assert module.llama_model_default_params().use_extra_bufts is False
