// The `swap` phase: swap off, and its lines of /etc/fstab commented out.
#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "util/strings.h"

namespace pai::deploy::phases {

namespace {

using util::shell_quote;

class SwapPhase : public KeyValuePhase {
 public:
  SwapPhase() : KeyValuePhase("swap") {}
  // Built-ins only: the lines of /proc/swaps after its header, and the lines of
  // /etc/fstab that grep -E '^[^#].*[[:space:]]swap[[:space:]]' counts.
  static constexpr const char* kScript =
      "n=0; if [ -r /proc/swaps ]; then n=-1; while IFS= read -r l; do n=$((n + 1)); done < "
      "/proc/swaps; [ $n -ge 0 ] || n=0; fi; echo \"active=$n\"\n"
      "n=; if [ -f /etc/fstab ] && [ -r /etc/fstab ]; then n=0; while IFS= read -r l || [ -n "
      "\"$l\" ]; do case $l in [!#]*[[:space:]]swap[[:space:]]*) n=$((n + 1)) ;; esac; done < "
      "/etc/fstab; fi; echo \"fstab=$n\"\n";
  std::string what() const override { return "swap"; }
  std::string observation(const HostRun&) const override { return kScript; }
  util::Result<void> needs_from(HostRun&, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    int64_t active = util::parse_int(kv["active"]).value_or(0);
    int64_t fstab = util::parse_int(kv["fstab"]).value_or(0);
    if (active > 0) needs.push_back("turn swap off (" + std::to_string(active) + " active)");
    if (fstab > 0)
      needs.push_back("comment out " + std::to_string(fstab) + " swap line(s) in /etc/fstab");
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    // Commented with a marker, so that reset can put them back.
    return run_last_step(h, "turning swap off",
                         "swapoff -a\n"
                         "sed -i -E 's/^([^#].*[[:space:]]swap[[:space:]].*)$/# paictl: \\1/' "
                         "/etc/fstab\n");
  }
};

}  // namespace

std::unique_ptr<Phase> make_swap_phase() {
  return std::make_unique<SwapPhase>();
}

}  // namespace pai::deploy::phases
