// paictl cluster use NAME

#include <cstdio>

#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "output/output.h"
#include "util/strings.h"

namespace paictl {

namespace {

int run_cluster_use(const std::string& name, const Globals& g) {
  auto reg = jobcli::load_registry();
  if (!reg) return kExitUsage;
  if (!reg->find(name)) {
    std::vector<std::string> names;
    for (const auto& c : reg->clusters()) names.push_back(c.name);
    std::string guess = pai::util::did_you_mean(name, names);
    print_error("no cluster named \"" + name + "\" is registered" +
                (guess.empty() ? "" : " (did you mean \"" + guess + "\"?)"));
    return kExitUsage;
  }
  pai::diag::List diags;
  auto err = pai::cluster::update_file(
      reg->file_for_current(),
      [&](pai::cluster::Config& c) -> pai::util::Result<void> {
        c.current = name;
        return {};
      },
      diags);
  if (!err.ok()) {
    print_error(err.error().message);
    return kExitUsage;
  }
  if (!g.quiet) std::printf("current cluster: %s\n", name.c_str());
  return kExitOk;
}

void add_cluster_use(Flags& parent, Globals& g) {
  auto name = std::make_shared<std::string>();
  Flags* cmd = &parent;
  cmd->add_option("NAME", *name, "A registered cluster")->required();
  cmd->footer("Commands use the current cluster unless they get --cluster NAME.\n\n");
  define_command(*cmd, g, name,
                 {.run = [](const auto& o, Globals& g) { return run_cluster_use(o, g); }});
}

}  // namespace

void build_cluster_use(Flags& cmd, Globals& g) {
  add_cluster_use(cmd, g);
}

}  // namespace paictl
