"""Which number format the model runs in, what the CPU can do natively, and how a precision is labelled.

raglens is a lens: by default it shows the model's own fp32 ranking. bf16 is opt-in, for bulk speed on
CPUs that compute it natively, and is labelled approximate wherever a score appears. Plain Python: the
UI imports this before its first frame.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from raglens.errors import BadInputError

PRECISIONS = ("fp32", "bf16")
"""What the model's weights can be held in; part of every cache fingerprint."""

EXACT_PRECISION = "fp32"
"""The model's own precision: its ranking, identical to a plain sentence-transformers run."""

CPU_FLAGS_ENV = "RAGLENS_CPU_FLAGS"
"""When set, the CPU's feature flags (space-separated) instead of /proc/cpuinfo's: to see what
raglens does on another CPU, and for tests of both branches on any machine."""

NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})


@dataclass(frozen=True)
class CpuFeatures:
    """The feature flags of the CPU raglens runs on."""

    flags: frozenset[str]

    @classmethod
    def from_cpuinfo(cls, cpuinfo: str) -> CpuFeatures:
        """The flags listed on the ``flags`` lines of a /proc/cpuinfo text."""
        flags: set[str] = set()
        for line in cpuinfo.splitlines():
            if line.startswith("flags"):
                flags.update(line.partition(":")[2].split())
        return cls(frozenset(flags))

    @property
    def native_bf16(self) -> bool:
        """Whether the CPU computes bfloat16 natively (AVX-512 BF16 or AMX); elsewhere it is emulated.

        Measured on an AVX-512 Xeon without it: bf16 ran at 0.44x fp32's speed.
        """
        return bool(self.flags & NATIVE_BF16_FLAGS)


def read_cpu_features(
    cpuinfo: Path = Path("/proc/cpuinfo"), environ: Mapping[str, str] = os.environ
) -> CpuFeatures:
    """This machine's CPU flags: ``RAGLENS_CPU_FLAGS`` when set, else /proc/cpuinfo's (none if unreadable)."""
    override = environ.get(CPU_FLAGS_ENV)
    if override is not None:
        return CpuFeatures(frozenset(override.split()))
    try:
        return CpuFeatures.from_cpuinfo(cpuinfo.read_text(encoding="ascii", errors="replace"))
    except OSError:
        return CpuFeatures(frozenset())


def choose_precision(requested: str | None) -> str:
    """``requested``, or fp32 when nothing was asked for: exact on every CPU, whatever it supports."""
    if requested in (None, ""):
        return EXACT_PRECISION
    if requested not in PRECISIONS:
        raise BadInputError(f"--precision must be {' or '.join(PRECISIONS)}; got {requested!r}")
    assert requested is not None
    return requested


def is_exact(precision: str) -> bool:
    """Whether scores at ``precision`` are the model's own (fp32), not an approximation of them."""
    return precision == EXACT_PRECISION


def precision_label(precision: str) -> str:
    """How a precision is shown beside scores: ``fp32``, or ``bf16 ≈ approximate``."""
    return precision if is_exact(precision) else f"{precision} ≈ approximate"


def precision_note(precision: str, on_cpu: bool, cpu: CpuFeatures) -> str | None:
    """What a user should know about running at ``precision`` on this CPU; None for exact fp32."""
    if is_exact(precision):
        return None
    approximate = (
        f"{precision} scores approximate the model's (near-ties may swap places); "
        "leave out --precision for its exact fp32 ranking"
    )
    if on_cpu and not cpu.native_bf16:
        return (
            f"{approximate}. This CPU has no native bf16 (AVX-512 BF16 or AMX): it is emulated, "
            "and slower than fp32 here"
        )
    return approximate
