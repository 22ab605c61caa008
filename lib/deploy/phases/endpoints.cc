// The `endpoints` phase, the last of install: the gateway's GET /api/v2/info and
// HiveD's inspect API answer from this machine (where the operator's paictl
// will ask them), and HiveD shows the nodes its config names Healthy.
#include <algorithm>
#include <functional>
#include <future>

#include "deploy/credentials.h"
#include "deploy/openpai.h"
#include "deploy/phases/common.h"
#include "deploy/phases/workloads.h"
#include "http/client.h"
#include "util/strings.h"

namespace pai::deploy {
namespace phases {

namespace {

class EndpointsPhase : public Phase, public ReadsAhead {
 public:
  explicit EndpointsPhase(const InstallSettings& s)
      : Phase("endpoints",
              {.hosts = PhaseTraits::Hosts::Master, .cluster_scope = true, .barrier = true}),
        s_(s) {}

  // The probe of the gateway and HiveD, as a call that holds nothing of the
  // run (it may run on a thread of its own).
  static std::function<EndpointReport()> prober(const InstallSettings& s, HostRun& h) {
    std::vector<std::string> names;
    for (auto* host : h.run().hosts) names.push_back(host->spec().name);
    return [openpai = s.openpai, address = h.spec().address, names = std::move(names)] {
      http::Options o;
      o.connect_timeout_s = 3;
      o.timeout_s = 10;
      o.retry.max_attempts = 1;
      http::CurlClient client(o);
      return check_endpoints(client, openpai, address, hived_config_nodes(openpai, names));
    };
  }
  EndpointReport probe(HostRun& h) const { return prober(s_, h)(); }

  // Asked from this machine, the endpoints need nothing the hosts' sessions
  // read: in a dry run (a plan), when the engine collects the phases' reads
  // for its one session per host, the probe starts on a thread of its own and
  // observe() takes its answer, so that it overlaps the hosts' sessions
  // instead of following them. A run that applies probes when it observes:
  // the phases before may have changed what answers.
  void observation_reads(HostRun& h, std::vector<ObservationRead>&) override {
    if (!s_.openpai.enabled || !h.run().dry_run || pending_.valid()) return;
    pending_ = std::async(std::launch::async, prober(s_, h));
  }

  util::Result<void> observe(HostRun& h, std::vector<std::string>& needs) override {
    if (!s_.openpai.enabled) return {};
    const bool ahead = pending_.valid() && h.run().dry_run;
    EndpointReport r = ahead ? pending_.get() : probe(h);
    // A plan's probe its own observe() never took is not this run's answer.
    if (pending_.valid()) pending_ = {};
    for (const auto& a : r.answers) h.log("endpoints: " + a);
    if (r.problems.empty()) return {};
    // A service that is not installed yet cannot answer: in a plan whose
    // hived or openpai phase still installs (or rolls out) the services,
    // that is what the apply waits for, not a problem to show.
    const auto& facts = h.facts();
    bool pending = facts.is_object() && facts.value(kServicesPendingFact, false);
    if (h.run().dry_run && pending) {
      ClusterAccess a = cluster_access(s_.openpai, h.spec().address);
      needs.push_back("wait for the gateway " + a.gateway +
                      (a.hived.empty() ? std::string() : " and HiveD " + a.hived) +
                      " to answer once the services above are installed");
      return {};
    }
    for (const auto& p : r.problems) needs.push_back("wait for an answer (now " + p + ")");
    return {};
  }

  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    const util::Clock& clock = h.run().clock;
    const double end = clock.now() + s_.wait_s;
    EndpointReport r;
    int pause_ms = 100;  // then 0.2 s, 0.4 s, every 0.5 s
    while (true) {
      r = probe(h);
      if (r.problems.empty()) return {};
      if (clock.now() >= end) break;
      clock.sleep(pause_ms / 1000.0);
      pause_ms = std::min(pause_ms * 2, 500);
    }
    for (const auto& a : r.answers) h.log("endpoints: " + a);
    return util::Error{
        "after " + std::to_string(s_.wait_s) + " s: " + util::join(r.answers, "; "),
        "the workloads rolled out, so look at what answered: pylon's and the REST server's pods "
        "(kubectl -n " +
            s_.openpai.ns + " logs deploy/pylon, deploy/rest-server) or HiveD's (statefulset/" +
            "hivedscheduler-hs) and the nodes it shows Bad; a re-run checks again"};
  }

 private:
  const InstallSettings& s_;
  std::future<EndpointReport> pending_;  // a probe started by observation_reads
};

}  // namespace

}  // namespace phases

std::unique_ptr<Phase> make_endpoints_phase(const InstallSettings& s) {
  return std::make_unique<phases::EndpointsPhase>(s);
}

}  // namespace pai::deploy
