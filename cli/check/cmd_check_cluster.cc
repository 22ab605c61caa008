// paictl check cluster CLUSTER_DIR: one report on a running cluster
// (lib/deploy/cluster_check.h over lib/check/cluster.h), with check config's
// report flags.

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app.h"
#include "check/cluster.h"
#include "check/hosts_common.h"
#include "command.h"
#include "config/cluster_files.h"
#include "data_dirs.h"
#include "deploy/cluster_check.h"
#include "diag/codes.h"
#include "diag/report.h"
#include "exit_codes.h"
#include "flags.h"
#include "install/install_view.h"
#include "output/diag_output.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/version.h"

namespace paictl {

namespace {

struct CheckClusterOptions {
  HostsOptions hosts;
  std::string output = "text";
  std::string junit;
  std::string sarif;
  bool fail_on_warn = false;
  int warn_within = 30;
  int backup_max_age = 7;
  std::string hived;
};

void complete_check_cluster(CheckClusterOptions& o, const Globals&) {
  // --hived's default: config.yaml's hived_url (else the library takes the
  // master's HiveD port).
  if (o.hived.empty() && o.hosts.paths.size() == 1)
    if (auto settings = pai::config::read_cluster_settings(o.hosts.paths[0]))
      o.hived = settings->hived_url;
}

void validate_check_cluster(const CheckClusterOptions& o, Usage& u) {
  u.error_if(o.hosts.paths.size() != 1, "check cluster needs exactly one CLUSTER_DIR",
             "the cluster directory paictl install installed (layout.yaml, config.yaml, "
             "services-configuration.yaml)");
  u.error_if(!o.hosts.hosts.empty() || !o.hosts.hosts_file.empty(),
             "--hosts and --hosts-file are for check hosts and facts collect",
             "check cluster reaches the master of CLUSTER_DIR's layout.yaml");
  if (!o.hived.empty())
    u.error_if(o.hived.rfind("http://", 0) != 0 && o.hived.rfind("https://", 0) != 0,
               "--hived " + o.hived + " is not an http:// or https:// URL",
               "HiveD's inspect API, e.g. --hived http://10.0.0.1:30096");
  validate_hosts_options(o.hosts, u);
}

int run_check_cluster(const CheckClusterOptions& o, const Globals& g) {
  UseCaseView view;
  view.g = &g;
  view.output = o.output;
  view.json = is_structured(o.output);
  HostsOptions hosts = o.hosts;
  pai::check::ClusterCheckRequest r;
  r.cluster_dir = o.hosts.paths[0];
  r.warn_within_days = o.warn_within;
  r.backup_max_age_days = o.backup_max_age;
  r.hived = o.hived;
  r.templates_dir = find_templates();
  pai::deploy::ClusterCheckDeps deps;
  deps.load_hosts = [hosts, &view]() -> pai::util::Result<pai::deploy::ClusterHosts> {
    auto ph = prepare_hosts(hosts, *view.g);
    if (!ph.ok()) {
      view.hosts_failed = ph.error().code;
      return pai::util::Error{
          "the cluster's hosts could not be read", {}, pai::util::Error::Kind::Input};
    }
    return pai::deploy::ClusterHosts{std::move(ph->inventory), std::move(ph->collect),
                                     std::move(ph->ssh_password)};
  };
  auto c = pai::deploy::check_cluster(r, deps);
  if (!c.ok()) return report(c.error(), view);

  static const std::vector<pai::diag::Rule> rules = pai::diag::rules_of({"K"});
  const auto& all = c->findings.items();
  int rc = kExitOk;
  if (is_structured(o.output)) {
    DiagReport dr;
    dr.output = o.output;
    dr.junit = o.junit;
    dr.sarif = o.sarif;
    dr.fail_on_warn = o.fail_on_warn;
    dr.suite = "paictl check cluster";
    dr.rules = &rules;
    rc = report_diagnostics(c->findings, {c->cluster_dir}, false, dr, g);
  } else {
    // check config's text, with a summary that names the cluster, not files.
    std::vector<pai::diag::Diagnostic> shown = shown_findings(c->findings, g);
    pai::diag::TextOptions topt;
    topt.color = use_color(g.no_color);
    topt.show_summary = false;
    std::string text = pai::diag::write_text(shown, 1, topt);
    if (!g.quiet) {
      auto s = pai::diag::summarize(all, 1);
      auto n = [](size_t k, const char* w) {
        return std::to_string(k) + " " + w + (k == 1 ? "" : "s");
      };
      text += std::string(shown.empty() ? "" : "\n") + n(s.errors, "error") + ", " +
              n(s.warnings, "warning") + " in cluster " + c->cluster_dir + "\n";
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    auto write = [&rc](const std::string& path, const std::string& content, const char* what) {
      if (path.empty()) return;
      if (auto w = write_report_file(path, content); !w.ok()) {
        print_error(std::string("cannot write the ") + what + " report: " + w.error().message);
        rc = kExitUsage;
      }
    };
    write(o.junit,
          pai::diag::write_junit(all, {c->cluster_dir}, "paictl check cluster", o.fail_on_warn),
          "JUnit");
    write(o.sarif,
          pai::diag::dump_json(pai::diag::write_sarif(all, rules, pai::kVersion, "")) + "\n",
          "SARIF");
    if (rc == kExitOk && (c->findings.has_errors() ||
                          (o.fail_on_warn && c->findings.count(pai::diag::Severity::Warning) > 0)))
      rc = kExitFindings;
  }
  if (c->master_unreachable && rc != kExitUsage) return kExitRemote;
  return rc;
}

}  // namespace

void build_check_cluster(Flags& cmd, Globals& g) {
  auto o = std::make_shared<CheckClusterOptions>();
  add_hosts_options(&cmd, o->hosts);
  cmd.get_option("PATH")->description(
      "The cluster directory (layout.yaml, config.yaml, services-configuration.yaml)");
  // The master of the cluster directory is reached; the flags about many hosts
  // or the fact script do not apply.
  for (const char* name : {"--hosts", "--hosts-file", "--limit", "--parallel", "--command-timeout",
                           "--docker-data-root", "--registry", "--dry-run", "--print-script"})
    cmd.get_option(name)->group("");
  add_output_option(cmd, o->output, g);
  cmd.add_option("--junit", o->junit, "Also write a JUnit XML report to FILE ('-' for stdout)")
      ->type_name("FILE");
  cmd.add_option("--sarif", o->sarif, "Also write a SARIF 2.1.0 report to FILE ('-' for stdout)")
      ->type_name("FILE");
  cmd.add_flag("--fail-on-warn", o->fail_on_warn,
               "Exit 1 when there are warnings, not only errors");
  cmd.add_option("--warn-within", o->warn_within, "Warn about certificates that expire within DAYS")
      ->type_name("DAYS")
      ->check(Range(0, 3650))
      ->capture_default_str();
  cmd.add_option("--backup-max-age", o->backup_max_age,
                 "Warn when the last backup (CLUSTER_DIR/.paictl/backups.jsonl) is older than DAYS")
      ->type_name("DAYS")
      ->check(Range(0, 3650))
      ->capture_default_str();
  cmd.add_option("--hived", o->hived,
                 "HiveD's inspect API (default: config.yaml's hived_url, else the master's port "
                 "30096 when HiveD is enabled)")
      ->type_name("URL");
  cmd.footer(
      "Checks: nodes registered, Ready, not cordoned (naming a paictl maintenance), GPUs\n"
      "allocatable = the SKU's count, Kubernetes version skew (kubelets vs the API server vs\n"
      "kube_version), etcd's health on every master, the age of the last backup, config drift\n"
      "(config diff), HiveD drift and doomed cells. Codes K001-K099 (paictl explain K004).\n\n"
      "EXIT STATUS:\n"
      "  0 no errors, 1 errors found (or warnings with --fail-on-warn), 2 bad usage or "
      "invalid cluster files,\n"
      "  3 the master could not be reached\n\n");
  define_command(cmd, g, o,
                 {.complete = complete_check_cluster,
                  .validate = validate_check_cluster,
                  .run = [](const auto& o, Globals& g) { return run_check_cluster(o, g); }});
}

}  // namespace paictl
