#!/usr/bin/env bash
# Install Drover's Debian packages: the groups named on the command line
# (default: build test), as listed in scripts/debian-packages.txt.
# Idempotent: when every package is already installed, nothing is fetched.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -gt 0 ] || set -- build test

packages=()
for group in "$@"; do
  mapfile -t found < <(awk -v g="$group" '
    /^# group:/ { cur = $3; next }
    /^#/ || NF == 0 { next }
    cur == g { print $1 }' "$here/debian-packages.txt")
  if [ ${#found[@]} -eq 0 ]; then
    echo "install-deps: unknown package group '$group' (see scripts/debian-packages.txt)" >&2
    exit 2
  fi
  packages+=("${found[@]}")
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
