// paictl install PATH | paictl reset PATH: on-prem over SSH, phase by phase
// (lib/deploy). The plan first (per host: what each phase would change), then,
// after a confirmation on a terminal or --yes, the changes with one line per
// event. docs/install.md describes the phases.

#include <limits.h>
#include <unistd.h>
#include <functional>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app.h"
#include "check/hosts_common.h"
#include "command.h"
#include "command_tree.h"
#include "config/cluster_files.h"
#include "deploy/engine.h"
#include "deploy/journal.h"
#include "deploy/onprem.h"
#include "deploy/openpai.h"
#include "exit_codes.h"
#include "hived/cmd_hived_diff.h"
#include "hived/diff.h"
#include "install/azure_step.h"
#include "install/cmd_install.h"
#include "output/output.h"
#include "output/printer.h"
#include "planner/node_cells.h"
#include "planner/unified_diff.h"
#include "remote/ssh_transport.h"
#include "util/fs.h"
#include "util/strings.h"

namespace paictl {

namespace {

std::string exe_dir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  std::string p(buf, static_cast<size_t>(n));
  auto s = p.find_last_of('/');
  return s == std::string::npos ? std::string() : p.substr(0, s);
}

// $PAICTL_TEMPLATES, else next to the binary (installed or in a build tree), else ./templates.
std::string find_templates() {
  if (const char* e = std::getenv("PAICTL_TEMPLATES"); e && *e) return e;
  std::string d = exe_dir();
  for (const std::string& c :
       {d + "/../share/paictl/templates", d + "/../templates", d + "/../../templates"})
    if (!d.empty() && pai::util::is_regular_file(c + "/install/kubeadm-init.yaml")) return c;
  return "templates";
}

struct Prepared {
  PreparedHosts hosts;
  std::string cluster_dir;
  std::vector<pai::deploy::HostSpec> specs;
  pai::deploy::InstallSettings settings;
};

// NAME,NAME given once or more: the names, trimmed.
std::vector<std::string> split_names(const std::vector<std::string>& lists) {
  std::vector<std::string> out;
  for (const auto& l : lists)
    for (auto part : pai::util::split(l, ','))
      if (!pai::util::trim(part).empty()) out.emplace_back(pai::util::trim(part));
  return out;
}

// Checks the cluster (the options are validated: validate_install), builds the
// hosts and the settings.
// `need_master` false: a layout.yaml without a pai-master host is accepted (the
// checks before Azure, when the master is the VM of a pool Azure creates next).
int prepare(InstallOptions& o, const Globals& g, Prepared& p, bool need_master = true) {
  p.cluster_dir = o.hosts.paths[0];
  while (p.cluster_dir.size() > 1 && p.cluster_dir.back() == '/') p.cluster_dir.pop_back();
  std::vector<std::string> limit = split_names(o.hosts.limit);
  HostsOptions all = o.hosts;
  all.limit.clear();  // the master is reached even when --limit leaves it out
  if (int rc = prepare_hosts(all, g, p.hosts); rc >= 0) return rc;

  std::vector<std::string> ignore = split_names(o.ignore);

  auto loaded = pai::config::check_paths({p.cluster_dir});
  if (loaded.clusters.empty() || !loaded.clusters[0].layout || !loaded.clusters[0].config) {
    print_error(p.cluster_dir + " has no layout.yaml and config.yaml");
    return kExitUsage;
  }
  const auto& cluster = loaded.clusters[0];
  const auto& cfg = *cluster.config;
  auto& s = p.settings;
  s.kube_version = cfg.kube_version;
  s.package_repo = cfg.kube_package_repo;
  s.offline_bundle = cfg.kube_offline_bundle;
  if (!s.offline_bundle.empty() && s.offline_bundle[0] != '/')
    s.offline_bundle = p.cluster_dir + "/" + s.offline_bundle;
  if (!s.offline_bundle.empty() && !pai::util::is_directory(s.offline_bundle)) {
    print_error("kube_offline_bundle: " + s.offline_bundle + " is not a directory");
    return kExitUsage;
  }
  s.nvidia_repo = cfg.nvidia_package_repo;
  s.pods_subnet = cfg.kube_pods_subnet;
  s.service_subnet = cfg.kube_service_addresses;
  s.control_plane_endpoint = cfg.kube_control_plane_endpoint;
  if (cluster.services && !cluster.services->cluster_id.empty())
    s.cluster_name = cluster.services->cluster_id;
  s.templates_dir = find_templates();
  s.ignore_checks = ignore;
  s.eval.registries = p.hosts.collect.script.dns_names;
  s.eval.docker_data_root = p.hosts.collect.script.docker_data_root;
  s.script = p.hosts.collect.script;
  s.sudo_password = p.hosts.collect.sudo_password;
  s.wait_s = o.wait_s;
  {
    std::string err;
    if (!pai::deploy::load_openpai_settings(p.cluster_dir + "/services-configuration.yaml",
                                            s.openpai, err)) {
      print_error(err);
      return kExitUsage;
    }
    s.openpai.hived_enabled = cfg.enable_hived_scheduler;
    if (s.openpai.enabled) s.cluster_files = pai::deploy::read_cluster_files(p.cluster_dir);
  }
  if (cfg.azure) {
    s.hybrid = std::make_shared<const pai::config::CheckOutcome>(loaded);
    s.tunnel_mtu = cfg.azure->tunnel_mtu;
  }

  // A hybrid cluster's nodes carry their site (docs/hybrid.md).
  std::map<std::string, std::string> azure_vms;
  if (cfg.azure && cluster.layout)
    azure_vms = pai::config::azure_pools_in_layout(loaded.sources[cluster.layout->file]);

  std::set<std::string> wanted(limit.begin(), limit.end());
  std::set<std::string> matched;
  bool has_master = false;
  for (const auto& h : p.hosts.inventory.hosts) {
    bool in = wanted.empty() || wanted.count(h.name) || wanted.count(h.address);
    if (wanted.count(h.name)) matched.insert(h.name);
    if (wanted.count(h.address)) matched.insert(h.address);
    if (!in && !h.master) continue;
    pai::deploy::HostSpec spec;
    spec.name = h.name;
    spec.address = h.hostip.empty() ? h.address : h.hostip;
    spec.master = h.master;
    spec.worker = h.worker;
    spec.selected = in;
    if (h.sku) {
      spec.sku = h.sku->name;
      if (h.sku->device) {
        spec.gpu_type = h.sku->device->type;
        spec.gpus = static_cast<int>(h.sku->device->count);
      }
    }
    if (cfg.azure)
      spec.labels = pai::config::site_labels(*cfg.azure, azure_vms, h.name, spec.address);
    spec.target = h.target;
    spec.plan = h;
    has_master |= h.master;
    p.specs.push_back(std::move(spec));
  }
  for (const auto& w : wanted)
    if (!matched.count(w)) {
      print_error("--limit: " + w + " is not a host of " + p.hosts.inventory.layout_file);
      return kExitUsage;
    }
  if (!has_master && need_master) {
    print_error("layout.yaml has no pai-master host");
    return kExitUsage;
  }
  return -1;
}

const char* paint(bool color, const char* code) {
  return color ? code : "";
}

// One line per event on stderr.
void print_event(const pai::deploy::Event& e, bool color, bool verbose) {
  using K = pai::deploy::Event::Kind;
  const char* c = "";
  std::string what;
  switch (e.kind) {
    case K::PhaseStart:
      if (!verbose) return;
      what = "observing";
      break;
    case K::PhaseUpToDate:
      if (!verbose) return;
      what = "up to date";
      break;
    case K::PhaseNeeds:
      c = "\x1b[33m";
      what = e.message + ": " + pai::util::join(e.needs, "; ");
      break;
    case K::PhaseApplied: {
      c = "\x1b[32m";
      char buf[32];
      std::snprintf(buf, sizeof buf, " (%.1f s)", e.elapsed_ms / 1000);
      what = "done" + std::string(buf);
      break;
    }
    case K::PhaseFailed:
      c = "\x1b[1;31m";
      what = "FAILED: " + e.message + (e.hint.empty() ? "" : "\n    hint: " + e.hint);
      break;
    case K::PhaseSkipped:
      if (!verbose) return;
      what = e.message;
      break;
    case K::HostConnected:
    case K::HostLocked:
      if (!verbose) return;
      what = e.message;
      break;
    case K::CleanupStart:
      if (!verbose) return;
      what = "cleaning up";
      break;
    case K::CleanupDone:
      what = "cleaned up";
      break;
    case K::Interrupted:
      c = "\x1b[33m";
      what = "interrupted earlier: " + e.message;
      break;
    case K::Note:
      what = e.message;
      break;
  }
  std::fprintf(stderr, "%s%-14s %-14s %s%s\n", paint(color, c),
               e.host.empty() ? "-" : e.host.c_str(), e.phase.c_str(), what.c_str(),
               paint(color, "\x1b[0m"));
}

void print_plan(const pai::deploy::RunResult& plan, bool color) {
  size_t changing = 0, failing = 0;
  for (const auto& h : plan.hosts) {
    std::printf("%s%s%s\n", paint(color, "\x1b[1m"), h.host.c_str(), paint(color, "\x1b[0m"));
    if (!h.error.empty()) {
      std::printf("  %sunreachable: %s%s\n", paint(color, "\x1b[31m"), h.error.c_str(),
                  paint(color, "\x1b[0m"));
      continue;
    }
    std::vector<std::string> current;
    for (const auto& p : h.phases) {
      using S = pai::deploy::PhaseResult::State;
      if (p.state == S::UpToDate) current.push_back(p.phase);
      if (p.state == S::Planned)
        for (const auto& n : p.needs) std::printf("  %-14s %s\n", p.phase.c_str(), n.c_str());
      if (p.state == S::Failed)
        std::printf("  %-14s %sFAILED: %s%s\n", p.phase.c_str(), paint(color, "\x1b[31m"),
                    p.error.c_str(), paint(color, "\x1b[0m"));
    }
    if (h.failed()) ++failing;
    if (h.changed())
      ++changing;
    else if (!h.failed())
      std::printf("  up to date\n");
    if (h.changed() && !current.empty())
      std::printf("  %-14s %s\n", "up to date", pai::util::join(current, ", ").c_str());
  }
  size_t current = 0;
  for (const auto& h : plan.hosts) current += !h.failed() && !h.changed();
  std::printf("\n%zu host%s: %zu to change, %zu up to date", plan.hosts.size(),
              plan.hosts.size() == 1 ? "" : "s", changing, current);
  if (failing) std::printf(", %zu with errors", failing);
  std::printf("\n");
}

// The line that registers the installed cluster with paictl, through the gateway.
void print_cluster_add(const Prepared& p) {
  const auto& o = p.settings.openpai;
  if (!o.enabled) return;
  std::string master;
  for (const auto& h : p.specs)
    if (h.master) master = h.address;
  std::string uri =
      "http://" + master + (o.pylon_port == 80 ? "" : ":" + std::to_string(o.pylon_port));
  std::printf(
      "OpenPAI: %s (user %s; the password is rest-server.default-pai-admin-password)\n"
      "register it with:\n  paictl cluster add %s --uri %s --user %s --password-stdin\n",
      uri.c_str(), o.admin_user.c_str(), o.cluster_id.c_str(), uri.c_str(), o.admin_user.c_str());
}

int failure_code(const pai::deploy::RunResult& r) {
  for (const auto& h : r.hosts)
    if (!h.reached) return kExitRemote;
  return kExitFindings;
}

bool confirm(const char* question) {
  std::fprintf(stderr, "%s [y/N] ", question);
  std::fflush(stderr);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes";
}

// HivedPush: node add|remove's last step, the hived and config phases on the master.
enum class Mode { Install, Reset, ConfigPush, HivedPush };

// install: the Azure VMs without cells in the HiveD config get them (defined below).
int add_azure_vm_cells(InstallOptions& o, const Globals& g, const Json& azure_doc);
// install --dry-run: the cells the pools' VMs not created yet will add, under
// placeholder names; sets `pending_master` when the master is such a VM.
int plan_azure_vm_cells(InstallOptions& o, const Globals& g, std::string& pending_master);

// install, before Azure creates anything: the pre-install checks (the `checks`
// phase, SiteOverlap and the cross-site checks included) on the hosts layout.yaml
// has now. A failure refuses the install while nothing exists in Azure yet (defined below).
int checks_before_azure(InstallOptions& o, const Globals& g, const Json& azure_plan);

int run_install(InstallOptions& o, const Globals& g, Mode mode) {
  bool reset = mode == Mode::Reset;
  const char* verb = reset                      ? "reset"
                     : mode == Mode::ConfigPush ? "config push"
                     : mode == Mode::HivedPush  ? "hived"
                                                : "install";
  // The Azure provider runs first (docs/azure.md): its VMs join layout.yaml.
  Json azure_doc = o.azure_doc;
  bool azure_changed = o.skip_azure;
  if (mode != Mode::ConfigPush && !o.skip_azure && o.hosts.paths.size() == 1 &&
      pai::util::is_directory(o.hosts.paths[0])) {
    if (reset && o.azure.reset_azure)
      return run_azure_reset(o.azure, o.hosts.paths[0], g, o.hosts.dry_run, o.yes, o.output);
    if (!reset)
      if (int rc = run_azure_install(o.azure, o.hosts.paths[0], g, o.hosts.dry_run, o.yes, o.output,
                                     azure_doc, azure_changed,
                                     mode == Mode::Install
                                         ? std::function<int(const Json&)>([&](const Json& plan) {
                                             return checks_before_azure(o, g, plan);
                                           })
                                         : nullptr);
          rc != -1)
        return rc;
  }
  if (mode == Mode::Install && !o.skip_azure && !o.hosts.dry_run)
    if (int rc = add_azure_vm_cells(o, g, azure_doc); rc >= 0) return rc;
  if (mode == Mode::Install && !o.skip_azure && o.hosts.dry_run && !azure_doc.is_null()) {
    std::string pending_master;
    if (int rc = plan_azure_vm_cells(o, g, pending_master); rc >= 0) return rc;
    if (!pending_master.empty()) {
      // The hosts' plan needs the master, which Azure has not created yet.
      bool json = is_structured(o.output);
      if (json) {
        Json doc = {{"apiVersion", "paictl.install/v1"},
                    {"kind", "Install"},
                    {"cluster", o.hosts.paths[0]},
                    {"azure", azure_doc},
                    {"pendingMaster", pending_master}};
        if (!o.hived_doc.is_null()) doc["hived"] = o.hived_doc;
        print_document(document("install", std::move(doc)), o.output);
      } else {
        std::printf(
            "hosts: the master is the VM of Azure pool %s, not created yet; install creates it "
            "first, then plans and installs the hosts (kubeadm init on it, the others join)\n"
            "dry run: nothing was changed on any host\n",
            pending_master.c_str());
      }
      return kExitChanges;
    }
  }
  Prepared p;
  if (int rc = prepare(o, g, p); rc >= 0) return rc;
  bool json = is_structured(o.output);
  bool color = use_color(g.no_color, 2);
  std::string state_dir = p.cluster_dir + "/.paictl";

  // One install (or reset) per cluster directory at a time; a dry run changes nothing.
  pai::deploy::LocalLock lock;
  if (!o.hosts.dry_run) {
    std::string err = lock.acquire(state_dir + "/install.lock");
    if (!err.empty()) {
      print_error(err);
      return kExitUsage;
    }
    (void)pai::util::make_directories(state_dir + "/logs", 0700);
  }

  pai::remote::SshTransport transport;
  transport.set_password(p.hosts.ssh_password);
  pai::deploy::Masker masker;
  masker.add(p.hosts.ssh_password.reveal());
  masker.add(p.settings.sudo_password.reveal());
  masker.add(p.settings.openpai.admin_password.reveal());
  pai::deploy::PhaseList phases;
  if (mode == Mode::ConfigPush) {
    if (p.settings.cluster_files.empty()) {
      print_error(p.cluster_dir + " has no services-configuration.yaml: nothing to push");
      return kExitUsage;
    }
    phases.push_back(pai::deploy::make_config_phase(p.settings));
  } else if (mode == Mode::HivedPush) {
    phases.push_back(pai::deploy::make_hived_phase(p.settings));
    if (!p.settings.cluster_files.empty())
      phases.push_back(pai::deploy::make_config_phase(p.settings));
  } else {
    phases =
        reset ? pai::deploy::reset_phases(p.settings) : pai::deploy::install_phases(p.settings);
  }

  pai::deploy::EngineOptions eo;
  eo.parallel = static_cast<size_t>(o.hosts.parallel);
  eo.masker = &masker;
  eo.dry_run = true;
  eo.journal_path = state_dir + "/install.journal";
  if (!g.quiet && !json) std::fprintf(stderr, "%s: observing %zu hosts...\n", verb, p.specs.size());
  eo.on_event = [&](const pai::deploy::Event& e) {
    if (e.kind == pai::deploy::Event::Kind::Interrupted && !g.quiet) print_event(e, color, true);
  };
  pai::deploy::RunResult plan = pai::deploy::Engine(transport, eo).run(p.specs, phases);

  Json doc = {{"apiVersion", "paictl.install/v1"},
              {"kind", reset                      ? "Reset"
                       : mode == Mode::ConfigPush ? "ConfigPush"
                       : mode == Mode::HivedPush  ? "HivedPush"
                                                  : "Install"},
              {"cluster", p.cluster_dir},
              {"plan", plan.to_json()}};
  if (!azure_doc.is_null()) doc["azure"] = azure_doc;
  if (!o.hived_doc.is_null()) doc["hived"] = o.hived_doc;
  auto finish = [&](int rc) {
    if (json && o.capture)
      *o.capture = doc;
    else if (json)
      print_document(document("install", doc), o.output);
    return rc;
  };
  if (!json) print_plan(plan, use_color(g.no_color, 1));
  if (!plan.ok()) {
    if (!json)
      std::fprintf(stderr, "%s: the hosts above must be fixed first; nothing was changed\n", verb);
    return finish(failure_code(plan));
  }
  if (!plan.changed()) {
    if (!json) std::printf("nothing to do\n");
    if (!json && mode == Mode::Install && !o.hosts.dry_run && o.hosts.limit.empty())
      print_cluster_add(p);
    return finish(azure_changed ? kExitChanges : kExitOk);
  }
  if (o.hosts.dry_run) {
    if (!json) std::printf("dry run: nothing was changed on any host\n");
    return finish(kExitChanges);
  }
  if (!o.yes) {
    if (!is_tty(0) || !is_tty(2)) {
      print_error(std::string("not a terminal: pass --yes to ") + verb + " without a confirmation");
      return finish(kExitUsage);
    }
    std::string q = std::string(reset ? "Reset" : "Apply") + " these changes?";
    if (!confirm(q.c_str())) {
      std::fprintf(stderr, "nothing was changed\n");
      return finish(kExitOk);
    }
  }

  eo.dry_run = false;
  // Where each host changes first, for reading its observations ahead.
  for (const auto& h : plan.hosts)
    for (const auto& pr : h.phases)
      if (pr.state == pai::deploy::PhaseResult::State::Planned)
        eo.planned_changes[h.host].insert(pr.phase);
  eo.log_dir = state_dir + "/logs";
  eo.on_event = [&](const pai::deploy::Event& e) {
    if (!g.quiet) print_event(e, color, g.verbose);
  };
  pai::deploy::RunResult result = pai::deploy::Engine(transport, eo).run(p.specs, phases);
  doc["result"] = result.to_json();
  if (!json) {
    if (result.ok()) {
      std::printf("%s: done in %.1f s (logs in %s/logs)\n", verb, result.ms / 1000,
                  state_dir.c_str());
      if (!reset) print_cluster_add(p);
    } else {
      std::printf("%s: FAILED after %.1f s; a re-run resumes where it stopped (logs in %s/logs)\n",
                  verb, result.ms / 1000, state_dir.c_str());
    }
  }
  if (!result.ok()) return finish(failure_code(result));
  return finish(result.changed() ? kExitChanges : kExitOk);
}

// `azure`: the install/reset Azure flags (node add|remove have their own).
void add_common(CLI::App& cmd, InstallOptions& o, Globals& g, bool reset, bool azure = true) {
  add_hosts_options(&cmd, o.hosts);
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
      ->check(CLI::Range(1, 86400))
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

}  // namespace

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

void validate_config_pull(const PullOptions& o, Usage& u) {
  validate_install(o.install, "config pull", u);
  if (!o.out.empty())
    u.error_if(pai::util::path_exists(o.out) && !pai::util::is_directory(o.out),
               "--out " + o.out + " exists and is not a directory",
               "config pull writes the cluster files into a directory");
}

void complete_node(NodeOptions& o) {
  auto& paths = o.install.hosts.paths;
  if (paths.size() > 1) {
    o.nodes.assign(paths.begin() + 1, paths.end());
    paths.resize(1);
  }
  o.interactive = is_tty(0) && is_tty(2);
}

void validate_node_add(const NodeOptions& o, Usage& u) {
  validate_install(o.install, "node add", u);
  if (o.azure_pool.empty()) {
    u.error_if(o.count != 0, "--count goes with --azure POOL",
               "on-prem hosts are named: paictl node add CLUSTER_DIR HOST...");
    u.error_if(o.nodes.empty() && !o.install.hosts.paths.empty(),
               "node add needs at least one host",
               "paictl node add CLUSTER_DIR HOST... (hosts of layout.yaml), or --azure POOL "
               "--count N");
  } else {
    u.error_if(!o.nodes.empty(),
               "node add --azure POOL takes the cluster directory only (Azure names the new VMs)",
               "paictl node add CLUSTER_DIR --azure POOL --count N");
  }
}

void validate_node_remove(const NodeOptions& o, Usage& u) {
  validate_install(o.install, "node remove", u);
  u.error_if(o.nodes.empty() && !o.install.hosts.paths.empty(),
             "node remove needs at least one host", "paictl node remove CLUSTER_DIR HOST...");
  if (!o.hived.empty())
    u.error_if(o.hived.rfind("http://", 0) != 0 && o.hived.rfind("https://", 0) != 0,
               "--hived " + o.hived + " is not an http:// or https:// URL",
               "HiveD's web server listens on :30096, e.g. --hived http://10.0.0.1:30096");
  u.error_if(!o.install.yes && !o.install.hosts.dry_run && !o.interactive,
             "not a terminal: pass --yes to remove nodes without a confirmation",
             "or --dry-run to see what would be removed");
}

namespace {

// run steps over a copy: the runs fill their options in as they go.
template <class Options, class Fn>
auto on_copy(Fn fn) {
  return [fn](const Options& o, Globals& g) {
    Options c = o;
    return fn(c, g);
  };
}

}  // namespace

void build_install(CLI::App& cmd, Globals& g) {
  auto o = std::make_shared<InstallOptions>();
  add_common(cmd, *o, g, false);
  cmd.footer(
      "EXIT STATUS:\n"
      "  0 done or nothing to do, 1 a phase or a pre-install check failed, 2 bad usage or "
      "invalid cluster files,\n"
      "  3 a host could not be reached; with --detailed-exitcode: 0 nothing to do, 2 changes, 1 "
      "any error\n");
  define_command(
      cmd, g, o,
      {.validate = [](const InstallOptions& o, Usage& u) { validate_install(o, "install", u); },
       .run = on_copy<InstallOptions>(
           [](InstallOptions& o, Globals& g) { return run_install(o, g, Mode::Install); })});
}

void build_reset(CLI::App& cmd, Globals& g) {
  auto o = std::make_shared<InstallOptions>();
  add_common(cmd, *o, g, true);
  define_command(
      cmd, g, o,
      {.validate = [](const InstallOptions& o, Usage& u) { validate_install(o, "reset", u); },
       .run = on_copy<InstallOptions>(
           [](InstallOptions& o, Globals& g) { return run_install(o, g, Mode::Reset); })});
}

// ------------------------------------------------------------------ day 2

namespace {

// The master of a prepared cluster.
const pai::deploy::HostSpec* master_of(const Prepared& p) {
  for (const auto& h : p.specs)
    if (h.master) return &h;
  return nullptr;
}

// The cluster files as the running cluster has them (config pull|diff).
int fetch_remote_files(InstallOptions& o, const Globals& g, const char* verb, Prepared& p,
                       pai::deploy::ClusterFiles& remote) {
  if (int rc = prepare(o, g, p); rc >= 0) return rc;
  const auto* master = master_of(p);
  pai::remote::SshTransport transport;
  transport.set_password(p.hosts.ssh_password);
  auto r = pai::deploy::run_on_master(transport, *master,
                                      pai::deploy::get_cluster_files_script(p.settings.openpai.ns));
  if (!r.ok() || r.exit_status != 0) {
    print_error(std::string(verb) + ": reading the cluster files on " + master->name +
                " failed: " + (r.ok() ? pai::util::trim(r.err).data() : r.error));
    return kExitRemote;
  }
  remote = pai::deploy::parse_cluster_files(r.out);
  std::fill(r.out.begin(), r.out.end(), '\0');
  if (remote.empty()) {
    print_error(std::string(verb) + ": the cluster of " + p.cluster_dir +
                " holds no cluster files (paictl install or paictl config push puts them there)");
    return kExitRemote;
  }
  return -1;
}

int run_config_pull(PullOptions& po, const Globals& g) {
  Prepared p;
  pai::deploy::ClusterFiles remote;
  if (int rc = fetch_remote_files(po.install, g, "config pull", p, remote); rc >= 0) return rc;
  std::string dir = po.out.empty() ? p.cluster_dir : po.out;
  (void)pai::util::make_directories(dir, 0700);
  auto local = pai::deploy::read_cluster_files(dir);
  // Nothing the operator has is overwritten without --force.
  for (const auto& [name, content] : remote) {
    auto it = local.find(name);
    if (it != local.end() && it->second != content && !po.force) {
      print_error(dir + "/" + name +
                  " differs from the cluster's; paictl config diff shows how, --force replaces it");
      return kExitUsage;
    }
  }
  for (const auto& [name, content] : remote) {
    auto err = pai::util::write_file_atomic(dir + "/" + name, content,
                                            pai::deploy::secret_file(name) ? 0600 : 0644);
    if (!err.ok()) {
      print_error(err.error().message);
      return kExitUsage;
    }
    std::printf("%s/%s\n", dir.c_str(), name.c_str());
  }
  return kExitOk;
}

int run_config_diff(InstallOptions& o, const Globals& g) {
  Prepared p;
  pai::deploy::ClusterFiles remote;
  if (int rc = fetch_remote_files(o, g, "config diff", p, remote); rc >= 0) return rc;
  auto local = pai::deploy::read_cluster_files(p.cluster_dir);
  std::set<std::string> names;
  for (const auto& [n, c] : remote) names.insert(n);
  for (const auto& [n, c] : local) names.insert(n);
  bool differ = false;
  for (const auto& n : names) {
    std::string a = remote.count(n) ? remote[n] : "";
    std::string b = local.count(n) ? local[n] : "";
    std::string d = pai::deploy::file_diff(n, a, b);
    if (!d.empty()) {
      differ = true;
      std::printf("%s", d.c_str());
    }
  }
  if (!differ) std::printf("the cluster's files are the same as %s\n", p.cluster_dir.c_str());
  return differ ? kExitFindings : kExitOk;
}

// ---- the HiveD config of node add|remove (planner/node_cells.h)

struct HivedEdit {
  std::string services_file, layout_file;
  std::string services_before, services_after;
  std::string layout_before, layout_after;
  pai::planner::NodeCellsEdit edit;
  std::string master;  // the master's hostname, for the push
  bool services_changed() const { return services_after != services_before; }
  bool layout_changed() const { return layout_after != layout_before; }
};

// The cluster's files as they are. -1, or an exit code.
int load_edit(const std::string& dir, pai::config::CheckOutcome& loaded, HivedEdit& h) {
  loaded = pai::config::check_paths({dir});
  if (loaded.clusters.empty() || !loaded.clusters[0].layout) {
    print_error(dir + " has no layout.yaml");
    return kExitUsage;
  }
  const auto& c = loaded.clusters[0];
  h.layout_file = c.layout->file;
  h.services_file = c.services ? c.services->file : dir + "/services-configuration.yaml";
  auto l = pai::util::read_file(h.layout_file);
  if (!l.ok()) {
    print_error(h.layout_file + ": " + l.error().message);
    return kExitUsage;
  }
  h.layout_before = h.layout_after = *l;
  if (c.services) {
    auto sv = pai::util::read_file(h.services_file);
    if (!sv.ok()) {
      print_error(h.services_file + ": " + sv.error().message);
      return kExitUsage;
    }
    h.services_before = h.services_after = *sv;
  }
  for (const auto& m : c.layout->machines)
    if (m.master) h.master = m.hostname;
  return -1;
}

int edit_failed(const pai::planner::NodeCellsEdit& e) {
  print_error("HiveD config: " + e.error + (e.hint.empty() ? "" : "\n  hint: " + e.hint));
  return kExitUsage;
}

// The planner's profiles of the Azure pools' VM sizes (layouts/), by the pools'
// machine-types: a machine-type without cells gets its chain from them.
pai::planner::ChainProfiles azure_chain_profiles(const pai::config::Cluster& c) {
  pai::planner::ChainProfiles out;
  if (!c.config || !c.config->azure) return out;
  std::string dir = layouts_dir();
  for (const auto& p : c.config->azure->pools) {
    std::string name = pai::planner::azure_profile_name(p.sku);
    if (p.machine_type.empty() || name.empty() || out.count(p.machine_type)) continue;
    pai::diag::List ignored;  // no profile: the node joins without cells, with a warning
    if (auto prof = pai::planner::load_profile(dir, name, ignored))
      out.emplace(p.machine_type, std::move(*prof));
  }
  return out;
}

// node add: the new hosts' cells. `hosts` without a machine-type take it from
// layout.yaml; `only_new`: hosts with cells already are left out quietly.
int plan_hived_add(const std::string& dir, std::vector<std::pair<std::string, std::string>> hosts,
                   const std::string& vc, bool check, HivedEdit& h, bool only_new = false) {
  pai::config::CheckOutcome loaded;
  if (int rc = load_edit(dir, loaded, h); rc >= 0) return rc;
  const auto& c = loaded.clusters[0];
  if (!c.services) return -1;
  if (only_new && c.model)
    std::erase_if(hosts, [&](const auto& x) { return c.model->node_index.count(x.first) > 0; });
  for (auto& [name, sku] : hosts)
    if (sku.empty())
      if (const auto* m = c.layout->find_machine(name)) sku = m->machine_type;
  // Hosts not in layout.yaml are refused by the join's own checks.
  std::erase_if(hosts, [](const auto& h) { return h.second.empty(); });
  h.edit = pai::planner::add_node_cells(h.services_before, h.layout_before, c, hosts, vc, check,
                                        azure_chain_profiles(c));
  if (!h.edit.ok()) return edit_failed(h.edit);
  h.services_after = h.edit.text;
  return -1;
}

// node remove: the nodes' cells, and (`from_layout`) their layout.yaml entries.
int plan_hived_remove(const std::string& dir, const std::vector<std::string>& nodes,
                      const std::string& vc, bool from_layout, HivedEdit& h) {
  pai::config::CheckOutcome loaded;
  if (int rc = load_edit(dir, loaded, h); rc >= 0) return rc;
  const auto& c = loaded.clusters[0];
  std::string layout = pai::planner::remove_layout_machines(h.layout_before, *c.layout, nodes);
  if (from_layout) h.layout_after = layout;
  if (!c.services) return -1;
  h.edit = pai::planner::remove_node_cells(h.services_before, layout, c, nodes, vc);
  if (!h.edit.ok()) return edit_failed(h.edit);
  h.services_after = h.edit.text;
  return -1;
}

Json hived_edit_json(const HivedEdit& h) {
  return {{"changes", h.edit.changes},
          {"warnings", h.edit.warnings},
          {"restartsHived", h.services_changed()},
          {"diff", pai::planner::unified_diff(h.services_before, h.services_after,
                                              "a/services-configuration.yaml",
                                              "b/services-configuration.yaml")}};
}

void print_hived_edit(const HivedEdit& h) {
  for (const auto& w : h.edit.warnings) print_warning("HiveD config: " + w);
  if (!h.services_changed()) {
    if (!h.services_before.empty()) std::printf("HiveD config: unchanged\n");
    std::fflush(stdout);
    return;
  }
  std::printf("HiveD config (%s):\n", h.services_file.c_str());
  for (const auto& c : h.edit.changes) std::printf("  %s\n", c.c_str());
  std::printf("%s", pai::planner::unified_diff(h.services_before, h.services_after,
                                               "a/services-configuration.yaml",
                                               "b/services-configuration.yaml")
                        .c_str());
  std::printf(
      "  then: the new HiveD config is pushed and HiveD restarts with it (the last step; HiveD "
      "reads its config only when it starts)\n");
  std::fflush(stdout);
}

// Writes the changed files, then pushes them to the master: the hived phase (a
// changed config restarts HiveD) and the config phase. The last step.
int push_hived_edit(const InstallOptions& base, const Globals& g, const HivedEdit& h,
                    Json* capture = nullptr) {
  if (!h.services_changed() && !h.layout_changed()) return kExitOk;
  if (h.layout_changed())
    if (auto w = pai::util::write_file_atomic(h.layout_file, h.layout_after, 0644); !w.ok()) {
      print_error(h.layout_file + ": " + w.error().message);
      return kExitUsage;
    }
  if (h.services_changed())
    if (auto w = pai::util::write_file_atomic(h.services_file, h.services_after, 0600); !w.ok()) {
      print_error(h.services_file + ": " + w.error().message);
      return kExitUsage;
    }
  InstallOptions o = base;
  o.hosts.dry_run = false;
  o.yes = true;
  o.skip_azure = true;
  o.azure_doc = Json();
  o.hosts.limit = {h.master};
  o.capture = capture;
  if (!g.quiet && h.services_changed())
    std::fprintf(stderr, "hived: pushing the new HiveD config; HiveD restarts with it\n");
  int rc = run_install(o, g, Mode::HivedPush);
  if (rc != kExitOk && rc != kExitChanges)
    print_error("the cluster files are updated, but pushing them failed; paictl config push " +
                base.hosts.paths[0] + " retries");
  return rc;
}

int plan_azure_vm_cells(InstallOptions& o, const Globals& g, std::string& pending_master) {
  if (o.hosts.paths.size() != 1) return -1;
  const std::string& dir = o.hosts.paths[0];
  auto loaded = pai::config::check_paths({dir});
  if (loaded.clusters.empty() || !loaded.clusters[0].layout || !loaded.clusters[0].config ||
      !loaded.clusters[0].config->azure)
    return -1;
  const auto& c = loaded.clusters[0];
  const auto& az = *c.config->azure;
  std::map<std::string, int64_t> have;  // pool -> its VMs in layout.yaml
  bool master = false;
  for (const auto& m : c.layout->machines) {
    if (!m.azure_pool.empty()) ++have[m.azure_pool];
    master |= m.master;
  }
  if (const auto* mp = az.master_pool(); mp && !master) pending_master = mp->name;
  std::vector<std::pair<std::string, std::string>> hosts;
  Json planned = Json::array();
  for (const auto& pool : az.pools) {
    if (pool.master || pool.machine_type.empty()) continue;
    for (int64_t i = have[pool.name] + 1; i <= pool.count; ++i) {
      // Azure names the VMs when it creates them: placeholders until then.
      std::string name = "new-" + pool.name + "-" + std::to_string(i);
      hosts.emplace_back(name, pool.machine_type);
      planned.push_back({{"name", name},
                         {"pool", pool.name},
                         {"sku", pool.sku},
                         {"machineType", pool.machine_type}});
    }
  }
  if (hosts.empty()) return -1;
  HivedEdit h;
  if (int rc = plan_hived_add(dir, hosts, "", false, h); rc >= 0) return rc;
  bool json = is_structured(o.output);
  if (!json && !g.quiet) {
    std::printf(
        "HiveD cells of the %zu VM%s Azure will create (named new-POOL-N until Azure "
        "names them):\n",
        hosts.size(), hosts.size() == 1 ? "" : "s");
    print_hived_edit(h);
  }
  o.hived_doc = hived_edit_json(h);
  o.hived_doc["plannedMachines"] = planned;
  return -1;
}

int checks_before_azure(InstallOptions& o, const Globals& g, const Json& azure_plan) {
  Prepared p;
  if (int rc = prepare(o, g, p, /*need_master=*/false); rc >= 0) return rc;
  if (p.specs.empty()) return -1;  // every host is a VM still to be created
  bool json = is_structured(o.output);
  pai::deploy::PhaseList phases;
  for (auto& ph : pai::deploy::install_phases(p.settings))
    if (ph->name() == "checks") phases.push_back(std::move(ph));
  if (phases.empty()) return -1;
  pai::remote::SshTransport transport;
  transport.set_password(p.hosts.ssh_password);
  pai::deploy::Masker masker;
  masker.add(p.hosts.ssh_password.reveal());
  masker.add(p.settings.sudo_password.reveal());
  pai::deploy::EngineOptions eo;
  eo.parallel = static_cast<size_t>(o.hosts.parallel);
  eo.masker = &masker;
  eo.dry_run = true;
  if (!g.quiet && !json)
    std::fprintf(stderr,
                 "install: the pre-install checks on %zu host%s before anything is created in "
                 "Azure...\n",
                 p.specs.size(), p.specs.size() == 1 ? "" : "s");
  pai::deploy::RunResult r = pai::deploy::Engine(transport, eo).run(p.specs, phases);
  if (r.ok()) return -1;
  if (json) {
    Json doc = {{"apiVersion", "paictl.install/v1"},
                {"kind", "Install"},
                {"cluster", p.cluster_dir},
                {"azure", azure_plan},
                {"plan", r.to_json()}};
    print_document(document("install", std::move(doc)), o.output);
  } else {
    print_plan(r, use_color(g.no_color, 1));
    std::fprintf(stderr,
                 "install: the hosts above must be fixed first; nothing was created or changed in "
                 "Azure, nor on any host\n");
  }
  return failure_code(r);
}

int add_azure_vm_cells(InstallOptions& o, const Globals& g, const Json& azure_doc) {
  if (!azure_doc.is_object() || !azure_doc.contains("machines") || o.hosts.paths.size() != 1)
    return -1;
  std::vector<std::pair<std::string, std::string>> vms;
  for (const auto& m : azure_doc["machines"])
    if (m.value("role", "worker") != "master")  // the master runs no jobs: no cells
      vms.emplace_back(m.value("hostname", ""), m.value("machineType", ""));
  if (vms.empty()) return -1;
  HivedEdit h;
  if (int rc = plan_hived_add(o.hosts.paths[0], vms, "", true, h, true); rc >= 0) return rc;
  bool json = is_structured(o.output);
  if (!h.services_changed()) {
    if (!json && !g.quiet)
      for (const auto& w : h.edit.warnings) print_warning("HiveD config: " + w);
    return -1;
  }
  if (!json && !g.quiet) print_hived_edit(h);
  o.hived_doc = hived_edit_json(h);
  if (auto w = pai::util::write_file_atomic(h.services_file, h.services_after, 0600); !w.ok()) {
    print_error(h.services_file + ": " + w.error().message);
    return kExitUsage;
  }
  return -1;
}

// The running groups that use the cells of removed nodes, from the live HiveD
// (`url`): lib/hived's diff of the configs before and after. -1 when none do
// (or --force), else an exit code; `doc` gets them.
int check_running_groups(const std::string& url, const HivedEdit& h, bool force,
                         const std::vector<std::string>& nodes, const Globals& g, Json& doc) {
  if (url.empty() || !h.services_changed()) return -1;
  char tmpl[] = "/tmp/paictl-node-XXXXXX";
  const char* tmp = ::mkdtemp(tmpl);
  if (!tmp) {
    print_error("node remove: no temporary directory for the new HiveD config");
    return kExitUsage;
  }
  std::string dir = tmp;
  std::string next = dir + "/services-configuration.yaml";
  (void)pai::util::write_file_atomic(next, h.services_after, 0600);
  hivedcli::HivedOptions ho;
  ho.hived = url;
  int rc = kExitOk;
  auto in = hivedcli::load_diff_input(h.services_file, next, true, "", ho, g, rc);
  std::remove(next.c_str());
  ::rmdir(dir.c_str());
  if (!in) return rc == kExitOk ? kExitRemote : rc;
  std::string err;
  auto d = pai::hived::diff_configs(*in->old_model, *in->new_model, in->groups, in->bad, err);
  if (!err.empty()) {
    print_error("node remove: the HiveD diff: " + err);
    return kExitUsage;
  }
  Json groups = Json::array();
  std::vector<std::string> names;
  for (const auto& gc : d.groups) {
    if (gc.effect == pai::hived::GroupEffect::Keeps) continue;
    groups.push_back({{"name", gc.name},
                      {"vc", gc.vc},
                      {"effect", std::string(pai::hived::to_string(gc.effect))},
                      {"reason", gc.reason}});
    names.push_back(gc.name + " (VC " + gc.vc + ", " +
                    std::string(pai::hived::to_string(gc.effect)) + ")");
  }
  doc = groups;
  if (names.empty()) {
    if (!g.quiet)
      std::fprintf(stderr, "hived: no running group uses %s (%s)\n",
                   pai::util::join(nodes, ", ").c_str(), in->source_detail.c_str());
    return -1;
  }
  std::string what = "running groups use the cells of " + pai::util::join(nodes, ", ") + ": " +
                     pai::util::join(names, ", ");
  if (force) {
    print_warning(what + "; removing anyway (--force)");
    return -1;
  }
  print_error("node remove: " + what +
              "\n  hint: let them finish (or stop them) first; --force removes the node anyway");
  return kExitFindings;
}

// The hosts' part of an install document (its plan, and what was done) for
// node add|remove's own document.
Json run_part(const Json& install_doc) {
  Json out = Json::object();
  if (!install_doc.is_object()) return out;
  for (const char* k : {"plan", "result"})
    if (install_doc.contains(k)) out[k] = install_doc[k];
  return out;
}

// node add|remove -o json|yaml: one document, printed once whichever way the command ends.
struct NodeDoc {
  Json doc;
  std::string format;
  bool json = false;
  Json join, push;  // the install documents of the join (or reset) and of the push
  const char* run_key = "join";
  const char* doc_kind;
  NodeDoc(const std::string& output, const char* api_kind, const char* kind,
          const std::string& cluster)
      : doc({{"apiVersion", api_version(api_kind)}, {"kind", kind}, {"cluster", cluster}}),
        format(output),
        json(is_structured(output)),
        doc_kind(api_kind) {}
  int done(int rc) {
    if (!json) return rc;
    if (!join.is_null()) doc[run_key] = run_part(join);
    if (!push.is_null()) doc["push"] = run_part(push);
    print_document(document(doc_kind, doc), format);
    return rc;
  }
};

// node add DIR HOST... (hosts already in layout.yaml), or node add DIR --azure
// POOL --count N (the pool's scale set grows, its new VMs go into layout.yaml):
// then the same join, install --limit of those hosts.
int run_node_add(NodeOptions& no, const Globals& g) {
  InstallOptions& o = no.install;
  bool json = is_structured(o.output);
  NodeDoc out(o.output, "nodeAdd", "NodeAdd", o.hosts.paths[0]);
  out.doc["dryRun"] = o.hosts.dry_run;
  o.capture = &out.join;
  if (no.azure_pool.empty()) {
    o.hosts.limit.insert(o.hosts.limit.end(), no.nodes.begin(), no.nodes.end());
    HivedEdit h;
    std::vector<std::pair<std::string, std::string>> hosts;
    for (const auto& n : split_names(o.hosts.limit)) hosts.emplace_back(n, "");
    if (int rc = plan_hived_add(o.hosts.paths[0], hosts, no.vc, true, h); rc >= 0) return rc;
    if (!json) print_hived_edit(h);
    std::vector<std::string> names;
    for (const auto& x : hosts) names.push_back(x.first);
    out.doc["nodes"] = names;
    out.doc["hived"] = hived_edit_json(h);
    int rc = run_install(o, g, Mode::Install);
    if (o.hosts.dry_run || (rc != kExitOk && rc != kExitChanges)) return out.done(rc);
    int push = push_hived_edit(o, g, h, &out.push);
    return out.done(push == kExitOk || push == kExitChanges ? rc : push);
  }
  std::string dir = o.hosts.paths[0];
  std::vector<std::string> added;
  Json az;
  int count = no.count == 0 ? 1 : no.count;
  HivedEdit planned;
  if (!no.vc.empty() || o.hosts.dry_run) {
    // Refuse a wrong --vc before Azure changes; a dry run shows the cells with
    // placeholders for the VMs' names (Azure names them).
    HivedEdit h;
    std::vector<std::pair<std::string, std::string>> hosts;
    std::string sku;
    {
      auto loaded = pai::config::check_paths({dir});
      if (!loaded.clusters.empty() && loaded.clusters[0].config && loaded.clusters[0].config->azure)
        for (const auto& p : loaded.clusters[0].config->azure->pools)
          if (p.name == no.azure_pool) sku = p.machine_type;
    }
    for (int i = 1; i <= count; ++i) hosts.emplace_back("new-vm-" + std::to_string(i), sku);
    if (!sku.empty())
      if (int rc = plan_hived_add(dir, hosts, no.vc, false, h); rc >= 0) return rc;
    planned = h;
  }
  int rc = run_azure_grow(o.azure, dir, g, no.azure_pool, count, o.hosts.dry_run, o.yes, json,
                          added, az);
  if (rc != -1) {
    if (o.hosts.dry_run && !json) print_hived_edit(planned);
    if (az.is_null()) return rc;  // refused before Azure was read
    out.doc["nodes"] = added;
    out.doc["azure"] = az;
    out.doc["hived"] = hived_edit_json(planned);
    return out.done(rc);
  }
  // The VMs exist and are in layout.yaml: they join as on-prem hosts do.
  o.hosts.limit = added;
  o.skip_azure = true;
  o.yes = true;  // the operator confirmed the whole change above
  out.doc["nodes"] = added;
  out.doc["azure"] = az;
  HivedEdit h;
  std::vector<std::pair<std::string, std::string>> hosts;
  for (const auto& a : added) hosts.emplace_back(a, "");
  if (int e = plan_hived_add(dir, hosts, no.vc, true, h); e >= 0) return out.done(e);
  if (!json) print_hived_edit(h);
  out.doc["hived"] = hived_edit_json(h);
  rc = run_install(o, g, Mode::Install);
  if (rc != kExitOk && rc != kExitChanges) {
    print_error("node add: the new VMs are in layout.yaml; paictl node add " + dir + " " +
                pai::util::join(added, " ") + " resumes their join");
    return out.done(rc);
  }
  int push = push_hived_edit(o, g, h, &out.push);
  return out.done(push == kExitOk || push == kExitChanges ? rc : push);
}

int run_node_remove(NodeOptions& no, const Globals& g) {
  InstallOptions& o = no.install;
  o.hosts.limit.insert(o.hosts.limit.end(), no.nodes.begin(), no.nodes.end());
  bool json = is_structured(o.output);
  Prepared p;
  if (int rc = prepare(o, g, p); rc >= 0) return rc;
  const auto* master = master_of(p);
  std::vector<std::string> nodes;
  for (const auto& h : p.specs) {
    if (!h.selected) continue;
    if (h.master) {
      print_error("node remove: " + h.name + " is the master; paictl reset removes the cluster");
      return kExitUsage;
    }
    nodes.push_back(h.name);
  }
  // With --azure every node must be a VM of a pool; nothing changes before that is known.
  AzureRemovalPtr azure;
  if (no.azure)
    if (int rc = azure_removal_plan(o.azure, p.cluster_dir, g, nodes, azure); rc >= 0) return rc;
  // The nodes' cells leave the HiveD config (and on-prem hosts layout.yaml; the
  // Azure step writes layout.yaml from what Azure shows).
  HivedEdit hived;
  if (int rc = plan_hived_remove(p.cluster_dir, nodes, no.vc, !no.azure, hived); rc >= 0) return rc;
  Json groups;
  if (int rc = check_running_groups(no.hived, hived, no.force, nodes, g, groups); rc >= 0)
    return rc;
  if (no.hived.empty() && hived.services_changed() && !g.quiet)
    print_warning(
        "node remove: the running groups were not checked (--hived URL reads them "
        "from HiveD's inspect API)");

  std::string kubectl =
      "kubectl --kubeconfig=/etc/kubernetes/admin.conf --cache-dir=/etc/paictl/kube-cache";
  auto node_script = [&](const std::string& n) {
    std::string q = pai::util::shell_quote(n);
    std::string script;
    if (no.drain)
      script += kubectl + " drain " + q + " --ignore-daemonsets --delete-emptydir-data --timeout=" +
                std::to_string(o.wait_s) + "s\n";
    script += kubectl + " delete node " + q + " --ignore-not-found --wait=false\n";
    return script;
  };
  NodeDoc out(o.output, "nodeRemove", "NodeRemove", p.cluster_dir);
  out.run_key = "reset";
  out.doc["dryRun"] = o.hosts.dry_run;
  out.doc["nodes"] = nodes;
  out.doc["drain"] = no.drain;
  out.doc["hived"] = hived_edit_json(hived);
  if (!groups.is_null()) out.doc["runningGroups"] = groups;
  Json& doc = out.doc;
  if (o.hosts.dry_run) {
    if (!json) {
      std::printf("on %s:\n", master->name.c_str());
      for (const auto& n : nodes) {
        std::string script = node_script(n);
        for (auto line : pai::util::split(script, '\n'))
          if (!line.empty()) std::printf("  %s\n", std::string(line).c_str());
      }
    }
    if (!json) {
      print_hived_edit(hived);
      if (hived.layout_changed())
        std::printf("layout.yaml: %s leave%s machine-list\n", pai::util::join(nodes, ", ").c_str(),
                    nodes.size() == 1 ? "s" : "");
    }
    if (azure) {
      doc["azure"] = azure_removal_json(*azure);
      if (!json) {
        std::printf("Azure:\n");
        for (const auto& l : azure_removal_lines(*azure)) std::printf("  %s\n", l.c_str());
        std::printf("dry run: nothing was changed in Azure or on any host\n");
      }
      return out.done(kExitChanges);
    }
    if (json) return out.done(kExitChanges);
    std::printf("then reset %s:\n", pai::util::join(nodes, ", ").c_str());
    std::fflush(stdout);
    return run_install(o, g, Mode::Reset);
  }
  std::string question =
      "Remove " + pai::util::join(nodes, ", ") + " from the cluster" +
      (azure ? " and delete the VM" + std::string(nodes.size() == 1 ? "" : "s") + " in Azure?"
             : "?");
  if (!o.yes && !confirm(question.c_str())) return out.done(kExitOk);
  pai::remote::SshTransport transport;
  transport.set_password(p.hosts.ssh_password);
  for (const auto& n : nodes) {
    auto r = pai::deploy::run_on_master(transport, *master, "set -e\n" + node_script(n));
    if (!r.ok() || r.exit_status != 0) {
      print_error("node remove: " + std::string(no.drain ? "draining and deleting" : "deleting") +
                  " the node " + n +
                  " failed: " + (r.ok() ? std::string(pai::util::trim(r.err)) : r.error));
      return out.done(kExitRemote);
    }
    if (!g.quiet)
      std::fprintf(stderr, "%-14s %-14s %s\n", n.c_str(), "node",
                   no.drain ? "drained and deleted" : "deleted");
  }
  if (azure) {
    // The VMs go (nothing on them needs resetting), and the files follow.
    Json az;
    int rc = azure_removal_apply(*azure, g, json, az);
    doc["azure"] = az;
    if (rc != kExitOk) return out.done(rc);
    if (int push = push_hived_edit(o, g, hived, &out.push); push != kExitOk && push != kExitChanges)
      return out.done(push);
    if (!json)
      std::printf(
          "removed %s: the VM%s deleted in Azure; config.yaml, layout.yaml and the HiveD "
          "config updated and pushed\n",
          pai::util::join(nodes, ", ").c_str(), nodes.size() == 1 ? "" : "s");
    return out.done(kExitChanges);
  }
  // Then what install put on the hosts goes, as paictl reset --limit does.
  o.yes = true;
  o.capture = &out.join;
  int rc = run_install(o, g, Mode::Reset);
  if (rc != kExitOk && rc != kExitChanges) return out.done(rc);
  if (int push = push_hived_edit(o, g, hived, &out.push); push != kExitOk && push != kExitChanges)
    return out.done(push);
  if (!json)
    std::printf("removed %s; layout.yaml and the HiveD config updated and pushed\n",
                pai::util::join(nodes, ", ").c_str());
  return out.done(rc == kExitChanges && !o.detailed_exitcode ? kExitOk : rc);
}

}  // namespace

void build_config_push(CLI::App& cmd, Globals& g) {
  auto o = std::make_shared<InstallOptions>();
  add_common(cmd, *o, g, false);
  define_command(
      cmd, g, o,
      {.validate = [](const InstallOptions& o, Usage& u) { validate_install(o, "config push", u); },
       .run = on_copy<InstallOptions>(
           [](InstallOptions& o, Globals& g) { return run_install(o, g, Mode::ConfigPush); })});
}

void build_config_pull(CLI::App& cmd, Globals& g) {
  auto o = std::make_shared<PullOptions>();
  add_common(cmd, o->install, g, false);
  cmd.add_option("--out", o->out, "Write the files here (default: the cluster directory itself)")
      ->type_name("DIR");
  cmd.add_flag("--force", o->force, "Replace local files that differ from the cluster's");
  define_command(cmd, g, o,
                 {.validate = validate_config_pull,
                  .run = on_copy<PullOptions>(
                      [](PullOptions& o, Globals& g) { return run_config_pull(o, g); })});
}

void build_config_diff(CLI::App& cmd, Globals& g) {
  auto o = std::make_shared<InstallOptions>();
  add_common(cmd, *o, g, false);
  cmd.footer(
      "EXIT STATUS:\n  0 the same, 1 the files differ (the diff is printed), 2 bad usage, 3 "
      "the cluster could not be read\n");
  define_command(
      cmd, g, o,
      {.validate = [](const InstallOptions& o, Usage& u) { validate_install(o, "config diff", u); },
       .run = on_copy<InstallOptions>(
           [](InstallOptions& o, Globals& g) { return run_config_diff(o, g); })});
}

void build_node_add(CLI::App& cmd, Globals& g) {
  auto o = std::make_shared<NodeOptions>();
  add_common(cmd, o->install, g, false, false);
  cmd.get_option("--dry-run")
      ->description(
          "Show the plan (with --azure: the scale set's new size and what follows; else "
          "what each phase would change on the hosts), and change nothing");
  cmd.add_option("--azure", o->azure_pool,
                 "Grow this Azure pool (azure.pools[].name) by --count VMs, then join them")
      ->type_name("POOL");
  cmd.add_option("--count", o->count, "With --azure: how many VMs to add (default 1)")
      ->check(CLI::Range(1, 1000));
  cmd.add_option("--vc", o->vc,
                 "Give the new nodes' HiveD cells to this virtual cluster (else they are in no VC: "
                 "jobs use them opportunistically)")
      ->type_name("VC");
  define_command(
      cmd, g, o,
      {.complete = [](NodeOptions& o, const Globals&) { complete_node(o); },
       .validate = validate_node_add,
       .run = on_copy<NodeOptions>([](NodeOptions& o, Globals& g) { return run_node_add(o, g); })});
}

void build_node_remove(CLI::App& cmd, Globals& g) {
  auto o = std::make_shared<NodeOptions>();
  add_common(cmd, o->install, g, true, false);
  cmd.get_option("--dry-run")
      ->description(
          "Show what would be drained, deleted and reset (with --azure: the VMs "
          "deleted and the files' changes), and change nothing");
  cmd.add_flag("--drain", o->drain,
               "Evict the node's pods first (kubectl drain, bounded by --wait), then delete it");
  cmd.add_flag("--azure", o->azure,
               "The nodes are VMs of Azure pools: delete them (with their NICs and OS disks) "
               "through ARM instead of resetting them, and lower their pools' count in "
               "config.yaml");
  cmd.add_option("--vc", o->vc,
                 "The virtual cluster that gives up HiveD cells when the VCs' cells no longer fit "
                 "(needed when several VCs hold cells of the nodes' type)")
      ->type_name("VC");
  cmd.add_option("--hived", o->hived,
                 "HiveD's inspect API (http://MASTER:30096): refuse when running groups use the "
                 "nodes' cells")
      ->type_name("URL");
  cmd.add_flag("--force", o->force, "Remove the nodes even when running groups use their cells");
  define_command(cmd, g, o,
                 {.complete = [](NodeOptions& o, const Globals&) { complete_node(o); },
                  .validate = validate_node_remove,
                  .run = on_copy<NodeOptions>(
                      [](NodeOptions& o, Globals& g) { return run_node_remove(o, g); })});
}

}  // namespace paictl
