// paictl version [-o json|yaml]

#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <CLI/Version.hpp>

#include "app.h"
#include "build_info.h"
#include "exit_codes.h"
#include "http/library_version.h"
#include "printer.h"
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

}  // namespace

void build_version(CLI::App& cmd, Globals& g) {
  auto output = std::make_shared<std::string>("table");
  add_output_option(cmd, *output, g);
  cmd.footer(
      "'paictl --version' prints the first line only. The YAML parser and writer are libpai's "
      "own.");
  cmd.callback([output, &g]() {
    Json v = version_info();
    if (is_structured(*output)) {
      print_document(v, *output);
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
    }
    g.exit_code = kExitOk;
  });
}

}  // namespace paictl
