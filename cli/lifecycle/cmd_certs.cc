// paictl certs check|renew CLUSTER_DIR (lib/check/certs.h, lib/deploy/certs_renew.h;
// docs/certs.md): the cluster's certificates read over SSH, judged (K100-K103)
// and shown as text, JSON, JUnit or SARIF; renewed with kubeadm, the control
// plane restarted, the new admin.conf fetched, verified.

#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>
#include <string>

#include "app.h"
#include "check/certs.h"
#include "command.h"
#include "deploy/certs_json.h"
#include "deploy/certs_renew.h"
#include "diag/codes.h"
#include "diag/report.h"
#include "exit_codes.h"
#include "flags.h"
#include "install/cmd_install.h"
#include "install/install_out.h"
#include "install/install_view.h"
#include "output/diag_output.h"
#include "output/json_convert.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/strings.h"
#include "util/time.h"

namespace paictl {

namespace {

struct CertsOptions {
  InstallOptions install;
  int warn_within = 30;  // days
  std::string junit;
  std::string sarif;
  bool renew = false;
};

// The hosts' flags of the cluster's day-2 commands: the SSH flags, --dry-run,
// --yes, --detailed-exitcode, --wait, -o (config.yaml gives their defaults).
void certs_add_flags(Flags& cmd, CertsOptions& o, Globals& g, bool renew) {
  add_hosts_options(&cmd, o.install.hosts);
  for (const char* name : {"--hosts", "--hosts-file"})
    cmd.get_option(name)->group("")->expected(1)->allow_extra_args(false);
  for (const char* name : {"--print-script", "--limit", "--docker-data-root", "--registry"})
    cmd.get_option(name)->group("");
  cmd.add_option("--warn-within", o.warn_within,
                 "A certificate that expires within DAYS is an error (K101)")
      ->check(Range(0, 36500))
      ->type_name("DAYS")
      ->capture_default_str();
  add_output_option(cmd, o.install.output, g);
  if (!renew) {
    cmd.get_option("--dry-run")->group("");
    cmd.add_option("--junit", o.junit, "Also write a JUnit XML report to FILE ('-' for stdout)")
        ->type_name("FILE");
    cmd.add_option("--sarif", o.sarif, "Also write a SARIF 2.1.0 report to FILE ('-' for stdout)")
        ->type_name("FILE");
    return;
  }
  cmd.get_option("--dry-run")
      ->description("Show the certificates and the steps renew would take, and change nothing");
  cmd.add_flag("-y,--yes", o.install.yes,
               "Renew without asking (required when stdin is not a terminal)");
  cmd.add_flag("--detailed-exitcode", o.install.detailed_exitcode,
               "Exit 0 when nothing ran, 2 when the certificates were renewed (or would be, with "
               "--dry-run), 1 on errors");
  cmd.add_option("--wait", o.install.wait_s,
                 "Seconds to wait for the API server to stop, and to answer again")
      ->check(Range(1, 86400))
      ->capture_default_str();
}

void certs_validate(const CertsOptions& o, Usage& u) {
  validate_install(o.install, o.renew ? "certs renew" : "certs check", u);
}

std::string certs_date(int64_t t) {
  return pai::util::format_utc(static_cast<std::time_t>(t), "%Y-%m-%d %H:%M UTC");
}

// One row per certificate: where, what, until when.
void certs_print_table(const pai::check::CertsReport& r) {
  size_t wh = 4, wn = 11, ws = 7;
  for (const auto& c : r.certs) {
    wh = std::max(wh, c.host.size());
    wn = std::max(wn, c.name.size() + (c.is_ca ? 5 : 0));
    ws = std::max(ws, c.subject.size());
  }
  ws = std::min<size_t>(ws, 48);
  out_printf("%-*s  %-*s  %-20s  %9s  %-*s  %s\n", static_cast<int>(wh), "HOST",
             static_cast<int>(wn), "CERTIFICATE", "EXPIRES", "DAYS LEFT", static_cast<int>(ws),
             "SUBJECT", "ISSUER");
  for (const auto& c : r.certs) {
    std::string name = c.name + (c.is_ca ? " (CA)" : "");
    std::string subject = c.subject.size() > ws ? c.subject.substr(0, ws - 3) + "..." : c.subject;
    out_printf("%-*s  %-*s  %-20s  %9" PRId64 "  %-*s  %s\n", static_cast<int>(wh), c.host.c_str(),
               static_cast<int>(wn), name.c_str(), certs_date(c.not_after).c_str(), c.days_left,
               static_cast<int>(ws), subject.c_str(), c.issuer.c_str());
  }
  out_printf("\n");
}

// The findings as check config shows them; `print`: on stdout too.
int certs_report(const pai::check::CertsReport& r, const pai::diag::List& findings,
                 const CertsOptions& o, const Globals& g, bool print) {
  static const std::vector<pai::diag::Rule> rules = pai::diag::rules_of({"K"});
  DiagReport d;
  d.output = o.install.output;
  d.print = print;
  d.junit = o.junit;
  d.sarif = o.sarif;
  d.suite = "paictl certs check";
  d.rules = &rules;
  return report_diagnostics(findings, r.hosts, false, d, g);
}

std::string certs_findings_text(const pai::diag::List& l, size_t hosts, const Globals& g) {
  pai::diag::TextOptions t;
  t.color = use_color(g.no_color);
  return pai::diag::write_text(l.items(), hosts, t);
}

pai::deploy::CertsRenewRequest certs_request(const CertsOptions& o) {
  pai::deploy::CertsRenewRequest r;
  r.cluster_dir = o.install.hosts.paths[0];
  r.dry_run = o.install.hosts.dry_run;
  r.yes = o.install.yes;
  r.wait_s = o.install.wait_s;
  r.warn_within_days = o.warn_within;
  r.parallel = static_cast<size_t>(o.install.hosts.parallel);
  return r;
}

pai::deploy::CertsRenewDeps certs_deps(const CertsOptions& o, UseCaseView& view) {
  pai::deploy::CertsRenewDeps d;
  d.load_hosts = install_deps(o.install, view).load_hosts;
  return d;
}

// certs check: every host read, judged.
int run_certs_check(const CertsOptions& o, const Globals& g) {
  UseCaseView view = use_case_view(o.install, g);
  auto c = pai::deploy::check_certs(certs_request(o), certs_deps(o, view));
  if (!c.ok()) return report(c.error(), view);
  if (view.json) {
    pai::deploy::DocJson doc = pai::deploy::certs_report_json(c->report);
    auto diags = to_ordered(pai::diag::write_json(c->findings.items(), c->report.hosts.size()));
    doc["diagnostics"] = diags["diagnostics"];
    doc["summary"] = diags["summary"];
    print_document(document("certsCheck", doc), view.output);
    return certs_report(c->report, c->findings, o, g, false);
  }
  certs_print_table(c->report);
  return certs_report(c->report, c->findings, o, g, true);
}

void certs_print_plan(const pai::deploy::CertsRenewPlan& p) {
  if (!p.resumed.empty())
    out_printf("an earlier renewal (run %s) did not finish: this one finishes it\n",
               p.resumed.c_str());
  out_printf("certs renew %s:\n", p.cluster->cluster_dir.c_str());
  int n = 0;
  for (const auto& s : p.steps) {
    out_printf("  %d. %s%s\n", ++n, s.skip ? "(skipped) " : "", s.describe().c_str());
    if (!s.note.empty()) out_printf("     %s\n", s.note.c_str());
  }
  out_printf(
      "  %d. verify: every certificate read again; none that kubeadm renews expires within "
      "%" PRId64 " days\n",
      ++n, p.request.warn_within_days);
}

pai::deploy::Answer certs_ask(const pai::deploy::CertsRenewPlan&) {
  if (!is_tty(0) || !is_tty(2)) return pai::deploy::Answer::NoTerminal;
  err_printf("Renew the certificates and restart the control plane? [y/N] ");
  std::fflush(stderr);
  std::string answer;
  if (!std::getline(std::cin, answer)) return pai::deploy::Answer::No;
  return answer == "y" || answer == "Y" || answer == "yes" ? pai::deploy::Answer::Yes
                                                           : pai::deploy::Answer::No;
}

int run_certs_renew(const CertsOptions& o, const Globals& g) {
  using End = pai::deploy::CertsRenewOutcome::End;
  UseCaseView view = use_case_view(o.install, g);
  auto plan = pai::deploy::plan_certs_renew(certs_request(o), certs_deps(o, view));
  if (!plan.ok()) return report(plan.error(), view);
  if (!view.json) {
    certs_print_table(plan->before);
    std::string text = certs_findings_text(plan->findings, plan->before.hosts.size(), g);
    out_printf("%s\n", text.c_str());
    certs_print_plan(*plan);
  }
  pai::deploy::CertsRenewCallbacks cb;
  cb.confirm = certs_ask;
  bool json = view.json;
  cb.on_event = [json](const pai::deploy::CertsRenewEvent& e) {
    using K = pai::deploy::CertsRenewEvent::Kind;
    if (json) return;
    if (e.kind == K::StepStarted)
      err_printf("%s ...\n", e.step->describe().c_str());
    else if (e.kind == K::StepSkipped)
      err_printf("skipped: %s (%s)\n", e.step->describe().c_str(), e.step->note.c_str());
    else if (e.kind == K::StepDone)
      err_printf("  done in %.1f s%s%s\n", e.seconds, e.output.empty() ? "" : ": ",
                 e.output.c_str());
    else if (e.kind == K::Verifying)
      err_printf("verifying: reading every certificate again ...\n");
  };
  auto out = pai::deploy::apply_certs_renew(*plan, cb);
  int rc = kExitChanges;
  switch (out.end) {
    case End::DryRun:
      if (!json) out_printf("dry run: nothing was changed on any host\n");
      break;
    case End::Declined:
      print_error("nothing was changed");
      rc = kExitOk;
      break;
    case End::NoTerminal:
      print_error("not a terminal: pass --yes to renew without a confirmation");
      rc = kExitUsage;
      break;
    case End::Failed:
      rc = report(*out.error, view);
      if (!json)
        print_error("paictl certs renew " + plan->cluster->cluster_dir +
                    " resumes from this step (.paictl/certs.journal)");
      break;
    case End::Renewed:
      if (!json) {
        out_printf("\n");
        certs_print_table(*out.after);
        std::string text = certs_findings_text(out.findings_after, out.after->hosts.size(), g);
        out_printf("%s", text.c_str());
        out_printf("admin.conf: %s (its client certificate expires %s)\n", plan->admin_conf.c_str(),
                   out.admin_conf_expires.c_str());
        out_printf(out.verified ? "renewed and verified\n"
                                : "renewed, but certificates kubeadm renews still expire within "
                                  "the window (above)\n");
      }
      if (!out.verified) rc = kExitFindings;
      break;
  }
  if (json)
    print_document(document("certsRenew", pai::deploy::certs_renew_json(*plan, &out)), view.output);
  return rc;
}

void certs_build(Flags& cmd, Globals& g, bool renew) {
  auto o = std::make_shared<CertsOptions>();
  o->renew = renew;
  certs_add_flags(cmd, *o, g, renew);
  cmd.footer(renew ? "EXIT STATUS:\n"
                     "  0 nothing was changed (declined), 1 renewed but not verified, 2 bad "
                     "usage, 3 a host failed;\n"
                     "  renewed: 0 (2 with --detailed-exitcode)\n"
                   : "EXIT STATUS:\n"
                     "  0 no certificate expires within --warn-within, 1 one does (or expired, or "
                     "is unreadable), 2 bad usage, 3 a master could not be reached\n");
  if (renew)
    define_command(cmd, g, o, {.validate = certs_validate, .run = run_certs_renew});
  else
    define_command(cmd, g, o, {.validate = certs_validate, .run = run_certs_check});
}

}  // namespace

void build_certs_check(Flags& cmd, Globals& g) {
  certs_build(cmd, g, false);
}
void build_certs_renew(Flags& cmd, Globals& g) {
  certs_build(cmd, g, true);
}

}  // namespace paictl
