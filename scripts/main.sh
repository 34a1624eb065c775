#!/usr/bin/env bash
# The main job: install what is missing, build, and run Drover's doctor on the
# seed's own configuration (examples/seed/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh build
bash scripts/build.sh
echo
echo "== drover config check --config examples/seed/slurm.conf"
set +e
build/bin/drover config check --config examples/seed/slurm.conf
rc=$?
set -e
# The doctor exits 1 for warnings and 2 for errors; the seed's config is
# expected to draw findings, so only a crash (>2) fails the main job.
[ "$rc" -le 2 ] || exit "$rc"
