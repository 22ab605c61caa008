#pragma once
// The CLI11 tree that paictl_main builds from the command table, and what the
// commands that read the tree (help, completion, man pages) share with it.

#include <map>
#include <string>
#include <vector>

#include "app.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace paictl {

struct CommandTree {
  CLI::App* root = nullptr;
  std::map<std::vector<std::string>, CLI::App*> apps;  // path -> app
  std::map<const CLI::App*, const Command*> entries;   // app -> table entry
};

// The tree of the running paictl (built once by paictl_main).
CommandTree& command_tree();

// The visible subcommand names of `path` ({} for the top level), in table order.
std::vector<std::string> subcommand_names(const std::vector<std::string>& path);

// True when `path` has subcommands.
bool is_group(const std::vector<std::string>& path);

// Resolves `words` as far as they name commands. On an unknown word prints
//   paictl: error: unknown command "confg" for "paictl check"; did you mean "paictl check config"?
// with the valid choices and returns false.
bool resolve_command(const std::vector<std::string>& words, std::vector<std::string>& path);

// The path of `app` below the root ({} for the root).
std::vector<std::string> app_path(const CLI::App* app);

// "--vc", "-o, --output" ... every name an option is spelt with.
std::vector<std::string> option_names(const CLI::Option* opt);

// The machine profiles `paictl plan --profile` knows (for completion).
std::vector<std::string> profile_names();

// Where the machine profiles are: $PAICTL_LAYOUTS, else the installed ones (or the
// source tree's, from a build tree), else ./layouts. `paictl plan --layouts` overrides it.
std::string layouts_dir();

// `paictl __complete WORD...`: the completions of the last word, one a line, for
// the scripts of `paictl completion`. A last line ":files" asks for file names too.
int complete_words(const std::vector<std::string>& words);

// The help text of the command at `path`, as `paictl PATH --help` prints it.
std::string help_text(const std::vector<std::string>& path);

}  // namespace paictl
