#include "deploy/observation_cache.h"

#include <algorithm>

#include "deploy/engine.h"
#include "deploy/phase.h"
#include "util/strings.h"

namespace pai::deploy {

// ------------------------------------------------------------------ one host's cache

bool ObservationCache::find(const std::string& script, remote::ExecResult& out) const {
  std::lock_guard lock(mu_);
  auto it = held_.find(script);
  if (it == held_.end()) return false;
  out = *it->second;
  return true;
}

std::shared_ptr<const remote::ExecResult> ObservationCache::find_shared(
    const std::string& script) const {
  std::lock_guard lock(mu_);
  auto it = held_.find(script);
  return it == held_.end() ? nullptr : it->second;
}

bool ObservationCache::holds(const std::string& script) const {
  std::lock_guard lock(mu_);
  return held_.count(script) > 0;
}

void ObservationCache::keep(const std::string& script, remote::ExecResult result) {
  std::lock_guard lock(mu_);
  held_[script] = std::make_shared<remote::ExecResult>(std::move(result));
}

void ObservationCache::forget() {
  std::lock_guard lock(mu_);
  ++generation_;
  // Overwritten where no one else holds it (find_shared's callers read theirs on).
  for (auto& [script, r] : held_)
    if (r.use_count() == 1) {
      auto& out = const_cast<remote::ExecResult&>(*r).out;
      std::fill(out.begin(), out.end(), '\0');
    }
  held_.clear();
}

uint64_t ObservationCache::ticket() const {
  std::lock_guard lock(mu_);
  return generation_;
}

void ObservationCache::offer(uint64_t ticket, const std::string& script,
                             const remote::ExecResult& result) {
  if (!KeepLiveReads::active() || !result.ok()) return;
  std::lock_guard lock(mu_);
  // Kept only if nothing applied on this host since the read started.
  if (ticket == generation_) held_[script] = std::make_shared<remote::ExecResult>(result);
}

void ObservationCache::set_reads_after(std::vector<std::string> scripts) {
  std::lock_guard lock(mu_);
  reads_after_ = std::move(scripts);
  read_after_.clear();
}

std::vector<std::string> ObservationCache::reads_after() const {
  std::lock_guard lock(mu_);
  return reads_after_;
}

void ObservationCache::read_after(std::vector<std::pair<std::string, remote::ExecResult>> outputs) {
  std::lock_guard lock(mu_);
  read_after_ = std::move(outputs);
}

std::vector<std::pair<std::string, remote::ExecResult>> ObservationCache::take_reads_after() {
  std::lock_guard lock(mu_);
  reads_after_.clear();
  return std::exchange(read_after_, {});
}

namespace {
thread_local bool t_keep_live_reads = false;
}

KeepLiveReads::KeepLiveReads() : previous_(t_keep_live_reads) {
  t_keep_live_reads = true;
}
KeepLiveReads::~KeepLiveReads() {
  t_keep_live_reads = previous_;
}
bool KeepLiveReads::active() {
  return t_keep_live_reads;
}

// ------------------------------------------------------------------ kept hosts

std::unique_ptr<remote::Connection> KeptHosts::take_connection(const remote::Transport* transport,
                                                               const std::string& host) {
  std::lock_guard lock(mu_);
  auto it = hosts_.find(host);
  if (it == hosts_.end() || it->second.transport != transport) return nullptr;
  return std::move(it->second.connection);
}

void KeptHosts::keep_connection(const remote::Transport* transport, const std::string& host,
                                std::unique_ptr<remote::Connection> connection) {
  std::lock_guard lock(mu_);
  Kept& k = hosts_[host];
  k.transport = transport;
  k.connection = std::move(connection);
}

std::map<std::string, remote::ExecResult> KeptHosts::take_reads(const std::string& host,
                                                                double max_age_s) {
  std::map<std::string, remote::ExecResult> out;
  std::lock_guard lock(mu_);
  auto it = hosts_.find(host);
  if (it == hosts_.end()) return out;
  double now = clock_.now();
  for (auto& [script, r] : it->second.reads)
    if (now - r.first <= max_age_s) out[script] = std::move(r.second);
  it->second.reads.clear();
  return out;
}

void KeptHosts::keep_read(const std::string& host, const std::string& script,
                          remote::ExecResult result) {
  double now = clock_.now();
  std::lock_guard lock(mu_);
  hosts_[host].reads[script] = {now, std::move(result)};
}

bool keep_for_apply(const ObservationRead& read) {
  return read.read_only && !read.secret;
}

// ------------------------------------------------------------------ which reads

std::vector<std::vector<ObservationRead>> reads_of_phases(const PhaseList& phases, size_t from,
                                                          size_t to,
                                                          const std::vector<HostRun*>& hosts,
                                                          const std::vector<size_t>& on,
                                                          const PlannedChanges& planned) {
  std::map<const HostRun*, size_t> index;
  for (size_t i = 0; i < hosts.size(); ++i) index[hosts[i]] = i;
  std::vector<std::vector<ObservationRead>> out(hosts.size());
  std::vector<std::set<std::string>> seen(hosts.size());
  for (size_t i : on) {
    HostRun& h = *hosts[i];
    auto plan = planned.find(h.spec().name);
    for (size_t pi = from; pi < to; ++pi) {
      const Phase& phase = *phases[pi];
      if (!phase_runs(phase, h.spec())) continue;
      std::vector<ObservationRead> rs;
      if (auto* reads = dynamic_cast<ReadsAhead*>(phases[pi].get()))
        reads->observation_reads(h, rs);
      for (auto& rd : rs) {
        auto it = index.find(rd.host);
        if (it == index.end()) continue;
        rd.read_only = phase.traits().read_only;
        if (rd.host->observations().holds(rd.script)) continue;  // taken from the plan
        if (seen[it->second].insert(rd.script).second) out[it->second].push_back(std::move(rd));
      }
      if (plan != planned.end() && plan->second.count(phase.name())) break;
    }
  }
  return out;
}

std::vector<std::string> reads_after_apply(const PhaseList& phases, size_t phase, size_t until,
                                           HostRun& host, const PlannedChanges& planned) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](size_t p) {
    std::vector<ObservationRead> rs;
    if (auto* reads = dynamic_cast<ReadsAhead*>(phases[p].get()))
      reads->observation_reads(host, rs);
    for (auto& rd : rs)
      if (rd.host == &host && !rd.secret && seen.insert(rd.script).second)
        out.push_back(std::move(rd.script));
  };
  add(phase);
  auto plan = planned.find(host.spec().name);
  for (size_t p = phase + 1; p < until; ++p) {
    if (phases[p]->traits().cluster_wide) break;
    if (!phase_runs(*phases[p], host.spec())) continue;
    add(p);
    if (plan != planned.end() && plan->second.count(phases[p]->name())) break;
  }
  return out;
}

