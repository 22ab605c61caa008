// paictl check hosts PATH... | --hosts a,b,c | --hosts-file FILE

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app.h"
#include "command.h"
#include "flags.h"

#include "check/hosts_common.h"
#include "check/hybrid.h"
#include "check/masters.h"
#include "check/report.h"
#include "check/runner.h"
#include "check/verdict.h"
#include "config/cluster_files.h"
#include "deploy/offline_bundle.h"
#include "exit_codes.h"
#include "facts/fact_script.h"
#include "output/output.h"
#include "output/printer.h"
#include "remote/ssh_transport.h"
#include "util/fs.h"
#include "util/strings.h"
#include "util/version.h"

namespace paictl {

namespace {

struct CheckHostsOptions {
  HostsOptions hosts;
  std::string output = "text";
  std::string junit;
  std::string sarif;
  bool fail_on_warn = false;
  std::vector<std::string> ignore;
  std::string min_disk_free = "50Gi";
  bool list_checks = false;
  int cni_mtu = 0;               // 0: as install computes it
  std::string purpose = "auto";  // --for
};

// A hybrid cluster's checks (check/hybrid.h), when the one path is a cluster
// directory whose config.yaml has an azure: section.
std::vector<pai::check::CheckResult> hybrid_checks(
    const CheckHostsOptions& o, const PreparedHosts& p,
    const std::vector<pai::check::HostOutcome>& outcomes) {
  if (o.hosts.paths.size() != 1 || !pai::util::is_directory(o.hosts.paths[0])) return {};
  auto loaded = pai::config::check_paths({o.hosts.paths[0]});
  pai::remote::SshTransport transport;
  transport.set_password(p.ssh_password);
  auto exec = [&](size_t i, const std::string& script, int timeout_ms) {
    pai::remote::ExecRequest req;
    req.command = "sh -c " + pai::util::shell_quote(script);
    req.timeout_ms = timeout_ms;
    return transport.exec(outcomes[i].plan.target, req);
  };
  pai::check::HybridOptions ho;
  ho.parallel = static_cast<size_t>(std::max(1, o.hosts.parallel));
  ho.cni_mtu = o.cni_mtu;
  auto out = pai::check::hybrid_checks(loaded, outcomes, exec, ho);
  // Several masters: the endpoint and the ports between them (check/masters.h).
  for (auto& r : pai::check::control_plane_checks(loaded, outcomes, exec, ho.parallel))
    out.push_back(std::move(r));
  return out;
}

// With a cluster directory whose kube_offline_bundle is a bundle
// (manifest.json): its platforms and driver branch for the OfflineBundle check.
// The manifest is read, not every file verified (install does that).
Step<void> bundle_eval(const CheckHostsOptions& o, pai::check::EvalOptions& eo) {
  if (o.hosts.paths.size() != 1 || !pai::util::is_directory(o.hosts.paths[0])) return {};
  auto settings = pai::config::read_cluster_settings(o.hosts.paths[0]);
  if (!settings || settings->kube_offline_bundle.empty()) return {};
  std::string dir = settings->kube_offline_bundle;
  if (dir[0] != '/') dir = o.hosts.paths[0] + "/" + dir;
  if (!pai::deploy::is_manifest_bundle(dir)) return {};
  auto b = pai::deploy::read_offline_bundle(dir);
  if (!b.ok()) {
    print_error("kube_offline_bundle: " + b.error().message +
                (b.error().hint.empty() ? "" : "\n  hint: " + b.error().hint));
    return ExitNow{kExitUsage};
  }
  for (const auto& pl : b->platforms) eo.bundle_platforms.push_back(pl.name());
  eo.bundle_driver = b->driver;
  return {};
}

void list_checks(const std::string& format) {
  if (is_structured(format)) {
    Json arr = Json::array();
    for (const auto& c : pai::check::catalogue())
      arr.push_back({{"name", c.name},
                     {"severity", pai::diag::to_string(c.severity)},
                     {"scope", c.scope},
                     {"origin", c.origin},
                     {"summary", c.summary},
                     {"install", pai::check::to_string(c.install)},
                     {"install_does", c.install_does}});
    print_document(list_document("checkList", arr), format);
    return;
  }
  Table t({{""}, {""}, {""}, {""}, {""}});
  for (const auto& c : pai::check::catalogue())
    t.add({std::string(c.name), std::string(pai::diag::to_string(c.severity)), std::string(c.scope),
           std::string(pai::check::to_string(c.install)), std::string(c.summary)});
  print_table(t);
}

// --ignore-check-errors A,B --ignore-check-errors C: one name per entry.
void complete_check_hosts(CheckHostsOptions& o, const Globals&) {
  std::vector<std::string> ignore;
  for (const auto& i : o.ignore)
    for (auto part : pai::util::split(i, ','))
      if (!pai::util::trim(part).empty()) ignore.emplace_back(pai::util::trim(part));
  o.ignore = ignore;
  // Without the flag, the cluster directory's ignore_check_errors, as install takes it.
  if (o.ignore.empty() && o.hosts.paths.size() == 1)
    if (auto settings = pai::config::read_cluster_settings(o.hosts.paths[0]))
      o.ignore = settings->ignore_check_errors;
}

void validate_check_hosts(const CheckHostsOptions& o, Usage& u) {
  if (o.list_checks) return;
  std::vector<std::string> names;
  for (const auto& c : pai::check::catalogue()) names.emplace_back(c.name);
  for (const auto& b : pai::check::unknown_check_names(o.ignore)) {
    std::string guess = pai::util::did_you_mean(b, names);
    u.error("--ignore-check-errors: no check is named \"" + b + "\"" +
                (guess.empty() ? "" : "; did you mean \"" + guess + "\"?"),
            "the checks are listed in docs/check-hosts.md (paictl check hosts --list-checks); "
            "'all' demotes every error");
  }
  auto min_disk = pai::util::parse_quantity(o.min_disk_free);
  u.error_if(!min_disk || *min_disk < 0,
             "--min-disk-free \"" + o.min_disk_free + "\" is not a size (e.g. 50Gi, 200G)");
  validate_hosts_options(o.hosts, u);
}

int run(const CheckHostsOptions& o, const Globals& g) {
  if (o.list_checks) {
    list_checks(o.output);
    return kExitOk;
  }
  if (o.hosts.print_script && o.hosts.paths.empty() && o.hosts.hosts.empty() &&
      o.hosts.hosts_file.empty()) {
    std::printf("%s", pai::facts::fact_script({}).c_str());
    return kExitOk;
  }
  auto prepared = prepare_hosts(o.hosts, g);
  if (!prepared.ok()) return prepared.error().code;
  PreparedHosts& p = *prepared;
  if (o.hosts.print_script) {
    std::printf("%s", pai::facts::fact_script(p.collect.script).c_str());
    return kExitOk;
  }
  if (o.hosts.dry_run) {
    print_dry_run(p, o.hosts, pai::facts::bootstrap_command(), o.output);
    return kExitOk;
  }

  double duration_ms = 0;
  size_t parallel = 0;
  auto outcomes = collect_with_progress(p, g, "checking hosts", &duration_ms, &parallel);

  pai::check::EvalOptions eo;
  eo.registries = p.collect.script.dns_names;
  eo.min_disk_free_bytes = static_cast<int64_t>(*pai::util::parse_quantity(o.min_disk_free));
  eo.docker_data_root = p.collect.script.docker_data_root;
  if (auto b = bundle_eval(o, eo); !b.ok()) return b.error().code;
  auto results = pai::check::host_verdicts(outcomes, eo, hybrid_checks(o, p, outcomes),
                                           *pai::check::parse_purpose(o.purpose), o.ignore);

  pai::check::ReportContext ctx;
  ctx.hosts = &outcomes;
  ctx.layout_file = p.inventory.layout_file;
  ctx.layout_lines = p.inventory.layout_lines;
  ctx.duration_ms = duration_ms;
  ctx.parallel = parallel;
  ctx.fail_on_warn = o.fail_on_warn;

  if (is_structured(o.output)) {
    print_document(document("hostCheck", Json(pai::check::write_json_report(results, ctx))),
                   o.output);
  } else {
    pai::check::TextReportOptions to;
    to.color = use_color(g.no_color);
    to.verbose = g.verbose;
    to.quiet = g.quiet;
    std::string text = pai::check::write_text_report(results, ctx, to);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  int rc = pai::check::exit_code(pai::check::summarize(results, outcomes.size()), o.fail_on_warn);
  if (!o.junit.empty()) {
    auto err = write_report_file(o.junit, pai::check::write_junit_report(results, ctx));
    if (!err.ok()) {
      print_error("cannot write the JUnit report: " + err.error().message);
      rc = kExitUsage;
    }
  }
  if (!o.sarif.empty()) {
    auto err = write_report_file(
        o.sarif,
        pai::check::dump(pai::check::write_sarif_report(results, ctx, pai::kVersion)) + "\n");
    if (!err.ok()) {
      print_error("cannot write the SARIF report: " + err.error().message);
      rc = kExitUsage;
    }
  }
  return rc;
}

void add_check_hosts(Flags& parent, Globals& g) {
  auto o = std::make_shared<CheckHostsOptions>();
  Flags* cmd = &parent;
  add_hosts_options(cmd, o->hosts);
  add_output_option(*cmd, o->output, g);
  cmd->add_option("--junit", o->junit,
                  "Also write a JUnit XML report (a testsuite per host) to FILE ('-' for stdout)")
      ->type_name("FILE");
  cmd->add_option("--sarif", o->sarif, "Also write a SARIF 2.1.0 report to FILE ('-' for stdout)")
      ->type_name("FILE");
  cmd->add_flag("--fail-on-warn", o->fail_on_warn,
                "Exit 1 when there are warnings, not only errors");
  cmd->add_option("--ignore-check-errors", o->ignore,
                  "Demote these checks' errors to warnings (they still run): NAME,... or all")
      ->type_name("NAMES");
  cmd->add_flag("--list-checks", o->list_checks,
                "List the checks (name, severity, scope, what install does, purpose) and exit");
  cmd->add_option("--for", o->purpose,
                  "Judge for: install (what paictl install sets up itself is INST, not an error), "
                  "running (an installed cluster: every violation counts), auto (per host: "
                  "running where an install left its marker, else install)")
      ->check(IsMember({"auto", "install", "running"}))
      ->type_name("PURPOSE")
      ->capture_default_str();
  cmd->add_option("--min-disk-free", o->min_disk_free, "Free space the Docker data root needs")
      ->type_name("SIZE")
      ->capture_default_str();
  cmd->add_option("--cni-mtu", o->cni_mtu,
                  "Hybrid clusters: the pods' MTU the cross-site check sends VXLAN-sized packets "
                  "for (default: as install sets it, the default-route interface MTU less 50)")
      ->type_name("N")
      ->check(Range(576, 65535));
  cmd->footer(
      "EXIT STATUS:\n"
      "  0 every check passed (warnings and INST allowed), 1 checks failed (or warned, with "
      "--fail-on-warn),\n"
      "  2 bad usage or invalid cluster files, 3 some hosts could not be reached or did not "
      "finish\n\n");
  define_command(*cmd, g, o,
                 {.complete = complete_check_hosts,
                  .validate = validate_check_hosts,
                  .run = [](const auto& o, Globals& g) { return run(o, g); }});
}

}  // namespace

void build_check_hosts(Flags& cmd, Globals& g) {
  add_check_hosts(cmd, g);
}

}  // namespace paictl
