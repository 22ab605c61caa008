#pragma once
// Internal to libpai (not installed): the base of the `hived` and `openpai`
// phases (hived.cc, openpai.cc): components applied on the master with
// server-side apply when their hash differs, then their rollouts waited for; a
// rollout that does not finish is reported with its pods' state and events.

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "deploy/phases/common.h"

namespace pai::deploy {

#pragma GCC visibility push(hidden)
namespace phases {

// The Secret of the OpenPAI services (the admin password, the database's, the
// REST server's JWT key).
inline constexpr const char* kServicesSecret = "pai-secrets";

// A set of objects applied together, recognised on the cluster by the hash of
// their rendered text in the annotation paictl.io/config-hash of its workloads.
struct Component {
  std::string name;
  std::string manifest;
  std::string hash;
  std::vector<std::pair<std::string, std::string>> workloads;  // (statefulset|deployment, name)
};

struct WorkloadState {
  bool found = false;
  std::string hash;
  bool available = false;
};

// The fact (HostRun::facts) a workloads phase sets on the master when its
// services are not installed or not rolled out yet.
inline constexpr const char* kServicesPendingFact = "paictl_services_pending";

class WorkloadsPhase : public Phase, public ReadsAhead {
 public:
  WorkloadsPhase(std::string name, const InstallSettings& s)
      : Phase(std::move(name),
              {.hosts = PhaseTraits::Hosts::Master, .cluster_scope = true, .barrier = true}),
        s_(s) {}

  virtual bool wanted() const = 0;
  virtual util::Result<void> components(const HostSpec& master, std::vector<Component>& out) = 0;

  void observation_reads(HostRun& h, std::vector<ObservationRead>& out) override;
  util::Result<void> observe(HostRun& h, std::vector<std::string>& needs) override;
  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override;

 protected:
  // What a phase reads, observes and applies besides its components (the
  // openpai phase's Secret).
  virtual void extra_reads(HostRun&, std::vector<ObservationRead>&) {}
  virtual util::Result<void> observe_extra(HostRun&, std::vector<std::string>&) { return {}; }
  virtual util::Result<void> apply_extra(HostRun&) { return {}; }

  // A component of these templates rendered with `values`, its hash filled in.
  util::Result<void> render(const std::string& name, const std::vector<std::string>& templates,
                            std::map<std::string, std::string> values, Component& c);
  // The values every component's templates take.
  std::map<std::string, std::string> base_values(const HostSpec& master) const;
  static std::string workloads_script() { return cluster_objects_script(); }
  // The namespace's StatefulSets and Deployments, by "kind/name".
  util::Result<void> workloads(HostRun& h, std::map<std::string, WorkloadState>& out);
  // The workload's pods and the events about them (only these fields: the log
  // keeps what the commands print).
  std::string pod_report(HostRun& h, const std::string& workload);

  const InstallSettings& s_;
  std::set<std::string> pending_, waiting_;
};

// The components of the hived and openpai phases rendered for this master, and
// whether the phases install anything (render_openpai_manifests).
bool hived_wanted(const InstallSettings& s);
util::Result<std::vector<Component>> hived_components(const InstallSettings& s,
                                                      const HostSpec& master);
bool openpai_wanted(const InstallSettings& s);
util::Result<std::vector<Component>> openpai_components(const InstallSettings& s,
                                                        const HostSpec& master);

}  // namespace phases
#pragma GCC visibility pop

}  // namespace pai::deploy