void forget_reads_changed_by(Phase& phase, HostRun& host) {
  host.observations().forget();
  if (!phase.traits().apply_changes_others_reads) return;
  std::vector<ObservationRead> rs;
  if (auto* reads = dynamic_cast<ReadsAhead*>(&phase)) reads->observation_reads(host, rs);
  for (auto& rd : rs)
    if (rd.host && rd.host != &host) rd.host->observations().forget();
}

// ------------------------------------------------------------------ sessions of reads

remote::ExecResult read_in_one_session(HostRun& host, const std::vector<ObservationRead>& reads,
                                       const std::string& marker, KeptHosts* for_apply) {
  std::vector<std::string> scripts;
  std::vector<bool> secrets;
  bool secret = false, slow = false;
  for (const auto& rd : reads) {
    scripts.push_back(rd.script);
    secrets.push_back(rd.secret);
    secret |= rd.secret;
    slow |= is_cluster_read(rd.script);
  }
  // The master's reads wait on kubectl and the API server: run at once, they
  // take the longest of them instead of their sum.
  auto r =
      host.sh("exec /bin/sh -s",
              slow && scripts.size() > 1 ? concurrent_observation_script(scripts, secrets, marker)
                                         : combined_observation_script(scripts, marker),
              600000, secret);
  std::vector<remote::ExecResult> parts;
  if (r.ok() && r.exit_status == 0 && split_combined_output(r.out, marker, scripts.size(), parts))
    for (size_t k = 0; k < parts.size(); ++k) {
      parts[k].first_output_epoch = r.first_output_epoch;
      parts[k].auth_method = r.auth_method;
      // A plan's reads of the phases that change nothing, for the apply after it.
      if (for_apply && keep_for_apply(reads[k]))
        for_apply->keep_read(host.spec().name, scripts[k], parts[k]);
      host.observations().keep(scripts[k], std::move(parts[k]));
    }
  std::fill(r.out.begin(), r.out.end(), '\0');
  return r;
}

LockSession lock_then_read(HostRun& host, const std::string& lock_script,
                           const std::vector<ObservationRead>& reads, const std::string& marker) {
  LockSession out;
  if (reads.empty()) {
    out.lock = host.sh(lock_script);
    return out;
  }
  std::vector<std::string> scripts;
  bool secret = false;
  for (const auto& rd : reads) {
    scripts.push_back(rd.script);
    secret |= rd.secret;
  }
  std::string whole = "o=$(\n" + lock_script +
                      "\n)\nprintf '%s\\n' \"$o\"\ncase $o in acquired*)\n" +
                      combined_observation_script(scripts, marker) + ";;\nesac\n";
  out.lock = host.sh(whole, {}, 600000, secret);
  std::vector<remote::ExecResult> parts;
  if (out.lock.ok() && out.lock.exit_status == 0 && out.lock.out.rfind("acquired", 0) == 0 &&
      split_combined_output(out.lock.out, marker, scripts.size(), parts))
    for (size_t k = 0; k < parts.size(); ++k)
      out.reads.emplace_back(scripts[k], std::move(parts[k]));
  return out;
}

