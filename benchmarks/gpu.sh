#!/usr/bin/env bash
# The --device cuda path against the CPU fp32 reference (same top-10 for each test question) and its
# windows/s, on a machine with an NVIDIA GPU; one line and exit 0 anywhere else.
# Usage: benchmarks/gpu.sh [PATH] [--model M]   (from the repository root; PATH defaults to sample_corpus)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "no NVIDIA GPU here (nvidia-smi finds none): benchmarks/gpu.sh skipped"
    exit 0
fi
nvidia-smi -L
exec uv run python -m benchmarks.gpu_check "$@"
