#include "deploy/host_plan.h"

#include <utility>

#include "config/node_settings.h"
#include "deploy/cluster_files.h"
#include "deploy/openpai.h"
#include "deploy/phases/phases.h"
#include "remote/ssh_transport.h"
#include "util/fs.h"

namespace pai::deploy {

std::unique_ptr<remote::Transport> make_transport(const TransportFactory& f,
                                                  const remote::Secret& ssh_password) {
  if (f) return f(ssh_password);
  auto t = std::make_unique<remote::SshTransport>();
  t->set_password(ssh_password);
  return t;
}

HostRunPlan::Verdict HostRunPlan::verdict() const {
  if (!plan.ok()) return Verdict::Failed;
  if (!plan.changed()) return Verdict::UpToDate;
  return dry_run ? Verdict::DryRun : Verdict::Changes;
}

PhaseList phases_of(HostOperation operation, const InstallSettings& settings) {
  PhaseList phases;
  switch (operation) {
    case HostOperation::ConfigPush:
      phases.push_back(phases::make_lock_phase());
      phases.push_back(make_config_phase(settings));
      break;
    case HostOperation::HivedPush:
      phases.push_back(phases::make_lock_phase());
      phases.push_back(make_hived_phase(settings));
      if (!settings.cluster_files.empty()) phases.push_back(make_config_phase(settings));
      break;
    case HostOperation::Reset:
      phases = reset_phases(settings);
      break;
    case HostOperation::Install:
      phases = install_phases(settings);
      break;
  }
  return phases;
}

// This run in the lock's note.
const char* run_name(HostOperation operation) {
  switch (operation) {
    case HostOperation::Reset:
      return "reset";
    case HostOperation::ConfigPush:
      return "config push";
    case HostOperation::HivedPush:
      return "push of the HiveD config";
    case HostOperation::Install:
      break;
  }
  return "install";
}

bool unreached(const RunResult& r) {
  for (const auto& h : r.hosts)
    if (!h.reached) return true;
  return false;
}

UseCaseResult<HostRunPlan> plan_host_run(HostOperation operation, PreparedCluster cluster,
                                         const HostRunOptions& options,
                                         const TransportFactory& transport,
                                         const Callbacks& callbacks) {
  HostRunPlan p;
  p.operation = operation;
  p.dry_run = options.dry_run;
  p.cluster = std::make_shared<const PreparedCluster>(std::move(cluster));
  p.state_dir = p.cluster->cluster_dir + "/.paictl";

  // One install (or reset) per cluster directory at a time; a dry run changes nothing.
  p.lock = std::make_shared<LocalLock>();
  if (!p.dry_run) {
    if (!options.lock_held)
      if (auto locked = p.lock->acquire(p.state_dir + "/install.lock", run_name(operation));
          !locked)
        return input_error(locked.error().message, locked.error().hint);
    // A run that changes hosts keeps its journal: known now, nothing has changed yet.
    if (auto j = check_journal_writable(p.state_dir + "/install.journal"); !j)
      return input_error(
          "the install journal cannot be written (" + j.error().message + "); nothing was changed",
          "free space where the cluster directory is (or make " + p.state_dir +
              " writable): the journal records what each run changes on which host");
    std::string logs = p.state_dir + "/logs";
    auto made = util::make_directories(logs, 0700);
    if (made.ok() && !util::is_directory(logs))
      made = util::Error{logs + " is not a directory", {}};
    if (!made.ok()) {
      UseCaseEvent w;
      w.kind = UseCaseEvent::Kind::Warning;
      w.message = "the hosts' logs cannot be kept: " + made.error().message +
                  " (the run goes on; its journal records what changes)";
      callbacks.emit(w);
    }
  }

  const auto& s = p.cluster->settings;
  p.cost = std::make_shared<remote::CountingTransport>(
      make_transport(transport, p.cluster->hosts.ssh_password));
  p.transport = p.cost;
  p.masker = std::make_shared<Masker>();
  p.masker->add(p.cluster->hosts.ssh_password.reveal());
  p.masker->add(s.sudo_password.reveal());
  p.masker->add(s.openpai.admin_password.reveal());
  // A proxy's USER:PASSWORD, and the password alone.
  for (const auto& url : {s.proxy.http, s.proxy.https}) {
    std::string creds = config::url_credentials(url);
    p.masker->add(creds);
    if (auto colon = creds.find(':'); colon != std::string::npos)
      p.masker->add(creds.substr(colon + 1));
  }
  if (operation == HostOperation::ConfigPush && s.cluster_files.empty())
    return input_error(p.cluster->cluster_dir +
                       " has no services-configuration.yaml: nothing to push");
  p.phases = std::make_shared<PhaseList>(phases_of(operation, s));

  auto& eo = p.options;
  eo.parallel = options.parallel;
  eo.masker = p.masker.get();
  eo.dry_run = true;
  eo.journal_path = p.state_dir + "/install.journal";
  eo.journal_plan = !p.dry_run;
  UseCaseEvent observing;
  observing.kind = UseCaseEvent::Kind::Observing;
  observing.operation = operation;
  observing.count = p.cluster->specs.size();
  callbacks.emit(observing);
  eo.on_event = [&callbacks, operation](const Event& e) {
    UseCaseEvent u;
    u.kind = UseCaseEvent::Kind::Engine;
    u.operation = operation;
    u.planning = true;
    u.engine = &e;
    callbacks.emit(u);
  };
  p.plan = Engine(*p.transport, eo).run(p.cluster->specs, *p.phases);
  eo.on_event = nullptr;
  return p;
}

RunResult apply_host_run(HostRunPlan& p, const Callbacks& callbacks) {
  EngineOptions eo = p.options;  // a copy shares the plan's connections and reads
  eo.dry_run = false;
  eo.journal_plan = false;
  // Where each host changes first, for reading its observations ahead.
  for (const auto& h : p.plan.hosts)
    for (const auto& pr : h.phases)
      if (pr.state == PhaseResult::State::Planned) eo.planned_changes[h.host].insert(pr.phase);
  eo.log_dir = p.state_dir + "/logs";
  HostOperation operation = p.operation;
  eo.on_event = [&callbacks, operation](const Event& e) {
    UseCaseEvent u;
    u.kind = UseCaseEvent::Kind::Engine;
    u.operation = operation;
    u.engine = &e;
    callbacks.emit(u);
  };
  return Engine(*p.transport, eo).run(p.cluster->specs, *p.phases);
}

namespace {

Answer host_stage_ask(const Callbacks& cb, HostOperation op) {
  Question q;
  q.kind = Question::Kind::ApplyHosts;
  q.operation = op;
  return cb.ask(q);
}

}  // namespace

UseCaseResult<std::shared_ptr<HostRunPlan>> plan_host_stage(const HostStageRequest& r,
                                                            const InstallDeps& deps,
                                                            const Callbacks& cb) {
  auto prepared = prepare_cluster(r.prepare, deps.load_hosts);
  if (!prepared.ok()) return std::move(prepared).error();
  auto plan = plan_host_run(r.operation, std::move(prepared).value(), r.run, deps.transport, cb);
  if (!plan.ok()) return std::move(plan).error();
  auto p = std::make_shared<HostRunPlan>(std::move(plan).value());
  UseCaseEvent e;
  e.kind = UseCaseEvent::Kind::HostsPlanned;
  e.operation = r.operation;
  e.plan = &p->plan;
  cb.emit(e);
  return p;
}

HostStage finish_host_stage(std::shared_ptr<HostRunPlan> plan, bool yes, const Callbacks& cb) {
  HostStage s;
  s.plan = std::move(plan);
  switch (s.plan->verdict()) {
    case HostRunPlan::Verdict::Failed:
      s.end = HostStage::End::Failed;
      break;
    case HostRunPlan::Verdict::UpToDate:
      s.end = HostStage::End::UpToDate;
      break;
    case HostRunPlan::Verdict::DryRun:
      s.end = HostStage::End::DryRun;
      break;
    case HostRunPlan::Verdict::Changes: {
      Answer a = yes ? Answer::Yes : host_stage_ask(cb, s.plan->operation);
      if (a == Answer::NoTerminal) {
        s.end = HostStage::End::NoTerminal;
      } else if (a == Answer::No) {
        s.end = HostStage::End::Declined;
      } else {
        s.result = apply_host_run(*s.plan, cb);
        s.end = HostStage::End::Applied;
      }
      break;
    }
  }
  // The run is over: the directory's lock and the hosts' connections go.
  if (s.plan->lock) s.plan->lock->release();
  s.plan->options.kept.reset();
  UseCaseEvent e;
  e.kind = UseCaseEvent::Kind::HostsEnded;
  e.operation = s.plan->operation;
  e.stage = &s;
  cb.emit(e);
  return s;
}

}  // namespace pai::deploy
