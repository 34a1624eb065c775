#!/usr/bin/env bash
# Packs what scripts/gpu_check.sh needs on a GPU machine that has none of
# Drover's libraries and no package mirror: the stripped binaries from
# build/bin and every shared library `drover` loads except the C library's
# own (libc, libm, the loader), into .gpucheck/ (git-ignored; about 45 MB).
# Usage: bash scripts/gpu_bundle.sh   (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
out=.gpucheck
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
for b in drover drover-stepd drover-cli drover-detect; do
  [[ -x build/bin/$b ]] || { echo "gpu_bundle: build/bin/$b is missing: run scripts/build.sh first" >&2; exit 1; }
  strip -o "$out/bin/$b" "build/bin/$b"
done
ldd build/bin/drover | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|ld-linux*|libstdc++.so.*|libgcc_s.so.*) continue ;;
  esac
  cp -L "$lib" "$out/lib/"
done
du -sh "$out" | awk '{print "gpu_bundle: " $1 " in '"$out"'/ (" }' | tr -d '\n'
echo "$(ls "$out/lib" | wc -l) libraries)"
