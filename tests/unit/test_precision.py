"""Exact by default on every CPU; bf16 only when asked for, and labelled approximate."""

from __future__ import annotations

from pathlib import Path

import pytest

from raglens.errors import BadInputError
from raglens.precision import (
    CpuFeatures,
    choose_precision,
    is_exact,
    precision_label,
    precision_note,
    read_cpu_features,
)

NATIVE_BF16 = CpuFeatures.from_cpuinfo("processor : 0\nflags : fpu avx2 avx512f avx512_bf16 amx_tile\n")
"""An AMD EPYC or a current Xeon: bf16 in hardware."""
EMULATED_BF16 = CpuFeatures.from_cpuinfo("processor : 0\nflags : fpu avx2 avx512f avx512_vnni\n")
"""An AVX-512 Xeon without BF16, like the development machine."""


def test_native_bf16_is_read_from_the_cpu_flags() -> None:
    assert NATIVE_BF16.native_bf16
    assert CpuFeatures.from_cpuinfo("flags\t\t: sse amx_bf16 amx_tile\n").native_bf16
    assert not EMULATED_BF16.native_bf16
    assert not CpuFeatures.from_cpuinfo("").native_bf16


@pytest.mark.parametrize("cpu", [NATIVE_BF16, EMULATED_BF16], ids=["native-bf16", "no-bf16"])
def test_the_default_is_exact_fp32_on_every_cpu(cpu: CpuFeatures) -> None:
    precision = choose_precision(None)
    assert precision == "fp32" and is_exact(precision)
    assert precision_note(precision, on_cpu=True, cpu=cpu) is None
    assert precision_label(precision) == "fp32"


@pytest.mark.parametrize("cpu", [NATIVE_BF16, EMULATED_BF16], ids=["native-bf16", "no-bf16"])
def test_bf16_is_only_taken_when_asked_and_always_said_to_be_approximate(cpu: CpuFeatures) -> None:
    precision = choose_precision("bf16")
    assert precision == "bf16" and not is_exact(precision)
    assert "approximate" in precision_label(precision)
    note = precision_note(precision, on_cpu=True, cpu=cpu)
    assert note is not None and "approximate" in note
    assert ("emulated" in note) is (not cpu.native_bf16)


def test_an_unknown_precision_is_refused() -> None:
    with pytest.raises(BadInputError, match="fp32 or bf16"):
        choose_precision("auto")


def test_the_cpu_flags_can_be_given_instead_of_read(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("flags : sse avx512_bf16\n")
    assert read_cpu_features(cpuinfo, environ={}).native_bf16
    assert not read_cpu_features(cpuinfo, environ={"RAGLENS_CPU_FLAGS": "sse avx2"}).native_bf16
    assert read_cpu_features(tmp_path / "missing", environ={}) == CpuFeatures(frozenset())
