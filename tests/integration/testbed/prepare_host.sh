#!/bin/sh
# What an installer does to prepare a testbed host for kubeadm, by hand: the
# testbed's tests run it over SSH (sh -s < prepare_host.sh) to bring hosts to
# the point where kubeadm init/join succeed. Not paictl's installer: a fixture.
#   GPU=1 also installs the NVIDIA Container Toolkit and makes nvidia
#   containerd's default runtime.
set -eu
K8S=${K8S:-1.30}
swapoff -a
sed -i '/\sswap\s/s/^/#/' /etc/fstab
printf 'overlay\nbr_netfilter\n' > /etc/modules-load.d/k8s.conf
modprobe overlay
modprobe br_netfilter
printf 'net.bridge.bridge-nf-call-iptables = 1\nnet.bridge.bridge-nf-call-ip6tables = 1\nnet.ipv4.ip_forward = 1\n' > /etc/sysctl.d/99-kubernetes.conf
sysctl --system >/dev/null
echo "deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] https://pkgs.k8s.io/core:/stable:/v$K8S/deb/ /" > /etc/apt/sources.list.d/kubernetes.list
[ "${GPU:-0}" = 1 ] && echo "deb https://nvidia.github.io/libnvidia-container/stable/deb/\$(ARCH) /" > /etc/apt/sources.list.d/nvidia-container-toolkit.list
apt-get update -qq >/dev/null 2>&1
apt-get install -y -qq containerd kubelet kubeadm kubectl >/dev/null
apt-mark hold kubelet kubeadm kubectl >/dev/null
mkdir -p /etc/containerd
containerd config default > /etc/containerd/config.toml
sed -i 's/SystemdCgroup = false/SystemdCgroup = true/' /etc/containerd/config.toml
if [ "${GPU:-0}" = 1 ]; then
  apt-get install -y -qq nvidia-container-toolkit >/dev/null
  nvidia-ctk runtime configure --runtime=containerd --set-as-default 2>/dev/null
fi
systemctl restart containerd
systemctl enable --now kubelet
