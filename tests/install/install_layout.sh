#!/usr/bin/env bash
# `cmake --install` into a scratch prefix gives a working installation: the
# daemons with drover-stepd beside them, the Slurm-named commands, and
# systemd units that start the installed binaries (ctest: install_layout).
# Usage: install_layout.sh BUILD_DIR
set -euo pipefail
build=$1
prefix=$(mktemp -d "${TMPDIR:-/tmp}/drover-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" > "$prefix.log" 2>&1 || { cat "$prefix.log"; rm -f "$prefix.log"; exit 1; }
rm -f "$prefix.log"

for f in drover drover-cli drover-stepd drover-detect; do
  test -x "$prefix/bin/$f" || { echo "missing $prefix/bin/$f"; exit 1; }
done
for c in sbatch squeue sinfo scontrol scancel srun salloc sacct sdiag sacctmgr sprio sshare sreport sstat sbcast; do
  test "$(readlink "$prefix/bin/$c")" = drover-cli || { echo "$c is not a link to drover-cli"; exit 1; }
done
# The installed commands run from there: version, and a config they can read.
test "$("$prefix/bin/sbatch" --version)" = "slurm 22.05.8"
"$prefix/bin/drover" controller --help | grep -q -- '-L, --log-file FILE'
"$prefix/bin/drover" agent --detect > /dev/null

units=$prefix/lib/systemd/system
for u in drover-controller.service drover-agent@.service drover-authd.service; do
  test -f "$units/$u" || { echo "missing $units/$u"; exit 1; }
  if grep -q '@DROVER_BINDIR@' "$units/$u"; then echo "$u: @DROVER_BINDIR@ left unreplaced"; exit 1; fi
done
grep -qx "ExecStart=$prefix/bin/drover controller --config /etc/drover/slurm.conf \$CONTROLLER_OPTIONS" \
  "$units/drover-controller.service"
grep -qx 'ExecReload=/bin/kill -HUP $MAINPID' "$units/drover-controller.service"
grep -qx "ExecStart=$prefix/bin/drover agent --node %i --config /etc/drover/slurm.conf \$AGENT_OPTIONS" \
  "$units/drover-agent@.service"
grep -qx 'KillMode=process' "$units/drover-agent@.service"
if command -v systemd-analyze > /dev/null 2>&1; then
  # Only the unit files' own syntax (the binaries' config is not on this host).
  systemd-analyze verify "$units/drover-controller.service" 2>&1 | grep -i "unknown\|invalid" && exit 1
fi
echo "install layout: ok"
