#!/usr/bin/env bash
# One run of benchmarks/run_translated.py on a machine with an NVIDIA GPU and nvcc, nothing from the network.
# Before, on a machine with this project's packages: translate and keep the translations in the work directory:
#   python benchmarks/run_translated.py --translate-only --hip-include DIR... [--tree DIR...] \
#     --work benchmarks/out/run-translated
# Then here, with the same HIP headers in HIP_DIR (default benchmarks/out/hip-nvidia-cuda13: an installed include
# directory, or checkouts HIP/, hipother/ and clr/ side by side) and the same trees in TREES (paths, space-separated):
#   [HIP_DIR=DIR] [TREES="DIR..."] [RUN_TIMEOUT=S] bash benchmarks/run_translated_device.sh [OUT_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
hip="${HIP_DIR:-benchmarks/out/hip-nvidia-cuda13}"
out="${1:-${OUT:-benchmarks/out}}"
if [ -d "$hip/HIP" ]; then
  includes=(--hip-include "$hip/HIP" --hip-include "$hip/hipother" --hip-include "$hip/clr")
else
  includes=(--hip-include "$hip")
fi
trees=()
for tree in ${TREES:-}; do trees+=(--tree "$tree"); done
mkdir -p "$out"
nvidia-smi -L
nvcc --version | tail -2
PYTHONUNBUFFERED=1 timeout 420 python3 benchmarks/run_translated.py --reuse --work benchmarks/out/run-translated \
  "${includes[@]}" ${trees[@]+"${trees[@]}"} --jobs "$(nproc)" --run-timeout "${RUN_TIMEOUT:-60}" \
  --json "$out/run_translated.json" 2>&1 | tee "$out/run_translated.txt"
