#include "check/catalogue.h"

#include "util/strings.h"

namespace pai::check {

using diag::Severity;

std::string_view to_string(ByInstall b) {
  switch (b) {
    case ByInstall::Cannot:
      return "cannot";
    case ByInstall::SetsUp:
      return "sets-up";
    case ByInstall::Keeps:
      return "keeps";
  }
  return "cannot";
}

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
    case Status::Install:
      return "install";
  }
  return "pass";
}

const std::vector<CheckInfo>& catalogue() {
  static const std::vector<CheckInfo> kChecks = {
      {"Reachable", Severity::Error, "host",
       "SSH connects, the host key verifies, login succeeds and the fact script runs to its end",
       "paictl", ByInstall::Cannot, ""},
      {"Privileges", Severity::Warning, "host",
       "the checks run as root (login as root, sudo -n, or sudo with the password)", "paictl",
       ByInstall::Cannot, ""},
      {"OS", Severity::Warning, "host",
       "Ubuntu 16.04 or later, the OS OpenPAI's installer is tested on", "openpai",
       ByInstall::Cannot, ""},
      {"KernelVersion", Severity::Error, "host",
       "kernel 3.10 or later (Docker's and Kubernetes' minimum)", "kubeadm", ByInstall::Cannot, ""},
      {"Cgroups", Severity::Error, "host",
       "the cgroup controllers Kubernetes needs are enabled; cgroup v2 is flagged for Kubernetes "
       "1.16",
       "kubeadm", ByInstall::Cannot, ""},
      {"CPU", Severity::Error, "host",
       "logical CPUs at least the SKU's vcore (and 2 on the master)", "openpai", ByInstall::Cannot,
       ""},
      {"Memory", Severity::Error, "host", "total memory at least the SKU's mem", "openpai",
       ByInstall::Cannot, ""},
      {"MemoryAvailable", Severity::Error, "host",
       "available memory at least 40000 MB on the master, 16000 MB on workers", "openpai",
       ByInstall::Cannot, ""},
      {"Swap", Severity::Error, "host", "swap is off (the kubelet refuses to start with swap on)",
       "kubeadm", ByInstall::SetsUp,
       "turns swap off and comments its lines of /etc/fstab out (phase swap)"},
      {"DiskFree", Severity::Error, "host",
       "free space at the Docker data root at least --min-disk-free", "paictl", ByInstall::Cannot,
       ""},
      {"DiskRoot", Severity::Warning, "host", "at least 10 GiB free on /", "paictl",
       ByInstall::Cannot, ""},
      {"Port-<N>", Severity::Error, "host",
       "nothing listens on the ports the host's roles need (6443 2379 2380 10250 10257 10259 80 "
       "9186 9286 on the master, 10250 on workers)",
       "kubeadm", ByInstall::Keeps,
       "keeps its own kubelet, API server, etcd and services listening there on hosts it "
       "installed"},
      {"IPForward", Severity::Warning, "host",
       "net.ipv4.ip_forward is 1 (the installer sets it, a host policy may reset it)", "kubeadm",
       ByInstall::SetsUp,
       "sets net.ipv4.ip_forward to 1 and keeps it in /etc/sysctl.d (phase kernel)"},
      {"BridgeNetfilter", Severity::Warning, "host", "net.bridge.bridge-nf-call-iptables is 1",
       "kubeadm", ByInstall::SetsUp,
       "sets net.bridge.bridge-nf-call-iptables to 1 and keeps it in /etc/sysctl.d (phase kernel)"},
      {"KernelModules", Severity::Warning, "host",
       "br_netfilter and overlay are loaded (or built in)", "kubeadm", ByInstall::SetsUp,
       "loads overlay and br_netfilter and keeps them loaded (phase kernel)"},
      {"Binaries", Severity::Error, "host",
       "ip, mount and nsenter are on PATH (error); iptables, conntrack, ebtables, ethtool, socat, "
       "tc, touch (warning)",
       "kubeadm", ByInstall::SetsUp,
       "installs kubeadm, the kubelet and the packages they depend on (phase packages)"},
      {"HostnameValid", Severity::Error, "host",
       "the host name is a lower-case DNS-1123 name (what Kubernetes and OpenPAI's layout accept)",
       "kubeadm", ByInstall::Cannot, ""},
      {"HostnameMatches", Severity::Warning, "host",
       "the host name is the layout.yaml hostname (the installer would rename the host)", "openpai",
       ByInstall::Cannot, ""},
      {"HostnameResolves", Severity::Warning, "host", "the host name resolves on the host",
       "kubeadm", ByInstall::Cannot, ""},
      {"HostIP", Severity::Error, "host", "layout.yaml's hostip is one of the host's own addresses",
       "kubespray", ByInstall::Cannot, ""},
      {"Firewalld", Severity::Warning, "host", "firewalld is not running (or its ports are opened)",
       "kubeadm", ByInstall::Cannot, ""},
      {"Docker", Severity::Error, "host",
       "Docker is installed and its daemon answers, or (no Docker) containerd runs with its CRI "
       "plugin",
       "openpai", ByInstall::SetsUp,
       "installs containerd, the container runtime the kubelet uses (phases packages, containerd)"},
      {"DockerVersion", Severity::Warning, "host",
       "Docker 19.03 or later; older Docker would be replaced (and restarted) by the installer",
       "non-clean", ByInstall::SetsUp,
       "runs the containers with its own containerd; Docker's version does not matter to it (phase "
       "containerd)"},
      {"DaemonJson", Severity::Error, "host", "/etc/docker/daemon.json is valid JSON", "non-clean",
       ByInstall::SetsUp,
       "runs the containers with its own containerd, which does not read Docker's daemon.json "
       "(phase containerd)"},
      {"DefaultRuntimeBinary", Severity::Error, "host",
       "the binary of Docker's default runtime exists", "non-clean", ByInstall::SetsUp,
       "writes containerd's configuration, whose runtimes it installs (phases packages, "
       "containerd)"},
      {"NvidiaSmi", Severity::Error, "host", "GPU hosts: nvidia-smi runs and lists the GPUs",
       "openpai", ByInstall::Cannot, ""},
      {"GPUCount", Severity::Error, "host",
       "GPU hosts: nvidia-smi lists exactly the SKU's computing-device count", "openpai",
       ByInstall::Cannot, ""},
      {"GPUModel", Severity::Warning, "host", "GPU hosts: the GPU name contains the SKU's model",
       "paictl", ByInstall::Cannot, ""},
      {"GPUEcc", Severity::Error, "host",
       "GPU hosts: no uncorrectable ECC error since the driver loaded (N011)", "openpai",
       ByInstall::Cannot, ""},
      {"GPURetiredPages", Severity::Warning, "host",
       "GPU hosts: no page retirement or row remapping pending, at most 60 retired pages a GPU "
       "(N012)",
       "openpai", ByInstall::Cannot, ""},
      {"GPUXid", Severity::Warning, "host",
       "GPU hosts: no hardware XID error in the kernel log (N013)", "paictl", ByInstall::Cannot,
       ""},
      {"NvidiaRuntime", Severity::Error, "host", "GPU hosts: nvidia-container-runtime is installed",
       "openpai", ByInstall::SetsUp,
       "installs the NVIDIA container toolkit on GPU hosts (phase packages)"},
      {"DefaultRuntime", Severity::Error, "host",
       "GPU hosts: Docker's (or, without Docker, containerd's) default runtime is nvidia "
       "(registered is not enough)",
       "openpai", ByInstall::SetsUp,
       "makes nvidia containerd's default runtime on GPU hosts (phase containerd)"},
      {"DNS", Severity::Error, "host", "the configured registries resolve on the host", "openpai",
       ByInstall::Cannot, ""},
      {"NTP", Severity::Warning, "host", "the clock is NTP-synchronised (an error on the master)",
       "openpai", ByInstall::Cannot, ""},
      {"LeftoverEtcd", Severity::Error, "host",
       "no etcd data left from an earlier install (/var/lib/etcd, /var/etcd/data)", "non-clean",
       ByInstall::Keeps, "keeps its own etcd's data on a master it installed"},
      {"LeftoverKubernetes", Severity::Error, "host", "/etc/kubernetes is empty or absent",
       "non-clean", ByInstall::Keeps, "keeps its own /etc/kubernetes on hosts it installed"},
      {"LeftoverKubelet", Severity::Error, "host", "/var/lib/kubelet is empty or absent",
       "non-clean", ByInstall::Keeps,
       "keeps its own kubelet's /var/lib/kubelet on hosts it installed"},
      {"LeftoverCNI", Severity::Warning, "host",
       "no CNI configuration left (/etc/cni/net.d, /var/lib/cni)", "non-clean", ByInstall::Keeps,
       "keeps its own network's CNI configuration on hosts it installed"},
      {"RunningKubernetes", Severity::Error, "host",
       "no kubelet, etcd or Kubernetes control-plane process is running", "non-clean",
       ByInstall::Keeps, "keeps its own kubelet and control plane running on hosts it installed"},
      {"RunningContainers", Severity::Warning, "host",
       "no containers are running (the installer restarts Docker)", "non-clean", ByInstall::Keeps,
       "keeps its own pods running on hosts it installed"},
      {"OfflineBundle", Severity::Error, "host",
       "with kube_offline_bundle: the bundle carries the host's OS and architecture (N001), and "
       "on GPU hosts the NVIDIA driver branch it was built for is the host's (N002)",
       "paictl", ByInstall::Cannot, ""},
      {"UniqueHostname", Severity::Error, "cluster", "every host has its own host name", "paictl",
       ByInstall::Cannot, ""},
      {"UniqueMachine", Severity::Error, "cluster",
       "every host is a different machine (/etc/machine-id)", "paictl", ByInstall::Cannot, ""},
      {"UniqueIP", Severity::Error, "cluster",
       "no host has another host's hostip on its interfaces (an IP conflict)", "paictl",
       ByInstall::Cannot, ""},
      {"ClockSkew", Severity::Error, "cluster", "the hosts' clocks agree within 1 s", "paictl",
       ByInstall::Cannot, ""},
      {"DriverVersion", Severity::Error, "cluster",
       "the hosts of one SKU run one NVIDIA driver version", "paictl", ByInstall::Cannot, ""},
      {"OSFamily", Severity::Warning, "cluster", "all hosts run one OS family", "paictl",
       ByInstall::Cannot, ""},
      {"CrossSitePort", Severity::Error, "cluster",
       "hybrid clusters: each host reaches the API server and the kubelets of the other site",
       "paictl", ByInstall::Cannot, ""},
      {"CrossSiteMTU", Severity::Error, "cluster",
       "hybrid clusters: the pods' VXLAN packets reach the other site unfragmented", "paictl",
       ByInstall::Cannot, ""},
      {"SiteOverlap", Severity::Error, "cluster",
       "hybrid clusters: azure.address-space, its subnet, the pods' and the services' ranges "
       "overlap neither each other nor an on-prem host's networks (interfaces, routes)",
       "paictl", ByInstall::Cannot, ""},
      {"ControlPlaneEndpoint", Severity::Error, "cluster",
       "several masters: every host connects to kube_control_plane_endpoint (the load balancer "
       "in front of the masters)",
       "paictl", ByInstall::Cannot, ""},
      {"MasterPort", Severity::Error, "cluster",
       "several masters: each master reaches the others' etcd (2379-2380), API server (6443) "
       "and kubelet (10250)",
       "paictl", ByInstall::Cannot, ""},
      {"CrossSiteUDP", Severity::Error, "cluster",
       "hybrid clusters: the overlay's UDP ports (8472, 4789) of the other site are not refused "
       "by the network (no answer is a warning: UDP cannot prove more)",
       "paictl", ByInstall::Cannot, ""},
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
