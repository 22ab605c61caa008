// paictl check config PATH...

#include <cstdio>
#include <string>
#include <vector>

#include "app.h"
#include "command.h"
#include "config/cluster_files.h"
#include "config/rules.h"
#include "diag/report.h"
#include "exit_codes.h"
#include "flags.h"
#include "output/diag_output.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/strings.h"
#include "util/version.h"

namespace paictl {

namespace {

struct CheckConfigOptions {
  std::vector<std::string> paths;
  std::string output = "text";
  std::string junit;
  std::string sarif;
  bool fail_on_warn = false;
  bool list_rules = false;
};

// The outcome lives until the process exits: freeing a 10,000-machine model
// node by node costs more than checking it, and the OS reclaims it at once.
// (A static pointer keeps it reachable, so leak checkers stay quiet.)
pai::config::CheckOutcome* g_outcome = nullptr;

int list_rules(const CheckConfigOptions& o) {
  const auto& rules = pai::config::rules();
  if (is_structured(o.output)) {
    Json arr = Json::array();
    for (const auto& r : rules)
      arr.push_back({{"code", r.code},
                     {"name", r.name},
                     {"severity", pai::diag::to_string(r.severity)},
                     {"summary", r.summary}});
    print_document(list_document("ruleList", arr), o.output);
    return kExitOk;
  }
  Table t({{""}, {""}, {""}, {""}});
  for (const auto& r : rules)
    t.add({std::string(r.code), std::string(pai::diag::to_string(r.severity)), std::string(r.name),
           std::string(r.summary)});
  print_table(t);
  return kExitOk;
}

// A source line shown under a finding, with the value of a secret-looking key
// (password, client-secret, *_token, *_account_key ...) replaced by "***": a
// finding on that line must not print the secret.
std::string mask_secret(std::string line) {
  size_t i = line.find_first_not_of(" \t-");
  if (i == std::string::npos) return line;
  size_t colon = line.find(':', i);
  if (colon == std::string::npos) return line;
  std::string key = line.substr(i, colon - i);
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  bool names_file = key.size() > 5 && (key.ends_with("-file") || key.ends_with("_file") ||
                                       key.ends_with("_path") || key.ends_with("-path"));
  bool secret = key.find("password") != std::string::npos ||
                key.find("secret") != std::string::npos || key.find("token") != std::string::npos ||
                key.ends_with("_key") || key.ends_with("htpasswd");
  if (!secret || names_file) return line;
  size_t v = line.find_first_not_of(" \t", colon + 1);
  if (v == std::string::npos) return line;
  return line.substr(0, v) + "***";
}

int run(const CheckConfigOptions& o, const Globals& g) {
  if (o.list_rules) return list_rules(o);
  g_outcome = new pai::config::CheckOutcome(pai::config::check_paths(o.paths));
  // A directory that install could not use says so, with what to add.
  if (auto ready = pai::config::install_readiness(*g_outcome, o.paths); !ready.empty()) {
    g_outcome->diagnostics.append(ready);
    g_outcome->diagnostics.sort(g_outcome->files);
  }
  const pai::config::CheckOutcome& out = *g_outcome;
  DiagReport r;
  r.output = o.output;
  r.junit = o.junit;
  r.sarif = o.sarif;
  r.fail_on_warn = o.fail_on_warn;
  r.suite = "paictl check config";
  r.rules = &pai::config::rules();
  r.source_line = [&out](const std::string& file, uint32_t line) {
    auto it = out.sources.find(file);
    return it == out.sources.end() ? std::string() : mask_secret(nth_line(it->second, line));
  };
  return report_diagnostics(out.diagnostics, out.files, out.input_error, r, g);
}

}  // namespace

namespace {
void validate_check_config(const CheckConfigOptions& o, Usage& u) {
  u.error_if(o.paths.empty() && !o.list_rules,
             "check config needs at least one PATH (a cluster directory or file)");
}

void add_check_config(Flags& parent, Globals& g) {
  auto o = std::make_shared<CheckConfigOptions>();
  Flags* cmd = &parent;
  cmd->add_option("PATH", o->paths, "A cluster file, or a directory holding the OpenPAI file names")
      ->expected(0, -1);
  cmd->add_flag("--list-rules", o->list_rules,
                "Print every diagnostic code with its severity and purpose, then exit");
  add_output_option(*cmd, o->output, g);
  cmd->add_option("--junit", o->junit, "Also write a JUnit XML report to FILE ('-' for stdout)")
      ->type_name("FILE");
  cmd->add_option("--sarif", o->sarif, "Also write a SARIF 2.1.0 report to FILE ('-' for stdout)")
      ->type_name("FILE");
  cmd->add_flag("--fail-on-warn", o->fail_on_warn,
                "Exit 1 when there are warnings, not only errors");
  cmd->footer(
      "EXIT STATUS:\n"
      "  0 no errors, 1 errors found (or warnings with --fail-on-warn), 2 bad usage or unreadable "
      "path\n\n");
  define_command(*cmd, g, o,
                 {.validate = validate_check_config,
                  .run = [](const auto& o, Globals& g) { return run(o, g); }});
}

}  // namespace

void build_check_config(Flags& cmd, Globals& g) {
  add_check_config(cmd, g);
}

}  // namespace paictl