bool runs_in_session_shell(const std::string& script) {
  // Words by which a script could end the session's shell or change what the
  // scripts after it see (its options, arguments, directory, traps, functions):
  // such a script runs in a subshell. Every variable a script reads it sets
  // first, so the others share the session's shell and save a fork each.
  static const char* kWords[] = {"exit", "exec",     "return", "set ",    "shift", "cd ",
                                 "trap", "umask",    "export", "unset",   "alias", "ulimit",
                                 "eval", "readonly", "()",     "source ", "\n. "};
  for (const char* w : kWords)
    if (script.find(w) != std::string::npos) return false;
  // A file sourced with `.` sets whatever it holds (/etc/os-release: ID, NAME...).
  return !script.starts_with(". ");
}

std::string combined_observation_script(const std::vector<std::string>& scripts,
                                        const std::string& marker) {
  // Each script with its stdin not the combined script's (which sh -s reads),
  // its stderr dropped, its exit status after it; in a subshell unless it can
  // run in the session's own shell (runs_in_session_shell).
  std::string out;
  for (size_t i = 0; i < scripts.size(); ++i) {
    std::string n = std::to_string(i);
    bool here = runs_in_session_shell(scripts[i]);
    out += "echo '" + marker + " begin " + n + "'\n" + (here ? "{\n" : "(\n") + scripts[i] +
           (here ? "\n} </dev/null 2>/dev/null\n" : "\n) </dev/null 2>/dev/null\n") +
           "printf '\\n" + marker + " end " + n + " %s\\n' \"$?\"\n";
  }
  out += "true\n";
  return out;
}

std::string concurrent_observation_script(const std::vector<std::string>& scripts,
                                          const std::vector<bool>& secret,
                                          const std::string& marker) {
  auto is_secret = [&](size_t i) { return i < secret.size() && secret[i]; };
  // A first line at once, as the one-by-one form's first marker: the session's
  // first output is when the scripts start (the fact script's clock is read
  // against it), not when the slowest ends. The split skips it.
  std::string out = "echo '" + marker +
                    " start'\n"
                    "pai_rd=/run/paictl-reads.$$\n"
                    "[ -d /run ] && [ -w /run ] || pai_rd=\"${TMPDIR:-/tmp}/paictl-reads.$$\"\n"
                    "if mkdir -m 700 \"$pai_rd\" 2>/dev/null; then\n"
                    "trap 'rm -rf \"$pai_rd\"' EXIT\n"
                    "trap 'rm -rf \"$pai_rd\"; exit 129' HUP\n"
                    "trap 'rm -rf \"$pai_rd\"; exit 130' INT\n"
                    "trap 'rm -rf \"$pai_rd\"; exit 143' TERM\n"
                    "trap 'rm -rf \"$pai_rd\"; exit 141' PIPE\n";
  for (size_t i = 0; i < scripts.size(); ++i) {
    if (is_secret(i)) continue;
    std::string n = std::to_string(i);
    out += "(\n" + scripts[i] + "\n) </dev/null >\"$pai_rd/" + n + "\" 2>/dev/null &\npai_p" + n +
           "=$!\n";
  }
  // A secret's output only in a variable: `printf x` keeps its trailing newlines.
  for (size_t i = 0; i < scripts.size(); ++i) {
    if (!is_secret(i)) continue;
    std::string n = std::to_string(i);
    out += "pai_s" + n + "=$( (\n" + scripts[i] +
           "\n) </dev/null 2>/dev/null; r=$?; printf x; exit $r)\npai_r" + n + "=$?\npai_s" + n +
           "=${pai_s" + n + "%x}\n";
  }
  for (size_t i = 0; i < scripts.size(); ++i) {
    std::string n = std::to_string(i);
    out += "echo '" + marker + " begin " + n + "'\n";
    if (is_secret(i))
      out += "printf '%s' \"$pai_s" + n + "\"\npai_s" + n + "=\nprintf '\\n" + marker + " end " +
             n + " %s\\n' \"$pai_r" + n + "\"\n";
    else
      out += "wait \"$pai_p" + n + "\"\npai_r=$?\ncat \"$pai_rd/" + n + "\"\nprintf '\\n" + marker +
             " end " + n + " %s\\n' \"$pai_r\"\n";
  }
  out += "rm -rf \"$pai_rd\"\ntrap - EXIT HUP INT TERM PIPE\nelse\n" +
         combined_observation_script(scripts, marker) + "fi\ntrue\n";
  return out;
}

bool split_combined_output(const std::string& out, const std::string& marker, size_t n,
                           std::vector<remote::ExecResult>& results) {
  results.assign(n, {});
  size_t pos = 0;
  for (size_t i = 0; i < n; ++i) {
    std::string begin = marker + " begin " + std::to_string(i) + "\n";
    std::string end = "\n" + marker + " end " + std::to_string(i) + " ";
    size_t b = out.find(begin, pos);
    if (b == std::string::npos) return false;
    b += begin.size();
    size_t e = out.find(end, b);
    if (e == std::string::npos) return false;
    size_t nl = out.find('\n', e + end.size());
    if (nl == std::string::npos) return false;
    auto rc = util::parse_int(out.substr(e + end.size(), nl - e - end.size()));
    if (!rc) return false;
    results[i].out = out.substr(b, e - b);
    results[i].exit_status = static_cast<int>(*rc);
    pos = nl + 1;
  }
  return true;
}

}  // namespace pai::deploy
