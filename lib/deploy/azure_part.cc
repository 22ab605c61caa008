#include "deploy/azure_part.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "config/cluster_files.h"
#include "util/fs.h"
#include "util/strings.h"

namespace pai::deploy {

namespace {

// A path of config.yaml's azure: section: "~/..." under $HOME, relative to the
// cluster directory.
std::string azure_part_resolve(const std::string& path, const std::string& dir) {
  if (path.empty()) return path;
  if (path == "~" || path.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    return std::string(home ? home : "") + path.substr(1);
  }
  if (path[0] == '/') return path;
  return dir + "/" + path;
}

void azure_part_emit(const Callbacks& cb, UseCaseEvent::Kind kind, std::string message = {}) {
  UseCaseEvent e;
  e.kind = kind;
  e.message = std::move(message);
  cb.emit(e);
}

// layout.yaml with these VMs in machine-list; sets `changed`.
UseCaseResult<void> azure_part_write_layout(const AzureSession& s,
                                            const std::vector<azure::Machine>& machines,
                                            bool& changed) {
  changed = false;
  auto cur = util::read_file(s.layout_file);
  if (!cur.ok()) return input_error(s.layout_file + ": " + cur.error().message);
  auto updated = azure::update_layout(*cur, machines);
  if (!updated) return input_error(s.layout_file + ": " + updated.error().message);
  const std::string& next = *updated;
  changed = next != *cur;
  if (!changed) return {};
  if (auto w = util::write_file_atomic(s.layout_file, next, 0644); !w.ok())
    return input_error(w.error().message);
  return {};
}

// config.yaml's text with each named pool's count set.
UseCaseResult<std::string> azure_part_with_counts(const AzureSession& s, const std::string& text,
                                                  const std::map<std::string, int64_t>& counts) {
  std::string next = text;
  for (const auto& [pool, count] : counts) {
    const auto* p = s.pool(pool);
    if (!p) continue;
    auto replaced =
        azure::replace_integer_at(next, p->count_mark.line, p->count_mark.column, count);
    if (!replaced)
      return input_error("azure pool " + pool + "'s count: " + replaced.error().message);
    next = std::move(*replaced);
  }
  return next;
}

// The ARM client's request lines, to whichever call runs now.
class AzurePartLog {
 public:
  explicit AzurePartLog(AzureSession& s, const Callbacks& cb) : s_(s), before_(s.events) {
    s_.events = &cb;
    std::vector<std::string> warnings;
    {
      std::lock_guard<std::mutex> lock(s_.log_mutex);
      warnings.swap(s_.warnings);
    }
    for (auto& w : warnings) azure_part_emit(cb, UseCaseEvent::Kind::Warning, std::move(w));
  }
  ~AzurePartLog() { s_.events = before_; }
  AzurePartLog(const AzurePartLog&) = delete;
  AzurePartLog& operator=(const AzurePartLog&) = delete;

