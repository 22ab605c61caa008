#!/bin/sh
# Makes a facts directory for `paictl plan` from a machine profile in layouts/:
# COUNT host directories (topo.txt, gpus.csv, lscpu.txt, meminfo from the
# profile, and a host.yaml with a made-up address and rack). For examples,
# benchmarks and trying the planner on hardware you do not have.
#
#   scripts/gen-facts.sh PROFILE COUNT OUTDIR [RACKS [PREFIX [SUBNET]]]
#
#   PROFILE  a directory name under layouts/ (paictl plan --list-profiles)
#   RACKS    spread the hosts over that many racks (default 0: no rack)
#   PREFIX   host name prefix (default: PROFILE); hosts are PREFIX-0001 ...
#   SUBNET   second octet of the 10.x.y.z addresses (default 100)
#
# Example: scripts/gen-facts.sh dgx-a100 2000 /tmp/facts-2000 50
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 3 ] || { sed -n '2,15p' "$0" >&2; exit 2; }
profile=$1 count=$2 out=$3 racks=${4:-0} prefix=${5:-$1} subnet=${6:-100}
src=layouts/$profile
[ -f "$src/profile.yaml" ] || { echo "gen-facts: no profile $src" >&2; exit 2; }
case $count in '' | *[!0-9]*) echo "gen-facts: COUNT must be a number" >&2; exit 2 ;; esac
case $racks in '' | *[!0-9]*) echo "gen-facts: RACKS must be a number" >&2; exit 2 ;; esac
[ "$count" -ge 1 ] && [ "$count" -le 60000 ] || { echo "gen-facts: COUNT must be 1..60000" >&2; exit 2; }
mkdir -p "$out"
i=0
while [ "$i" -lt "$count" ]; do
  name=$(printf '%s-%04d' "$prefix" $((i + 1)))
  d=$out/$name
  mkdir -p "$d"
  for f in topo.txt gpus.csv lscpu.txt meminfo; do
    [ -f "$src/$f" ] && cp "$src/$f" "$d/$f"
  done
  {
    echo "hostip: 10.$subnet.$((i / 254)).$((i % 254 + 1))"
    if [ "$racks" -gt 0 ]; then echo "rack: rack$((i * racks / count + 1))"; fi
  } > "$d/host.yaml"
  i=$((i + 1))
done
echo "gen-facts: $count hosts of $profile in $out" >&2
