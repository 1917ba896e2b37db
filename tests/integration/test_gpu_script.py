"""benchmarks/gpu.sh on a machine without an NVIDIA GPU: one line, exit 0, nothing started."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import REPO_ROOT


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine may have a GPU to check")
def test_without_a_gpu_the_check_skips_in_one_line() -> None:
    done = subprocess.run(
        ["bash", str(REPO_ROOT / "benchmarks" / "gpu.sh")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    skipped = "no NVIDIA GPU here (nvidia-smi finds none): benchmarks/gpu.sh skipped"
    assert done.stdout.splitlines() == [skipped]
    assert done.stderr == ""
