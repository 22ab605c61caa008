// paictl: the command-line front end of libpai. Argument parsing, printing and
// exit codes only; the work happens in the library. Built as libpaictl-cli and
// run by the `paictl` launcher.

#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "app.h"
#include "exit_codes.h"
#include "output.h"
#include "util/version.h"

namespace {

using namespace paictl;

// The top-level help lists every command with its purpose, not only the groups.
class Formatter : public CLI::Formatter {
 public:
  std::string make_subcommands(const CLI::App* app, CLI::AppFormatMode mode) const override {
    if (app->get_parent() != nullptr) return CLI::Formatter::make_subcommands(app, mode);
    size_t width = 0;
    const std::vector<Command> cmds = commands();
    for (const auto& c : cmds) {
      size_t w = 0;
      for (const auto& p : c.path) w += p.size() + 1;
      width = std::max(width, w);
    }
    std::string out = "\nCOMMANDS:\n";
    for (const auto& c : cmds) {
      std::string name;
      for (const auto& p : c.path) name += (name.empty() ? "" : " ") + p;
      out += "  " + name + std::string(width + 2 - name.size(), ' ') + c.summary + "\n";
    }
    out += "\nRun 'paictl COMMAND --help' for the options and examples of a command.\n";
    return out;
  }
};

}  // namespace

// Called by the paictl launcher (cli/launcher/launcher.cc), which answers
// --version itself and loads this library only when a command runs.
extern "C" __attribute__((visibility("default"))) int paictl_main(int argc, char** argv) {
  Globals g;
  CLI::App app{"paictl: plan, check, install and use shared GPU clusters (OpenPAI, HiveD)",
               "paictl"};
  app.formatter(std::make_shared<Formatter>());
  app.set_version_flag("--version", std::string("paictl ") + pai::kVersion);
  app.require_subcommand(1);
  app.fallthrough();
  app.add_flag("-v,--verbose", g.verbose, "Print more detail (info-level findings, progress)");
  app.add_flag("-q,--quiet", g.quiet, "Print only what a script needs");
  app.add_flag("--no-color", g.no_color, "Never colour the output (NO_COLOR is honoured too)");

  // Groups first (only those with commands), then the commands into their parents.
  const std::vector<Command> cmds = commands();
  std::map<std::string, CLI::App*> group_apps;
  for (const auto& c : cmds) {
    if (c.path.size() < 2 || group_apps.count(c.path[0])) continue;
    std::string summary;
    for (const auto& grp : groups())
      if (grp.name == c.path[0]) summary = grp.summary;
    CLI::App* sub = app.add_subcommand(c.path[0], summary);
    sub->require_subcommand(1);
    sub->fallthrough();
    group_apps[c.path[0]] = sub;
  }
  for (const auto& c : cmds) {
    CLI::App* parent = c.path.size() > 1 ? group_apps.at(c.path[0]) : &app;
    c.add(*parent, g);
  }

  // Set after the subcommands exist, so that they do not inherit it.
  app.footer(
      "EXAMPLES:\n"
      "  paictl plan --facts examples/facts --vc research=60% --vc prod=40% --out cluster/\n"
      "  paictl check config cluster/ --sarif report.sarif --fail-on-warn\n"
      "  paictl check hosts cluster/ --parallel 128 -o json\n"
      "  paictl simulate --config cluster/ --trace philly.json --policy hived,quota --report out/\n"
      "  paictl job submit job.yaml --cluster auto --dry-run\n");

  // An unknown command gets a clear message (CLI11 would only say a subcommand is required).
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.empty() || a[0] == '-') continue;
    bool known = false;
    for (const auto* sub : app.get_subcommands({})) known |= sub->get_name() == a;
    if (!known) {
      print_error("unknown command '" + a + "'");
      std::fprintf(stderr, "Run 'paictl --help' for the list of commands.\n");
      return kExitUsage;
    }
    break;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  } catch (const CLI::CallForVersion& e) {
    app.exit(e);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    print_error(e.what());
    std::fprintf(stderr, "Run 'paictl --help' (or 'paictl COMMAND --help') for usage.\n");
    return kExitUsage;
  }
  // The launcher ends the process without running destructors: flush here.
  std::cout.flush();
  std::fflush(stdout);
  return g.exit_code;
}
