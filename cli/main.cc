// paictl: the command-line front end of libpai. Argument parsing, printing and
// exit codes only; the work happens in the library. Built as libpaictl-cli and
// run by the `paictl` launcher.
//
// The commands come from the one table in commands.cc; this file turns it into
// a CLI11 tree, answers mistyped commands and flags with "did you mean", and maps
// the command's result to the process exit code (exit_codes.h).

#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "app.h"
#include "command_tree.h"
#include "exit_codes.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/strings.h"
#include "util/version.h"

namespace paictl {

CommandTree& command_tree() {
  static CommandTree t;
  return t;
}

std::vector<std::string> subcommand_names(const std::vector<std::string>& path) {
  std::vector<std::string> out;
  for (const auto& c : command_table())
    if (!c.hidden && c.path.size() == path.size() + 1 &&
        std::equal(path.begin(), path.end(), c.path.begin()))
      out.push_back(c.path.back());
  return out;
}

bool is_group(const std::vector<std::string>& path) {
  for (const auto& c : command_table())
    if (c.path.size() == path.size() + 1 && std::equal(path.begin(), path.end(), c.path.begin()))
      return true;
  return false;
}

std::vector<std::string> app_path(const CLI::App* app) {
  std::vector<std::string> p;
  for (; app && app->get_parent(); app = app->get_parent()) p.insert(p.begin(), app->get_name());
  return p;
}

std::vector<std::string> option_names(const CLI::Option* opt) {
  std::vector<std::string> names;
  for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
  return names;
}

std::string help_text(const std::vector<std::string>& path) {
  const CommandTree& t = command_tree();
  auto it = t.apps.find(path);
  // The root's own text: root->help() would follow the command being run (help).
  if (path.empty() || it == t.apps.end())
    return t.root->get_formatter()->make_help(t.root, "paictl", CLI::AppFormatMode::Normal);
  std::vector<std::string> parent(path.begin(), path.end() - 1);
  return it->second->help(command_line(parent));
}

namespace {

// The closest choice (lib/util's edit distance), else the one choice that starts
// with `word` ("paictl cluster sta", "--password" for --password-stdin).
std::string suggest(const std::string& word, const std::vector<std::string>& choices) {
  std::string guess = pai::util::did_you_mean(word, choices);
  if (!guess.empty()) return guess;
  std::vector<std::string> prefixed;
  for (const auto& n : choices)
    if (n.rfind(word, 0) == 0 && n != word) prefixed.push_back(n);
  return prefixed.size() == 1 ? prefixed[0] : std::string();
}

void print_unknown_command(const std::string& word, const std::vector<std::string>& path) {
  const std::vector<std::string> names = subcommand_names(path);
  std::string guess = suggest(word, names);
  std::vector<std::string> full = path;
  full.push_back(guess);
  print_error("unknown command \"" + word + "\" for \"" + command_line(path) + "\"" +
              (guess.empty() ? "" : "; did you mean \"" + command_line(full) + "\"?"));
  std::fprintf(stderr, "Commands of %s: %s\n", command_line(path).c_str(),
               pai::util::join(names, ", ").c_str());
  std::fprintf(stderr, "Run '%s --help' for usage.\n", command_line(path).c_str());
}

}  // namespace

bool resolve_command(const std::vector<std::string>& words, std::vector<std::string>& path) {
  path.clear();
  for (const auto& w : words) {
    if (!is_group(path)) break;
    const std::vector<std::string> names = subcommand_names(path);
    if (std::find(names.begin(), names.end(), w) == names.end()) {
      print_unknown_command(w, path);
      return false;
    }
    path.push_back(w);
  }
  return true;
}

namespace {

bool is_help_flag(const std::string& a) {
  return a == "-h" || a == "--help";
}

// Walks the command words of argv before CLI11 sees them: an unknown command or
// subcommand gets "did you mean", a group without its subcommand the list of
// them. The exit code when argv is refused; nothing when CLI11 may parse it.
Step<> check_command_words(int argc, char** argv) {
  std::vector<std::string> path;
  bool help = false;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") break;
    if (!a.empty() && a[0] == '-') {
      if (is_help_flag(a)) help = true;
      if (!path.empty()) break;
      if (a == "-o" || a == "--output") ++i;  // the global -o's value
      continue;
    }
    if (!is_group(path)) break;  // a leaf: the rest are its arguments
    const std::vector<std::string> names = subcommand_names(path);
    bool hidden = false;
    for (const auto& c : command_table()) hidden |= c.hidden && path.empty() && c.path[0] == a;
    if (std::find(names.begin(), names.end(), a) == names.end() && !hidden) {
      print_unknown_command(a, path);
      return ExitNow{kExitUsage};
    }
    path.push_back(a);
  }
  for (; i < argc && !help; ++i) help = is_help_flag(argv[i]);
  if (help || !is_group(path)) return {};
  // A group that runs by itself (simulate) needs no subcommand.
  auto it = command_tree().apps.find(path);
  if (!path.empty() && it != command_tree().apps.end()) {
    const Command* c = command_tree().entries.at(it->second);
    if (c->build) return {};
  }
  print_error("\"" + command_line(path) +
              "\" needs a command: " + pai::util::join(subcommand_names(path), ", "));
  std::fprintf(stderr, "Run '%s --help' for usage.\n", command_line(path).c_str());
  return ExitNow{kExitUsage};
}

// The deepest command CLI11 got to.
const CLI::App* deepest_parsed(const CLI::App* app) {
  for (;;) {
    auto subs = app->get_subcommands();
    if (subs.empty()) return app;
    app = subs.front();
  }
}

bool names_a_secret(const std::string& flag) {
  std::string f = pai::util::to_lower(flag);
  for (const char* w : {"password", "passwd", "token", "secret", "key"})
    if (f.find(w) != std::string::npos) return true;
  return false;
}

// Unknown flags: "did you mean" from the command's own flags and the global
// ones. Only names are printed: the value after an unknown --password-like flag
// (or after its '=') may be a secret.
void print_extras(const CLI::App* app, const std::vector<std::string>& extras) {
  const std::string where = command_line(app_path(app));
  std::vector<std::string> flags;
  for (const CLI::App* a = app; a; a = a->get_parent())
    for (const CLI::Option* opt : a->get_options())
      for (const auto& n : option_names(opt)) flags.push_back(n);
  bool after_secret = false;
  for (const auto& x : extras) {
    if (x.size() > 1 && x[0] == '-') {
      std::string name = x.substr(0, x.find('='));
      std::string guess = suggest(name, flags);
      print_error("unknown flag \"" + name + "\" for \"" + where + "\"" +
                  (guess.empty() ? "" : "; did you mean \"" + guess + "\"?"));
      after_secret = names_a_secret(name) && x.find('=') == std::string::npos;
    } else if (after_secret) {
      after_secret = false;  // its value: never echoed
    } else {
      print_error("unexpected argument \"" + x + "\" for \"" + where + "\"");
    }
  }
  std::fprintf(stderr, "Run '%s --help' for usage.\n", where.c_str());
}

// The top-level help lists every command by group, with its purpose.
class Formatter : public CLI::Formatter {
 public:
  std::string make_subcommands(const CLI::App* app, CLI::AppFormatMode mode) const override {
    if (app->get_parent() != nullptr) return CLI::Formatter::make_subcommands(app, mode);
    size_t width = 0;
    for (const auto& c : command_table())
      if (!c.hidden) width = std::max(width, command_line(c.path).size() - 7);
    std::string out;
    std::string group;
    for (const auto& c : command_table()) {
      if (c.hidden) continue;
      if (c.path.size() == 1 && c.group && group != c.group) {
        group = c.group;
        out += "\n" + group + ":\n";
      }
      // A group's line only when it runs by itself (simulate); else its commands say it.
      if (is_group(c.path) && !c.build) continue;
      std::string name = command_line(c.path).substr(7);
      out += "  " + name + std::string(width + 2 - name.size(), ' ') + c.summary + "\n";
    }
    out += "\nRun 'paictl help COMMAND' or 'paictl COMMAND --help' for its options and examples.\n";
    return out;
  }
};

void add_examples(CLI::App& app, const Command& c) {
  if (c.examples.empty()) return;
  std::string f = app.get_footer();
  while (!f.empty() && f.back() == '\n') f.pop_back();
  if (!f.empty()) f += "\n\n";
  f += "EXAMPLES:\n";
  for (const char* e : c.examples) f += std::string("  ") + e + "\n";
  app.footer(f);
}

void build_tree(CLI::App& root, Globals& g) {
  CommandTree& t = command_tree();
  t = CommandTree{};
  t.root = &root;
  t.apps[{}] = &root;
  for (const Command& c : command_table()) {
    std::vector<std::string> parent(c.path.begin(), c.path.end() - 1);
    CLI::App* app = t.apps.at(parent)->add_subcommand(c.path.back(), c.summary);
    t.apps[c.path] = app;
    t.entries[app] = &c;
    if (c.hidden) app->group("");
    if (is_group(c.path)) {
      app->require_subcommand(1);
      app->fallthrough();
    }
    if (c.build) c.build(Flags::of(*app), g);
    add_examples(*app, c);
  }
}

bool has_detailed_exitcode(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) return false;
    if (std::strcmp(argv[i], "--detailed-exitcode") == 0) return true;
  }
  return false;
}

