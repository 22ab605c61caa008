// The `checks` phase: the pre-install checks of `paictl check hosts` over
// every host at once, on the connections the engine keeps.
#include <map>

#include "check/catalogue.h"
#include "check/hybrid.h"
#include "check/masters.h"
#include "check/runner.h"
#include "check/verdict.h"
#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "facts/fact_script.h"
#include "util/strings.h"

namespace pai::deploy::phases {

namespace {

using util::shell_quote;

// The routed transport of the pre-install checks: each host's commands go over
// the connection the engine keeps for it.
// When the run has read the fact script's output already (the read ahead
// `prefetch_key`), that is served instead.
class ChecksTransport : public remote::Transport {
 public:
  ChecksTransport(const std::vector<HostRun*>& hosts, std::string prefetch_key)
      : key_(std::move(prefetch_key)) {
    for (auto* h : hosts) by_name_[h->spec().target.endpoint.name] = h;
  }
  remote::ExecResult exec(const remote::Target& target, const remote::ExecRequest& req) override {
    auto it = by_name_.find(target.endpoint.name);
    // Only the fact script's own request (check::collect's) is served from it.
    if (it != by_name_.end() && req.command == facts::bootstrap_command()) {
      remote::ExecResult r;
      if (it->second->observations().find(key_, r) && r.exit_status == 0) return r;
    }
    if (it == by_name_.end() || !it->second->connection) {
      remote::ExecResult r;
      r.failure = remote::Failure::Channel;
      r.error = "no connection to " + target.endpoint.name;
      return r;
    }
    return it->second->connection->exec(req);
  }

 private:
  std::string key_;
  std::map<std::string, HostRun*> by_name_;
};

// The pre-install checks of `check hosts --for install`. Errors stop the
// install unless ignored (--ignore-check-errors, kubeadm's semantics: they
// still run). What install itself sets up (swap, runtime, modules) is not held
// against a host, nor, on hosts an install already marked, what it left there:
// the catalogue's ByInstall column (check/verdict.h) says which.
class ChecksPhase : public ClusterWidePhase, public ReadsAhead {
 public:
  explicit ChecksPhase(const InstallSettings& s)
      : ClusterWidePhase("checks", {.read_only = true}), s_(s) {}
  // The fact script as `check hosts` runs it (as root: $1 the privilege, $2
  // the SSH connection), for a dry run's one session. Logged in as another user
  // (sudo: the SSH connection is not passed on) the checks read it themselves.
  std::string read_script() const {
    return "set -- root \"${SSH_CONNECTION:-}\"\n" + facts::fact_script(s_.script);
  }
  void observation_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    if (h.spec().target.endpoint.user == "root") out.push_back({&h, read_script()});
  }
  void observe_all(std::vector<HostRun*>& hosts, std::vector<util::Result<void>>& status,
                   std::vector<std::vector<std::string>>&) override {
    ChecksTransport transport(hosts, read_script());
    std::vector<inventory::HostPlan> plans;
    for (auto* h : hosts) plans.push_back(h->spec().plan);
    check::CollectOptions co;
    co.parallel = hosts.size();
    co.script = s_.script;
    co.sudo_password = s_.sudo_password;
    auto outcomes = check::collect(transport, plans, co);
    std::vector<check::CheckResult> hybrid;
    auto exec = [&](size_t i, const std::string& script, int timeout_ms) {
      remote::ExecRequest req;
      req.command = "sh -c " + util::shell_quote(script);
      req.timeout_ms = timeout_ms;
      return transport.exec(outcomes[i].plan.target, req);
    };
    if (s_.hybrid) {
      check::HybridOptions ho;
      ho.parallel = hosts.size();
      hybrid = check::hybrid_checks(*s_.hybrid, outcomes, exec, ho);
    }
    // Several masters: the endpoint and the ports between them, as check hosts.
    if (s_.masters_files)
      for (auto& r : check::control_plane_checks(*s_.masters_files, outcomes, exec, hosts.size()))
        hybrid.push_back(std::move(r));
    // The verdict of `check hosts --for install`: the catalogue's one table
    // says what install sets up itself and what it keeps on hosts it installed.
    auto results = check::host_verdicts(outcomes, s_.eval, std::move(hybrid),
                                        check::Purpose::Install, s_.ignore_checks);
    auto errors = check::errors_by_host(results);
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < hosts.size(); ++i) index[hosts[i]->spec().name] = i;
    for (const auto& r : results) {
      auto it = index.find(r.host);
      if (it == index.end()) continue;
      if (r.status == check::Status::Fail || r.status == check::Status::Warn ||
          r.status == check::Status::Install)
        hosts[it->second]->log("check " + r.check + ": " + std::string(check::to_string(r.status)) +
                               ": " + r.message +
                               (r.status == check::Status::Install ? " (" + r.hint + ")" : ""));
    }
    for (size_t i = 0; i < hosts.size(); ++i) {
      if (!outcomes[i].reached) {
        status[i] = util::Error{"the pre-install checks did not run: " + outcomes[i].exec.error,
                                outcomes[i].exec.hint};
      } else if (auto e = errors.find(hosts[i]->spec().name); e != errors.end()) {
        std::vector<std::string> what, names;
        for (const auto& r : e->second) {
          what.push_back(r.check + " (" + r.message + ")");
          names.push_back(r.check);
        }
        status[i] =
            util::Error{"pre-install checks failed: " + util::join(what, "; "),
                        "fix them, or pass --ignore-check-errors " + util::join(names, ",") +
                            " to go on anyway (they still run and are reported)"};
      }
    }
  }

 private:
  const InstallSettings& s_;
};

}  // namespace

std::unique_ptr<Phase> make_checks_phase(const InstallSettings& s) {
  return std::make_unique<ChecksPhase>(s);
}

}  // namespace pai::deploy::phases
