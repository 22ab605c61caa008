// The `cni` phase: flannel (VXLAN), its MTU the hosts' smallest (and a hybrid
// cluster's link between the sites) less VXLAN's 50 bytes.
#include <algorithm>
#include <cstdint>

#include "deploy/phases/common.h"
#include "deploy/phases/manifest_phase.h"
#include "deploy/phases/phases.h"
#include "util/strings.h"

namespace pai::deploy::phases {

namespace {

using util::shell_quote;

class CniPhase : public ManifestPhase {
 public:
  explicit CniPhase(const InstallSettings& s)
      : ManifestPhase(s, "cni", false, "kube-flannel.yaml", "flannel (VXLAN)", "kube-flannel",
                      "kube-flannel-ds") {}
  std::map<std::string, std::string> values(HostRun& h) override {
    // VXLAN adds 50 bytes: the pods' MTU is the smallest host MTU less that,
    // and in a hybrid cluster the link between the sites (a VPN's 1400) less that.
    int64_t mtu = 0;
    for (auto* other : h.run().hosts) {
      int64_t m = other->facts().value("mtu", int64_t{1500});
      mtu = mtu == 0 ? m : std::min(mtu, m);
    }
    if (mtu <= 0) mtu = 1500;
    if (s_.tunnel_mtu > 0) mtu = std::min<int64_t>(mtu, s_.tunnel_mtu);
    return {{"pods", s_.pods_subnet}, {"mtu", std::to_string(mtu - 50)}};
  }
};

}  // namespace

std::unique_ptr<Phase> make_cni_phase(const InstallSettings& s) {
  return std::make_unique<CniPhase>(s);
}

}  // namespace pai::deploy::phases
