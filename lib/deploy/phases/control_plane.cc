// The `control-plane` phase: kubeadm init on the master (after cleaning up an
// interrupted one), then the API server waited for and init's own bootstrap
// token deleted.
#include "deploy/certificate_key.h"
#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::deploy::phases {

namespace {

using util::shell_quote;

// The description paictl gives kubeadm init's own bootstrap token
// (templates/install/kubeadm-init.yaml).
constexpr const char* kInitTokenMark = "paictl install: kubeadm init's token";

class ControlPlanePhase : public KeyValuePhase {
 public:
  explicit ControlPlanePhase(const InstallSettings& s)
      : KeyValuePhase(
            "control-plane",
            {.hosts = PhaseTraits::Hosts::Master, .cluster_scope = true, .barrier = true}),
        s_(s) {}

  static std::string script() {
    return kubeadm_settled_script() +
           std::string(
               "[ -f /etc/kubernetes/admin.conf ] && echo admin=1\n"
               "[ -f /etc/kubernetes/manifests/kube-apiserver.yaml ] && echo manifest=1\n"
               "[ -f /var/lib/kubelet/config.yaml ] && echo kubelet_config=1\n"
               "[ -d /etc/kubernetes/pki ] && echo pki=1\n") +
           kKubeadmPresent + "true\n";
  }
  std::string what() const override { return "the control plane"; }
  std::string observation(const HostRun&) const override { return script(); }
  void more_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    out.push_back({&h, cluster_objects_script()});
    out.push_back({&h, kTokenList});
  }
  util::Result<void> needs_from(HostRun& h, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    // The API server answers when the read of the cluster's objects, which the
    // later phases make anyway, lists them: a kubectl run fewer than asking
    // /readyz first (about 0.1 s of the master's CPU).
    bool ready = false;
    if (kv.count("admin")) {
      auto r = h.observe_sh(cluster_objects_script());
      auto list = r.ok() ? util::parse_json_or_discarded(r.out) : nlohmann::json();
      ready = list.is_object() && list.contains("items") && list["items"].is_array();
    }
    if (ready) {
      // A run killed between kubeadm init and deleting init's token left it.
      auto t = h.observe_sh(kTokenList);
      if (t.ok() && t.out.find(kInitTokenMark) != std::string::npos)
        needs.push_back("delete kubeadm init's bootstrap token (an interrupted run left it)");
      return {};
    }
    if (kv.count("admin")) {
      needs.push_back("wait for the API server (admin.conf is there, /readyz does not answer)");
      return {};
    }
    if (kv.count("manifest") || kv.count("kubelet_config") || kv.count("pki"))
      needs.push_back("clean up an interrupted kubeadm init (kubeadm reset -f)");
    kubeadm_version_ = kubeadm_version(h, kv, s_);
    std::string v = kubeadm_version_.substr(kubeadm_version_[0] == 'v' ? 1 : 0);
    if (!s_.kube_vip_address.empty())
      needs.push_back("write the kube-vip static pod (" + s_.kube_vip_address + " on " +
                      s_.kube_vip_interface + ") to " + kKubeVipManifest);
    needs.push_back("kubeadm init (Kubernetes v" + s_.kube_version + ", " + kubeadm_api_version(v) +
                    ", pods " + s_.pods_subnet + ", services " + s_.service_subnet + ", endpoint " +
                    endpoint_of(s_, h.spec()) +
                    (s_.highly_available()
                         ? ", " + std::to_string(s_.masters.size()) +
                               " masters: the certificates uploaded with the cluster's "
                               "certificate key"
                         : std::string()) +
                    ")");
    return {};
  }

