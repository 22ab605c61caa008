// paictl install PATH | reset PATH | config push|pull|diff PATH: on-prem over
// SSH, phase by phase, with the cluster's Azure part first (lib/deploy/install.h,
// config_pull.h). The plan first (per host: what each phase would change), then,
// after a confirmation on a terminal or --yes, the changes with one line per
// event. docs/install.md describes the phases.

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app.h"
#include "check/hosts_common.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "command_tree.h"
#include "data_dirs.h"
#include "deploy/config_pull.h"
#include "deploy/config_push.h"
#include "deploy/install.h"
#include "deploy/install_json.h"
#include "deploy/reset.h"
#include "exit_codes.h"
#include "facts/fact_script.h"
#include "flags.h"
#include "http/client.h"
#include "install/azure_step.h"
#include "install/cmd_install.h"
#include "install/install_out.h"
#include "install/install_view.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/fs.h"

namespace paictl {

namespace {

pai::deploy::InstallRequest install_request(const InstallOptions& o) {
  pai::deploy::InstallRequest r;
  r.cluster_dir = o.hosts.paths[0];
  r.dry_run = o.hosts.dry_run;
  r.yes = o.yes;
  r.azure_only = o.azure.azure_only;
  r.limit = split_names(o.hosts.limit);
  r.ignore_checks = split_names(o.ignore);
  r.wait_s = o.wait_s;
  r.parallel = static_cast<size_t>(o.hosts.parallel);
  r.templates_dir = find_templates();
  r.layouts_dir = layouts_dir();
  r.azure = azure_access(o.azure);
  return r;
}

// install --register NAME: the installed cluster in the user's registry, with
// a token got by signing in to its gateway as the admin.
int register_installed(const std::string& name, const std::string& cluster_dir,
                       const pai::deploy::InstallOutcome& out, const Globals& g, bool json) {
  if (!out.access) {
    print_error("--register: " + cluster_dir +
                " has no OpenPAI services installed (services-configuration.yaml)");
    return kExitUsage;
  }
  if (out.admin_password.empty()) {
    print_error("--register: services-configuration.yaml has no admin password to sign in with");
    std::fprintf(stderr, "  hint: %s, the password on stdin\n",
                 pai::deploy::cluster_add_command(name, *out.access).c_str());
    return kExitUsage;
  }
  auto reg = jobcli::load_registry();
  if (!reg) return kExitUsage;
  pai::deploy::RegisterRequest r;
  r.name = name;
  r.access = *out.access;
  r.password = out.admin_password;
  // The same cluster registered again (a re-run): its token is renewed.
  const pai::cluster::Cluster* had = reg->find(name);
  r.force = had && had->uri == out.access->gateway;
  pai::http::Options hopt;
  hopt.timeout_s = 30;
  hopt.connect_timeout_s = 10;
  if (g.verbose) hopt.log = [](const std::string& l) { err_printf("paictl: %s\n", l.c_str()); };
  pai::http::CurlClient http(hopt);
  pai::diag::List diags;
  auto done = pai::deploy::register_cluster(r, http, *reg, diags);
  if (!done.ok()) {
    const pai::cluster::AddError& e = done.error();
    if (e.api) return jobcli::report_api_error(name, "--register: " + e.doing, *e.api);
    print_error("--register: " + e.message + (e.hint.empty() ? "" : "\n  hint: " + e.hint));
    return e.stage == pai::cluster::AddError::Stage::Registry ? kExitUsage : kExitRemote;
  }
  // (-o json|yaml: stdout holds the document only)
  if (!g.quiet && !json)
    out_printf("registered as cluster %s (user %s%s)%s\n", name.c_str(), done->cluster.user.c_str(),
               done->cluster.hived.empty() ? "" : (", HiveD " + done->cluster.hived).c_str(),
               done->made_current ? "; it is the current cluster" : "");
  return kExitOk;
}

// install --print-script: the script the pre-install checks run on every host
// (check hosts' fact script with this cluster's options); no host is contacted.
int print_install_script(const InstallOptions& o, const Globals& g) {
  HostsOptions all = o.hosts;
  all.limit.clear();
  auto ph = prepare_hosts(all, g);
  if (!ph.ok()) return ph.error().code;
  std::printf("%s", pai::facts::fact_script(ph->collect.script).c_str());
  return kExitOk;
}

int run_install(const InstallOptions& o, const Globals& g) {
  if (o.hosts.print_script) return print_install_script(o, g);
  UseCaseView view = use_case_view(o, g);
  auto deps = install_deps(o, view);
  auto cb = use_case_callbacks(view);
  auto plan = pai::deploy::plan_install(install_request(o), deps, cb);
  if (!plan.ok()) return report(plan.error(), view);
  auto out = pai::deploy::apply_install(*plan, cb);
  if (out.end == pai::deploy::InstallOutcome::End::Hosts)
    print_use_case_document(pai::deploy::install_json(*plan, out), "install", view);
  if (out.access && !view.json) {
    AccessShown a;
    a.access = *out.access;
    a.cluster_dir = o.hosts.paths[0];
    a.has_password = !out.admin_password.empty();
    a.password_made = out.password_made;
    // Shown once, on a terminal only: never in a log or a pipe.
    if (out.password_made && is_tty(1)) a.shown_password = &out.admin_password;
    a.register_hint = o.register_name.empty();
    print_cluster_access(a);
  }
  int rc = install_exit_code(*plan, out, view);
  if (o.register_name.empty() || !pai::deploy::install_went_on(out)) return rc;
  if (int r = register_installed(o.register_name, o.hosts.paths[0], out, g, view.json);
      r != kExitOk)
    return r;
  return rc;
}

int run_reset(const InstallOptions& o, const Globals& g) {
  UseCaseView view = use_case_view(o, g);
  auto deps = install_deps(o, view);
  auto cb = use_case_callbacks(view);
  pai::deploy::ResetRequest r;
  r.cluster_dir = o.hosts.paths[0];
  r.dry_run = o.hosts.dry_run;
  r.yes = o.yes;
  r.azure = o.azure.reset_azure;
  r.limit = split_names(o.hosts.limit);
  r.wait_s = o.wait_s;
  r.parallel = static_cast<size_t>(o.hosts.parallel);
  r.templates_dir = find_templates();
  r.azure_access = azure_access(o.azure);
  auto plan = pai::deploy::plan_reset(r, deps, cb);
  if (!plan.ok()) return report(plan.error(), view);
  auto out = pai::deploy::apply_reset(*plan, cb);
  if (out.error) return report(*out.error, view);
  print_use_case_document(pai::deploy::reset_json(*plan, out), plan->azure ? "reset" : "install",
                          view);
  using AzureEnd = pai::deploy::ResetOutcome::AzureEnd;
  switch (out.azure_end) {
    case AzureEnd::None:
      return stage_exit_code(out.hosts, false);
    case AzureEnd::DryRun:
      if (!view.json) print_azure_reset_plan(*plan->azure);
      return kExitOk;
    case AzureEnd::Declined:
      print_error("nothing was changed");
      return kExitOk;
    case AzureEnd::NoTerminal:
      print_error("not a terminal: pass --yes to reset without a confirmation");
      return kExitUsage;
    case AzureEnd::Deleted:
      break;
  }
  if (!view.json) print_azure_reset(*out.azure, plan->azure->session->layout_file);
  if (!out.azure->layout_warning.empty()) print_warning(out.azure->layout_warning);
  return out.azure->result.deleted.empty() ? kExitOk : kExitChanges;
}

int run_config_push(const InstallOptions& o, const Globals& g) {
  UseCaseView view = use_case_view(o, g);
  auto deps = install_deps(o, view);
  auto cb = use_case_callbacks(view);
  pai::deploy::ConfigPushRequest r;
  r.cluster_dir = o.hosts.paths[0];
  r.dry_run = o.hosts.dry_run;
  r.yes = o.yes;
  r.limit = split_names(o.hosts.limit);
  r.wait_s = o.wait_s;
  r.parallel = static_cast<size_t>(o.hosts.parallel);
  r.templates_dir = find_templates();
  auto plan = pai::deploy::plan_config_push(r, deps, cb);
  if (!plan.ok()) return report(plan.error(), view);
  auto stage = pai::deploy::apply_config_push(*plan, o.yes, cb);
  bool applied = stage.end == pai::deploy::HostStage::End::Applied;
  print_use_case_document(
      pai::deploy::host_stage_json(*stage.plan, applied ? &stage.result : nullptr), "install",
      view);
  return stage_exit_code(stage, false);
}

pai::deploy::ClusterFilesRequest files_request(const InstallOptions& o, const char* operation) {
  pai::deploy::ClusterFilesRequest r;
  r.cluster_dir = o.hosts.paths[0];
  r.operation = operation;
  r.limit = split_names(o.hosts.limit);
  r.wait_s = o.wait_s;
  r.templates_dir = find_templates();
  return r;
}

int run_config_pull(const PullOptions& po, const Globals& g) {
  UseCaseView view = use_case_view(po.install, g);
  auto deps = install_deps(po.install, view);
  auto plan = pai::deploy::plan_config_pull(files_request(po.install, "config pull"), po.out,
                                            po.force, deps);
  if (!plan.ok()) return report(plan.error(), view);
  if (!plan->conflict.empty()) {
    print_error(plan->dir + "/" + plan->conflict +
                " differs from the cluster's; paictl config diff shows how, --force replaces it");
    return kExitUsage;
  }
  auto out = pai::deploy::apply_config_pull(*plan);
  for (const auto& path : out.written) out_printf("%s\n", path.c_str());
  if (out.error) return report(*out.error, view);
  return kExitOk;
}

int run_config_diff(const InstallOptions& o, const Globals& g) {
  UseCaseView view = use_case_view(o, g);
  auto deps = install_deps(o, view);
  auto d = pai::deploy::config_diff(files_request(o, "config diff"), deps);
  if (!d.ok()) return report(d.error(), view);
  for (const auto& [name, diff] : d->diffs) out_printf("%s", diff.c_str());
  if (d->diffs.empty())
    out_printf("the cluster's files are the same as %s\n", d->cluster_dir.c_str());
  return d->diffs.empty() ? kExitOk : kExitFindings;
}

}  // namespace

// `azure`: the install/reset Azure flags (node add|remove have their own).
void add_install_flags(Flags& cmd, InstallOptions& o, Globals& g, bool reset, bool azure) {
  add_hosts_options(&cmd, o.hosts);
  // These commands reach the hosts of the cluster directory: --hosts and
  // --hosts-file are refused (validate_install) and not shown, and each takes
  // one value, so that `--hosts X DIR` leaves DIR the cluster directory.
  for (const char* name : {"--hosts", "--hosts-file"})
    cmd.get_option(name)->group("")->expected(1)->allow_extra_args(false);
  if (reset)
    cmd.get_option("--print-script")->group("");
  else
    cmd.get_option("--print-script")
        ->description(
            "install: print the script the pre-install checks run on every host, and exit (no "
            "host is contacted)");
  cmd.get_option("--dry-run")
      ->description(reset ? "Show what reset would remove, and change nothing on any host"
                          : "Show the plan (what each phase would change on each host), and "
                            "change nothing on any host");
  cmd.add_flag("-y,--yes", o.yes,
               reset ? "Reset without asking (required when stdin is not a terminal)"
                     : "Apply the plan without asking (required when stdin is not a terminal)");
  cmd.add_flag("--detailed-exitcode", o.detailed_exitcode,
               "Exit 0 when there is nothing to do, 2 when hosts changed (or would, with "
               "--dry-run), 1 on errors");
  cmd.add_option("--wait", o.wait_s, "Seconds to wait for the API server, rollouts and Ready nodes")
      ->check(Range(1, 86400))
      ->capture_default_str();
  if (!reset)
    cmd.add_option("--ignore-check-errors", o.ignore,
                   "Go on despite these pre-install checks' errors (they still run): NAME,... or "
                   "all")
        ->type_name("NAMES");
  add_output_option(cmd, o.output, g);
  if (azure)
    add_azure_options(cmd, o.azure, reset);
  else
    add_azure_endpoint_options(cmd, o.azure);
}

void validate_install(const InstallOptions& o, const std::string& verb, Usage& u) {
  const auto& paths = o.hosts.paths;
  std::string usage = "paictl " + verb + " CLUSTER_DIR";
  if (paths.empty())
    u.error(verb + " needs the cluster directory", usage +
                                                       " (layout.yaml, config.yaml, "
                                                       "services-configuration.yaml)");
  else if (paths.size() > 1)
    u.error(verb + " takes one cluster directory, not " + std::to_string(paths.size()) + " paths",
            verb == "install" || verb == "reset"
                ? "hosts of the cluster are chosen with --limit HOST,..."
                : usage);
  else
    u.error_if(!pai::util::is_directory(paths[0]), paths[0] + " is not a directory",
               usage + " (layout.yaml, config.yaml, services-configuration.yaml)");
  u.error_if(!o.hosts.hosts.empty() || !o.hosts.hosts_file.empty(),
             "--hosts and --hosts-file are for check hosts and facts collect",
             verb +
                 " reaches the hosts of the cluster directory's layout.yaml (--limit "
                 "HOST,... for some of them)");
  u.error_if(o.hosts.print_script && verb != "install",
             "--print-script is for install (the pre-install checks' script)",
             "paictl install CLUSTER_DIR --print-script");
  for (const auto& n : pai::check::unknown_check_names(split_names(o.ignore)))
    u.error("--ignore-check-errors: no check is named \"" + n + "\"",
            "paictl check hosts --list-checks lists them");
  validate_hosts_options(o.hosts, u);
  for (const auto& [flag, url] :
       {std::pair<const char*, const std::string&>{"--arm-endpoint", o.azure.arm_endpoint},
        {"--authority-host", o.azure.authority_host}})
    if (!url.empty())
      u.error_if(url.rfind("https://", 0) != 0 && url.rfind("http://", 0) != 0,
                 std::string(flag) + " " + url + " is not an http:// or https:// URL",
                 "e.g. " + std::string(flag) + " https://" +
                     (std::string(flag) == "--arm-endpoint" ? "management.azure.com"
                                                            : "login.microsoftonline.com"));
  if (!o.azure.ca_file.empty())
    u.error_if(!pai::util::is_regular_file(o.azure.ca_file),
               "--ca-file " + o.azure.ca_file + " is not a file",
               "a PEM bundle of CA certificates");
}

void validate_register(const InstallOptions& o, Usage& u) {
  if (o.register_name.empty()) return;
  u.error_if(!pai::cluster::valid_cluster_name(o.register_name),
             "--register: \"" + o.register_name + "\" is not a cluster name",
             "1-63 letters, digits, '.', '_' or '-', starting with a letter or digit");
  u.error_if(o.hosts.dry_run, "--register registers an installed cluster, not a dry run",
             "paictl install CLUSTER_DIR --yes --register NAME");
  u.error_if(!o.hosts.limit.empty(), "--register needs the whole cluster, not --limit",
             "register it after installing every host");
}

void validate_config_pull(const PullOptions& o, Usage& u) {
  validate_install(o.install, "config pull", u);
  if (!o.out.empty())
    u.error_if(pai::util::path_exists(o.out) && !pai::util::is_directory(o.out),
               "--out " + o.out + " exists and is not a directory",
               "config pull writes the cluster files into a directory");
}

void build_install(Flags& cmd, Globals& g) {
  auto o = std::make_shared<InstallOptions>();
  add_install_flags(cmd, *o, g, false, true);
  cmd.add_option("--register", o->register_name,
                 "Then register the cluster in your cluster registry as NAME (paictl cluster "
                 "add): signs in to its gateway as the admin; the token is stored, not the "
                 "password")
      ->type_name("NAME");
  cmd.footer(
      "EXIT STATUS:\n"
      "  0 done or nothing to do, 1 a phase or a pre-install check failed, 2 bad usage or "
      "invalid cluster files,\n"
      "  3 a host could not be reached; with --detailed-exitcode: 0 nothing to do, 2 changes, 1 "
      "any error\n");
  define_command(cmd, g, o,
                 {.validate =
                      [](const InstallOptions& o, Usage& u) {
                        validate_install(o, "install", u);
                        validate_register(o, u);
                      },
                  .run = run_install});
}

void build_reset(Flags& cmd, Globals& g) {
  auto o = std::make_shared<InstallOptions>();
  add_install_flags(cmd, *o, g, true, true);
  define_command(
      cmd, g, o,
      {.validate = [](const InstallOptions& o, Usage& u) { validate_install(o, "reset", u); },
       .run = run_reset});
}

void build_config_push(Flags& cmd, Globals& g) {
  auto o = std::make_shared<InstallOptions>();
  add_install_flags(cmd, *o, g, false, true);
  define_command(
      cmd, g, o,
      {.validate = [](const InstallOptions& o, Usage& u) { validate_install(o, "config push", u); },
       .run = run_config_push});
}

void build_config_pull(Flags& cmd, Globals& g) {
  auto o = std::make_shared<PullOptions>();
  add_install_flags(cmd, o->install, g, false, true);
  cmd.add_option("--out", o->out, "Write the files here (default: the cluster directory itself)")
      ->type_name("DIR");
  cmd.add_flag("--force", o->force, "Replace local files that differ from the cluster's");
  define_command(cmd, g, o, {.validate = validate_config_pull, .run = run_config_pull});
}

void build_config_diff(Flags& cmd, Globals& g) {
  auto o = std::make_shared<InstallOptions>();
  add_install_flags(cmd, *o, g, false, true);
  cmd.footer(
      "EXIT STATUS:\n  0 the same, 1 the files differ (the diff is printed), 2 bad usage, 3 "
      "the cluster could not be read\n");
  define_command(
      cmd, g, o,
      {.validate = [](const InstallOptions& o, Usage& u) { validate_install(o, "config diff", u); },
       .run = run_config_diff});
}

}  // namespace paictl
