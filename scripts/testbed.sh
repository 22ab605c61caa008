#!/bin/sh
# The install testbed: N fresh sshd test hosts with stateful fakes of apt/dpkg,
# systemctl, modprobe, sysctl, swap, containerd, nvidia-ctk, nvidia-smi,
# kubeadm and kubelet, and a fake Kubernetes API server on the master that
# kubectl talks to over TLS, keeping its objects in a real etcd (Debian's
# etcd-server, run from kubeadm's static pod manifest; the machine's etcdctl
# backs it up and restores it); once paictl install ran, test doubles of OpenPAI's
# gateway (REST API v2, http://MASTER) and of HiveD's inspect API
# (http://MASTER:30096). docs/testbed.md describes it.
#
#   scripts/testbed.sh up N RUNDIR [--base 127.0.30] [--masters 1|3|5] [--host I:KEY=VALUE,...]... [--kubectl PATH]
#                                  [--rollout-delay S] [--hived-server PATH] [--call-latency S]
#                                  (--masters 3: tb-master, tb-master2, tb-master3 behind HAProxy on BASE.250:6443)
#                                  (--call-latency S: every call of a fake sleeps S seconds first)
#   scripts/testbed.sh state RUNDIR          one JSON document of every host's state and of the cluster objects
#   scripts/testbed.sh down RUNDIR           stop everything, by pid
#   scripts/testbed.sh knob RUNDIR HOST 'TOOL STEP ACTION'...   (or --clear)
#   scripts/testbed.sh log RUNDIR [HOST]     every recorded invocation, one JSON object a line
#   scripts/testbed.sh stop-host RUNDIR NAME lose a host (its sshd, API server, etcd member, kubelet loop)
#   scripts/testbed.sh start-host RUNDIR NAME   a lost host replaced: same name, address and host key, disks wiped
#   scripts/testbed.sh kubeconfig RUNDIR     path of the master's admin.conf
#   scripts/testbed.sh age-certs RUNDIR DAYS [HOST|all [NAME...]]   re-issue leaf certificates to expire DAYS from now
#   scripts/testbed.sh can-run               exit 77 with the reason when this machine cannot run it
#
# Needs root (sshd, namespaces, bind mounts), as the sshd test hosts do.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
exec "$PY" "$ROOT/tests/integration/testbed/testbed.py" "$@"
