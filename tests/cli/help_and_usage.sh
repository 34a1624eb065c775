#!/usr/bin/env bash
# `drover <command> --help` prints the usage on standard output and succeeds;
# an unknown option fails with the usage on standard error (ctest:
# cli_help_and_usage). Usage: help_and_usage.sh DROVER_BINARY
set -euo pipefail
drover=$1
out=$(mktemp -d "${TMPDIR:-/tmp}/drover-help.XXXXXX")
trap 'rm -rf "$out"' EXIT

for cmd in "up" "down" "sim" "sim run" "sim compare" "sim gen" "config" "agent" "controller"; do
  # shellcheck disable=SC2086
  if ! "$drover" $cmd --help > "$out/o" 2> "$out/e"; then echo "drover $cmd --help failed"; cat "$out/e"; exit 1; fi
  grep -qi 'usage' "$out/o" || { echo "drover $cmd --help printed no usage on stdout"; exit 1; }
  test ! -s "$out/e" || { echo "drover $cmd --help wrote to stderr"; cat "$out/e"; exit 1; }
done
for sub in run compare gen; do
  "$drover" sim "$sub" --help > "$out/o"
  grep -q '^usage: drover sim run' "$out/o"
done

for cmd in "up" "down"; do
  if "$drover" $cmd --no-such-option > "$out/o" 2> "$out/e"; then echo "drover $cmd accepted an unknown option"; exit 1; fi
  grep -q "unknown option '--no-such-option'" "$out/e"
  grep -q "^usage: drover $cmd" "$out/e"
done

# drover down on a directory where nothing was started says so and succeeds.
"$drover" down --state "$out/none" > "$out/o"
grep -q "nothing runs from" "$out/o"
echo "cli help and usage: ok"
