#!/bin/sh
# Benchmark of `paictl check hosts` against plain OpenSSH and Ansible on the same
# sshd test hosts, side by side in one run (docs/benchmarks.md, "check hosts").
#
#   scripts/bench-check-hosts.sh [N...]       host counts (default: 50 100)
#
#   PAICTL=path       the binary (default build/paictl)
#   REPEAT=3          runs per tool and host count; the median is reported
#   ANSIBLE_REPEAT=1  runs of the Ansible rows (slow); 0 skips them
#
# For each N it starts N sshd test hosts (tests/integration/hosts/testhosts.sh:
# 127.0.10.x and up, one clean GPU worker each, a CPU master first) and measures:
#   paictl       paictl check hosts on the generated cluster (every check, one round trip per host)
#   ssh-true     OpenSSH running `true` on every host at once (xargs -P N)
#   paictl-p64   the same with the default --parallel 64 (only when N > 64)
#   ssh-8        OpenSSH running eight check commands in one remote shell (xargs -P N)
#   ssh-script   OpenSSH running paictl's own fact script (--print-script) on every host (xargs -P N):
#                the same remote work as paictl, without paictl's client
#   ansible      ansible all -m setup, then the same eight commands with -m shell (forks = N),
#                when ansible is installed (apt-get install ansible-core)
# wall time and the client's CPU (user + system of the whole client process tree).
# Needs root (sshd test hosts). The test hosts' sshd processes share the machine's
# cores with the client, as they would not in a real cluster.
set -eu
cd "$(dirname "$0")/.."
PAICTL=${PAICTL:-build/paictl}
REPEAT=${REPEAT:-3}
ANSIBLE_REPEAT=${ANSIBLE_REPEAT:-1}
COUNTS=${*:-50 100}
HOSTS=tests/integration/hosts/testhosts.sh

