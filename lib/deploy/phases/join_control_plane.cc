// The `join-control-plane` phase: the masters after the first joined to its
// control plane (kubeadm join with JoinConfiguration.controlPlane: a stacked
// etcd member, the API server, the controller manager and the scheduler), one
// at a time, each followed by a look at every etcd member's health. The
// certificates come from the Secret kubeadm-certs the first master uploaded,
// decrypted with the cluster's certificate key (certificate_key.h); an upload
// about to expire (kubeadm deletes it after 2 h) is made again first.
#include <algorithm>
#include <mutex>
#include <optional>
#include <set>

#include "deploy/backup.h"
#include "deploy/certificate_key.h"
#include "deploy/etcd_members.h"
#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::deploy::phases {

namespace {

using util::shell_quote;

// kubeadm deletes the uploaded certificates 2 h after the upload: a join that
// starts later than this after it uploads them again.
constexpr long kJoinCpUploadFreshS = 2 * 3600 - 15 * 60;

// The description of a master's join token.
std::string join_cp_token_mark(const std::string& host) {
  return "paictl control-plane join of " + host;
}

class JoinControlPlanePhase : public KeyValuePhase {
 public:
  explicit JoinControlPlanePhase(const InstallSettings& s)
      : KeyValuePhase("join-control-plane",
                      {.hosts = PhaseTraits::Hosts::OtherMasters, .barrier = true}),
        s_(s) {}

  std::string what() const override { return "the control plane"; }
  std::string observation(const HostRun&) const override {
    std::string out =
        "[ -f /etc/kubernetes/kubelet.conf ] && echo kubelet_conf=1\n"
        "[ -f /etc/kubernetes/manifests/kube-apiserver.yaml ] && echo apiserver=1\n"
        "[ -f /etc/kubernetes/pki/ca.crt ] && echo ca=1\n"
        "[ -f /var/lib/kubelet/config.yaml ] && echo kubelet_config=1\n";
    if (!s_.kube_vip_address.empty())
      if (auto vip = render_kube_vip(s_, false); vip.ok())
        out += same_file_test("kube_vip", kKubeVipManifest, *vip);
    return kubeadm_settled_script() + out + kKubeadmPresent + "true\n";
  }
  void more_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    if (HostRun* master = h.run().master()) out.push_back({master, cluster_objects_script()});
  }

  util::Result<void> needs_from(HostRun& h, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    HostRun* master = h.run().master();
    bool registered = false;
    if (master) {
      auto r = master->observe_sh(cluster_objects_script());
      if (r.ok()) {
        auto nodes = objects_of_kind(util::parse_json_or_discarded(r.out), "Node");
        registered = find_node(nodes, h.spec().name) != nullptr;
      }
    }
    if (!s_.kube_vip_address.empty() && !kv.count("kube_vip"))
      needs.push_back("write the kube-vip static pod (" + s_.kube_vip_address + " on " +
                      s_.kube_vip_interface + ") to " + kKubeVipManifest);
    if (kv.count("kubelet_conf") && kv.count("apiserver") && registered) return {};
    h.facts()["kubeadm_version"] = kubeadm_version(h, kv, s_);
    bool leftover = kv.count("kubelet_conf") || kv.count("apiserver") || kv.count("ca") ||
                    kv.count("kubelet_config");
    if (master)
      if (auto refused = join_refusal(h, *master, leftover)) return *refused;
    if (leftover) needs.push_back("clean up an interrupted or incomplete join (kubeadm reset -f)");
    needs.push_back("kubeadm join " +
                    (master ? endpoint_of(s_, master->spec()) : std::string("the endpoint")) +
                    " as a control-plane node (an etcd member; the certificates decrypted with "
                    "the cluster's certificate key, sent on stdin)");
    return {};
  }