 private:
  AzureSession& s_;
  const Callbacks* before_;
};

}  // namespace

const config::AzurePool* AzureSession::pool(const std::string& name) const {
  for (const auto& x : spec.azure.pools)
    if (x.name == name) return &x;
  return nullptr;
}

UseCaseResult<std::shared_ptr<AzureSession>> open_azure(const std::string& cluster_dir,
                                                        const AzureAccess& access,
                                                        const AzureDeps& deps) {
  auto loaded = config::check_paths({cluster_dir});
  if (loaded.clusters.empty() || !loaded.clusters[0].config) return std::shared_ptr<AzureSession>();
  const auto& cluster = loaded.clusters[0];
  if (!cluster.config->azure) return std::shared_ptr<AzureSession>();
  for (const auto& d : loaded.diagnostics.items())
    if (d.severity == diag::Severity::Error &&
        (d.code[0] == 'A' || d.code == "X007" || d.file.ends_with("config.yaml"))) {
      UseCaseError e = input_error("paictl check config " + cluster_dir + " shows every finding");
      e.about = UseCaseError::About::AzureConfig;
      e.findings.push_back(d);
      return e;
    }
  auto s = std::make_shared<AzureSession>();
  const auto& az = *cluster.config->azure;
  s->spec.azure = az;
  s->cluster_dir = cluster_dir;
  if (cluster.services && !cluster.services->cluster_id.empty())
    s->spec.cluster = cluster.services->cluster_id;
  s->layout_file = cluster.layout ? cluster.layout->file : cluster_dir + "/layout.yaml";
  std::string key_file = azure_part_resolve(az.ssh_public_key_file, cluster_dir);
  std::string key_origin = "azure.ssh-public-key-file " + key_file;
  if (az.ssh_public_key_file.empty()) {
    // The public key beside config.yaml's private key (ssh-keygen writes KEY.pub).
    std::string priv = azure_part_resolve(cluster.config->ssh_key_file_path, cluster_dir);
    key_file = priv + ".pub";
    key_origin = "the public key of ssh_key_file_path, " + key_file;
    if (priv.empty() || !util::is_regular_file(key_file))
      return input_error(
          "config.yaml's azure: section has no ssh-public-key-file" +
              (priv.empty() ? std::string(" and config.yaml has no ssh_key_file_path")
                            : ", and " + key_file + " (beside ssh_key_file_path) does not exist"),
          "set azure.ssh-public-key-file to the public key the VMs accept (ssh-keygen -y -f "
          "KEY > KEY.pub writes it)");
  }
  auto key = util::read_file(key_file, 64u << 10);
  if (!key.ok()) return input_error(key_origin + ": " + key.error().message);
  s->spec.ssh_public_key = std::string(util::trim(*key));
  if (s->spec.ssh_public_key.rfind("ssh-", 0) != 0 &&
      s->spec.ssh_public_key.rfind("ecdsa-", 0) != 0)
    return input_error(key_origin +
                       " does not hold an OpenSSH public key (ssh-ed25519 ..., ssh-rsa ...)");
  s->spec.onprem_prefixes = az.onprem_address_space;
  if (s->spec.onprem_prefixes.empty() && cluster.layout) {
    auto space = config::parse_cidr(az.address_space);
    for (const auto& m : cluster.layout->machines) {
      auto ip = config::parse_cidr(m.hostip + "/32");
      if (ip && !(space && space->contains(*ip)))
        s->spec.onprem_prefixes.push_back(m.hostip + "/32");
    }
  }

  azure::Endpoints ep = azure::endpoints_from_env();
  if (!access.arm_endpoint.empty()) ep.arm = access.arm_endpoint;
  if (!access.authority_host.empty()) ep.authority = access.authority_host;
  if (!access.ca_file.empty()) ep.ca_file = access.ca_file;
  while (ep.arm.size() > 8 && ep.arm.back() == '/') ep.arm.pop_back();
  while (ep.authority.size() > 8 && ep.authority.back() == '/') ep.authority.pop_back();
  http::Client* http = deps.http;
  if (!http) {
    http::Options ho;
    ho.tls.ca_file = ep.ca_file;
    ho.retry.max_attempts = 1;  // lib/azure retries, with ARM's rules
    ho.timeout_s = kAzureAttemptTimeoutS;
    ho.cancelled = deps.cancelled;
    s->own_http = std::make_unique<http::CurlClient>(ho);
    http = s->own_http.get();
  }
  AzureSession* raw = s.get();
  auto log = [raw](const std::string& line) {
    std::lock_guard<std::mutex> lock(raw->log_mutex);
    if (raw->events) azure_part_emit(*raw->events, UseCaseEvent::Kind::AzureLog, line);
  };
  azure::TokenOptions to;
  to.endpoints = ep;
  to.clock = deps.clock;
  to.log = log;
  to.cancelled = deps.cancelled;
  to.attempt_timeout_s = kAzureAttemptTimeoutS;
  to.deadline_s = kAzureRequestDeadlineS;
  azure::Identity id{az.tenant, az.client_id,
                     azure_part_resolve(az.client_secret_file, cluster_dir)};
  if (!id.client_secret_file.empty())
    if (auto w = util::others_may_read(id.client_secret_file))
      s->warnings.push_back("client-secret-file " + id.client_secret_file +
                            " holds the service principal's secret but its mode is " + *w +
                            ", so other users may read it (run: chmod 600 " +
                            util::shell_quote(id.client_secret_file) + ")");
  auto t = azure::make_token_source(id, *http, to, deps.getenv);
  if (!t.ok())
    return input_error(t.error().message +
                       (t.error().hint.empty() ? "" : " (" + t.error().hint + ")"));
  s->tokens = std::move(t.value());
  azure::ArmOptions ao;
  ao.endpoints = ep;
  ao.clock = deps.clock;
  ao.log = log;
  ao.cancelled = deps.cancelled;
  ao.attempt_timeout_s = kAzureAttemptTimeoutS;
  ao.request_deadline_s = kAzureRequestDeadlineS;
  ao.on_wait = [raw](const azure::ArmWait& w) {
    std::lock_guard<std::mutex> lock(raw->log_mutex);
    if (!raw->events) return;
    UseCaseEvent e;
    e.kind = UseCaseEvent::Kind::AzureWaiting;
    e.message = w.line();
    e.to = static_cast<long long>(w.seconds + 0.5);
    e.planning = w.poll;
    raw->events->emit(e);
  };
  s->arm = std::make_unique<azure::ArmClient>(*http, *s->tokens, ao);
  return s;
}

UseCaseResult<std::shared_ptr<AzureSession>> open_azure_required(const std::string& cluster_dir,
                                                                 const AzureAccess& access,
                                                                 const AzureDeps& deps) {
  auto s = open_azure(cluster_dir, access, deps);
  if (s.ok() && !*s)
    return input_error(cluster_dir + "/config.yaml has no azure: section (docs/azure.md)");
  return s;
}

// --- install ---------------------------------------------------------------------

UseCaseResult<AzureInstallPlan> plan_azure_install(std::shared_ptr<AzureSession> session,
                                                   const Callbacks& callbacks) {
  AzurePartLog log(*session, callbacks);
  azure_part_emit(callbacks, UseCaseEvent::Kind::ReadingAzure);
  auto plan = azure::plan(*session->arm, session->spec);
  if (!plan.ok()) return remote_failure("azure", plan.error());
  AzureInstallPlan p;
  p.session = std::move(session);
  p.plan = std::move(plan).value();
  return p;
}

AzureInstallOutcome apply_azure_install(AzureInstallPlan& p, const Callbacks& callbacks) {
  AzureSession& s = *p.session;
  AzurePartLog log(s, callbacks);
  AzureInstallOutcome out;
  if (p.changed()) {
    auto r = azure::apply(*s.arm, p.plan, [&](const std::string& line) {
      azure_part_emit(callbacks, UseCaseEvent::Kind::AzureProgress, line);
    });
    if (!r.ok()) {
      out.error = remote_failure("azure", r.error());
      return out;
    }
    out.applied = true;
    out.result = *r;
  } else {
    azure_part_emit(callbacks, UseCaseEvent::Kind::AzureUpToDate);
  }
  auto machines = azure::list_machines(*s.arm, s.spec);
  if (!machines.ok()) {
    out.error = remote_failure("azure", machines.error());
    return out;
  }
  out.machines.layout_file = s.layout_file;
  if (auto w = azure_part_write_layout(s, *machines, out.machines.layout_changed); !w.ok()) {
    out.error = std::move(w).error();
    return out;
  }
  out.listed = true;
  out.machines.machines = std::move(machines).value();
  UseCaseEvent e;
  e.kind = UseCaseEvent::Kind::AzureMachines;
  e.machines = &out.machines;
  callbacks.emit(e);
  out.stats = s.arm->stats();
  return out;
}

// --- grow --------------------------------------------------------------------------

UseCaseResult<AzureGrowPlan> plan_azure_grow(std::shared_ptr<AzureSession> session,
                                             const std::string& pool, int add,
                                             const Callbacks& callbacks) {
  AzureSession& s = *session;
  AzurePartLog log(s, callbacks);
  const config::AzurePool* p = s.pool(pool);
  if (!p) {
    std::vector<std::string> names;
    for (const auto& x : s.spec.azure.pools) names.push_back(x.name);
    return input_error("config.yaml has no Azure pool \"" + pool +
                       "\" (pools: " + util::join(names, ", ") + ")");
  }
  if (p->master)
    return input_error("pool " + pool +
                       " is the master's (role: master): it has one VM, the cluster's control "
                       "plane; grow a worker pool instead");
  AzureGrowPlan g;
  g.pool = pool;
  g.sku = p->sku;
  g.machine_type = p->machine_type;
  g.add = add;
  g.from = p->count;
  g.to = g.from + add;
  if (g.to > 1000 || (g.to > 100 && config::is_infiniband_sku(p->sku)))
    return input_error("pool " + pool + " would have " + std::to_string(g.to) + " VMs; at most " +
                       (config::is_infiniband_sku(p->sku) ? "100 for an InfiniBand size" : "1000"));
  g.config_file = s.cluster_dir + "/config.yaml";
  auto text = util::read_file(g.config_file);
  if (!text.ok()) return input_error(g.config_file + ": " + text.error().message);
  auto next = azure_part_with_counts(s, *text, {{pool, g.to}});
  if (!next.ok()) {
    UseCaseError e = std::move(next).error();
    e.error.message = g.config_file + ": " + e.error.message;
    return e;
  }
  g.config_after = std::move(next).value();
  g.scale_set = s.spec.cluster + "-" + pool;
  // What is there now: the VMs before, so that the new ones are known afterwards.
  auto before = azure::list_machines(*s.arm, s.spec);
  if (!before.ok()) return remote_failure("azure", before.error());
  for (const auto& m : *before) g.had.insert(m.hostname);
  g.session = std::move(session);
  return g;
}

AzureGrowOutcome apply_azure_grow(AzureGrowPlan& g, const Callbacks& callbacks) {
  AzureSession& s = *g.session;
  AzurePartLog log(s, callbacks);
  AzureGrowOutcome out;
  UseCaseEvent scale;
  scale.kind = UseCaseEvent::Kind::ScaleSet;
  scale.message = g.scale_set;
  scale.from = g.from;
  scale.to = g.to;
  callbacks.emit(scale);
  auto r = azure::scale_pool(*s.arm, s.spec, g.pool, g.to);
  if (!r.ok()) {
    out.error = remote_failure("azure", r.error());
    return out;
  }
  // Azure has the VMs: config.yaml follows (only the count changes in the file).
  if (auto w = util::write_file_atomic(g.config_file, g.config_after, 0644); !w.ok()) {
    out.error = input_error(g.config_file + ": " + w.error().message);
    return out;
  }
  for (auto& x : s.spec.azure.pools)
    if (x.name == g.pool) x.count = g.to;
  auto machines = azure::list_machines(*s.arm, s.spec);
  if (!machines.ok()) {
    out.error = remote_failure("azure", machines.error());
    return out;
  }
  bool layout_changed = false;
  if (auto w = azure_part_write_layout(s, *machines, layout_changed); !w.ok()) {
    out.error = std::move(w).error();
    return out;
  }
  for (const auto& m : *machines)
    if (m.pool == g.pool && !g.had.count(m.hostname)) {
      out.added.push_back(m);
      azure_part_emit(callbacks, UseCaseEvent::Kind::NewMachine,
                      m.hostname + " (" + m.ip + "), machine-type " + m.machine_type);
    }
  out.files_written = true;
  UseCaseEvent files;
  files.kind = UseCaseEvent::Kind::FilesUpdated;
  files.message = s.layout_file;
  files.to = g.to;
  callbacks.emit(files);
  if (out.added.empty())
    out.error = remote_error("azure: scale set " + g.scale_set + " has " + std::to_string(g.to) +
                             " VMs but none of them is new; nothing to join");
  return out;
}

// --- removal -------------------------------------------------------------------------

UseCaseResult<AzureRemovalPlan> plan_azure_removal(std::shared_ptr<AzureSession> session,
                                                   const std::vector<std::string>& nodes,
                                                   const Callbacks& callbacks) {
  AzureSession& s = *session;
  AzurePartLog log(s, callbacks);
  AzureRemovalPlan r;
  auto all = azure::list_machines(*s.arm, s.spec);
  if (!all.ok()) return remote_failure("azure", all.error());
  for (const auto& n : nodes) {
    auto it = std::find_if(all->begin(), all->end(), [&](const azure::Machine& m) {
      return m.hostname == util::to_lower(n) || m.ip == n;
    });
    if (it == all->end())
      return input_error("node remove --azure: " + n + " is not a VM of an Azure pool of " +
                         s.cluster_dir + " (on-prem hosts: paictl node remove without --azure)");
    r.machines.push_back(*it);
  }
  for (const auto& m : r.machines) {
    const auto* p = s.pool(m.pool);
    auto& c = r.counts.try_emplace(m.pool, p->count, p->count).first->second;
    --c.second;
  }
  r.session = std::move(session);
  return r;
}

std::vector<std::string> AzureRemovalPlan::lines() const {
  std::vector<std::string> out;
  const auto& spec = session->spec;
  for (const auto& m : machines)
    out.push_back("delete VM " + m.hostname + " (" + m.ip + ") of scale set " + spec.cluster + "-" +
                  m.pool + ", instance " + m.instance_id + ": DELETE " +
                  azure::machine_path(spec, m) + " (its NIC and OS disk go with it)");
  for (const auto& [pool, c] : counts)
    out.push_back("config.yaml: azure pool " + pool + " count: " + std::to_string(c.first) +
                  " -> " + std::to_string(c.second));
  for (const auto& m : machines)
    out.push_back("layout.yaml: " + m.hostname + " leaves machine-list");
  return out;
}

AzureRemovalOutcome apply_azure_removal(AzureRemovalPlan& r, const Callbacks& callbacks) {
  AzureSession& s = *r.session;
  AzurePartLog log(s, callbacks);
  AzureRemovalOutcome out;
  auto del = azure::delete_machines(*s.arm, s.spec, r.machines, [&](const std::string& l) {
    azure_part_emit(callbacks, UseCaseEvent::Kind::AzureProgress, l);
  });
  // Whatever happened, the files follow what Azure shows now.
  auto now = azure::list_machines(*s.arm, s.spec);
  if (!now.ok()) {
    out.error = remote_failure("azure", now.error());
    return out;
  }
  std::set<std::string> left;
  for (const auto& m : *now) left.insert(m.hostname);
  std::map<std::string, int64_t> counts;
  for (const auto& m : r.machines) {
    const auto* p = s.pool(m.pool);
    auto it = counts.try_emplace(m.pool, p->count).first;
    if (!left.count(m.hostname)) {
      --it->second;
      out.deleted.push_back(m.hostname);
    }
  }
  out.listed = true;
  std::string config_file = s.cluster_dir + "/config.yaml";
  auto text = util::read_file(config_file);
  if (!text.ok()) {
    out.error = input_error(config_file + ": " + text.error().message);
    return out;
  }
  auto next = azure_part_with_counts(s, *text, counts);
  if (!next.ok()) {
    out.error = std::move(next).error();
    out.error->error.message = config_file + ": " + out.error->error.message;
    return out;
  }
  if (*next != *text)
    if (auto w = util::write_file_atomic(config_file, *next, 0644); !w.ok()) {
      out.error = input_error(config_file + ": " + w.error().message);
      return out;
    }
  bool layout_changed = false;
  if (auto w = azure_part_write_layout(s, *now, layout_changed); !w.ok()) {
    out.error = std::move(w).error();
    return out;
  }
  if (!del.ok()) {
    out.error = remote_failure("azure", del.error());
    return out;
  }
  UseCaseEvent files;
  files.kind = UseCaseEvent::Kind::FilesUpdated;
  files.message = s.layout_file;
  files.to = -1;
  callbacks.emit(files);
  return out;
}

// --- reset ------------------------------------------------------------------------------

UseCaseResult<AzureResetPlan> plan_azure_reset(std::shared_ptr<AzureSession> session, bool dry_run,
                                               const Callbacks& callbacks) {
  AzureResetPlan r;
  r.dry_run = dry_run;
  if (dry_run) {
    AzurePartLog log(*session, callbacks);
    auto plan = azure::plan(*session->arm, session->spec);
    if (!plan.ok()) return remote_failure("azure", plan.error());
    r.plan = std::move(plan).value();
  }
  r.session = std::move(session);
  return r;
}

UseCaseResult<AzureResetOutcome> apply_azure_reset(AzureResetPlan& r, const Callbacks& callbacks) {
  AzureSession& s = *r.session;
  AzurePartLog log(s, callbacks);
  auto res = azure::reset(*s.arm, s.spec, [&](const std::string& line) {
    azure_part_emit(callbacks, UseCaseEvent::Kind::AzureProgress, line);
  });
  if (!res.ok()) return remote_failure("azure reset", res.error());
  AzureResetOutcome out;
  out.result = std::move(res).value();
  if (auto w = azure_part_write_layout(s, {}, out.layout_changed); !w.ok())
    out.layout_warning = w.error().error.message;
  return out;
}

}  // namespace pai::deploy