if ! sh "$HOSTS" can-run; then exit 77; fi
[ -x "$PAICTL" ] || { echo "bench: build paictl first (scripts/build.sh) or set PAICTL" >&2; exit 2; }
PAICTL=$(cd "$(dirname "$PAICTL")" && pwd)/$(basename "$PAICTL")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/paictl-bench.XXXXXX")
RUN=""
cleanup() {
  [ -n "$RUN" ] && sh "$HOSTS" stop "$RUN" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# measure LABEL N CMD: runs CMD with sh, prints "LABEL N wall_s cpu_s".
measure() {
  python3 - "$1" "$2" "$3" <<'PY'
import resource, subprocess, sys, time
label, n, cmd = sys.argv[1], sys.argv[2], sys.argv[3]
before = resource.getrusage(resource.RUSAGE_CHILDREN)
t0 = time.monotonic()
rc = subprocess.run(["sh", "-c", cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
wall = time.monotonic() - t0
after = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
print("%s %s %.3f %.3f %d" % (label, n, wall, cpu, rc))
PY
}

# OpenPAI's own checks, one command each (no braces: Ansible would read them as a template).
EIGHT='nproc; free -m; nvidia-smi --query-gpu=gpu_name --format=csv,noheader; command -v nvidia-container-runtime; docker info | grep -i runtime; getent hosts registry.paictl.test; cat /proc/swaps; df -P /'

have_ansible=0
if command -v ansible >/dev/null 2>&1 && [ "$ANSIBLE_REPEAT" -gt 0 ]; then have_ansible=1; fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) (other work on this machine slows every tool alike)"
echo "paictl $("$PAICTL" --version | cut -d' ' -f2), $(nproc) CPUs, OpenSSH $(ssh -V 2>&1 | cut -d' ' -f1), ansible: $(if [ $have_ansible = 1 ]; then ansible --version 2>/dev/null | sed -n 1p; else echo 'not installed'; fi)"
: > "$WORK/results"
for n in $COUNTS; do
  RUN=$WORK/hosts-$n
  sh "$HOSTS" generate "$n" 127.0.10.2 > "$WORK/scenario-$n.conf"
  sh "$HOSTS" start "$WORK/scenario-$n.conf" "$RUN"
  cfg=$RUN/ssh_config
  # A warm-up run: page cache, the hosts' first sshd forks.
  "$PAICTL" check hosts "$RUN/cluster" --ssh-config "$cfg" --min-disk-free 1Gi -o json > "$WORK/paictl-$n.json" 2> "$WORK/paictl-$n.err" || true
  if ! python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print("  paictl: %d hosts, %d unreachable, %d checks failed, parallel %d" % (s["hosts"], s["unreachable"], s["fail"], s["parallel"]))' "$WORK/paictl-$n.json" 2>/dev/null; then
    echo "bench: the warm-up run of paictl printed no report:" >&2
    head -c 2000 "$WORK/paictl-$n.err" >&2
    exit 1
  fi
  # paictl's own fact script, for OpenSSH to run (ssh-script): the same remote work without paictl's client.
  "$PAICTL" check hosts "$RUN/cluster" --ssh-config "$cfg" --print-script > "$WORK/script.sh"
  cat > "$WORK/inventory-$n.ini" <<EOF
[all]
$(cat "$RUN/hosts.list")
[all:vars]
ansible_user=root
ansible_port=$(cat "$RUN/port")
ansible_ssh_private_key_file=$RUN/id_ed25519
ansible_ssh_common_args=-F $cfg
ansible_python_interpreter=/usr/bin/python3
EOF
  i=0
  while [ $i -lt "$REPEAT" ]; do
    measure paictl "$n" "'$PAICTL' check hosts '$RUN/cluster' --ssh-config '$cfg' --min-disk-free 1Gi --parallel $n -o json" >> "$WORK/results"
    if [ "$n" -gt 64 ]; then
      measure paictl-p64 "$n" "'$PAICTL' check hosts '$RUN/cluster' --ssh-config '$cfg' --min-disk-free 1Gi -o json" >> "$WORK/results"
    fi
    measure ssh-script "$n" "xargs -P $n -I{} sh -c 'ssh -F \"$cfg\" {} /bin/sh -s root < \"$WORK/script.sh\" > /dev/null' < '$RUN/hosts.list'" >> "$WORK/results"
    measure ssh-true "$n" "xargs -P $n -I{} ssh -F '$cfg' -n {} true < '$RUN/hosts.list'" >> "$WORK/results"
    measure ssh-8 "$n" "xargs -P $n -I{} ssh -F '$cfg' -n {} '$EIGHT' < '$RUN/hosts.list'" >> "$WORK/results"
    i=$((i + 1))
  done
  i=0
  while [ $have_ansible = 1 ] && [ $i -lt "$ANSIBLE_REPEAT" ]; do
    measure ansible "$n" "ANSIBLE_HOST_KEY_CHECKING=False ANSIBLE_GATHERING=explicit ansible all -i '$WORK/inventory-$n.ini' -f $n -m setup && ANSIBLE_HOST_KEY_CHECKING=False ansible all -i '$WORK/inventory-$n.ini' -f $n -m shell -a '$EIGHT'" >> "$WORK/results"
    i=$((i + 1))
  done
  echo "  $n hosts measured; load average now $(cut -d' ' -f1-3 /proc/loadavg)"
  sh "$HOSTS" stop "$RUN"
  RUN=""
done

echo
python3 - "$WORK/results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    label, n, wall, cpu, rc = line.split()
    rows.setdefault((int(n), label), []).append((float(wall), float(cpu), int(rc)))
order = ["paictl", "paictl-p64", "ssh-true", "ssh-8", "ssh-script", "ansible"]
print("| hosts | tool | runs | wall (median) | client CPU | CPU per host | vs ssh-true | exit codes |")
print("|---|---|---|---|---|---|---|---|")
for n in sorted({k[0] for k in rows}):
    base = statistics.median(w for w, _, _ in rows[(n, "ssh-true")]) if (n, "ssh-true") in rows else None
    for label in order:
        if (n, label) not in rows:
            continue
        r = rows[(n, label)]
        wall = statistics.median(w for w, _, _ in r)
        cpu = statistics.median(c for _, c, _ in r)
        ratio = "%.2fx" % (wall / base) if base else "-"
        codes = ",".join(sorted({str(c) for _, _, c in r}))
        print("| %d | %s | %d | %.2f s | %.2f s | %.1f ms | %s | %s |" % (n, label, len(r), wall, cpu, cpu / n * 1000, ratio, codes))
PY