  util::Result<void> apply(HostRun& h, const std::vector<std::string>& needs) override {
    HostRun* master = h.run().master();
    if (!master) return util::Error{"no first master in layout.yaml to join", {}};
    bool vip = false, reset = false, join = false;
    for (const auto& n : needs) {
      vip |= n.rfind("write the kube-vip", 0) == 0;
      reset |= n.find("kubeadm reset") != std::string::npos;
      join |= n.rfind("kubeadm join", 0) == 0;
    }
    // etcd adds one member at a time: the masters join one after the other.
    std::lock_guard lock(join_mu_);
    if (reset)
      if (util::Result<void> s =
              run_step(h, "kubeadm reset -f", holding_kubeadm_lock("kubeadm reset -f"));
          !s.ok())
        return s;
    if (vip) {
      auto text = render_kube_vip(s_, false);
      if (!text) return text.error();
      if (util::Result<void> s =
              run_step(h, "writing the kube-vip static pod", write_file(kKubeVipManifest, *text));
          !s.ok())
        return s;
    }
    if (!join) return {};
    auto key = certificate_key(s_.state_dir);
    if (!key) return key.error();
    if (h.run().masker) h.run().masker->add(key->reveal());
    if (util::Result<void> s = upload_if_stale(*master, key->reveal(), false); !s.ok()) return s;
    util::Result<void> joined = join_once(h, *master, key->reveal());
    if (!joined.ok() && gone_certs(joined.error().message)) {
      // The upload was older than paictl knew (kubeadm deleted the Secret): again.
      if (util::Result<void> s = upload_if_stale(*master, key->reveal(), true); !s.ok()) return s;
      (void)run_step(h, "kubeadm reset -f (a join without certificates)",
                     holding_kubeadm_lock("kubeadm reset -f"));
      joined = join_once(h, *master, key->reveal());
    }
    if (!joined.ok()) return joined;
    return etcd_healthy(h, *master);
  }

  // Why this master must not join the etcd cluster as the first master's etcd
  // sees it (etcd_join_refusal); nothing when it cannot be asked (a first
  // install, whose first master has no etcd yet). A host left with a join's
  // files removes its own member with kubeadm reset before it joins again.
  std::optional<util::Error> join_refusal(HostRun& h, HostRun& master, bool leftover) {
    auto r = master.observe_sh(etcd_members_script("https://" + master.spec().address + ":2379"));
    if (!r.ok() || r.exit_status != 0) return std::nullopt;
    auto members = parse_etcd_members(r.out);
    if (!members.ok() || members->empty()) return std::nullopt;
    if (leftover) {
      const EtcdMember* own = find_etcd_member(*members, h.spec().name, h.spec().address);
      if (own && own->healthy) {
        std::vector<EtcdMember> others;
        for (const auto& m : *members)
          if (&m != own) others.push_back(m);
        return etcd_join_refusal(others, h.spec().name, h.spec().address);
      }
    }
    return etcd_join_refusal(*members, h.spec().name, h.spec().address);
  }

 private:
  static bool gone_certs(const std::string& message) {
    return message.find("kubeadm-certs") != std::string::npos ||
           message.find("certificate key") != std::string::npos;
  }

  // The first master's upload of the certificates, made again when it is older
  // than kJoinCpUploadFreshS (or `force`).
  util::Result<void> upload_if_stale(HostRun& master, const std::string& key, bool force) {
    if (!force) {
      auto r = master.sh(std::string("t=$(cat ") + kCertsUploadedFile +
                         " 2>/dev/null || echo 0); echo age=$(( $(date +%s) - ${t:-0} ))\n");
      auto kv = parse_key_values(r.out);
      auto age = util::parse_int(kv["age"]);
      if (r.ok() && r.exit_status == 0 && age && *age >= 0 && *age < kJoinCpUploadFreshS) return {};
    }
    std::string version = master.facts().value("kubeadm_version", "v" + s_.kube_version);
    auto config = render_kubeadm_init(s_, master.spec(), version, key);
    if (!config) return config.error();
    util::Result<void> s = run_step(
        master, "kubeadm init phase upload-certs (the certificates for the masters' joins)",
        with_secret_config("kubeadm init phase upload-certs --upload-certs "
                           "--skip-certificate-key-print --config \"$pai_cf\" >/dev/null") +
            certs_uploaded_now(),
        *config, 300000);
    std::fill(config->begin(), config->end(), '\0');
    return s;
  }

