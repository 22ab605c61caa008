// paictl cluster remove NAME

#include <cstdio>

#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "output/output.h"
#include "util/fs.h"
#include "util/strings.h"

namespace paictl {

namespace {

int run_cluster_remove(const std::string& name, const Globals& g) {
  auto reg = jobcli::load_registry();
  if (!reg) return kExitUsage;
  if (!reg->find(name)) {
    print_error("no cluster named \"" + name + "\" is registered");
    return kExitUsage;
  }
  const pai::cluster::Cluster removed = *reg->find(name);
  // The entry goes from its file; `current` and `preference` forget it in every file.
  pai::diag::List diags;
  for (const auto& path : reg->paths()) {
    if (!pai::util::path_exists(path)) continue;
    auto err = pai::cluster::update_file(
        path,
        [&](pai::cluster::Config& c) -> pai::util::Result<void> {
          c.remove(name);
          if (c.current && *c.current == name) c.current = std::string();
          if (c.preference) std::erase(*c.preference, name);
          return {};
        },
        diags);
    if (!err.ok()) {
      print_error(err.error().message);
      return kExitUsage;
    }
  }
  if (!g.quiet) {
    if (removed.auth == pai::cluster::AuthMethod::TokenFile)
      std::printf("cluster %s removed; its token file %s is yours and was left as it is\n",
                  name.c_str(), removed.token_file.c_str());
    else
      std::printf("cluster %s removed (its token is deleted from the registry)\n", name.c_str());
  }
  return kExitOk;
}

void add_cluster_remove(Flags& parent, Globals& g) {
  auto name = std::make_shared<std::string>();
  Flags* cmd = &parent;
  cmd->add_option("NAME", *name, "A registered cluster")->required();
  cmd->footer("The token stays valid on the cluster until it expires; paictl only forgets it.\n\n");
  define_command(*cmd, g, name,
                 {.run = [](const auto& o, Globals& g) { return run_cluster_remove(o, g); }});
}

}  // namespace

void build_cluster_remove(Flags& cmd, Globals& g) {
  add_cluster_remove(cmd, g);
}

}  // namespace paictl
