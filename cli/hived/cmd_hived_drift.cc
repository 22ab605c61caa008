// paictl hived drift CLUSTER: the physical cluster HiveD sees against the
// cluster files (the HiveD config and layout.yaml) and against the hosts'
// facts (paictl facts collect / check hosts): nodes missing, unexpected or
// bad, workers HiveD does not schedule on, and hosts whose GPU count is not
// the one their cells have.

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

#include "app.h"
#include "command.h"
#include "config/cluster_files.h"
#include "diag/report.h"
#include "exit_codes.h"
#include "facts/host_facts.h"
#include "flags.h"
#include "hived/cmd_hived_commands.h"
#include "hived/cmd_hived_common.h"
#include "hived/drift.h"
#include "hived/inspect.h"
#include "hived/live.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/fs.h"

namespace paictl {

namespace {

using namespace hivedcli;

struct DriftOptions {
  HivedOptions h;
  std::string cluster;
  std::string facts;
};

int run_drift(const DriftOptions& o, const Globals& g) {
  pai::config::CheckOutcome out = pai::config::check_paths({o.cluster});
  const pai::config::Cluster* cl = nullptr;
  for (const auto& c : out.clusters)
    if (c.model) cl = &c;
  if (out.diagnostics.has_errors() || out.input_error || !cl) {
    // The same refusal as the other hived commands (errors printed with positions).
    load_model(o.cluster, g);
    return kExitUsage;
  }
  const auto& model = *cl->model;

  // The facts, when given: one paictl.facts/v1 file per host.
  std::map<std::string, pai::facts::HostFacts> facts;
  if (!o.facts.empty()) {
    std::vector<std::string> files;
    if (pai::util::is_directory(o.facts)) {
      if (DIR* d = ::opendir(o.facts.c_str())) {
        while (dirent* e = ::readdir(d)) {
          std::string n = e->d_name;
          if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0)
            files.push_back(o.facts + "/" + n);
        }
        ::closedir(d);
      }
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(o.facts);
    }
    if (files.empty()) {
      print_error("no facts files (*.json) in " + o.facts);
      std::fprintf(stderr, "  hint: paictl facts collect %s --out %s\n", o.cluster.c_str(),
                   o.facts.c_str());
      return kExitUsage;
    }
    pai::diag::List dl;
    for (const auto& f : files) {
      auto r = pai::util::read_file(f);
      if (!r.ok()) {
        print_error(f + ": " + r.error().message);
        return kExitUsage;
      }
      if (auto hf = pai::facts::read_facts_json(f, *r, dl)) {
        std::string name = hf->name.empty() ? hf->hostname : hf->name;
        facts[name] = std::move(*hf);
      }
    }
    if (dl.has_errors()) {
      pai::diag::TextOptions topt;
      topt.color = use_color(g.no_color, 2);
      std::string text = pai::diag::write_text(dl.items(), files.size(), topt);
      std::fwrite(text.data(), 1, text.size(), stderr);
      return kExitUsage;
    }
  }

  auto conn = connect_hived(o.h, g);
  if (!conn) return kExitUsage;
  // Only the physical cluster is compared: HiveD's own answer for it.
  auto pc = conn->client->physical_cluster();
  if (!pc.ok()) return report(*conn, "reading the physical cluster", pc.error());
  pai::hived::ClusterStatus cs;
  cs.physical_cluster = std::move(pc).value();
  auto live = std::make_optional(pai::hived::index_live(std::move(cs), {}));
  for (const auto& w : live->warnings) print_warning(w);

  std::vector<pai::hived::DriftFinding> findings =
      pai::hived::physical_drift(*live, model, cl->layout ? &*cl->layout : nullptr, facts, o.facts);

  std::map<std::string, int64_t> counts;
  for (const auto& f : findings) counts[f.kind]++;
  if (is_structured(o.h.output)) {
    Json items = Json::array();
    for (const auto& f : findings)
      items.push_back(
          {{"kind", f.kind}, {"node", f.node}, {"message", f.message}, {"hint", f.hint}});
    Json summary = Json::object();
    for (const auto& k : pai::hived::drift_kinds()) summary[k] = counts[k];
    print_document(
        document("hivedDrift", {{"cluster", o.cluster},
                                {"hived", conn->client->base()},
                                {"facts", o.facts},
                                {"nodes", static_cast<int64_t>(live->nodes.size())},
                                {"configNodes", static_cast<int64_t>(model.nodes.size())},
                                {"summary", summary},
                                {"findings", items}}),
        o.h.output);
  } else {
    bool wide = o.h.output == "wide";
    Table t({{"NODE"}, {"DRIFT"}, {"WHAT"}, {"HINT", true}});
    for (const auto& f : findings) t.add({f.node, f.kind, f.message, f.hint});
    std::string text;
    if (!findings.empty()) text += render_table(t, wide) + "\n";
    text += std::to_string(live->nodes.size()) + " nodes in HiveD, " +
            std::to_string(model.nodes.size()) + " in the config" +
            (o.facts.empty() ? std::string()
                             : ", facts of " + std::to_string(facts.size()) +
                                   (facts.size() == 1 ? " host" : " hosts")) +
            ": " +
            (findings.empty() ? std::string("no drift")
                              : std::to_string(findings.size()) + " finding(s)" +
                                    (wide ? "" : " (hints with -o wide)")) +
            "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return findings.empty() ? kExitOk : kExitFindings;
}

}  // namespace

void build_hived_drift(Flags& cmd, Globals& g) {
  auto o = std::make_shared<DriftOptions>();
  cmd.add_option("CLUSTER", o->cluster,
                 "The cluster files (directory with the HiveD config and layout.yaml, or a file)")
      ->required();
  add_hived_flags(&cmd, o->h, g);
  cmd.add_option("--facts", o->facts,
                 "Host facts (paictl facts collect --out DIR, or one facts file)")
      ->type_name("DIR");
  cmd.footer(
      "Drift: nodes of the config that HiveD does not list (missing), nodes HiveD lists that\n"
      "the config lacks (unexpected), nodes HiveD sees bad, layout.yaml workers no cell\n"
      "covers (notInHived), and with --facts hosts whose GPU count is below (gpusDropped) or\n"
      "above (gpusAdded) their cells' leaf count.\n\n"
      "EXIT STATUS:\n  0 no drift, 1 drift found, 2 bad usage or input, 3 HiveD could not be "
      "read\n");
  define_command(cmd, g, o,
                 {.validate = [](const DriftOptions& o, Usage& u) { validate_hived_flags(o.h, u); },
                  .run = [](const auto& o, Globals& g) { return run_drift(o, g); }});
}

}  // namespace paictl
