// paictl version [--cluster NAME] [-o json|yaml]

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include <CLI/Version.hpp>

#include "api/client.h"
#include "app.h"
#include "build_info.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "http/library_version.h"
#include "output/printer.h"
#include "remote/library_version.h"
#include "util/version.h"

#ifndef PAICTL_BUILD_TYPE
#define PAICTL_BUILD_TYPE ""
#endif

namespace paictl {

namespace {

Json version_info() {
  std::string json = std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "." +
                     std::to_string(NLOHMANN_JSON_VERSION_MINOR) + "." +
                     std::to_string(NLOHMANN_JSON_VERSION_PATCH);
  return document("version",
                  Json{{"version", pai::kVersion},
                       {"gitCommit", PAICTL_GIT_COMMIT},
                       {"buildType", PAICTL_BUILD_TYPE[0] ? PAICTL_BUILD_TYPE : "unknown"},
                       {"libraries",
                        {{"libpai", pai::kVersion},
                         {"libcurl", pai::http::libcurl_version()},
                         {"libssh", pai::remote::libssh_version()},
                         {"nlohmann_json", json},
                         {"CLI11", CLI11_VERSION}}}});
}

struct VersionOptions {
  std::string output = "table";
  jobcli::RemoteOptions remote;
  bool ask_server = false;  // --cluster was given, with a name or without (the current cluster)
};

int run_version(const VersionOptions& o, Globals& g) {
  Json v = version_info();
  int rc = kExitOk;
  std::optional<pai::api::Error> server_error;
  std::string server_name;
  if (o.ask_server) {
    auto reg = jobcli::load_registry();
    if (!reg) return kExitUsage;
    auto conn = jobcli::connect(*reg, o.remote, g);
    if (!conn) return kExitUsage;
    server_name = conn->cluster->name;
    auto info = conn->api->info();
    if (info.ok()) {
      v["server"] =
          Json{{"cluster", conn->cluster->name},
               {"uri", conn->cluster->uri},
               {"name", info->name},
               {"version", info->version},
               {"launcherType", info->launcher_type},
               {"authnMethod", info->authn_method.empty() ? "basic" : info->authn_method}};
    } else {
      server_error = info.error();
    }
  }
  if (is_structured(o.output)) {
    print_document(v, o.output);
  } else {
    std::printf("paictl %s\n", pai::kVersion);
    if (!g.quiet) {
      Table t({{""}, {""}});
      t.add({"commit:", v["gitCommit"].get<std::string>()});
      t.add({"build type:", v["buildType"].get<std::string>()});
      for (auto it = v["libraries"].begin(); it != v["libraries"].end(); ++it)
        t.add({it.key() + ":", it.value().get<std::string>()});
      std::string s = render_table(t);
      for (size_t p = 0; p < s.size();) {
        size_t e = s.find('\n', p);
        std::printf("  %s\n", s.substr(p, e - p).c_str());
        p = e + 1;
      }
    }
    if (v.contains("server")) {
      const Json& sv = v["server"];
      std::printf("server %s (%s): OpenPAI %s, %s launcher, %s sign-in\n",
                  sv["cluster"].get<std::string>().c_str(), sv["uri"].get<std::string>().c_str(),
                  sv["version"].get<std::string>().c_str(),
                  sv["launcherType"].get<std::string>().c_str(),
                  sv["authnMethod"].get<std::string>().c_str());
    }
  }
  if (server_error)
    rc = jobcli::report_api_error(server_name, "asking for its version", *server_error);
  return rc;
}

}  // namespace

void build_version(Flags& cmd, Globals& g) {
  auto o = std::make_shared<VersionOptions>();
  add_output_option(cmd, o->output, g);
  Flag* cluster =
      cmd.add_option("--cluster", o->remote.cluster,
                     "Also ask this registered cluster (default: the current cluster) for its "
                     "OpenPAI version (GET /api/v2/info)")
          ->type_name("[NAME]")
          ->expected(0, 1);
  cmd.add_option("--timeout", o->remote.timeout, "Seconds to wait for the cluster")
      ->check(PositiveNumber);
  cmd.footer(
      "'paictl --version' prints the first line only. The YAML parser and writer are libpai's "
      "own.\nWith --cluster, a cluster that cannot be reached is reported after the client's "
      "version and the command exits 3.");
  define_command(cmd, g, o,
                 {.complete = [cluster](VersionOptions& o,
                                        const Globals&) { o.ask_server = cluster->count() > 0; },
                  .run = run_version});
}

}  // namespace paictl
