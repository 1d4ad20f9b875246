#!/usr/bin/env bash
# One run of benchmarks/run_translated.py on a machine with an NVIDIA GPU and nvcc, nothing from the network.
# Before, on a machine with this project's packages: translate and keep the translations in the work directory:
#   python benchmarks/run_translated.py --translate-only --hip-include DIR... --work benchmarks/out/run-translated
# Then here, with the HIP headers (checkouts of HIP, hipother, clr) in HIP_DIR (default benchmarks/out/hip-nvidia):
#   bash benchmarks/run_translated_device.sh [OUT_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
hip="${HIP_DIR:-benchmarks/out/hip-nvidia}"
out="${1:-${OUT:-benchmarks/out}}"
mkdir -p "$out"
nvidia-smi -L
nvcc --version | tail -2
PYTHONUNBUFFERED=1 timeout 450 python3 benchmarks/run_translated.py --reuse --work benchmarks/out/run-translated \
  --hip-include "$hip/HIP" --hip-include "$hip/hipother" --hip-include "$hip/clr" --jobs 16 \
  --json "$out/run_translated.json" 2>&1 | tee "$out/run_translated.txt"
