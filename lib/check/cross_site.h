#pragma once
// Cross-site checks of `check hosts` for a hybrid cluster (on-prem hosts and
// Azure VMs, docs/hybrid.md): from every host, what the cluster needs of the
// other site, probed from the host itself in one more command:
//  * CrossSitePort: TCP to the API server (6443) of a master on the other site
//    and to the kubelet (10250) of every node there. Before an install nothing
//    listens: a refused connection shows the path is open (the host answered),
//    a timeout or an unreachable network shows it is blocked (an NSG or a
//    firewall drops it, or no route).
//  * CrossSiteMTU: a ping with don't-fragment set, of the size of the pods'
//    VXLAN packets (the CNI's MTU + 50), to every host of the other site: when
//    it does not arrive, the path between the sites (a VPN) is narrower than
//    the pods' packets. The CNI's MTU is install's: the smallest of the MTU of
//    the hosts' default-route interfaces and azure.tunnel-mtu, less 50, unless given.
//  * CrossSiteUDP: a datagram to the overlay's UDP ports (8472, flannel's
//    VXLAN, which install deploys; 4789, the IANA VXLAN port Calico uses) of
//    every host there, on a connected socket. UDP proves less than TCP: an
//    ICMP "port unreachable" back (the socket reads "connection refused")
//    shows the datagram reached the host (or a firewall rejecting for it),
//    which passes; a reply passes; an ICMP "host/network unreachable" or
//    "administratively prohibited" fails; no answer at all is only a warning,
//    since a silent listener (a VXLAN device never answers) and a dropped
//    datagram look the same.

#include <string>
#include <vector>

#include "check/catalogue.h"
#include "remote/transport.h"

namespace pai::check {

struct SiteHost {
  std::string name;
  std::string address;  // the address the other hosts use (layout.yaml hostip)
  std::string site;     // "onprem" or "azure"
  bool master = false;
};

struct Probe {
  std::string peer;     // the other host's name
  std::string address;  // its address
  int port = 0;         // 0: the MTU probe
  std::string what;     // "the API server", "the kubelet"
  bool udp = false;     // a UDP port (CrossSiteUDP)
};

// What `from` probes on the other site. Empty when all hosts are on one site.
std::vector<Probe> cross_site_probes(const SiteHost& from, const std::vector<SiteHost>& all);

// The POSIX sh script that runs the probes (it changes nothing). `cni_mtu` 0:
// the host's default-route interface MTU less 50. `udp_wait_s`: how long a UDP
// probe waits for an answer.
// `tunnel_mtu` (> 0): with `cni_mtu` 0, the host's MTU is taken as at most this
// (install's rule for a hybrid cluster: azure.tunnel-mtu).
std::string cross_site_script(const std::vector<Probe>& probes, int cni_mtu, int udp_wait_s = 2,
                              int tunnel_mtu = 0);

// The results of one host's probes from the script's output, one per probe.
std::vector<CheckResult> cross_site_results(const std::string& host,
                                            const std::vector<Probe>& probes,
                                            const remote::ExecResult& r);

}  // namespace pai::check
