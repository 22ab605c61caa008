#!/bin/sh
# `paictl check hosts` and `paictl facts collect` against a few bundled test hosts
# (examples/hosts/demo.conf): real sshd processes on 127.0.20.x, each in its own
# mount namespace with its own GPUs, Docker configuration and leftovers.
#
#   scripts/demo-hosts.sh            (PAICTL=path to use another binary than build/paictl)
#
# It needs root, sshd and mount namespaces. Elsewhere it says so and exits 0
# without running anything (DEMO_STRICT=1: exit 77 instead).
set -eu
cd "$(dirname "$0")/.."
PAICTL=${PAICTL:-./build/paictl}
HOSTS=tests/integration/hosts/testhosts.sh
status=0

DEMO_NAME=demo-hosts
. scripts/demo-lib.sh

if ! reason=$(sh "$HOSTS" can-run); then
  # can-run says "testhosts: skipped: WHY"; one sentence for the demo's reader.
  echo "check hosts demo skipped: ${reason#testhosts: skipped: }; run this as root on a machine with openssh-server to see paictl check four sshd test hosts."
  [ "${DEMO_STRICT:-0}" = 1 ] && exit 77
  exit 0
fi
[ -x "$PAICTL" ] || { echo "demo-hosts: build paictl first (scripts/build.sh)" >&2; exit 2; }

RUN=$(mktemp -d "${TMPDIR:-/tmp}/paictl-demo-hosts.XXXXXX")
# Always stop the hosts (by pid) and remove the run directory, whatever happens.
trap 'sh "$HOSTS" stop "$RUN/hosts" >/dev/null 2>&1; rm -rf "$RUN"' EXIT
trap 'exit 130' INT TERM
step "Start 4 sshd test hosts (examples/hosts/demo.conf)"
sh "$HOSTS" start examples/hosts/demo.conf "$RUN/hosts"
cat "$RUN/hosts/hosts.txt"
C=$RUN/hosts/cluster
# The test hosts' SSH settings (port, key, known_hosts) are in their ssh_config; they
# all share this machine's disk, hence the small --min-disk-free.
F="--ssh-config $RUN/hosts/ssh_config --min-disk-free 1Gi"

step "How each host would be reached (nothing is contacted)"
expect 0 $PAICTL check hosts "$C" --ssh-config "$RUN/hosts/ssh_config" --dry-run
step "Check every host at once: one SSH round trip each, a hint for every finding (exit 1: findings)"
# shellcheck disable=SC2086
expect 1 $PAICTL check hosts "$C" $F
step "The two hosts that are ready pass (exit 0)"
# shellcheck disable=SC2086
expect 0 $PAICTL check hosts "$C" $F --limit pai-master,pai-worker1
step "Save each host's facts for the planner"
expect 0 $PAICTL facts collect "$C" --ssh-config "$RUN/hosts/ssh_config" --out "$RUN/facts"
ls "$RUN/facts"

if [ "$status" -eq 0 ]; then step "check hosts demo finished: every step behaved as expected"; fi
exit $status
