// The `device-plugin` phase: the NVIDIA device plugin, when a host has GPUs.
#include "deploy/phases/common.h"
#include "deploy/phases/manifest_phase.h"
#include "deploy/phases/phases.h"
#include "util/strings.h"

namespace pai::deploy::phases {

namespace {

using util::shell_quote;

class DevicePluginPhase : public ManifestPhase {
 public:
  explicit DevicePluginPhase(const InstallSettings& s)
      : ManifestPhase(s, "device-plugin", true, "nvidia-device-plugin.yaml",
                      "the NVIDIA device plugin", "kube-system", "nvidia-device-plugin-daemonset") {
  }
  bool wanted(HostRun& h) override {
    for (auto* other : h.run().hosts)
      if (has_gpu(other->spec())) return true;
    return false;
  }
  std::map<std::string, std::string> values(HostRun&) override { return {}; }
};

}  // namespace

std::unique_ptr<Phase> make_device_plugin_phase(const InstallSettings& s) {
  return std::make_unique<DevicePluginPhase>(s);
}

}  // namespace pai::deploy::phases
