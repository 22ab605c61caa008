// paictl help [COMMAND...], and the hidden paictl __commands (every command that
// runs, one a line: the README check reads it).

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app.h"
#include "command.h"
#include "command_tree.h"
#include "exit_codes.h"

namespace paictl {

void build_help(Flags& cmd, Globals& g) {
  auto words = std::make_shared<std::vector<std::string>>();
  cmd.add_option("COMMAND", *words, "A command, e.g. 'check config' (default: every command)")
      ->expected(0, -1);
  cmd.footer("The same text as 'paictl COMMAND --help'; 'man paictl-COMMAND' has it too.");
  // The words are checked by run: an unknown one gets "did you mean" from the
  // command table, which is not a flag combination validate could report.
  define_command(cmd, g, words, {.run = [](const std::vector<std::string>& words, Globals&) {
                   std::vector<std::string> path;
                   if (!resolve_command(words, path)) return int(kExitUsage);
                   if (path.size() < words.size()) {
                     std::fprintf(stderr,
                                  "paictl: error: \"%s\" has no subcommands; run 'paictl help "
                                  "%s' for its arguments\n",
                                  command_line(path).c_str(), command_line(path).substr(7).c_str());
                     return int(kExitUsage);
                   }
                   std::string text = help_text(path);
                   std::fwrite(text.data(), 1, text.size(), stdout);
                   return int(kExitOk);
                 }});
}

void build_internal_commands(Flags& cmd, Globals& g) {
  define_command(cmd, g, std::make_shared<int>(0), {.run = [](const int&, Globals&) {
                   for (const auto& c : command_table())
                     if (!c.hidden && (c.build || !is_group(c.path)))
                       std::printf("%s\n", command_line(c.path).c_str());
                   return int(kExitOk);
                 }});
}

}  // namespace paictl
