// paictl hived health CLUSTER [--facts DIR | --collect] [--quarantine]: the
// quarantine candidates among the GPU workers, from their facts (lib/hived/
// health.h): GPUs lost, uncorrectable ECC errors, retired or remapped memory,
// hardware XIDs in the kernel log, a driver that is not the SKU's. With
// --quarantine the candidates are quarantined (lib/deploy/quarantine.h).

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app.h"
#include "check/hosts_common.h"
#include "command.h"
#include "config/cluster_files.h"
#include "deploy/quarantine.h"
#include "diag/report.h"
#include "exit_codes.h"
#include "flags.h"
#include "hived/cmd_hived_commands.h"
#include "hived/health.h"
#include "hived/quarantine_print.h"
#include "install/cmd_install.h"
#include "install/install_out.h"
#include "install/install_view.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/strings.h"
#include "util/time.h"

namespace paictl {

namespace {

struct HealthOptions {
  InstallOptions install;
  std::string facts;
  bool collect = false;
  bool quarantine = false;
  std::vector<std::string> drivers;  // SKU=VERSION
  std::string hived;
  std::string reason;
};

// The facts: from --facts DIR, or collected over SSH.
Step<std::map<std::string, pai::facts::HostFacts>> health_facts(const HealthOptions& o,
                                                                const Globals& g,
                                                                std::string& from) {
  std::map<std::string, pai::facts::HostFacts> facts;
  if (!o.facts.empty()) {
    pai::diag::List dl;
    size_t files = 0;
    facts = pai::hived::read_health_facts(o.facts, dl, &files);
    if (dl.has_errors() || files == 0) {
      if (files == 0)
        print_error("no facts in " + o.facts +
                    " (facts collect --out files *.json, or host directories with gpus.csv)");
      pai::diag::TextOptions topt;
      topt.color = use_color(g.no_color, 2);
      std::string text = pai::diag::write_text(dl.items(), files, topt);
      std::fwrite(text.data(), 1, text.size(), stderr);
      return ExitNow{kExitUsage};
    }
    from = o.facts;
    return facts;
  }
  auto prepared = prepare_hosts(o.install.hosts, g);
  if (!prepared.ok()) return ExitNow{prepared.error().code};
  double ms = 0;
  size_t parallel = 0;
  auto outcomes = collect_with_progress(*prepared, g, "collecting facts", &ms, &parallel);
  int unreached = 0;
  for (auto& h : outcomes) {
    if (!h.reached || h.facts.sections.empty()) {
      ++unreached;
      print_warning(h.plan.name + ": not reached (" + h.exec.error + "): its health is not known");
      continue;
    }
    facts[h.plan.name] = std::move(h.facts);
  }
  from = "collected over SSH";
  return facts;
}

int run_health(const HealthOptions& ho, const Globals& g) {
  const InstallOptions& o = ho.install;
  const std::string& dir = o.hosts.paths[0];
  pai::config::CheckOutcome checked = pai::config::check_paths({dir});
  const pai::config::Cluster* cl = nullptr;
  for (const auto& c : checked.clusters)
    if (c.layout) cl = &c;
  if (!cl) {
    print_error(dir + ": no layout.yaml to read the GPU workers and their SKUs from");
    return kExitUsage;
  }
  pai::hived::HealthOptions opts;
  for (const auto& d : ho.drivers) {
    auto eq = d.find('=');
    opts.drivers[d.substr(0, eq)] = d.substr(eq + 1);
  }
  std::string from;
  auto facts = health_facts(ho, g, from);
  if (!facts.ok()) return facts.error().code;
  auto rep = pai::hived::health_candidates(*cl->layout, *facts, opts);
  bool json = is_structured(o.output);
  bool wide = o.output == "wide";

  Json doc;
  if (json) {
    Json cands = Json::array();
    for (const auto& c : rep.candidates) {
      Json fs = Json::array();
      for (const auto& f : c.findings)
        fs.push_back(
            {{"code", f.code}, {"kind", f.kind}, {"message", f.message}, {"hint", f.hint}});
      cands.push_back({{"node", c.node}, {"sku", c.sku}, {"findings", fs}});
    }
    Json kinds = Json::object();
    for (const auto& [k, n] : rep.kinds) kinds[k] = n;
    doc = {{"cluster", dir},
           {"factsFrom", from},
           {"gpuHosts", rep.gpu_hosts},
           {"checked", rep.checked},
           {"withoutFacts", rep.without_facts},
           {"drivers", rep.drivers},
           {"kinds", kinds},
           {"candidates", cands}};
  } else {
    Table t({{"NODE"}, {"SKU"}, {"FINDING"}, {"WHAT"}, {"HINT", true}});
    for (const auto& c : rep.candidates)
      for (size_t i = 0; i < c.findings.size(); ++i) {
        const auto& f = c.findings[i];
        t.add({i ? "" : c.node, i ? "" : c.sku, "[" + f.code + "] " + f.kind, f.message, f.hint});
      }
    std::string text;
    if (!rep.candidates.empty()) text += render_table(t, wide) + "\n";
    text +=
        std::to_string(rep.gpu_hosts) + (rep.gpu_hosts == 1 ? " GPU worker" : " GPU workers") +
        ", facts of " + std::to_string(rep.checked) + " (" + from + "): " +
        (rep.candidates.empty() ? std::string("no quarantine candidate")
                                : std::to_string(rep.candidates.size()) + " quarantine candidate" +
                                      (rep.candidates.size() == 1 ? "" : "s") +
                                      (wide ? "" : " (hints with -o wide)")) +
        "\n";
    if (!rep.without_facts.empty())
      text += "no facts of " + pai::util::join(rep.without_facts, ", ") + "\n";
    out_printf("%s", text.c_str());
  }

  int rc = rep.candidates.empty() ? kExitOk : kExitFindings;
  if (ho.quarantine && !rep.candidates.empty()) {
    UseCaseView view = use_case_view(o, g);
    pai::deploy::QuarantineDeps deps;
    deps.install = install_deps(o, view);
    auto cb = use_case_callbacks(view);
    pai::deploy::QuarantineRequest r;
    r.cluster_dir = dir;
    for (const auto& c : rep.candidates) r.nodes.push_back(c.node);
    if (ho.reason.empty()) {
      std::vector<std::string> why;
      for (const auto& c : rep.candidates)
        for (const auto& f : c.findings) why.push_back(c.node + " " + f.code + " " + f.kind);
      r.reason = "hived health: " + pai::util::join(why, ", ");
    } else {
      r.reason = ho.reason;
    }
    r.by = quarantine_who();
    r.at = pai::util::now_rfc3339();
    r.hived = ho.hived;
    r.dry_run = o.hosts.dry_run;
    auto plan = pai::deploy::plan_quarantine(r, deps, cb);
    if (!plan.ok()) {
      if (json) print_document(document("hivedHealth", doc), o.output);
      return report(plan.error(), view);
    }
    if (!json) out_printf("\n%s", quarantine_plan_text(*plan).c_str());
    auto out = pai::deploy::apply_quarantine(*plan, cb);
    if (out.error) {
      report(*out.error, view);
      if (out.end == pai::deploy::QuarantineOutcome::End::Applied) rc = kExitRemote;
    } else if (!json) {
      if (out.end == pai::deploy::QuarantineOutcome::End::DryRun)
        out_printf("dry run: no node was changed\n");
      else if (!out.changed.empty())
        out_printf("quarantined %s\n", pai::util::join(out.changed, ", ").c_str());
    }
    if (json) doc["quarantine"] = Json(pai::deploy::quarantine_json(*plan, &out));
  }
  if (json) print_document(document("hivedHealth", doc), o.output);
  return rc;
}

void complete_health(HealthOptions& o) {
  if (o.hived.empty() && o.install.hosts.paths.size() == 1)
    if (auto settings = pai::config::read_cluster_settings(o.install.hosts.paths[0]))
      o.hived = settings->hived_url;
}

void validate_health(const HealthOptions& o, Usage& u) {
  validate_install(o.install, "hived health", u);
  u.error_if(
      o.facts.empty() == !o.collect, "hived health needs --facts DIR or --collect (one)",
      "paictl hived health CLUSTER_DIR --facts DIR, or --collect to read the hosts over SSH");
  for (const auto& d : o.drivers) {
    auto eq = d.find('=');
    u.error_if(eq == std::string::npos || eq == 0 || eq + 1 == d.size(),
               "--driver " + d + ": expected SKU=VERSION", "e.g. --driver gpu-machine=535.104.05");
  }
  if (!o.hived.empty())
    u.error_if(o.hived.rfind("http://", 0) != 0 && o.hived.rfind("https://", 0) != 0,
               "--hived " + o.hived + " is not an http:// or https:// URL",
               "HiveD's web server listens on :30096, e.g. --hived http://10.0.0.1:30096");
  u.error_if(!o.reason.empty() && !o.quarantine, "--reason goes with --quarantine");
}

}  // namespace

void build_hived_health(Flags& cmd, Globals& g) {
  auto o = std::make_shared<HealthOptions>();
  add_install_flags(cmd, o->install, g, false, false);
  cmd.get_option("--dry-run")
      ->description("With --quarantine: show the quarantine's effect, and change nothing");
  for (const char* name :
       {"--wait", "--ignore-check-errors", "--print-script", "--arm-endpoint", "--authority-host",
        "--ca-file", "--docker-data-root", "--registry", "--yes"})
    cmd.get_option(name)->group("");
  cmd.add_option("--facts", o->facts,
                 "Host facts (paictl facts collect --out DIR; or host directories with gpus.csv, "
                 "nvidia-smi-q.txt, dmesg.txt)")
      ->type_name("DIR");
  cmd.add_flag("--collect", o->collect, "Read the hosts' facts over SSH now");
  cmd.add_flag("--quarantine", o->quarantine,
               "Quarantine the candidates (as paictl hived quarantine does)");
  cmd.add_option("--driver", o->drivers,
                 "The driver a SKU's hosts must run (default: the one most of them run)")
      ->type_name("SKU=VERSION");
  cmd.add_option("--reason", o->reason,
                 "With --quarantine: the annotation's reason (default: the findings)")
      ->type_name("TEXT");
  cmd.add_option("--hived", o->hived,
                 "HiveD's inspect API (default: config.yaml's hived_url): the quarantine's effect")
      ->type_name("URL");
  cmd.footer(
      "Findings: N010 gpusDropped (fewer GPUs than the SKU), N011 eccUncorrectable, N012\n"
      "retiredPages (pending, or more than 60 on a GPU), N013 xid (hardware XIDs in the kernel\n"
      "log), N014 driverMismatch (paictl explain CODE).\n\n"
      "EXIT STATUS:\n  0 no candidate, 1 candidates found (or a quarantine refused), 2 bad usage "
      "or input,\n  3 the hosts, the master or HiveD could not be reached\n");
  define_command(cmd, g, o,
                 {.complete = [](HealthOptions& o, const Globals&) { complete_health(o); },
                  .validate = validate_health,
                  .run = run_health});
}

}  // namespace paictl
