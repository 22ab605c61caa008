#!/bin/sh
# Benchmarks of paictl install on the testbed (docs/benchmarks.md, "install"):
#   dry-run-N     install --dry-run of a fresh N-host testbed (target: 100 hosts in <= 2 s)
#   single        a full install of a master and one worker, alone (the slowest single host)
#   full-N        a full install of N hosts (target: <= 1.5 x single)
#   noop-N        a re-run of install on those N hosts, nothing to do (target: <= 1.5 x check-N)
#   check-N       paictl check hosts of the same N hosts
# Each line has the wall time, paictl's CPU and the hosts' CPU (their sshds with every
# command they ran, the testbed's fake server, the API server); the last lines are the
# three figures the targets are about, with the hosts' CPU behind them (per host, per
# worker added) and the least wall time that CPU takes on this machine's cores.
#
#   scripts/bench-install.sh [DRY_N [FULL_N]]     (default 100 50)
#   PAICTL=path   the binary (default build/paictl)
#   DRY_ONLY=1    only dry-run-N
#
# Needs root (the testbed) and GNU time (/usr/bin/time). The hosts' sshds and fakes share the machine's cores
# with paictl, as they would not in a real cluster: on a small machine the full
# install measures the machine as much as paictl.
set -eu
cd "$(dirname "$0")/.."
PAICTL=${PAICTL:-build/paictl}
DRY_N=${1:-100}
FULL_N=${2:-50}
TESTBED=scripts/testbed.sh
"$TESTBED" can-run >/dev/null || exit 77
[ -x "$PAICTL" ] || { echo "bench-install: build paictl first or set PAICTL" >&2; exit 2; }
export PAICTL_TEMPLATES=${PAICTL_TEMPLATES:-$(pwd)/templates}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/paictl-bench-install.XXXXXX")
BED=""
cleanup() { [ -n "$BED" ] && "$TESTBED" down "$BED" >/dev/null 2>&1; rm -rf "$WORK"; }
trap cleanup EXIT INT TERM
now() { date +%s.%N; }
load() { cut -d' ' -f1 /proc/loadavg; }
# The CPU the testbed's hosts spent (user + system, seconds): their sshds with every
# session and command they reaped, the fake server with its workers, the API server.
hosts_cpu() {
  python3 - "$BED" <<'PY'
import os, sys
run, tck, total = sys.argv[1], os.sysconf("SC_CLK_TCK"), 0
def cpu(pid):
    try:
        return sum(int(x) for x in open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[11:15])
    except (OSError, ValueError):
        return 0
pids = [int(l.split()[0]) for l in open(run + "/pids") if len(l.split()) == 3 and l.split()[1] == "sshd"]
for f in [run + "/tbserver.pid"] + [run + "/hosts/%s/state/apiserver/pid" % h for h in os.listdir(run + "/hosts")]:
    try:
        pids.append(int(open(f).read()))
    except (OSError, ValueError):
        pass
print("%.2f" % (sum(cpu(p) for p in pids) / tck))
PY
}
timed() {  # NAME COMMAND...: prints NAME SECONDS EXIT, paictl's CPU time, the hosts' CPU time and the load average
  name=$1; shift
  l0=$(load)
  h0=$(hosts_cpu)
  t0=$(now); set +e; /usr/bin/time -f '%U %S' -o "$WORK/$name.cpu" "$@" >"$WORK/$name.log" 2>&1; rc=$?; set -e; t1=$(now)
  h1=$(hosts_cpu)
  cpu=$(tail -n 1 "$WORK/$name.cpu" 2>/dev/null | awk '{printf "%.2f", $1 + $2}')
  wall=$(echo "$t1 - $t0" | bc)
  eval "T_$(echo "$name" | tr -c 'a-z0-9\n' _)=$wall"
  eval "H_$(echo "$name" | tr -c 'a-z0-9\n' _)=$(awk "BEGIN { printf \"%.2f\", $h1 - $h0 }")"
  eval "C_$(echo "$name" | tr -c 'a-z0-9\n' _)=$cpu"
  printf '%-12s %8.2f s  (exit %d)  paictl CPU %s s  hosts CPU %s s  load %s -> %s\n' "$name" "$wall" "$rc" "$cpu" \
    "$(awk "BEGIN { printf \"%.2f\", $h1 - $h0 }")" "$l0" "$(load)"
}
ratio() { awk "BEGIN { printf \"%.2f\", $1 / $2 }"; }
up() {
  BED=$WORK/bed-$1
  "$TESTBED" up "$1" "$BED" --base 127.0.40 --rollout-delay 0.1 >"$WORK/up-$1.log" 2>&1 ||
    { echo "bench-install: testbed.sh up $1 failed:" >&2; cat "$WORK/up-$1.log" >&2; exit 1; }
}
down() { "$TESTBED" down "$BED" >/dev/null 2>&1; BED=""; }
A() { echo "--ssh-config $BED/ssh_config --ignore-check-errors CPU,DNS,DiskFree"; }

