#!/usr/bin/env bash
# The test command: install what is missing, build, run every test suite.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh build test
bash scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 600
