#include "deploy/install_json.h"

#include <cmath>
#include <string>

namespace pai::deploy {

namespace {

const char* kInstallApi = "paictl.install/v1";

DocJson install_json_hived(const InstallPlan& p, const InstallOutcome& o) {
  if (o.vm_cells) return hived_edit_json(*o.vm_cells);
  if (p.vm_cells) {
    DocJson h = hived_edit_json(*p.vm_cells);
    DocJson planned = DocJson::array();
    for (const auto& m : p.planned_machines)
      planned.push_back(
          {{"name", m.name}, {"pool", m.pool}, {"sku", m.sku}, {"machineType", m.machine_type}});
    h["plannedMachines"] = planned;
    return h;
  }
  return nullptr;
}

}  // namespace

DocJson azure_install_json(const AzureInstallPlan& p, const AzureInstallOutcome* o) {
  DocJson azure = DocJson::parse(azure::plan_json(p.plan, p.session->spec).dump());
  if (!o) return azure;
  if (o->applied)
    azure["result"] = {{"created", o->result.created},
                       {"updated", o->result.updated},
                       {"deleted", o->result.deleted}};
  if (o->listed) {
    DocJson ms = DocJson::array();
    for (const auto& m : o->machines.machines)
      ms.push_back({{"pool", m.pool},
                    {"hostname", m.hostname},
                    {"hostip", m.ip},
                    {"machineType", m.machine_type},
                    {"role", m.master ? "master" : "worker"}});
    azure["machines"] = ms;
    const auto& st = o->stats;
    azure["requests"] = {{"total", st.requests},      {"polls", st.polls},
                         {"throttled", st.throttled}, {"contention", st.contention},
                         {"transient", st.transient}, {"waitedSeconds", st.waited_s}};
  }
  return azure;
}

DocJson hived_edit_json(const HivedEdit& h) {
  return {{"changes", h.edit.changes},
          {"warnings", h.edit.warnings},
          {"restartsHived", h.services_changed()},
          {"diff", h.diff()}};
}

const char* host_operation_kind(HostOperation operation) {
  switch (operation) {
    case HostOperation::Reset:
      return "Reset";
    case HostOperation::ConfigPush:
      return "ConfigPush";
    case HostOperation::HivedPush:
      return "HivedPush";
    case HostOperation::Install:
      break;
  }
  return "Install";
}

DocJson run_stats_json(const HostRunPlan& plan) {
  remote::TransportCost c = plan.cost ? plan.cost->cost() : remote::TransportCost{};
  return {{"hosts", plan.cluster->specs.size()},
          {"sessionsPerHost", c.most.sessions},
          {"commandsPerHost", c.most.commands},
          {"bytesSentPerHost", c.most.bytes_sent},
          {"sessions", c.total.sessions},
          {"commands", c.total.commands},
          {"bytesSent", c.total.bytes_sent},
          {"cpuSeconds", std::round(remote::process_cpu_seconds() * 1000) / 1000}};
}

DocJson host_stage_json(const HostRunPlan& plan, const RunResult* result) {
  DocJson doc = {{"apiVersion", kInstallApi},
                 {"kind", host_operation_kind(plan.operation)},
                 {"cluster", plan.cluster->cluster_dir},
                 {"plan", plan.plan.to_json()}};
  if (result) doc["result"] = result->to_json();
  doc["stats"] = run_stats_json(plan);
  return doc;
}

DocJson install_json(const InstallPlan& p, const InstallOutcome& o) {
  using End = InstallOutcome::End;
  const std::string& raw_dir = p.request.cluster_dir;
  const AzureInstallOutcome* applied = o.azure ? &*o.azure : nullptr;
  switch (o.end) {
    case End::ChecksFailed:
      return {{"apiVersion", kInstallApi},
              {"kind", "Install"},
              {"cluster", clean_cluster_dir(raw_dir)},
              {"azure", azure_install_json(*p.azure, nullptr)},
              {"plan", p.checks->to_json()}};
    case End::AzureOnly:
    case End::AzureDeclined:
    case End::AzureNoTerminal:
    case End::Failed:
      if (!p.request.azure_only || !p.azure) return nullptr;
      if (o.end == End::Failed && !applied) return nullptr;
      return {{"apiVersion", kInstallApi},
              {"kind", "Install"},
              {"cluster", raw_dir},
              {"azure", azure_install_json(*p.azure, applied)}};
    case End::PendingMaster: {
      DocJson doc = {{"apiVersion", kInstallApi},
                     {"kind", "Install"},
                     {"cluster", raw_dir},
                     {"azure", azure_install_json(*p.azure, applied)},
                     {"pendingMaster", p.pending_master}};
      if (DocJson h = install_json_hived(p, o); !h.is_null()) doc["hived"] = h;
      return doc;
    }
    case End::Hosts:
      break;
  }
  const HostStage& s = o.hosts;
  DocJson doc = host_stage_json(*s.plan, nullptr);
  if (p.azure) doc["azure"] = azure_install_json(*p.azure, applied);
  if (DocJson h = install_json_hived(p, o); !h.is_null()) doc["hived"] = h;
  if (s.end == HostStage::End::Applied) doc["result"] = s.result.to_json();
  if (o.access) {
    DocJson a = {{"gateway", o.access->gateway},
                 {"user", o.access->user},
                 {"passwordFile", o.access->services_file},
                 {"passwordMade", o.password_made}};
    if (!o.access->hived.empty()) a["hived"] = o.access->hived;
    doc["access"] = a;
  }
  // Last, as host_stage_json has it: what the run cost, when all of it is done.
  DocJson stats = std::move(doc["stats"]);
  doc.erase("stats");
  doc["stats"] = std::move(stats);
  return doc;
}

DocJson reset_json(const ResetPlan& p, const ResetOutcome& o) {
  if (!p.azure) {
    if (!o.hosts.plan) return nullptr;
    return host_stage_json(*o.hosts.plan,
                           o.hosts.end == HostStage::End::Applied ? &o.hosts.result : nullptr);
  }
  const std::string& dir = p.request.cluster_dir;
  if (o.azure_end == ResetOutcome::AzureEnd::DryRun)
    return {
        {"apiVersion", "paictl.reset/v1"},
        {"kind", "AzureReset"},
        {"cluster", dir},
        {"dryRun", true},
        {"azure", DocJson::parse(azure::plan_json(*p.azure->plan, p.azure->session->spec).dump())}};
  if (o.azure_end == ResetOutcome::AzureEnd::Deleted)
    return {{"apiVersion", "paictl.reset/v1"},
            {"kind", "AzureReset"},
            {"cluster", dir},
            {"dryRun", false},
            {"deleted", o.azure->result.deleted},
            {"kept", o.azure->result.kept}};
  return nullptr;
}

}  // namespace pai::deploy