echo "machine: $(nproc) cores, $(uname -r)"
up "$DRY_N"
timed "dry-run-$DRY_N" "$PAICTL" install "$BED/cluster" $(A) --dry-run
eval "dry=\$T_dry_run_$DRY_N dry_h=\$H_dry_run_$DRY_N dry_c=\$C_dry_run_$DRY_N"
# What the hosts' and paictl's CPU alone take on this machine's cores, waiting for
# nothing: the wall time no client could beat here, since the hosts share the cores.
floor() { awk "BEGIN { printf \"%.2f\", ($1 + $2) / $(nproc) }"; }
per() { awk "BEGIN { printf \"%.1f\", $1 * 1000 / $2 }"; }
dry_line() {
  printf '  %-24s %6.2f s  (target <= 2 s; hosts CPU %s s = %s ms a host, paictl %s s: at least %s s on %d cores)\n' \
    "dry-run-$DRY_N" "$dry" "$dry_h" "$(per "$dry_h" "$DRY_N")" "$dry_c" "$(floor "$dry_h" "$dry_c")" "$(nproc)"
}
if [ "${DRY_ONLY:-0}" = 1 ]; then
  timed "dry-run-$DRY_N" "$PAICTL" install "$BED/cluster" $(A) --dry-run
  eval "dry=\$T_dry_run_$DRY_N dry_h=\$H_dry_run_$DRY_N dry_c=\$C_dry_run_$DRY_N"
  echo "targets:"
  dry_line
  exit 0
fi
down
up 2
timed single "$PAICTL" install "$BED/cluster" $(A) --yes
down
up "$FULL_N"
timed "full-$FULL_N" "$PAICTL" install "$BED/cluster" $(A) --yes --parallel "$FULL_N"
timed "noop-$FULL_N" "$PAICTL" install "$BED/cluster" $(A) --yes --parallel "$FULL_N"
timed "check-$FULL_N" "$PAICTL" check hosts "$BED/cluster" --ssh-config "$BED/ssh_config" --parallel "$FULL_N"
down
eval "full=\$T_full_$FULL_N noop=\$T_noop_$FULL_N check=\$T_check_$FULL_N"
eval "full_h=\$H_full_$FULL_N full_c=\$C_full_$FULL_N"
echo "targets:"
dry_line
printf '  %-24s %6.2f x  (target <= 1.5; %.2f s / %.2f s; hosts CPU %s s / %s s, %s ms a worker added; at least %s s on %d cores)\n' \
  "full-$FULL_N / single" "$(ratio "$full" "$T_single")" "$full" "$T_single" "$full_h" "$H_single" \
  "$(awk "BEGIN { printf \"%.0f\", ($full_h - $H_single) * 1000 / ($FULL_N > 2 ? $FULL_N - 2 : 1) }")" "$(floor "$full_h" "$full_c")" "$(nproc)"
printf '  %-24s %6.2f x  (target <= 1.5)\n' "noop-$FULL_N / check-$FULL_N" "$(ratio "$noop" "$check")"
