#pragma once
// The command table and what every command shares.
//
// Every command and subcommand of paictl is declared once, in the table in
// commands.cc: its path, its help group, its one-line summary, its examples and
// the function that adds its options. --help, `paictl help`, the README check,
// shell completion and the man pages are all made from that table.

#include <string>
#include <vector>

#include "flags.h"

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
using BuildFn = void (*)(Flags& cmd, Globals& g);

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
void build_plan(Flags&, Globals&);
void build_init(Flags&, Globals&);
void build_check_config(Flags&, Globals&);
void build_check_hosts(Flags&, Globals&);
void build_check_job(Flags&, Globals&);
void build_facts_collect(Flags&, Globals&);
void build_simulate(Flags&, Globals&);
void build_simulate_run(Flags&, Globals&);
void build_simulate_generate(Flags&, Globals&);
void build_simulate_sweep(Flags&, Globals&);
void build_cluster_add(Flags&, Globals&);
void build_cluster_list(Flags&, Globals&);
void build_cluster_use(Flags&, Globals&);
void build_cluster_remove(Flags&, Globals&);
void build_cluster_status(Flags&, Globals&);
void build_cluster_prefer(Flags&, Globals&);
void build_job_validate(Flags&, Globals&);
void build_job_render(Flags&, Globals&);
void build_job_submit(Flags&, Globals&);
void build_job_list(Flags&, Globals&);
void build_job_status(Flags&, Globals&);
void build_job_events(Flags&, Globals&);
void build_job_stop(Flags&, Globals&);
void build_job_logs(Flags&, Globals&);
void build_job_wait(Flags&, Globals&);
void build_job_tag_add(Flags&, Globals&);
void build_job_tag_remove(Flags&, Globals&);
void build_job_tag_list(Flags&, Globals&);
void build_job_star(Flags&, Globals&);
void build_job_unstar(Flags&, Globals&);
void build_job_clone(Flags&, Globals&);
void build_job_resubmit(Flags&, Globals&);
void build_job_sweep(Flags&, Globals&);
void build_install(Flags&, Globals&);
void build_reset(Flags&, Globals&);
void build_hived_status(Flags&, Globals&);
void build_hived_groups(Flags&, Globals&);
void build_hived_why(Flags&, Globals&);
void build_hived_diff(Flags&, Globals&);
void build_hived_snapshot(Flags&, Globals&);
void build_help(Flags&, Globals&);
void build_version(Flags&, Globals&);
void build_explain(Flags&, Globals&);
void build_completion(Flags&, Globals&);
void build_internal_complete(Flags&, Globals&);
void build_internal_man(Flags&, Globals&);
void build_internal_commands(Flags&, Globals&);

}  // namespace paictl
