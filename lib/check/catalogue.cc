#include "check/catalogue.h"

#include "util/strings.h"

namespace pai::check {

using diag::Severity;

std::string_view to_string(Status s) {
  switch (s) {
    case Status::Pass:
      return "pass";
    case Status::Warn:
      return "warn";
    case Status::Fail:
      return "fail";
    case Status::Skip:
      return "skip";
  }
  return "pass";
}

const std::vector<CheckInfo>& catalogue() {
  static const std::vector<CheckInfo> kChecks = {
      {"Reachable", Severity::Error, "host",
       "SSH connects, the host key verifies, login succeeds and the fact script runs to its end",
       "paictl"},
      {"Privileges", Severity::Warning, "host",
       "the checks run as root (login as root, sudo -n, or sudo with the password)", "paictl"},
      {"OS", Severity::Warning, "host",
       "Ubuntu 16.04 or later, the OS OpenPAI's installer is tested on", "openpai"},
      {"KernelVersion", Severity::Error, "host",
       "kernel 3.10 or later (Docker's and Kubernetes' minimum)", "kubeadm"},
      {"Cgroups", Severity::Error, "host",
       "the cgroup controllers Kubernetes needs are enabled; cgroup v2 is flagged for Kubernetes "
       "1.16",
       "kubeadm"},
      {"CPU", Severity::Error, "host",
       "logical CPUs at least the SKU's vcore (and 2 on the master)", "openpai"},
      {"Memory", Severity::Error, "host", "total memory at least the SKU's mem", "openpai"},
      {"MemoryAvailable", Severity::Error, "host",
       "available memory at least 40000 MB on the master, 16000 MB on workers", "openpai"},
      {"Swap", Severity::Error, "host", "swap is off (the kubelet refuses to start with swap on)",
       "kubeadm"},
      {"DiskFree", Severity::Error, "host",
       "free space at the Docker data root at least --min-disk-free", "paictl"},
      {"DiskRoot", Severity::Warning, "host", "at least 10 GiB free on /", "paictl"},
      {"Port-<N>", Severity::Error, "host",
       "nothing listens on the ports the host's roles need (6443 2379 2380 10250 10257 10259 80 "
       "9186 9286 on the master, 10250 on workers)",
       "kubeadm"},
      {"IPForward", Severity::Warning, "host",
       "net.ipv4.ip_forward is 1 (the installer sets it, a host policy may reset it)", "kubeadm"},
      {"BridgeNetfilter", Severity::Warning, "host", "net.bridge.bridge-nf-call-iptables is 1",
       "kubeadm"},
      {"KernelModules", Severity::Warning, "host",
       "br_netfilter and overlay are loaded (or built in)", "kubeadm"},
      {"Binaries", Severity::Error, "host",
       "ip, mount and nsenter are on PATH (error); iptables, conntrack, ebtables, ethtool, socat, "
       "tc, touch (warning)",
       "kubeadm"},
      {"HostnameValid", Severity::Error, "host",
       "the host name is a lower-case DNS-1123 name (what Kubernetes and OpenPAI's layout accept)",
       "kubeadm"},
      {"HostnameMatches", Severity::Warning, "host",
       "the host name is the layout.yaml hostname (the installer would rename the host)",
       "openpai"},
      {"HostnameResolves", Severity::Warning, "host", "the host name resolves on the host",
       "kubeadm"},
      {"HostIP", Severity::Error, "host", "layout.yaml's hostip is one of the host's own addresses",
       "kubespray"},
      {"Firewalld", Severity::Warning, "host", "firewalld is not running (or its ports are opened)",
       "kubeadm"},
      {"Docker", Severity::Error, "host", "Docker is installed and its daemon answers", "openpai"},
      {"DockerVersion", Severity::Warning, "host",
       "Docker 19.03 or later; older Docker would be replaced (and restarted) by the installer",
       "non-clean"},
      {"DaemonJson", Severity::Error, "host", "/etc/docker/daemon.json is valid JSON", "non-clean"},
      {"DefaultRuntimeBinary", Severity::Error, "host",
       "the binary of Docker's default runtime exists", "non-clean"},
      {"NvidiaSmi", Severity::Error, "host", "GPU hosts: nvidia-smi runs and lists the GPUs",
       "openpai"},
      {"GPUCount", Severity::Error, "host",
       "GPU hosts: nvidia-smi lists exactly the SKU's computing-device count", "openpai"},
      {"GPUModel", Severity::Warning, "host", "GPU hosts: the GPU name contains the SKU's model",
       "paictl"},
      {"NvidiaRuntime", Severity::Error, "host", "GPU hosts: nvidia-container-runtime is installed",
       "openpai"},
      {"DefaultRuntime", Severity::Error, "host",
       "GPU hosts: Docker's default runtime is nvidia (registered is not enough)", "openpai"},
      {"DNS", Severity::Error, "host", "the configured registries resolve on the host", "openpai"},
      {"NTP", Severity::Warning, "host", "the clock is NTP-synchronised (an error on the master)",
       "openpai"},
      {"LeftoverEtcd", Severity::Error, "host",
       "no etcd data left from an earlier install (/var/lib/etcd, /var/etcd/data)", "non-clean"},
      {"LeftoverKubernetes", Severity::Error, "host", "/etc/kubernetes is empty or absent",
       "non-clean"},
      {"LeftoverKubelet", Severity::Error, "host", "/var/lib/kubelet is empty or absent",
       "non-clean"},
      {"LeftoverCNI", Severity::Warning, "host",
       "no CNI configuration left (/etc/cni/net.d, /var/lib/cni)", "non-clean"},
      {"RunningKubernetes", Severity::Error, "host",
       "no kubelet, etcd or Kubernetes control-plane process is running", "non-clean"},
      {"RunningContainers", Severity::Warning, "host",
       "no containers are running (the installer restarts Docker)", "non-clean"},
      {"UniqueHostname", Severity::Error, "cluster", "every host has its own host name", "paictl"},
      {"UniqueMachine", Severity::Error, "cluster",
       "every host is a different machine (/etc/machine-id)", "paictl"},
      {"UniqueIP", Severity::Error, "cluster",
       "no host has another host's hostip on its interfaces (an IP conflict)", "paictl"},
      {"ClockSkew", Severity::Error, "cluster", "the hosts' clocks agree within 1 s", "paictl"},
      {"DriverVersion", Severity::Error, "cluster",
       "the hosts of one SKU run one NVIDIA driver version", "paictl"},
      {"OSFamily", Severity::Warning, "cluster", "all hosts run one OS family", "paictl"},
      {"CrossSitePort", Severity::Error, "cluster",
       "hybrid clusters: each host reaches the API server and the kubelets of the other site",
       "paictl"},
      {"CrossSiteMTU", Severity::Error, "cluster",
       "hybrid clusters: the pods' VXLAN packets reach the other site unfragmented", "paictl"},
      {"SiteOverlap", Severity::Error, "cluster",
       "hybrid clusters: azure.address-space, its subnet, the pods' and the services' ranges "
       "overlap neither each other nor an on-prem host's networks (interfaces, routes)",
       "paictl"},
      {"CrossSiteUDP", Severity::Error, "cluster",
       "hybrid clusters: the overlay's UDP ports (8472, 4789) of the other site are not refused "
       "by the network (no answer is a warning: UDP cannot prove more)",
       "paictl"},
  };
  return kChecks;
}

const CheckInfo* find_check(std::string_view name) {
  std::string n = util::to_lower(name);
  if (n.rfind("port-", 0) == 0) n = "port-<n>";
  for (const auto& c : catalogue())
    if (util::to_lower(c.name) == n) return &c;
  return nullptr;
}

const std::vector<int>& master_ports() {
  static const std::vector<int> k = {80, 2379, 2380, 6443, 9186, 9286, 10250, 10257, 10259};
  return k;
}
const std::vector<int>& worker_ports() {
  static const std::vector<int> k = {10250};
  return k;
}

std::string_view port_purpose(int port) {
  switch (port) {
    case 80:
      return "OpenPAI pylon (web entry)";
    case 2379:
      return "etcd clients";
    case 2380:
      return "etcd peers";
    case 6443:
      return "Kubernetes API server";
    case 9186:
      return "OpenPAI rest-server";
    case 9286:
      return "OpenPAI webportal";
    case 10250:
      return "kubelet";
    case 10257:
      return "kube-controller-manager";
    case 10259:
      return "kube-scheduler";
  }
  return "";
}

}  // namespace pai::check
