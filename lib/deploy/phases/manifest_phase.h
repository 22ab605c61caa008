#pragma once
// Internal to libpai (not installed): the base of the phases that apply one
// manifest on the master (cni, device-plugin).

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "deploy/image_mirror.h"
#include "deploy/phases/common.h"
#include "util/json.h"

namespace pai::deploy {

#pragma GCC visibility push(hidden)
namespace phases {

// A manifest applied on the master with server-side apply, recognised by the
// hash of its rendered text in an annotation of one of its objects.
class ManifestPhase : public Phase, public ReadsAhead {
 public:
  ManifestPhase(const InstallSettings& s, std::string name, bool barrier, std::string tmpl,
                std::string what, std::string ns, std::string daemonset)
      : Phase(std::move(name),
              {.hosts = PhaseTraits::Hosts::Master, .cluster_scope = true, .barrier = barrier}),
        s_(s),
        tmpl_(std::move(tmpl)),
        what_(std::move(what)),
        ns_(std::move(ns)),
        ds_(std::move(daemonset)) {}

  virtual std::map<std::string, std::string> values(HostRun& h) = 0;
  virtual bool wanted(HostRun&) { return true; }

  util::Result<void> render(HostRun& h, std::string& out) {
    auto v = values(h);
    auto text = render_template(s_.templates_dir, tmpl_, v);
    if (!text) return text.error();
    // The images through image_registry_mirror, before the hash: a new mirror
    // is a new manifest.
    v["hash"] = config_hash(manifest_through_mirror(*text, s_.image_mirror));
    auto manifest = render_template(s_.templates_dir, tmpl_, v);
    hash_ = v["hash"];
    if (!manifest) return manifest.error();
    out = manifest_through_mirror(*manifest, s_.image_mirror);
    return {};
  }

  void observation_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    out.push_back({&h, cluster_objects_script()});
  }
  util::Result<void> observe(HostRun& h, std::vector<std::string>& needs) override {
    if (!wanted(h)) return {};
    std::string manifest;
    if (util::Result<void> s = render(h, manifest); !s.ok()) return s;
    auto r = h.observe_sh(cluster_objects_script());
    if (!r.ok()) return command_failure("observing " + what_, r);
    auto ds = objects_of_kind(util::parse_json_or_discarded(r.out), "DaemonSet", ns_);
    std::string have;
    for (const auto& o : ds["items"])
      if (o["metadata"].value("name", "") == ds_ && o["metadata"].contains("annotations") &&
          o["metadata"]["annotations"].is_object())
        have = o["metadata"]["annotations"].value("paictl.io/config-hash", "");
    if (have != hash_) needs.push_back("apply " + what_);
    return {};
  }

  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    std::string manifest;
    if (util::Result<void> s = render(h, manifest); !s.ok()) return s;
    if (util::Result<void> s =
            run_step(h, "applying " + what_,
                     std::string(kKubectl) +
                         " apply --server-side --field-manager=paictl --force-conflicts -f -",
                     manifest);
        !s.ok())
      return s;
    if (!wait_for_rollouts(h, ns_, {"daemonset/" + ds_}, s_.wait_s).empty())
      return util::Error{"waiting for " + what_ + ": daemonset/" + ds_ +
                             " did not roll out within " + std::to_string(s_.wait_s) + " s",
                         "look at its pods: kubectl -n " + ns_ + " describe daemonset " + ds_};
    return {};
  }

 protected:
  const InstallSettings& s_;

 private:
  std::string tmpl_, what_, ns_, ds_;
  std::string hash_;
};

}  // namespace phases
#pragma GCC visibility pop

}  // namespace pai::deploy
