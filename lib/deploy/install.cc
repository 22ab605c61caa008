#include "deploy/install.h"

#include <map>
#include <utility>

#include "config/cluster_files.h"
#include "util/fs.h"

namespace pai::deploy {

namespace {

Answer install_ask(const Callbacks& cb, Question::Kind kind) {
  Question q;
  q.kind = kind;
  return cb.ask(q);
}

// install, before Azure creates anything: the pre-install checks (the `checks`
// phase, SiteOverlap and the cross-site checks included) on the hosts layout.yaml
// has now. Nothing when every host is a VM still to be created.
UseCaseResult<std::optional<RunResult>> install_checks_before_azure(const InstallRequest& r,
                                                                    const InstallDeps& deps,
                                                                    const Callbacks& cb) {
  PrepareRequest pr;
  pr.cluster_dir = r.cluster_dir;
  pr.limit = r.limit;
  pr.ignore_checks = r.ignore_checks;
  pr.wait_s = r.wait_s;
  pr.templates_dir = r.templates_dir;
  pr.need_master = false;
  auto p = prepare_cluster(pr, deps.load_hosts);
  if (!p.ok()) return std::move(p).error();
  if (p->specs.empty()) return std::optional<RunResult>();
  PhaseList phases;
  for (auto& ph : install_phases(p->settings))
    if (ph->name() == "checks") phases.push_back(std::move(ph));
  if (phases.empty()) return std::optional<RunResult>();
  auto transport = make_transport(deps.transport, p->hosts.ssh_password);
  Masker masker;
  masker.add(p->hosts.ssh_password.reveal());
  masker.add(p->settings.sudo_password.reveal());
  EngineOptions eo;
  eo.parallel = r.parallel;
  eo.masker = &masker;
  eo.dry_run = true;
  UseCaseEvent e;
  e.kind = UseCaseEvent::Kind::ChecksBeforeAzure;
  e.count = p->specs.size();
  cb.emit(e);
  return std::optional<RunResult>(Engine(*transport, eo).run(p->specs, phases));
}

// A hybrid dry run: the cells the pools' VMs not created yet will add, under
// placeholder names; the pool of the master when Azure has not created it.
UseCaseResult<void> install_plan_vm_cells(InstallPlan& p, const Callbacks& cb) {
  const std::string& dir = p.request.cluster_dir;
  auto loaded = config::check_paths({dir});
  if (loaded.clusters.empty() || !loaded.clusters[0].layout || !loaded.clusters[0].config ||
      !loaded.clusters[0].config->azure)
    return {};
  const auto& c = loaded.clusters[0];
  const auto& az = *c.config->azure;
  std::map<std::string, int64_t> have;  // pool -> its VMs in layout.yaml
  bool master = false;
  for (const auto& m : c.layout->machines) {
    if (!m.azure_pool.empty()) ++have[m.azure_pool];
    master |= m.master;
  }
  if (const auto* mp = az.master_pool(); mp && !master) p.pending_master = mp->name;
  HivedAddRequest hr;
  hr.cluster_dir = dir;
  hr.check = false;
  hr.layouts_dir = p.request.layouts_dir;
  std::vector<PlannedMachine> planned;
  for (const auto& pool : az.pools) {
    if (pool.master || pool.machine_type.empty()) continue;
    for (int64_t i = have[pool.name] + 1; i <= pool.count; ++i) {
      // Azure names the VMs when it creates them: placeholders until then.
      std::string name = "new-" + pool.name + "-" + std::to_string(i);
      hr.nodes.emplace_back(name, pool.machine_type);
      planned.push_back({name, pool.name, pool.sku, pool.machine_type});
    }
  }
  if (hr.nodes.empty()) return {};
  auto h = plan_hived_add(hr);
  if (!h.ok()) return std::move(h).error();
  p.vm_cells = std::move(h).value();
  p.planned_machines = std::move(planned);
  UseCaseEvent e;
  e.kind = UseCaseEvent::Kind::VmCells;
  e.planning = true;
  e.count = p.planned_machines.size();
  e.hived = &*p.vm_cells;
  cb.emit(e);
  return {};
}

// install: the Azure VMs without cells in the HiveD config get them.
UseCaseResult<void> install_add_vm_cells(const InstallPlan& p, InstallOutcome& o,
                                         const Callbacks& cb) {
  HivedAddRequest hr;
  hr.cluster_dir = p.request.cluster_dir;
  hr.only_new = true;
  hr.layouts_dir = p.request.layouts_dir;
  for (const auto& m : o.azure->machines.machines)
    if (!m.master)  // the master runs no jobs: no cells
      hr.nodes.emplace_back(m.hostname, m.machine_type);
  if (hr.nodes.empty()) return {};
  auto h = plan_hived_add(hr);
  if (!h.ok()) return std::move(h).error();
  UseCaseEvent e;
  e.kind = UseCaseEvent::Kind::VmCells;
  e.hived = &*h;
  cb.emit(e);
  if (!h->services_changed()) return {};
  o.vm_cells = std::move(h).value();
  if (auto w = util::write_file_atomic(o.vm_cells->services_file, o.vm_cells->services_after, 0600);
      !w.ok())
    return input_error(o.vm_cells->services_file + ": " + w.error().message);
  return {};
}

// The installed cluster's address and admin password, once its hosts' run
// ended well (InstallOutcome::access).
void install_hand_back(InstallOutcome& o) {
  if (!install_went_on(o) || !o.hosts.plan || o.hosts.plan->dry_run) return;
  using End = HostStage::End;
  if (o.hosts.end != End::Applied && o.hosts.end != End::UpToDate) return;
  const PreparedCluster& c = *o.hosts.plan->cluster;
  if (c.limited || !c.settings.openpai.enabled || !c.master()) return;
  o.access = cluster_access(c);
  if (!c.settings.openpai.admin_password.empty()) {
    o.admin_password = c.settings.openpai.admin_password;
    return;
  }
  // The openpai phase made one and wrote it there.
  if (auto now = read_admin_password(c.settings.openpai.services_file); now.ok() && !now->empty()) {
    o.admin_password = std::move(now).value();
    o.password_made = true;
  }
}

HostStageRequest install_hosts_request(const InstallRequest& r) {
  HostStageRequest h = host_stage_request(HostOperation::Install, r, r.limit);
  h.prepare.ignore_checks = r.ignore_checks;
  h.yes = r.yes;
  return h;
}

}  // namespace

UseCaseResult<InstallPlan> plan_install(const InstallRequest& r, const InstallDeps& deps,
                                        const Callbacks& cb) {
  InstallPlan p;
  p.request = r;
  p.deps = deps;
  // The Azure provider runs first (docs/azure.md): its VMs join layout.yaml.
  if (!r.skip_azure && util::is_directory(r.cluster_dir)) {
    auto session = open_azure(r.cluster_dir, r.azure, deps.azure);
    if (!session.ok()) return std::move(session).error();
    if (!*session) {
      if (r.azure_only)
        return input_error(r.cluster_dir + "/config.yaml has no azure: section (docs/azure.md)");
    } else {
      auto ap = plan_azure_install(std::move(*session), cb);
      if (!ap.ok()) return std::move(ap).error();
      p.azure = std::move(ap).value();
      UseCaseEvent e;
      e.kind = UseCaseEvent::Kind::AzurePlanned;
      e.azure = &*p.azure;
      cb.emit(e);
      if (!r.dry_run) {
        if (p.azure->changed() && !r.azure_only) {
          auto checks = install_checks_before_azure(r, deps, cb);
          if (!checks.ok()) return std::move(checks).error();
          p.checks = std::move(checks).value();
        }
        return p;  // the hosts are planned once Azure is done
      }
      if (r.azure_only) return p;
    }
  }
  if (r.dry_run && p.azure) {
    if (auto c = install_plan_vm_cells(p, cb); !c.ok()) return std::move(c).error();
    // The hosts' plan needs the master, which Azure has not created yet.
    if (!p.pending_master.empty()) return p;
  }
  auto hosts = plan_host_stage(install_hosts_request(r), deps, cb);
  if (!hosts.ok()) return std::move(hosts).error();
  p.hosts = std::move(hosts).value();
  return p;
}

namespace {

InstallOutcome install_apply_stages(InstallPlan& p, const Callbacks& cb) {
  const InstallRequest& r = p.request;
  InstallOutcome o;
  o.azure_changed = r.skip_azure || (p.azure && p.azure->changed());
  auto fail = [&](UseCaseError e) {
    o.error = std::move(e);
    o.end = InstallOutcome::End::Failed;
    return o;
  };
  if (p.checks_failed()) {
    o.end = InstallOutcome::End::ChecksFailed;
    return o;
  }
  if (p.azure && r.dry_run && r.azure_only) {
    o.end = InstallOutcome::End::AzureOnly;
    return o;
  }
  if (p.azure && !r.dry_run) {
    if (p.azure->changed() && !r.yes) {
      Answer a = install_ask(cb, Question::Kind::ApplyAzure);
      if (a != Answer::Yes) {
        o.end = a == Answer::No ? InstallOutcome::End::AzureDeclined
                                : InstallOutcome::End::AzureNoTerminal;
        return o;
      }
    }
    o.azure = apply_azure_install(*p.azure, cb);
    if (o.azure->error) return fail(*o.azure->error);
    if (r.azure_only) {
      o.end = InstallOutcome::End::AzureOnly;
      return o;
    }
    if (auto c = install_add_vm_cells(p, o, cb); !c.ok()) return fail(std::move(c).error());
  }
  if (!p.pending_master.empty()) {
    o.end = InstallOutcome::End::PendingMaster;
    return o;
  }
  if (!p.hosts) {
    auto hosts = plan_host_stage(install_hosts_request(r), p.deps, cb);
    if (!hosts.ok()) return fail(std::move(hosts).error());
    p.hosts = std::move(hosts).value();
  }
  o.hosts = finish_host_stage(p.hosts, r.yes, cb);
  o.end = InstallOutcome::End::Hosts;
  install_hand_back(o);
  return o;
}

}  // namespace

InstallOutcome apply_install(InstallPlan& p, const Callbacks& cb) {
  InstallOutcome o = install_apply_stages(p, cb);
  if (o.end != InstallOutcome::End::Hosts) {
    UseCaseEvent e;
    e.kind = UseCaseEvent::Kind::InstallEnded;
    e.install_plan = &p;
    e.install = &o;
    cb.emit(e);
  }
  return o;
}

bool install_went_on(const InstallOutcome& o) {
  using End = InstallOutcome::End;
  switch (o.end) {
    case End::AzureOnly:
    case End::AzureDeclined:
    case End::PendingMaster:
      return true;
    case End::ChecksFailed:
    case End::AzureNoTerminal:
    case End::Failed:
      return false;
    case End::Hosts:
      break;
  }
  switch (o.hosts.end) {
    case HostStage::End::UpToDate:
    case HostStage::End::DryRun:
    case HostStage::End::Declined:
      return true;
    case HostStage::End::Applied:
      return o.hosts.result.ok();
    case HostStage::End::Failed:
    case HostStage::End::NoTerminal:
      break;
  }
  return false;
}

}  // namespace pai::deploy
