#include "install/azure_step.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "azure/provider.h"
#include "config/cluster_files.h"
#include "exit_codes.h"
#include "output/output.h"
#include "util/fs.h"
#include "util/strings.h"

namespace paictl {

namespace {

std::string resolve(const std::string& path, const std::string& dir) {
  if (path.empty()) return path;
  if (path == "~" || path.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    return std::string(home ? home : "") + path.substr(1);
  }
  if (path[0] == '/') return path;
  return dir + "/" + path;
}

}  // namespace

// Not in the anonymous namespace: AzureRemoval (declared in the header) holds one.
struct AzureSession {
  pai::azure::Spec spec;
  std::unique_ptr<pai::http::CurlClient> http;
  std::unique_ptr<pai::azure::TokenSource> tokens;
  std::unique_ptr<pai::azure::ArmClient> arm;
  std::string layout_file;
};

namespace {

// Reads the cluster, builds the spec and signs in (lazily: the first request).
// Returns -1 when ready, kExitOk when config.yaml has no azure section, else an error code.
int open_session(const AzureOptions& a, const std::string& cluster_dir, const Globals& g,
                 AzureSession& s) {
  auto loaded = pai::config::check_paths({cluster_dir});
  if (loaded.clusters.empty() || !loaded.clusters[0].config) return kExitOk;
  const auto& cluster = loaded.clusters[0];
  if (!cluster.config->azure) return kExitOk;
  for (const auto& d : loaded.diagnostics.items())
    if (d.severity == pai::diag::Severity::Error &&
        (d.code[0] == 'A' || d.code == "X007" || d.file.ends_with("config.yaml"))) {
      print_error(d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": " +
                  d.message + (d.hint.empty() ? "" : " (" + d.hint + ")"));
      print_error("paictl check config " + cluster_dir + " shows every finding");
      return kExitUsage;
    }
  const auto& az = *cluster.config->azure;
  s.spec.azure = az;
  if (cluster.services && !cluster.services->cluster_id.empty())
    s.spec.cluster = cluster.services->cluster_id;
  s.layout_file = cluster.layout ? cluster.layout->file : cluster_dir + "/layout.yaml";
  std::string key_file = resolve(az.ssh_public_key_file, cluster_dir);
  auto key = pai::util::read_file(key_file, 64u << 10);
  if (!key.ok()) {
    print_error("azure.ssh-public-key-file " + key_file + ": " + key.error().message);
    return kExitUsage;
  }
  s.spec.ssh_public_key = std::string(pai::util::trim(*key));
  if (s.spec.ssh_public_key.rfind("ssh-", 0) != 0 &&
      s.spec.ssh_public_key.rfind("ecdsa-", 0) != 0) {
    print_error("azure.ssh-public-key-file " + key_file +
                " does not hold an OpenSSH public key (ssh-ed25519 ..., ssh-rsa ...)");
    return kExitUsage;
  }
  s.spec.onprem_prefixes = az.onprem_address_space;
  if (s.spec.onprem_prefixes.empty() && cluster.layout) {
    auto space = pai::config::parse_cidr(az.address_space);
    for (const auto& m : cluster.layout->machines) {
      auto ip = pai::config::parse_cidr(m.hostip + "/32");
      if (ip && !(space && space->contains(*ip)))
        s.spec.onprem_prefixes.push_back(m.hostip + "/32");
    }
  }

  pai::azure::Endpoints ep = pai::azure::endpoints_from_env();
  if (!a.arm_endpoint.empty()) ep.arm = a.arm_endpoint;
  if (!a.authority_host.empty()) ep.authority = a.authority_host;
  if (!a.ca_file.empty()) ep.ca_file = a.ca_file;
  while (ep.arm.size() > 8 && ep.arm.back() == '/') ep.arm.pop_back();
  while (ep.authority.size() > 8 && ep.authority.back() == '/') ep.authority.pop_back();
  pai::http::Options ho;
  ho.tls.ca_file = ep.ca_file;
  ho.retry.max_attempts = 1;  // lib/azure retries, with ARM's rules
  ho.timeout_s = 120;
  s.http = std::make_unique<pai::http::CurlClient>(ho);
  auto log = [verbose = g.verbose](const std::string& line) {
    if (verbose) std::fprintf(stderr, "  %s\n", line.c_str());
  };
  pai::azure::TokenOptions to;
  to.endpoints = ep;
  to.clock = pai::azure::Clock::real();
  to.log = log;
  pai::azure::Identity id{az.tenant, az.client_id, resolve(az.client_secret_file, cluster_dir)};
  auto t = pai::azure::make_token_source(id, *s.http, to);
  if (!t.ok()) {
    print_error(t.error().message + (t.error().hint.empty() ? "" : " (" + t.error().hint + ")"));
    return kExitUsage;
  }
  s.tokens = std::move(t.value());
  pai::azure::ArmOptions ao;
  ao.endpoints = ep;
  ao.clock = pai::azure::Clock::real();
  ao.log = log;
  s.arm = std::make_unique<pai::azure::ArmClient>(*s.http, *s.tokens, ao);
  return -1;
}

void print_azure_plan(const pai::azure::Plan& p, const pai::azure::Spec& s, bool color) {
  std::printf("%sAzure%s (subscription %s, resource group %s, %s)\n", color ? "\x1b[1m" : "",
              color ? "\x1b[0m" : "", s.azure.subscription.c_str(), s.azure.resource_group.c_str(),
              s.azure.location.c_str());
  int n[4] = {0, 0, 0, 0};
  for (const auto& c : p.changes) {
    n[static_cast<int>(c.action)]++;
    std::string extra = c.differences.empty() ? "" : "  " + pai::util::join(c.differences, "; ");
    std::printf("  %-7s %-23s %s%s\n", std::string(pai::azure::to_string(c.action)).c_str(),
                c.resource.kind.c_str(), c.resource.name.c_str(), extra.c_str());
  }
  std::printf("  %d to create, %d to update, %d to delete, %d unchanged\n", n[0], n[1], n[3], n[2]);
  std::fflush(stdout);  // before the progress lines on stderr
}

int remote_failure(const std::string& what, const pai::util::Error& e) {
  print_error(what + ": " + e.message + (e.hint.empty() ? "" : "\n  hint: " + e.hint));
  return kExitRemote;
}

bool confirm_tty(const char* question) {
  if (!is_tty(0) || !is_tty(2)) return false;
  std::fprintf(stderr, "%s [y/N] ", question);
  std::fflush(stderr);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes";
}

std::string write_layout(const AzureSession& s, const std::vector<pai::azure::Machine>& machines,
                         bool* changed) {
  auto cur = pai::util::read_file(s.layout_file);
  if (!cur.ok()) return s.layout_file + ": " + cur.error().message;
  std::string err;
  std::string next = pai::azure::update_layout(*cur, machines, &err);
  if (!err.empty()) return s.layout_file + ": " + err;
  *changed = next != *cur;
  if (!*changed) return "";
  auto w = pai::util::write_file_atomic(s.layout_file, next, 0644);
  return w.ok() ? std::string() : w.error().message;
}

}  // namespace

void add_azure_options(CLI::App& cmd, AzureOptions& o, bool reset) {
  add_azure_endpoint_options(cmd, o);
  if (reset)
    cmd.add_flag("--azure", o.reset_azure,
                 "Delete the cluster's Azure resources (only those tagged paictl.cluster=<id>), "
                 "waiting for each, and drop their VMs from layout.yaml; the on-prem hosts are "
                 "left alone");
  else
    cmd.add_flag("--azure-only", o.azure_only,
                 "Create the Azure resources and write their VMs into layout.yaml, then stop "
                 "(no on-prem phases)");
}

void add_azure_endpoint_options(CLI::App& cmd, AzureOptions& o) {
  cmd.add_option("--arm-endpoint", o.arm_endpoint,
                 "Azure Resource Manager URL (else PAICTL_ARM_ENDPOINT, else "
                 "https://management.azure.com)")
      ->type_name("URL");
  cmd.add_option("--authority-host", o.authority_host,
                 "Sign-in URL (else PAICTL_AUTHORITY_HOST, else https://login.microsoftonline.com)")
      ->type_name("URL");
  cmd.add_option("--ca-file", o.ca_file,
                 "PEM bundle to verify the Azure endpoints with (else PAICTL_CA_FILE, else the "
                 "system store)")
      ->type_name("FILE");
}

int run_azure_install(const AzureOptions& a, const std::string& cluster_dir, const Globals& g,
                      bool dry_run, bool yes, const std::string& format, Json& doc, bool& changed,
                      const std::function<int(const Json& azure_plan)>& before_apply) {
  bool json = is_structured(format);
  changed = false;
  AzureSession s;
  int rc = open_session(a, cluster_dir, g, s);
  if (rc == kExitOk) {
    if (a.azure_only) {
      print_error(cluster_dir + "/config.yaml has no azure: section (docs/azure.md)");
      return kExitUsage;
    }
    return -1;
  }
  if (rc >= 0) return rc;
  if (!g.quiet && !json) std::fprintf(stderr, "install: reading the Azure resources...\n");
  auto plan = pai::azure::plan(*s.arm, s.spec);
  if (!plan.ok()) return remote_failure("azure", plan.error());
  changed = plan->has_changes();
  Json azure = Json::parse(pai::azure::plan_json(*plan, s.spec).dump());
  auto done = [&](int code) {
    doc = azure;
    if (json && a.azure_only)
      print_document(
          document("install",
                   Json{{"kind", "Install"}, {"cluster", cluster_dir}, {"azure", azure}}),
          format);
    return code;
  };
  if (!json) print_azure_plan(*plan, s.spec, use_color(g.no_color, 1));
  if (dry_run) {
    if (!json) std::printf("dry run: nothing was changed in Azure\n");
    if (a.azure_only) return done(changed ? kExitChanges : kExitOk);
    done(-1);
    return -1;
  }
  if (changed && before_apply && !a.azure_only)
    if (int rc = before_apply(azure); rc >= 0) {
      doc = azure;
      return rc;
    }
  if (changed) {
    if (!yes && !confirm_tty("Apply these Azure changes?")) {
      print_error(is_tty(0) ? "nothing was changed"
                            : "not a terminal: pass --yes to install without a confirmation");
      return done(is_tty(0) ? kExitOk : kExitUsage);
    }
    auto r = pai::azure::apply(*s.arm, *plan, [&](const std::string& line) {
      if (!g.quiet && !json) std::fprintf(stderr, "azure: %s\n", line.c_str());
    });
    if (!r.ok()) {
      done(0);
      return remote_failure("azure", r.error());
    }
    azure["result"] = {{"created", r->created}, {"updated", r->updated}, {"deleted", r->deleted}};
  } else if (!json) {
    std::printf("azure: nothing to do\n");
  }
  auto machines = pai::azure::list_machines(*s.arm, s.spec);
  if (!machines.ok()) return done(remote_failure("azure", machines.error()));
  bool layout_changed = false;
  if (std::string err = write_layout(s, *machines, &layout_changed); !err.empty()) {
    print_error(err);
    return done(kExitUsage);
  }
  Json ms = Json::array();
  for (const auto& m : *machines)
    ms.push_back({{"pool", m.pool},
                  {"hostname", m.hostname},
                  {"hostip", m.ip},
                  {"machineType", m.machine_type},
                  {"role", m.master ? "master" : "worker"}});
  azure["machines"] = ms;
  if (!json) {
    std::printf("azure: %zu VM%s in %s%s\n", machines->size(), machines->size() == 1 ? "" : "s",
                s.layout_file.c_str(), layout_changed ? " (updated)" : "");
    for (const auto& m : *machines)
      std::printf("  %-24s %-15s pool %s, machine-type %s%s\n", m.hostname.c_str(), m.ip.c_str(),
                  m.pool.c_str(), m.machine_type.c_str(), m.master ? ", the master" : "");
  }
  auto st = s.arm->stats();
  azure["requests"] = {{"total", st.requests},      {"polls", st.polls},
                       {"throttled", st.throttled}, {"contention", st.contention},
                       {"transient", st.transient}, {"waitedSeconds", st.waited_s}};
  if (a.azure_only) return done(changed || layout_changed ? kExitChanges : kExitOk);
  done(-1);
  return -1;
}

namespace {

const pai::config::AzurePool* find_pool(const AzureSession& s, const std::string& pool) {
  for (const auto& x : s.spec.azure.pools)
    if (x.name == pool) return &x;
  return nullptr;
}

// config.yaml with each named pool's count set; "" and `err` on failure.
std::string with_counts(const AzureSession& s, const std::string& text,
                        const std::map<std::string, int64_t>& counts, std::string& err) {
  std::string next = text;
  for (const auto& [pool, count] : counts) {
    const auto* p = find_pool(s, pool);
    if (!p) continue;
    next =
        pai::azure::replace_integer_at(next, p->count_mark.line, p->count_mark.column, count, &err);
    if (!err.empty()) {
      err = "azure pool " + pool + "'s count: " + err;
      return "";
    }
  }
  return next;
}

}  // namespace

int run_azure_grow(const AzureOptions& a, const std::string& cluster_dir, const Globals& g,
                   const std::string& pool, int add, bool dry_run, bool yes, bool json,
                   std::vector<std::string>& new_hosts, Json& doc) {
  AzureSession s;
  int rc = open_session(a, cluster_dir, g, s);
  if (rc == kExitOk) {
    print_error(cluster_dir + "/config.yaml has no azure: section (docs/azure.md)");
    return kExitUsage;
  }
  if (rc >= 0) return rc;
  const pai::config::AzurePool* p = find_pool(s, pool);
  if (!p) {
    std::vector<std::string> names;
    for (const auto& x : s.spec.azure.pools) names.push_back(x.name);
    print_error("config.yaml has no Azure pool \"" + pool +
                "\" (pools: " + pai::util::join(names, ", ") + ")");
    return kExitUsage;
  }
  if (p->master) {
    print_error("pool " + pool +
                " is the master's (role: master): it has one VM, the cluster's control plane; "
                "grow a worker pool instead");
    return kExitUsage;
  }
  int64_t from = p->count;
  int64_t target = from + add;
  if (target > 1000 || (target > 100 && pai::config::is_infiniband_sku(p->sku))) {
    print_error("pool " + pool + " would have " + std::to_string(target) + " VMs; at most " +
                (pai::config::is_infiniband_sku(p->sku) ? "100 for an InfiniBand size" : "1000"));
    return kExitUsage;
  }
  std::string config_file = cluster_dir + "/config.yaml";
  auto text = pai::util::read_file(config_file);
  if (!text.ok()) {
    print_error(config_file + ": " + text.error().message);
    return kExitUsage;
  }
  std::string err;
  std::string next = with_counts(s, *text, {{pool, target}}, err);
  if (!err.empty()) {
    print_error(config_file + ": " + err);
    return kExitUsage;
  }
  std::string vmss = s.spec.cluster + "-" + pool;
  // What is there now: the VMs before, so that the new ones are known afterwards.
  auto before = pai::azure::list_machines(*s.arm, s.spec);
  if (!before.ok()) return remote_failure("azure", before.error());
  std::set<std::string> had;
  for (const auto& m : *before) had.insert(m.hostname);
  doc = {{"pool", pool}, {"scaleSet", vmss}, {"sku", p->sku}, {"machineType", p->machine_type},
         {"from", from}, {"to", target}};
  if (!json) {
    std::printf("%sAzure%s (subscription %s, resource group %s)\n",
                use_color(g.no_color, 1) ? "\x1b[1m" : "",
                use_color(g.no_color, 1) ? "\x1b[0m" : "", s.spec.azure.subscription.c_str(),
                s.spec.azure.resource_group.c_str());
    std::printf(
        "  update  scale set               %s  sku.capacity: %lld -> %lld (%d new %s VM%s)\n",
        vmss.c_str(), static_cast<long long>(from), static_cast<long long>(target), add,
        p->sku.c_str(), add == 1 ? "" : "s");
    std::printf("  then    config.yaml             azure pool %s count: %lld -> %lld\n",
                pool.c_str(), static_cast<long long>(from), static_cast<long long>(target));
    std::printf("  then    layout.yaml             the new VMs, machine-type %s\n",
                p->machine_type.c_str());
    std::printf(
        "  then    join                    each new VM as paictl node add %s HOST does "
        "(checks, prepare, join, labels)\n",
        cluster_dir.c_str());
    std::fflush(stdout);
  }
  if (dry_run) {
    if (!json) std::printf("dry run: nothing was changed in Azure or on any host\n");
    return kExitChanges;
  }
  if (!yes && !confirm_tty(("Add " + std::to_string(add) + " VM" + (add == 1 ? "" : "s") + " to " +
                            vmss + "?")
                               .c_str())) {
    print_error(is_tty(0) ? "nothing was changed"
                          : "not a terminal: pass --yes to add VMs without a confirmation");
    return is_tty(0) ? kExitOk : kExitUsage;
  }
  if (!g.quiet && !json)
    std::fprintf(stderr, "azure: scale set %s: %lld -> %lld VMs\n", vmss.c_str(),
                 static_cast<long long>(from), static_cast<long long>(target));
  auto r = pai::azure::scale_pool(*s.arm, s.spec, pool, target);
  if (!r.ok()) return remote_failure("azure", r.error());
  // Azure has the VMs: config.yaml follows (only the count changes in the file).
  if (auto w = pai::util::write_file_atomic(config_file, next, 0644); !w.ok()) {
    print_error(config_file + ": " + w.error().message);
    return kExitUsage;
  }
  for (auto& x : s.spec.azure.pools)
    if (x.name == pool) x.count = target;
  auto machines = pai::azure::list_machines(*s.arm, s.spec);
  if (!machines.ok()) return remote_failure("azure", machines.error());
  bool layout_changed = false;
  if (std::string e = write_layout(s, *machines, &layout_changed); !e.empty()) {
    print_error(e);
    return kExitUsage;
  }
  Json added = Json::array();
  for (const auto& m : *machines)
    if (m.pool == pool && !had.count(m.hostname)) {
      new_hosts.push_back(m.hostname);
      added.push_back({{"hostname", m.hostname}, {"hostip", m.ip}, {"instanceId", m.instance_id}});
      if (!g.quiet && !json)
        std::fprintf(stderr, "azure: new VM %s (%s), machine-type %s\n", m.hostname.c_str(),
                     m.ip.c_str(), m.machine_type.c_str());
    }
  doc["added"] = added;
  if (!g.quiet && !json)
    std::fprintf(stderr, "azure: config.yaml (count %lld) and %s updated\n",
                 static_cast<long long>(target), s.layout_file.c_str());
  if (new_hosts.empty()) {
    print_error("azure: scale set " + vmss + " has " + std::to_string(target) +
                " VMs but none of them is new; nothing to join");
    return kExitRemote;
  }
  return -1;
}

struct AzureRemoval {
  AzureSession s;
  std::string cluster_dir;
  std::vector<pai::azure::Machine> machines;                  // to delete
  std::map<std::string, std::pair<int64_t, int64_t>> counts;  // pool -> (from, to)
};

void AzureRemovalDeleter::operator()(AzureRemoval* r) const {
  delete r;
}

int azure_removal_plan(const AzureOptions& a, const std::string& cluster_dir, const Globals& g,
                       const std::vector<std::string>& nodes, AzureRemovalPtr& out) {
  out.reset(new AzureRemoval);
  auto& r = *out;
  r.cluster_dir = cluster_dir;
  int rc = open_session(a, cluster_dir, g, r.s);
  if (rc == kExitOk) {
    print_error(cluster_dir + "/config.yaml has no azure: section (docs/azure.md)");
    return kExitUsage;
  }
  if (rc >= 0) return rc;
  auto all = pai::azure::list_machines(*r.s.arm, r.s.spec);
  if (!all.ok()) return remote_failure("azure", all.error());
  for (const auto& n : nodes) {
    auto it = std::find_if(all->begin(), all->end(), [&](const pai::azure::Machine& m) {
      return m.hostname == pai::util::to_lower(n) || m.ip == n;
    });
    if (it == all->end()) {
      print_error("node remove --azure: " + n + " is not a VM of an Azure pool of " + cluster_dir +
                  " (on-prem hosts: paictl node remove without --azure)");
      return kExitUsage;
    }
    r.machines.push_back(*it);
  }
  for (const auto& m : r.machines) {
    const auto* p = find_pool(r.s, m.pool);
    auto& c = r.counts.try_emplace(m.pool, p->count, p->count).first->second;
    --c.second;
  }
  return -1;
}

std::vector<std::string> azure_removal_lines(const AzureRemoval& r) {
  std::vector<std::string> out;
  for (const auto& m : r.machines)
    out.push_back("delete VM " + m.hostname + " (" + m.ip + ") of scale set " + r.s.spec.cluster +
                  "-" + m.pool + ", instance " + m.instance_id + ": DELETE " +
                  pai::azure::machine_path(r.s.spec, m) + " (its NIC and OS disk go with it)");
  for (const auto& [pool, c] : r.counts)
    out.push_back("config.yaml: azure pool " + pool + " count: " + std::to_string(c.first) +
                  " -> " + std::to_string(c.second));
  for (const auto& m : r.machines)
    out.push_back("layout.yaml: " + m.hostname + " leaves machine-list");
  return out;
}

Json azure_removal_json(const AzureRemoval& r) {
  Json vms = Json::array();
  for (const auto& m : r.machines)
    vms.push_back({{"hostname", m.hostname},
                   {"hostip", m.ip},
                   {"pool", m.pool},
                   {"instanceId", m.instance_id},
                   {"id", pai::azure::machine_path(r.s.spec, m)}});
  Json counts = Json::object();
  for (const auto& [pool, c] : r.counts) counts[pool] = {{"from", c.first}, {"to", c.second}};
  return {{"delete", vms}, {"counts", counts}};
}

int azure_removal_apply(AzureRemoval& r, const Globals& g, bool json, Json& doc) {
  auto& s = r.s;
  doc = azure_removal_json(r);
  auto del = pai::azure::delete_machines(*s.arm, s.spec, r.machines, [&](const std::string& l) {
    if (!g.quiet && !json) std::fprintf(stderr, "azure: %s\n", l.c_str());
  });
  // Whatever happened, the files follow what Azure shows now.
  auto now = pai::azure::list_machines(*s.arm, s.spec);
  if (!now.ok()) return remote_failure("azure", now.error());
  std::set<std::string> left;
  for (const auto& m : *now) left.insert(m.hostname);
  std::map<std::string, int64_t> counts;
  Json gone = Json::array();
  for (const auto& m : r.machines) {
    const auto* p = find_pool(s, m.pool);
    auto it = counts.try_emplace(m.pool, p->count).first;
    if (!left.count(m.hostname)) {
      --it->second;
      gone.push_back(m.hostname);
    }
  }
  doc["deleted"] = gone;
  std::string config_file = r.cluster_dir + "/config.yaml";
  auto text = pai::util::read_file(config_file);
  if (!text.ok()) {
    print_error(config_file + ": " + text.error().message);
    return kExitUsage;
  }
  std::string err;
  std::string next = with_counts(s, *text, counts, err);
  if (!err.empty()) {
    print_error(config_file + ": " + err);
    return kExitUsage;
  }
  if (next != *text)
    if (auto w = pai::util::write_file_atomic(config_file, next, 0644); !w.ok()) {
      print_error(config_file + ": " + w.error().message);
      return kExitUsage;
    }
  bool layout_changed = false;
  if (std::string e = write_layout(s, *now, &layout_changed); !e.empty()) {
    print_error(e);
    return kExitUsage;
  }
  if (!del.ok()) return remote_failure("azure", del.error());
  if (!g.quiet && !json)
    std::fprintf(stderr, "azure: config.yaml and %s updated\n", s.layout_file.c_str());
  return kExitOk;
}

int run_azure_reset(const AzureOptions& a, const std::string& cluster_dir, const Globals& g,
                    bool dry_run, bool yes, const std::string& format) {
  bool json = is_structured(format);
  AzureSession s;
  int rc = open_session(a, cluster_dir, g, s);
  if (rc == kExitOk) {
    print_error(cluster_dir + "/config.yaml has no azure: section (docs/azure.md)");
    return kExitUsage;
  }
  if (rc >= 0) return rc;
  if (dry_run) {
    auto plan = pai::azure::plan(*s.arm, s.spec);
    if (!plan.ok()) return remote_failure("azure", plan.error());
    if (json) {
      print_document(
          document("reset",
                   Json{{"kind", "AzureReset"},
                        {"cluster", cluster_dir},
                        {"dryRun", true},
                        {"azure", Json::parse(pai::azure::plan_json(*plan, s.spec).dump())}}),
          format);
    } else {
      std::printf("reset --azure would delete, in resource group %s, what carries the tag %s=%s:\n",
                  s.spec.azure.resource_group.c_str(), pai::azure::kClusterTag,
                  s.spec.cluster.c_str());
      for (const auto& c : plan->changes)
        if (c.action != pai::azure::Action::Create)
          std::printf("  %-23s %s\n", c.resource.kind.c_str(), c.resource.name.c_str());
      std::printf("dry run: nothing was changed in Azure\n");
    }
    return kExitOk;
  }
  if (!yes && !confirm_tty("Delete this cluster's Azure resources?")) {
    print_error(is_tty(0) ? "nothing was changed"
                          : "not a terminal: pass --yes to reset without a confirmation");
    return is_tty(0) ? kExitOk : kExitUsage;
  }
  auto r = pai::azure::reset(*s.arm, s.spec, [&](const std::string& line) {
    if (!g.quiet && !json) std::fprintf(stderr, "azure: %s\n", line.c_str());
  });
  if (!r.ok()) return remote_failure("azure reset", r.error());
  bool layout_changed = false;
  std::string err = write_layout(s, {}, &layout_changed);
  if (json) {
    print_document(document("reset", Json{{"kind", "AzureReset"},
                                          {"cluster", cluster_dir},
                                          {"dryRun", false},
                                          {"deleted", r->deleted},
                                          {"kept", r->kept}}),
                   format);
  } else {
    std::printf("azure: deleted %zu resource%s\n", r->deleted.size(),
                r->deleted.size() == 1 ? "" : "s");
    for (const auto& d : r->deleted) std::printf("  deleted %s\n", d.c_str());
    for (const auto& k : r->kept) std::printf("  kept    %s\n", k.c_str());
    if (layout_changed)
      std::printf("azure: removed the Azure VMs from %s\n", s.layout_file.c_str());
  }
  if (!err.empty()) print_warning(err);
  return r->deleted.empty() ? kExitOk : kExitChanges;
}

}  // namespace paictl