  util::Result<void> apply(HostRun& h, const std::vector<std::string>& needs) override {
    bool reset = false, init = false;
    for (const auto& n : needs) {
      reset |= n.find("kubeadm reset") != std::string::npos;
      init |= n.rfind("kubeadm init", 0) == 0;
    }
    bool stale_token = false;
    for (const auto& n : needs) stale_token |= n.rfind("delete kubeadm init's", 0) == 0;
    if (stale_token)
      return run_last_step(h, "deleting kubeadm init's bootstrap token",
                           std::string("kubeadm token list 2>/dev/null | grep \"") +
                               kInitTokenMark +
                               "\" | awk '{print $1}' | "
                               "while read -r t; do kubeadm token delete \"${t%%.*}\" >/dev/null; "
                               "done\n");
    if (!init) {
      bool up = poll(h.run().clock, s_.wait_s, 1000, [&] {
        auto r = h.sh(std::string(kKubectl) + " get --raw=/readyz --request-timeout=5s");
        return r.ok() && r.exit_status == 0;
      });
      if (!up)
        return util::Error{"the API server does not answer on the master",
                           "look at the kubelet and the static pods on the master; "
                           "`kubeadm reset -f` there and a re-run start the control plane "
                           "again (its data is lost)"};
      return {};
    }
    if (reset)
      if (util::Result<void> s = run_step(h, "kubeadm reset -f (an interrupted init)",
                                          holding_kubeadm_lock("kubeadm reset -f"));
          !s.ok())
        return s;
    if (!s_.kube_vip_address.empty()) {
      auto vip = render_kube_vip(s_, true);
      if (!vip) return vip.error();
      if (util::Result<void> s =
              run_step(h, "writing the kube-vip static pod", write_file(kKubeVipManifest, *vip));
          !s.ok())
        return s;
    }
    if (s_.highly_available()) {
      // The certificates go to the cluster encrypted with the cluster's key, for
      // the other masters' joins; the configuration holding it reaches the host
      // on stdin into a file only root reads, removed after.
      auto key = certificate_key(s_.state_dir);
      if (!key) return key.error();
      if (h.run().masker) h.run().masker->add(key->reveal());
      auto rendered = render_kubeadm_init(s_, h.spec(), kubeadm_version_, key->reveal());
      if (!rendered) return rendered.error();
      util::Result<void> s = run_step(h, "kubeadm init --upload-certs",
                                      holding_kubeadm_lock(with_secret_config(
                                          "kubeadm init --config \"$pai_cf\" --upload-certs "
                                          "--skip-certificate-key-print --skip-token-print")) +
                                          certs_uploaded_now(),
                                      *rendered, 900000);
      std::fill(rendered->begin(), rendered->end(), '\0');
      if (!s.ok()) return s;
    } else {
      auto rendered = render_kubeadm_init(s_, h.spec(), kubeadm_version_);
      if (!rendered) return rendered.error();
      const std::string& config = *rendered;
      h.log("kubeadm configuration:\n" + config);
      // The configuration goes on stdin: nothing is left on the host to clean up.
      if (util::Result<void> s =
              run_step(h, "kubeadm init",
                       holding_kubeadm_lock("kubeadm init --config /dev/stdin --skip-token-print"),
                       config, 900000);
          !s.ok())
        return s;
    }
    // kubeadm's own 24 h token (the only one right after init) is not needed:
    // workers get short-lived ones. The one --upload-certs made stays: the
    // Secret kubeadm-certs is its dependent (deleting it deletes the
    // certificates the other masters' joins need).
    return run_last_step(
        h, "deleting kubeadm init's default bootstrap token",
        "kubeadm token list 2>/dev/null | awk 'NR>1 && !/kubeadm-certs/ {print $1}' | "
        "while read -r t; do kubeadm token delete \"${t%%.*}\" >/dev/null; done\n");
  }

 private:
  const InstallSettings& s_;
  std::string kubeadm_version_;
};

}  // namespace

std::unique_ptr<Phase> make_control_plane_phase(const InstallSettings& s) {
  return std::make_unique<ControlPlanePhase>(s);
}

}  // namespace pai::deploy::phases
