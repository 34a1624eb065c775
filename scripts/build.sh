#!/usr/bin/env bash
# Configure (once) and build Drover into ./build with CMake + Ninja.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
fi
jobs=$(nproc)
ninja -C build -j "$jobs"
