// paictl backup CLUSTER_DIR [--out FILE] and paictl restore CLUSTER_DIR --from
// FILE (lib/deploy/backup.h, restore.h; docs/backup.md): flags, the plan as
// text or -o json|yaml, the confirmation, progress lines and exit codes.

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "app.h"
#include "command.h"
#include "config/cluster_files.h"
#include "data_dirs.h"
#include "deploy/backup.h"
#include "deploy/backup_json.h"
#include "deploy/restore.h"
#include "exit_codes.h"
#include "flags.h"
#include "http/client.h"
#include "install/cmd_install.h"
#include "install/install_out.h"
#include "install/install_view.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/fs.h"
#include "util/strings.h"

namespace paictl {

namespace {

struct BackupOptions {
  InstallOptions install;
  std::string out;
};

struct RestoreOptions {
  InstallOptions install;
  std::string from;
  bool force_other_cluster = false;
  bool again = false;
  std::string hived;
};

// The flags backup and restore share with install (SSH, --limit, --dry-run,
// --yes, --wait, -o, --detailed-exitcode), without the ones that are install's.
void add_lifecycle_flags(Flags& cmd, InstallOptions& o, Globals& g) {
  add_install_flags(cmd, o, g, false, false);
  for (const char* name :
       {"--ignore-check-errors", "--print-script", "--limit", "--parallel", "--docker-data-root",
        "--registry", "--arm-endpoint", "--authority-host", "--ca-file"})
    cmd.get_option(name)->group("");
  cmd.get_option("--wait")->description("Seconds to wait for etcd and the API server");
}

bool lifecycle_ask(const char* question) {
  err_printf("%s [y/N] ", question);
  std::fflush(stderr);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes";
}

std::function<void(const std::string&, const std::string&)> lifecycle_progress(
    const UseCaseView& v) {
  if (v.json || (v.g && v.g->quiet)) return nullptr;
  return [](const std::string& step, const std::string& detail) {
    if (detail.empty())
      err_printf("  %s\n", step.c_str());
    else
      err_printf("  %-14s %s\n", step.c_str(), detail.c_str());
  };
}

int run_backup(const BackupOptions& o, const Globals& g) {
  UseCaseView view = use_case_view(o.install, g);
  pai::deploy::BackupRequest r;
  r.cluster_dir = o.install.hosts.paths[0];
  r.out = o.out;
  r.dry_run = o.install.hosts.dry_run;
  r.wait_s = o.install.wait_s;
  r.templates_dir = find_templates();
  pai::deploy::BackupDeps deps;
  deps.install = install_deps(o.install, view);
  deps.on_progress = lifecycle_progress(view);
  auto plan = pai::deploy::plan_backup(r, deps);
  if (!plan.ok()) return report(plan.error(), view);
  if (!view.json) {
    out_printf("backup of cluster %s (%s) to %s:\n", plan->cluster_name.c_str(),
               plan->cluster->cluster_dir.c_str(), plan->out.c_str());
    for (const auto& c : plan->contents) out_printf("  %s\n", c.c_str());
  }
  if (r.dry_run) {
    print_use_case_document(pai::deploy::backup_json(*plan, nullptr), "backup", view);
    if (!view.json) out_printf("dry run: nothing was written\n");
    return kExitChanges;
  }
  auto out = pai::deploy::apply_backup(*plan);
  if (out.error) return report(*out.error, view);
  print_use_case_document(pai::deploy::backup_json(*plan, &out), "backup", view);
  if (!view.json)
    out_printf(
        "wrote %s (%s, %zu members, mode 0600, sha256 %s)\nrecorded in %s/.paictl/backups.jsonl\n",
        out.path.c_str(), pai::util::format_bytes(static_cast<double>(out.bytes)).c_str(),
        out.manifest.members.size() + 1, out.sha256.c_str(), plan->cluster->cluster_dir.c_str());
  return kExitChanges;
}

int run_restore(const RestoreOptions& o, const Globals& g) {
  UseCaseView view = use_case_view(o.install, g);
  pai::deploy::RestoreRequest r;
  r.cluster_dir = o.install.hosts.paths[0];
  r.from = o.from;
  r.dry_run = o.install.hosts.dry_run;
  r.force_other_cluster = o.force_other_cluster;
  r.again = o.again;
  r.wait_s = o.install.wait_s;
  r.templates_dir = find_templates();
  r.hived = o.hived;
  pai::deploy::RestoreDeps deps;
  deps.install = install_deps(o.install, view);
  deps.on_progress = lifecycle_progress(view);
  auto plan = pai::deploy::plan_restore(r, deps);
  if (!plan.ok()) return report(plan.error(), view);
  if (plan->already) {
    print_use_case_document(pai::deploy::restore_json(*plan, nullptr), "restore", view);
    if (!view.json)
      out_printf("%s was restored already (stamp %s, old data in %s); --again restores it again\n",
                 r.from.c_str(), plan->already->ts.c_str(), plan->already->layout.old_dir.c_str());
    return kExitOk;
  }
  if (!view.json) {
    const auto& m = plan->archive->manifest;
    out_printf("restore of %s (cluster %s, %s, Kubernetes %s, etcd %s) onto %s:\n", r.from.c_str(),
               m.cluster.c_str(), m.time_utc.c_str(), m.kubernetes_version.c_str(),
               m.etcd_version.c_str(), plan->cluster->cluster_dir.c_str());
    for (const auto& mm : plan->mismatches) out_printf("  forced: %s\n", mm.c_str());
    for (const auto& line : plan->replaces) out_printf("  %s\n", line.c_str());
  }
  if (r.dry_run) {
    print_use_case_document(pai::deploy::restore_json(*plan, nullptr), "restore", view);
    if (!view.json) out_printf("dry run: nothing was changed on any host\n");
    return kExitChanges;
  }
  if (!o.install.yes) {
    if (!is_tty(0) || !is_tty(2)) {
      print_error("not a terminal: pass --yes to restore without a confirmation");
      return kExitUsage;
    }
    if (!lifecycle_ask("Restore the cluster from this archive?")) {
      err_printf("nothing was changed\n");
      return kExitFindings;
    }
  }
  auto out = pai::deploy::apply_restore(*plan);
  print_use_case_document(pai::deploy::restore_json(*plan, &out), "restore", view);
  if (out.error) return report(*out.error, view);
  if (!view.json) {
    if (!out.skipped.empty())
      out_printf("resumed the restore of stamp %s (already done: %s)\n", out.ts.c_str(),
                 pai::util::join(out.skipped, ", ").c_str());
    std::string hived = "HiveD checked by the earlier run";
    for (const auto& c : out.checks)
      if (c.name == "hived")
        hived = c.result == pai::deploy::RestoreCheck::Result::Verified
                    ? "HiveD answers at " + pai::http::redact_url(plan->hived_url) +
                          " with the restored config"
                    : c.detail;
    out_printf(
        "restored: etcd from %s, verified (%zu namespaces, %zu ConfigMaps; %s); old data in %s\n",
        r.from.c_str(), plan->archive->manifest.namespaces.size(),
        plan->archive->manifest.configmaps.size(), hived.c_str(), out.layout.old_dir.c_str());
  }
  return kExitChanges;
}

void validate_backup(const BackupOptions& o, Usage& u) {
  validate_install(o.install, "backup", u);
  if (!o.out.empty())
    u.error_if(pai::util::is_directory(o.out), "--out " + o.out + " is a directory",
               "name the archive's file, e.g. --out " + o.out + "/cluster.tar.gz");
}

// --hived's default: config.yaml's hived_url (else the library asks the
// master's HiveD port).
void complete_restore(RestoreOptions& o, const Globals&) {
  const auto& paths = o.install.hosts.paths;
  if (o.hived.empty() && paths.size() == 1)
    if (auto settings = pai::config::read_cluster_settings(paths[0])) o.hived = settings->hived_url;
}

void validate_restore(const RestoreOptions& o, Usage& u) {
  validate_install(o.install, "restore", u);
  if (!o.hived.empty())
    u.error_if(o.hived.rfind("http://", 0) != 0 && o.hived.rfind("https://", 0) != 0,
               "--hived " + o.hived + " is not an http:// or https:// URL",
               "HiveD's inspect API, e.g. --hived http://10.0.0.1:30096");
  if (o.from.empty())
    u.error("restore needs the archive: --from FILE", "paictl restore CLUSTER_DIR --from FILE");
  else
    u.error_if(!pai::util::is_regular_file(o.from), "--from " + o.from + " is not a file",
               "an archive paictl backup wrote (CLUSTER_DIR/backups/*.tar.gz)");
}

}  // namespace

void build_backup(Flags& cmd, Globals& g) {
  auto o = std::make_shared<BackupOptions>();
  add_lifecycle_flags(cmd, o->install, g);
  cmd.get_option("--dry-run")
      ->description("Show what the archive would hold (the master is read), and write nothing");
  cmd.get_option("--yes")->group("");
  cmd.add_option("--out", o->out,
                 "The archive to write (default: CLUSTER_DIR/backups/NAME-UTCTIME.tar.gz); "
                 "mode 0600, it holds keys")
      ->type_name("FILE");
  cmd.footer(
      "EXIT STATUS:\n"
      "  0 written, 2 bad usage or cluster files, 3 the master could not be read;\n"
      "  with --detailed-exitcode: 2 written (or would be), 1 any error\n");
  define_command(cmd, g, o, {.validate = validate_backup, .run = run_backup});
}

void build_restore(Flags& cmd, Globals& g) {
  auto o = std::make_shared<RestoreOptions>();
  add_lifecycle_flags(cmd, o->install, g);
  cmd.get_option("--wait")->description("Seconds to wait for etcd, the API server and HiveD, each");
  cmd.get_option("--dry-run")
      ->description("Verify the archive and say what would be replaced; change nothing");
  cmd.add_option("--from", o->from, "The archive paictl backup wrote")->type_name("FILE");
  cmd.add_flag("--force-other-cluster", o->force_other_cluster,
               "Restore an archive of another cluster, or of other masters' or nodes' addresses");
  cmd.add_option("--hived", o->hived,
                 "HiveD's inspect API, checked after the restore (default: config.yaml's "
                 "hived_url, else the master's HiveD port)")
      ->type_name("URL");
  cmd.add_flag("--again", o->again,
               "Restore again from the archive this cluster directory's last finished restore "
               "used (a re-run of a finished restore otherwise changes nothing)");
  cmd.footer(
      "EXIT STATUS:\n"
      "  0 restored, 1 not confirmed, the restored cluster lacks what the backup recorded\n"
      "  or HiveD runs another config, 2 bad usage, an archive that is truncated, tampered\n"
      "  with or of another cluster (nothing changed), 3 a host failed or HiveD did not\n"
      "  answer (a re-run resumes);\n"
      "  with --detailed-exitcode: 2 restored (or would be), 1 any error\n");
  define_command(cmd, g, o,
                 {.complete = complete_restore, .validate = validate_restore, .run = run_restore});
}

}  // namespace paictl
