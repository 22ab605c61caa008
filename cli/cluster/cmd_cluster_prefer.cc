// paictl cluster prefer [NAME...]

#include <algorithm>
#include <cstdio>

#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/strings.h"

namespace paictl {

namespace {

struct PreferOptions {
  std::vector<std::string> names;
  bool clear = false;
  std::string output = "table";
};

// Every name listed twice (each once), before the registry is read.
void validate_cluster_prefer(const PreferOptions& o, Usage& u) {
  std::vector<std::string> seen, reported;
  for (const auto& n : o.names) {
    bool twice = std::find(seen.begin(), seen.end(), n) != seen.end();
    if (twice && std::find(reported.begin(), reported.end(), n) == reported.end()) {
      u.error("\"" + n + "\" is listed twice", "each cluster has one place in the order");
      reported.push_back(n);
    }
    seen.push_back(n);
  }
}

int run(const PreferOptions& o, const Globals& g) {
  auto reg = jobcli::load_registry();
  if (!reg) return kExitUsage;
  if (o.names.empty() && !o.clear) {
    if (!is_structured(o.output)) {
      if (reg->preference().empty())
        std::printf(
            "no preference: --cluster auto ranks clusters by free capacity, then by name\n");
      for (size_t i = 0; i < reg->preference().size(); ++i)
        std::printf("%zu. %s\n", i + 1, reg->preference()[i].c_str());
    } else {
      print_document(document("clusterPreference", Json{{"preference", reg->preference()}}),
                     o.output);
    }
    return kExitOk;
  }
  for (const auto& n : o.names)
    if (!reg->find(n)) {
      print_error("no cluster named \"" + n + "\" is registered");
      return kExitUsage;
    }
  pai::diag::List diags;
  auto err = pai::cluster::update_file(
      reg->file_for_preference(),
      [&](pai::cluster::Config& c) -> pai::util::Result<void> {
        c.preference = o.names;
        return {};
      },
      diags);
  if (!err.ok()) {
    print_error(err.error().message);
    return kExitUsage;
  }
  if (!g.quiet)
    std::printf("preference: %s\n",
                o.names.empty() ? "(none)" : pai::util::join(o.names, " > ").c_str());
  return kExitOk;
}

void add_cluster_prefer(Flags& parent, Globals& g) {
  auto o = std::make_shared<PreferOptions>();
  Flags* cmd = &parent;
  cmd->add_option("NAME", o->names,
                  "Registered clusters, most preferred first (none: show the order)");
  cmd->add_flag("--clear", o->clear, "Forget the preference order");
  add_output_option(*cmd, o->output, g);
  cmd->footer(
      "--cluster auto first keeps the clusters that can run the job and puts those with enough "
      "free\n"
      "resources now first; this order breaks ties among them. Clusters not listed come last.\n\n");
  define_command(*cmd, g, o,
                 {.validate = validate_cluster_prefer,
                  .run = [](const auto& o, Globals& g) { return run(o, g); }});
}

}  // namespace

void build_cluster_prefer(Flags& cmd, Globals& g) {
  add_cluster_prefer(cmd, g);
}

}  // namespace paictl
