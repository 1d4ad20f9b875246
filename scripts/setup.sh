#!/usr/bin/env bash
# Set up a development environment from a clean clone: system tools (when root with apt),
# a virtualenv in .venv, and the package with its test extras.
#   bash scripts/setup.sh          # the tool only
#   bash scripts/setup.sh --test   # plus what the test suite needs (hipcc, chromium, pre-commit, ...)
set -euo pipefail
cd "$(dirname "$0")/.."
want_test=0
[ "${1:-}" = "--test" ] && want_test=1

if [ "$want_test" = 1 ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  missing=()
  for cmd in git:git hipcc:hipcc chromium:chromium chromedriver:chromium-driver; do
    command -v "${cmd%%:*}" >/dev/null 2>&1 || missing+=("${cmd##*:}")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
pip=(.venv/bin/python -m pip install -q --disable-pip-version-check)
if [ "$want_test" = 1 ]; then "${pip[@]}" -e ".[test]"; else "${pip[@]}" -e .; fi
# The real PyTorch (and cuBLAS/cuSPARSE/cuSOLVER) headers the extension tests compile against, unpacked from the
# wheels into .venv/real-headers: ~35 s, 63 MB, only from a torch wheel already on this disk.
if [ "$want_test" = 1 ]; then .venv/bin/python scripts/real_headers.py; fi
.venv/bin/migrate --version >/dev/null
