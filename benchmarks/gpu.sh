#!/usr/bin/env bash
# The --device cuda path against the CPU fp32 reference (same top-10 for each test question) and its
# windows/s, on a machine with an NVIDIA GPU; with several GPUs, sentence-transformers' multi-process
# pool over all of them (--device cuda:0,cuda:1,...) too. One line and exit 0 anywhere else.
# Usage: benchmarks/gpu.sh [PATH] [--model M]   (from the repository root; PATH defaults to sample_corpus)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "no NVIDIA GPU here (nvidia-smi finds none): benchmarks/gpu.sh skipped"
    exit 0
fi
nvidia-smi -L
status=0
uv run python -m benchmarks.gpu_check "$@" || status=$?
count=$(nvidia-smi -L | grep -c '^GPU' || true)
if [ "$count" -ge 2 ]; then
    devices=$(seq -s, -f 'cuda:%g' 0 $((count - 1)))
    uv run python -m benchmarks.gpu_check "$@" --device "$devices" || status=$?
else
    echo "one GPU here: the pool over several GPUs is not checked (--device cuda:0,cpu would try a pool)"
fi
exit "$status"