int run_main(int argc, char** argv, Globals& g) {
  CLI::App app{
      "paictl: plan, check, install, simulate and use shared GPU clusters (Kubernetes with "
      "the HiveD scheduler and the OpenPAI services)",
      "paictl"};
  app.formatter(std::make_shared<Formatter>());
  app.set_version_flag("--version", std::string("paictl ") + pai::kVersion);
  app.require_subcommand(1);
  // Inherited by every command: a flag a command does not know goes to its parent,
  // so the global flags work after the command too (`paictl plan ... -q`).
  app.fallthrough();
  app.add_flag("-v,--verbose", g.verbose, "Print more detail (info-level findings, progress)");
  app.add_flag("-q,--quiet", g.quiet, "Print only what a script needs");
  app.add_flag("--no-color", g.no_color, "Never colour the output (NO_COLOR is honoured too)");
  add_global_output_option(Flags::of(app), g);
  build_tree(app, g);

  // Set after the subcommands exist, so that they do not inherit it.
  app.footer(
      "EXAMPLES:\n"
      "  paictl plan --facts examples/facts --vc research=60% --vc prod=40% --out cluster/\n"
      "  paictl check config cluster/ --sarif report.sarif --fail-on-warn\n"
      "  paictl check hosts cluster/ --parallel 128 -o json\n"
      "  paictl simulate --config cluster/ --trace philly.json --policy hived,quota --report out/\n"
      "  paictl job submit job.yaml --cluster auto --dry-run\n");

  // The completion scripts' words go to the completer as they are: CLI11 would
  // take "--cluster" in them for options of __complete.
  if (argc >= 2 && std::strcmp(argv[1], "__complete") == 0)
    return complete_words(std::vector<std::string>(argv + 2, argv + argc));

  if (auto words = check_command_words(argc, argv); !words.ok()) return words.error().code;

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  } catch (const CLI::CallForVersion& e) {
    app.exit(e);
    return kExitOk;
  } catch (const CLI::ExtrasError& e) {
    const CLI::App* where = deepest_parsed(&app);
    std::vector<std::string> extras = where->remaining();
    if (extras.empty()) extras = app.remaining(true);
    print_extras(where, extras);
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    const CLI::App* where = deepest_parsed(&app);
    print_error(e.what());
    std::fprintf(stderr, "Run '%s --help' for usage.\n", command_line(app_path(where)).c_str());
    return kExitUsage;
  }
  return g.exit_code;
}

}  // namespace

}  // namespace paictl

// Called by the paictl launcher (cli/launcher/launcher.cc), which answers
// --version itself and loads this library only when a command runs.
extern "C" __attribute__((visibility("default"))) int paictl_main(int argc, char** argv) {
  // A short-lived process: memory it frees is kept for its next allocations
  // instead of going back to the OS and being faulted in again. The large
  // answers, models and scheduler states of hived and --cluster auto are built,
  // freed and built again (hived diff --live: about 15% less CPU).
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_TOP_PAD, 128 << 20);
  paictl::Globals g;
  int rc = paictl::run_main(argc, argv, g);
  // The launcher ends the process without running destructors: flush here.
  std::cout.flush();
  std::fflush(stdout);
  return paictl::exit_code_for(rc,
                               g.detailed_exitcode || paictl::has_detailed_exitcode(argc, argv));
}