  util::Result<void> join_once(HostRun& h, HostRun& master, const std::string& key) {
    const std::string mark = join_cp_token_mark(h.spec().name);
    auto r = master.sh("kubeadm token list 2>/dev/null | grep -F " + shell_quote(mark) +
                           " | awk '{print $1}' | while read -r t; do kubeadm token delete "
                           "\"${t%%.*}\" >/dev/null 2>&1; done\n"
                           "kubeadm token create --ttl " +
                           std::to_string(s_.join_token_ttl_s) + "s --description " +
                           shell_quote(mark) + " --print-join-command",
                       {}, 120000, true);
    JoinCommand jc;
    if (r.ok() && r.exit_status == 0) jc = parse_join_command(r.out);
    std::fill(r.out.begin(), r.out.end(), '\0');
    if (!r.ok() || r.exit_status != 0) return command_failure("minting a join token", r);
    if (!jc.complete()) return util::Error{"kubeadm token create printed no join command", {}};
    if (h.run().masker) h.run().masker->add(jc.token);
    const std::string id = jc.token.substr(0, jc.token.find('.'));
    util::Result<void> s;
    auto config =
        render_kubeadm_join(s_, h.spec(), h.facts().value("kubeadm_version", "v" + s_.kube_version),
                            jc.endpoint, jc.token, jc.ca_hash, key);
    if (!config) {
      s = config.error();
    } else {
      s = run_step(h, "kubeadm join (control plane)",
                   holding_kubeadm_lock(with_secret_config("kubeadm join --config \"$pai_cf\"")),
                   *config, 900000);
      std::fill(config->begin(), config->end(), '\0');
    }
    master.sh("kubeadm token delete " + shell_quote(id) + " >/dev/null 2>&1 || true");
    return s;
  }

  // Every etcd member healthy, this master's among them, asked of the first
  // master's etcd as node remove and upgrade ask it (etcd_members.h).
  util::Result<void> etcd_healthy(HostRun& h, HostRun& master) {
    const std::string script = etcd_members_script("https://" + master.spec().address + ":2379");
    std::string why;
    bool ok = poll(h.run().clock, std::min(s_.wait_s, 120), 2000, [&] {
      auto r = master.sh(script);
      auto members = parse_etcd_members(r.out);
      if (!r.ok() || !members.ok()) {
        why = "etcdctl did not answer on " + master.spec().name;
        return false;
      }
      if (!find_etcd_member(*members, h.spec().name, h.spec().address)) {
        std::vector<std::string> names;
        for (const auto& m : *members) names.push_back(m.name.empty() ? "(not started)" : m.name);
        why = "etcd has no member " + h.spec().name + " (members: " + util::join(names, ", ") + ")";
        return false;
      }
      std::vector<std::string> sick = unhealthy_etcd_members(*members);
      if (!sick.empty()) {
        for (auto& n : sick)
          if (n.empty()) n = "a member not started";
        why = std::to_string(members->size() - sick.size()) + " of " +
              std::to_string(members->size()) +
              " etcd members healthy (not: " + util::join(sick, ", ") + ")";
        return false;
      }
      h.log("etcd: " + std::to_string(members->size()) + " members, all healthy");
      return true;
    });
    if (ok) return {};
    return util::Error{"after " + h.spec().name + " joined the control plane: " + why,
                       "look at the etcd static pods of the masters (crictl ps --name etcd; "
                       "crictl logs); a member that does not become healthy is removed by "
                       "`kubeadm reset -f` on its master before a re-run"};
  }

  const InstallSettings& s_;
  std::mutex join_mu_;
};

}  // namespace

std::unique_ptr<Phase> make_join_control_plane_phase(const InstallSettings& s) {
  return std::make_unique<JoinControlPlanePhase>(s);
}

}  // namespace pai::deploy::phases
