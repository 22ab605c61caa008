// paictl init CLUSTER_DIR: a new cluster directory with every file install reads,
// planned from the hosts' facts (lib/planner/init.h).

#include "init/cmd_init.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "app.h"
#include "check/hosts_common.h"
#include "check/runner.h"
#include "command.h"
#include "command_tree.h"
#include "exit_codes.h"
#include "flags.h"
#include "install/install_view.h"
#include "output/diag_output.h"
#include "output/output.h"
#include "output/printer.h"
#include "planner/init.h"
#include "util/fs.h"
#include "util/strings.h"

namespace paictl {

namespace {

// A path as config.yaml holds it: absolute, so that it means the same file from
// wherever a command runs ("none" for ssh_config stays).
std::string init_absolute(const std::string& path) {
  if (path.empty() || path == "none") return path;
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

// The facts of the hosts of --hosts/--hosts-file, collected over SSH as facts
// collect does and named by the hosts' own names; exit 3 when a host fails.
Step<std::vector<pai::facts::HostFacts>> init_collect(const InitCliOptions& o, const Globals& g) {
  HostsOptions h;
  h.hosts = o.hosts;
  h.hosts_file = o.hosts_file;
  h.user = o.ssh_user;
  if (!o.ssh_key.empty()) h.identities.push_back(o.ssh_key);
  h.ssh_config = o.ssh_config;
  h.known_hosts = o.known_hosts;
  h.host_key_policy = o.host_key_policy;
  h.connect_timeout_s = o.connect_timeout_s;
  h.command_timeout_s = o.command_timeout_s;
  auto prepared = prepare_hosts(h, g);
  if (!prepared.ok()) return ExitNow{prepared.error().code};
  auto outcomes = collect_with_progress(*prepared, g, "collecting facts", nullptr, nullptr);
  if (auto named = name_collected_facts(outcomes, "", g); !named.ok())
    return ExitNow{named.error().code};
  std::vector<pai::facts::HostFacts> out;
  bool failed = false;
  for (auto& x : outcomes) {
    if (!x.reached || !x.exec.ok() || !x.facts.complete) {
      std::string why = x.exec.error.empty() ? "the fact script stopped early" : x.exec.error;
      print_error(x.plan.name + ": " + why);
      if (!x.exec.hint.empty()) std::fprintf(stderr, "  hint: %s\n", x.exec.hint.c_str());
      failed = true;
      continue;
    }
    out.push_back(std::move(x.facts));
  }
  if (failed) {
    print_error("nothing written: init plans every host it is given");
    return ExitNow{kExitRemote};
  }
  return out;
}

void init_print_dry_run(const pai::planner::InitPlan& p) {
  for (const auto& f : p.files) {
    if (f.name.rfind("facts/", 0) == 0) continue;
    std::printf("--- %s/%s (mode %04o%s)\n", p.cluster_dir.c_str(), f.name.c_str(), f.mode,
                f.exists ? ", replaces the file there" : "");
    std::fwrite(f.shown.data(), 1, f.shown.size(), stdout);
    std::printf("\n");
  }
  size_t facts = 0;
  for (const auto& f : p.files) facts += f.name.rfind("facts/", 0) == 0;
  if (facts)
    std::printf("--- %s/facts/: the collected facts of %zu host%s\n", p.cluster_dir.c_str(), facts,
                facts == 1 ? "" : "s");
}

int run_init(const InitCliOptions& o, const Globals& g) {
  pai::planner::InitRequest r;
  r.cluster_dir = o.cluster_dir;
  r.force = o.force;
  r.inputs.facts_dirs = o.facts;
  r.inputs.layouts_dir = o.layouts.empty() ? layouts_dir() : o.layouts;
  for (size_t i = 0; i < o.profiles.size() && i < o.counts.size(); ++i)
    r.inputs.profiles.push_back({o.profiles[i], o.counts[i], 0});
  r.inputs.options.master = o.master;
  r.inputs.options.vcs = o.vcs;
  r.inputs.options.reserve_cpu = o.reserve_cpu;
  if (!o.reserve_memory.empty())
    r.inputs.options.reserve_memory =
        static_cast<int64_t>(*pai::util::parse_quantity(o.reserve_memory));  // validate_init
  r.settings.ssh_user = o.ssh_user;
  if (!o.ssh_user.empty()) r.settings.user = o.ssh_user;
  r.settings.ssh_key_file_path = init_absolute(o.ssh_key);
  r.settings.ssh_config = init_absolute(o.ssh_config);
  r.settings.known_hosts = init_absolute(o.known_hosts);
  r.settings.ignore_check_errors = split_names(o.ignore);
  r.settings.hived_url = o.hived_url;
  r.settings.docker_image_tag = o.docker_image_tag;
  if (!o.hosts.empty() || !o.hosts_file.empty()) {
    auto collected = init_collect(o, g);
    if (!collected.ok()) return collected.error().code;
    r.inputs.collected = std::move(*collected);
  }

  auto plan = pai::planner::plan_init(r);
  if (!plan.ok()) {
    print_error(plan.error().message);
    if (!plan.error().hint.empty()) std::fprintf(stderr, "  hint: %s\n", plan.error().hint.c_str());
    return kExitUsage;
  }
  print_findings_stderr(plan->run.diagnostics, g);
  if (!plan->run.ok()) {
    print_error("nothing written: fix the errors above");
    return kExitUsage;
  }
  if (plan->checks.has_errors()) {
    print_findings_stderr(plan->checks, g);
    print_error(
        "internal error: the planned files do not pass paictl check config; please report it");
    return kExitFindings;
  }
  if (o.dry_run) {
    init_print_dry_run(*plan);
    if (!g.quiet) std::fprintf(stderr, "dry run: nothing written\n");
    return kExitOk;
  }
  auto written = pai::planner::apply_init(*plan);
  if (!written.ok()) {
    print_error(written.error().message);
    return kExitUsage;
  }
  if (!g.quiet) {
    size_t facts = 0;
    for (const auto& f : plan->files) facts += f.name.rfind("facts/", 0) == 0;
    std::printf("wrote %s/layout.yaml, config.yaml, services-configuration.yaml (mode 0600)%s\n",
                plan->cluster_dir.c_str(),
                facts ? (" and facts/ (" + std::to_string(facts) + " hosts)").c_str() : "");
    std::printf("next: paictl check config %s && paictl install %s --dry-run\n",
                plan->cluster_dir.c_str(), plan->cluster_dir.c_str());
  }
  return kExitOk;
}

void add_init(Flags& cmd, Globals& g) {
  auto o = std::make_shared<InitCliOptions>();
  cmd.add_option("CLUSTER_DIR", o->cluster_dir, "The cluster directory to write (a new one)")
      ->type_name("DIR");
  cmd.add_option("--facts", o->facts,
                 "A facts directory (paictl facts collect --out, or one subdirectory per host); "
                 "repeatable")
      ->type_name("DIR")
      ->allow_extra_args(false);
  cmd.add_option("--hosts", o->hosts,
                 "Collect the facts of these hosts over SSH first: [user@]host[:port], "
                 "comma-separated")
      ->type_name("LIST");
  cmd.add_option("--hosts-file", o->hosts_file,
                 "Collect the facts of the hosts in FILE, one [user@]host[:port] a line")
      ->type_name("FILE");
  cmd.add_option("--master", o->master, "The master: a host's name or address")->type_name("HOST");
  cmd.add_option("--vc", o->vcs,
                 "A virtual cluster: NAME=SHARE[,SHARE...] as for paictl plan; repeatable")
      ->type_name("NAME=SHARE")
      ->allow_extra_args(false);
  cmd.add_option("--profile", o->profiles,
                 "A machine profile for hardware not bought yet, with --count; repeatable")
      ->type_name("NAME")
      ->allow_extra_args(false);
  cmd.add_option("--count", o->counts, "How many machines of the --profile of the same rank")
      ->type_name("N")
      ->allow_extra_args(false);
  cmd.add_option("--ssh-user", o->ssh_user, "Log in as USER (config.yaml: user and ssh_user)")
      ->type_name("USER");
  cmd.add_option("--ssh-key", o->ssh_key, "The private key to log in with (ssh_key_file_path)")
      ->type_name("FILE");
  cmd.add_option("--ssh-config", o->ssh_config,
                 "The SSH client config the cluster's hosts are reached through (ssh_config)")
      ->type_name("FILE");
  cmd.add_option("--known-hosts", o->known_hosts,
                 "The known_hosts file the hosts' keys are checked against (known_hosts)")
      ->type_name("FILE");
  cmd.add_option("--host-key-policy", o->host_key_policy,
                 "While collecting: strict, accept-new or off, as for facts collect")
      ->check(IsMember({"strict", "accept-new", "off"}))
      ->capture_default_str();
  cmd.add_option("--ignore-check-errors", o->ignore,
                 "Pre-install checks install goes past (ignore_check_errors): NAME,...")
      ->type_name("NAMES");
  cmd.add_option("--hived-url", o->hived_url, "HiveD's inspect API once installed (hived_url)")
      ->type_name("URL");
  cmd.add_option("--docker-image-tag", o->docker_image_tag, "OpenPAI's release (docker_image_tag)")
      ->capture_default_str();
  cmd.add_option("--layouts", o->layouts, "Where the machine profiles are")->type_name("DIR");
  cmd.add_option("--reserve-cpu", o->reserve_cpu,
                 "CPUs per host kept for system daemons (default 1 + 2% of the CPUs)")
      ->type_name("N")
      ->check(Range(0, 1 << 20));
  cmd.add_option("--reserve-memory", o->reserve_memory,
                 "Memory per host kept for system daemons (default 2Gi + 3% of MemTotal)")
      ->type_name("QUANTITY");
  cmd.add_option("--connect-timeout", o->connect_timeout_s, "Seconds to connect to a host")
      ->check(Range(0.1, 3600.0))
      ->capture_default_str();
  cmd.add_option("--command-timeout", o->command_timeout_s,
                 "Seconds the fact script may run on a host")
      ->check(Range(0.1, 86400.0))
      ->capture_default_str();
  cmd.add_flag("--dry-run", o->dry_run,
               "Print the files init would write (the admin password masked), and write none");
  cmd.add_flag("--force", o->force,
               "Write into an existing directory, replacing its cluster files (the admin password "
               "of its services-configuration.yaml is kept)");
  cmd.footer(
      "EXIT STATUS:\n"
      "  0 written (or shown), 2 bad usage, an existing directory or a plan error (nothing "
      "written),\n"
      "  3 a host could not be reached or its facts not collected (nothing written)\n");
  define_command(cmd, g, o, {.validate = validate_init, .run = [](const auto& o, Globals& g) {
                               return run_init(o, g);
                             }});
}

}  // namespace

void validate_init(const InitCliOptions& o, Usage& u) {
  u.error_if(o.cluster_dir.empty(), "init needs the cluster directory to write",
             "paictl init CLUSTER_DIR --facts FACTS_DIR --master HOST");
  u.error_if(o.facts.empty() && o.hosts.empty() && o.hosts_file.empty() && o.profiles.empty(),
             "nothing to plan: give --facts DIR, --hosts LIST or --hosts-file FILE",
             "paictl facts collect --hosts-file hosts.txt --out facts/ collects the facts first");
  u.error_if(o.profiles.size() != o.counts.size(),
             "every --profile needs its --count N (" + std::to_string(o.profiles.size()) +
                 " --profile, " + std::to_string(o.counts.size()) + " --count)");
  for (int c : o.counts) u.error_if(c < 1, "--count must be at least 1");
  u.error_if(
      !o.hosts_file.empty() && o.hosts_file != "-" && !pai::util::is_regular_file(o.hosts_file),
      "--hosts-file " + o.hosts_file + " is not a file");
  for (const auto& [flag, path] :
       {std::pair<const char*, const std::string&>{"--ssh-key", o.ssh_key},
        {"--ssh-config", o.ssh_config},
        {"--known-hosts", o.known_hosts}})
    if (!path.empty() && !(std::string(flag) == "--ssh-config" && path == "none"))
      u.error_if(!pai::util::is_regular_file(path),
                 std::string(flag) + " " + path + " is not a file",
                 "config.yaml names it for every command on the cluster: give an existing file");
  for (const auto& n : pai::check::unknown_check_names(split_names(o.ignore)))
    u.error("--ignore-check-errors: no check is named \"" + n + "\"",
            "paictl check hosts --list-checks lists them");
  if (!o.reserve_memory.empty()) {
    auto q = pai::util::parse_quantity(o.reserve_memory);
    u.error_if(!q || *q < 0,
               "--reserve-memory " + o.reserve_memory + " is not a memory quantity (e.g. 8Gi)");
  }
  if (!o.hived_url.empty())
    u.error_if(o.hived_url.rfind("http://", 0) != 0 && o.hived_url.rfind("https://", 0) != 0,
               "--hived-url " + o.hived_url + " is not an http:// or https:// URL",
               "e.g. --hived-url http://10.0.0.1:30096");
  if (!o.cluster_dir.empty() && pai::util::path_exists(o.cluster_dir)) {
    std::error_code ec;
    bool dir = pai::util::is_directory(o.cluster_dir);
    u.error_if(!dir, o.cluster_dir + " exists and is not a directory",
               "init writes a cluster directory: give a new path");
    u.error_if(dir && !o.force && !std::filesystem::is_empty(o.cluster_dir, ec),
               o.cluster_dir + " exists and is not empty",
               "give a new directory, or --force to replace its cluster files; paictl plan "
               "--out " +
                   o.cluster_dir + " re-plans an existing cluster and keeps its config.yaml");
  }
}

void build_init(Flags& cmd, Globals& g) {
  add_init(cmd, g);
}

}  // namespace paictl
