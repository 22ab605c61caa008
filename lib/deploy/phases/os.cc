// The `os` phase: connect and detect the OS, the default route's MTU, whether
// this cluster installed the host already and a lock left by a killed run.
#include "deploy/engine.h"
#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "util/strings.h"

namespace pai::deploy::phases {

namespace {

using util::shell_quote;

// Connect and detect the OS: every later phase depends on it; unsupported
// systems are refused here, before anything changes.
class OsPhase : public KeyValuePhase {
 public:
  OsPhase() : KeyValuePhase("os", {.cluster_scope = true, .read_only = true}) {}
  static constexpr const char* kScript =
      ". /etc/os-release 2>/dev/null\n"
      "echo \"os_id=$ID\"; echo \"os_version=$VERSION_ID\"; echo "
      "\"os_name=$PRETTY_NAME\"\n"
      // The default route's device: the first route of the main table to
      // 0.0.0.0/0 in /proc/net/route (what `ip route show default` lists, read
      // without a process); where that file cannot be read, the word after
      // the first "dev" of ip's lines that is not a line's last word.
      "i=\n"
      "if [ -r /proc/net/route ]; then\n"
      "while read -r f d g x x x x k x; do [ \"$d\" = 00000000 ] && [ \"$k\" = 00000000 ] && "
      "{ i=$f; break; }; done < /proc/net/route\n"
      "else\n"
      "r=$(ip route show default 2>/dev/null)\n"
      "set -f\n"
      "while IFS= read -r l; do set -- $l; while [ $# -gt 1 ]; do [ \"$1\" = dev ] && { "
      "i=$2; break 2; }; shift; done; done <<EOF\n"
      "$r\n"
      "EOF\n"
      "set +f\n"
      "fi\n"
      "if [ -n \"$i\" ]; then m=; [ -r \"/sys/class/net/$i/mtu\" ] && read -r m < "
      "\"/sys/class/net/$i/mtu\"; echo \"mtu=$m\"; fi\n"
      "[ -e /etc/paictl/cluster ] && echo ours=1\n"
      "[ -e /etc/kubernetes/kubelet.conf ] && echo joined=1\n"
      "true\n";
  std::string what() const override { return "the OS"; }
  std::string observation(const HostRun&) const override {
    return std::string(kScript) + kLeftLockRead;
  }
  util::Result<void> needs_from(HostRun& h, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    left_lock_needs(kv, needs);
    auto& f = h.facts();
    f["os_id"] = kv["os_id"];
    f["os_version"] = kv["os_version"];
    f["mtu"] = util::parse_int(kv["mtu"]).value_or(1500);
    f["ours"] = kv.count("ours") > 0 || kv.count("joined") > 0;
    if (auto supported = supported_os(kv["os_id"], kv["os_version"]); !supported)
      return util::Error{supported.error().message,
                         "paictl install supports Ubuntu 20.04, 22.04, 24.04 and Debian 12; "
                         "reinstall the host or leave it out of layout.yaml (or --limit)"};
    return {};
  }
  util::Result<void> apply(HostRun&, const std::vector<std::string>&) override { return {}; }
};

}  // namespace

std::unique_ptr<Phase> make_os_phase() {
  return std::make_unique<OsPhase>();
}

}  // namespace pai::deploy::phases
