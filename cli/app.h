#pragma once
// The command table and what every command shares.
//
// Every command and subcommand of paictl is declared once, in the table in
// commands.cc: its path, its help group, its one-line summary, its examples and
// the function that adds its options. --help, `paictl help`, the README check,
// shell completion and the man pages are all made from that table.

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace paictl {

struct Globals {
  bool verbose = false;
  bool quiet = false;
  bool no_color = false;
  // -o given before the command (`paictl -o json cluster list`); "" when not given.
  std::string output;
  // --detailed-exitcode was given: every error exits 1, only "changes" exits 2.
  bool detailed_exitcode = false;
  // Set by the command that runs; main() maps it through exit_code_for().
  int exit_code = 0;
};

// Adds a command's options, footer notes and callback to `cmd` (created from the
// table with its name and summary). nullptr for a plain group of subcommands.
using BuildFn = void (*)(CLI::App& cmd, Globals& g);

struct Command {
  std::vector<std::string> path;  // {"check", "config"}, {"plan"}, {"job", "tag", "add"}
  const char* group;              // section of the top-level help (top-level entries only)
  const char* summary;            // one line, no final period
  std::vector<const char*> examples;
  BuildFn build = nullptr;
  bool hidden = false;  // internal commands (__complete, __man, __commands)
};

// Every command in help order: a group comes before its subcommands.
const std::vector<Command>& command_table();

// "paictl check config"
std::string command_line(const std::vector<std::string>& path);

// The build functions, one per command (cmd_*.cc).
void build_plan(CLI::App&, Globals&);
void build_check_config(CLI::App&, Globals&);
void build_check_hosts(CLI::App&, Globals&);
void build_check_job(CLI::App&, Globals&);
void build_facts_collect(CLI::App&, Globals&);
void build_simulate(CLI::App&, Globals&);
void build_simulate_run(CLI::App&, Globals&);
void build_simulate_generate(CLI::App&, Globals&);
void build_simulate_sweep(CLI::App&, Globals&);
void build_cluster_add(CLI::App&, Globals&);
void build_cluster_list(CLI::App&, Globals&);
void build_cluster_use(CLI::App&, Globals&);
void build_cluster_remove(CLI::App&, Globals&);
void build_cluster_status(CLI::App&, Globals&);
void build_cluster_prefer(CLI::App&, Globals&);
void build_job_validate(CLI::App&, Globals&);
void build_job_render(CLI::App&, Globals&);
void build_job_submit(CLI::App&, Globals&);
void build_job_list(CLI::App&, Globals&);
void build_job_status(CLI::App&, Globals&);
void build_job_events(CLI::App&, Globals&);
void build_job_stop(CLI::App&, Globals&);
void build_job_logs(CLI::App&, Globals&);
void build_job_wait(CLI::App&, Globals&);
void build_job_tag_add(CLI::App&, Globals&);
void build_job_tag_remove(CLI::App&, Globals&);
void build_job_tag_list(CLI::App&, Globals&);
void build_job_star(CLI::App&, Globals&);
void build_job_unstar(CLI::App&, Globals&);
void build_job_clone(CLI::App&, Globals&);
void build_job_resubmit(CLI::App&, Globals&);
void build_job_sweep(CLI::App&, Globals&);
void build_install(CLI::App&, Globals&);
void build_reset(CLI::App&, Globals&);
void build_hived_status(CLI::App&, Globals&);
void build_hived_groups(CLI::App&, Globals&);
void build_hived_why(CLI::App&, Globals&);
void build_hived_diff(CLI::App&, Globals&);
void build_hived_snapshot(CLI::App&, Globals&);
void build_help(CLI::App&, Globals&);
void build_version(CLI::App&, Globals&);
void build_completion(CLI::App&, Globals&);
void build_internal_complete(CLI::App&, Globals&);
void build_internal_man(CLI::App&, Globals&);
void build_internal_commands(CLI::App&, Globals&);

}  // namespace paictl
