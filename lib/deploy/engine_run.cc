#include "deploy/engine_run.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>

#include "util/strings.h"
#include "util/time.h"

namespace pai::deploy {

RunResult Engine::run(const std::vector<HostSpec>& hosts, const PhaseList& phases) {
  engine_detail::EngineRun run(transport_, opts_, hosts, phases);
  run.open_journal();
  run.make_host_runs();
  run.plan_reads();
  // A host that cannot be reached or locked stops the run before anything changes.
  run.connect_and_lock();
  // A failure stops the run at the end of its stage; a dry run goes on to show
  // the whole plan.
  for (size_t first = 0; first < phases.size() && !run.stopped();) first = run.run_stage(first);
  run.report_skipped();
  run.clean_up();
  return run.unlock_and_finish();
}

namespace engine_detail {

namespace {

std::string this_hostname() {
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  return host;
}

}  // namespace

HostLog::~HostLog() {
  if (fd >= 0) ::close(fd);
}

EngineRun::EngineRun(remote::Transport& transport, const EngineOptions& options,
                     const std::vector<HostSpec>& hosts, const PhaseList& phases)
    : transport_(transport),
      opts_(options),
      hosts_(hosts),
      phases_(phases),
      clock_(options.clock.now ? options.clock : util::Clock::real()),
      started_(clock_.now()),
      masker_(options.masker ? options.masker : &own_masker_) {
  res_.dry_run = opts_.dry_run;
  res_.run_id = opts_.run_id;
  if (res_.run_id.empty()) res_.run_id = util::now_rfc3339_ms() + "-" + std::to_string(::getpid());
}

void EngineRun::emit(Event e) {
  e.message = masker_->mask(std::move(e.message));
  e.hint = masker_->mask(std::move(e.hint));
  for (auto& n : e.needs) n = masker_->mask(std::move(n));
  std::lock_guard lock(event_mu_);
  if (opts_.on_event) opts_.on_event(e);
}

double EngineRun::ms_since(double t0) const {
  return (clock_.now() - t0) * 1000.0;
}

std::vector<size_t> EngineRun::all_hosts() const {
  std::vector<size_t> all(hosts_.size());
  for (size_t i = 0; i < hosts_.size(); ++i) all[i] = i;
  return all;
}

// ------------------------------------------------------------------ the stages

void EngineRun::open_journal() {
  if (!opts_.journal_path.empty()) {
    auto records = read_journal(opts_.journal_path);
    if (!records.ok()) {
      // Not a regular file (a FIFO would block the opening for writing too):
      // a plan goes on and says so; a run that would change hosts cannot keep
      // its journal, so it stops before any host is reached.
      if (opts_.dry_run) {
        emit({Event::Kind::Note,
              "",
              "",
              "journal: " + records.error().message + "; this plan does not read it",
              "",
              {},
              0});
        return;
      }
      journal_failed(records.error(), "nothing was changed on any host");
      return;
    }
    for (const auto& step : interrupted_steps(*records)) {
      Event e;
      e.kind = Event::Kind::Interrupted;
      e.host = step.value("host", "");
      e.phase = step.value("phase", "");
      e.message = "run " + step.value("run", "") + " stopped during this step (started " +
                  step.value("time", "") + "); its state is observed again";
      res_.interrupted.push_back(e);
      emit(e);
    }
  }
  if (opts_.dry_run) {
    // A plan for an apply records the interrupted steps it finds done.
    if (opts_.journal_plan && !res_.interrupted.empty())
      journal_open_ = journal_.open(opts_.journal_path).ok();
    return;
  }
  journal_open_ = true;
  // A run that changes hosts keeps its journal: one that cannot be written
  // stops the run before any host is reached.
  auto opened = journal_.open(opts_.journal_path);
  if (opened) opened = journal_.reserve(64u << 10);
  if (opened)
    opened =
        journal_.append({{"event", "run-start"}, {"run", res_.run_id}, {"hosts", hosts_.size()}});
  if (!opened) journal_failed(opened.error(), "nothing was changed on any host");
}

void EngineRun::journal_failed(const util::Error& e, const std::string& state) {
  {
    std::lock_guard lock(journal_mu_);
    if (!res_.error.empty()) return;
    res_.error =
        "the install journal cannot be written (" + e.message + "); the run stops: " + state;
    res_.hint =
        "free space where the cluster directory is (or make .paictl/install.journal writable), "
        "then run again: the run observes every host and resumes where it stopped";
    journal_stop_ = true;
  }
  emit({Event::Kind::Note, "", "", res_.error, res_.hint, {}, 0});
}

void EngineRun::host_log_failed(size_t i, int err) {
  emit({Event::Kind::Note,
        hosts_[i].name,
        "",
        "log " + opts_.log_dir + "/" + hosts_[i].name + ".log: " + std::strerror(err) +
            "; this host's log is not kept from here on",
        "",
        {},
        0});
}

void EngineRun::make_host_runs() {
  ctx_.masker = masker_;
  ctx_.dry_run = opts_.dry_run;
  ctx_.clock = clock_;
  res_.hosts.resize(hosts_.size());
  for (size_t i = 0; i < hosts_.size(); ++i) {
    runs_.push_back(std::make_unique<HostRun>(hosts_[i], ctx_));
    ctx_.hosts.push_back(runs_.back().get());
    host_runs_.push_back(runs_.back().get());
    res_.hosts[i].host = hosts_[i].name;
    for (const auto& p : phases_) {
      PhaseResult pr;
      pr.phase = p->name();
      pr.state =
          p->runs_on(hosts_[i]) ? PhaseResult::State::Skipped : PhaseResult::State::NotApplicable;
      res_.hosts[i].phases.push_back(pr);
    }
    auto log = std::make_unique<HostLog>();
    if (!opts_.log_dir.empty()) {
      std::string path = opts_.log_dir + "/" + hosts_[i].name + ".log";
      log->fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (log->fd >= 0)
        ::fchmod(log->fd, 0600);
      else
        host_log_failed(i, errno);
    }
    HostLog* lp = log.get();
    if (lp->fd >= 0)
      runs_.back()->log_sink = [this, lp, i](const std::string& text) {
        std::string line = "[" + util::now_rfc3339_ms() + "] " + text + "\n";
        int err = 0;
        {
          std::lock_guard lock(lp->mu);
          if (lp->failed) return;
          ssize_t n = ::write(lp->fd, line.data(), line.size());
          if (n != static_cast<ssize_t>(line.size())) {
            lp->failed = true;
            err = n < 0 ? errno : ENOSPC;
          }
        }
        // Said once; the run goes on (its journal says what changed).
        if (err) host_log_failed(i, err);
      };
    logs_.push_back(std::move(log));
  }
  for (auto& r : runs_) r->log("--- run " + res_.run_id + (opts_.dry_run ? " (dry run)" : ""));

  size_t fds = 4;
  for (const auto& h : hosts_) fds = std::max(fds, transport_.fds_per_exec(h.target));
  eo_.parallel = opts_.parallel;
  eo_.fds_per_task = fds;
  failed_.assign(hosts_.size(), 0);
  locked_.assign(hosts_.size(), 0);
  holder_ = this_hostname() + " " + std::to_string(::getpid()) + " " + res_.run_id;
  marker_ = "@@paictl-observe-" + std::to_string(::getpid()) + "-" +
            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

void EngineRun::plan_reads() {
  // A run that applies right after a plan takes the plan's reads of the phases
  // that change nothing (KeptHosts): the OS and the pre-install checks' facts
  // are not read twice in one command.
  plan_reads_.resize(hosts_.size());
  if (!opts_.dry_run && opts_.kept)
    for (size_t i = 0; i < hosts_.size(); ++i)
      plan_reads_[i] = opts_.kept->take_reads(hosts_[i].name, opts_.reuse_reads_s);

  // A dry run reads every phase's observations of a host in one session (they
  // change nothing, so their order does not matter); the phases then observe
  // from what was read.
  dry_reads_.resize(hosts_.size());
  if (opts_.dry_run)
    dry_reads_ =
        reads_of_phases(phases_, 0, phases_.size(), host_runs_, all_hosts(), opts_.planned_changes);

  // A run that applies reads its first group of phases that may change a host
  // (after the OS and the pre-install checks, which change nothing) in the
  // session that takes the host lock, once the lock is taken: a round trip
  // fewer per host. Nothing changes a host between the two.
  lock_group_ = lock_group_end_ = phases_.size();
  lock_reads_.resize(hosts_.size());
  locked_reads_.resize(hosts_.size());
  if (opts_.dry_run || !opts_.host_lock) return;
  for (size_t first = 0; first < phases_.size();) {
    size_t last = stage_end(first);
    bool changes = false;
    for (size_t pi = first; pi < last; ++pi) changes |= !phases_[pi]->traits().read_only;
    if (changes && !phases_[first]->traits().cluster_wide) {
      lock_group_ = first;
      break;
    }
    first = last;
  }
  if (lock_group_ == phases_.size()) return;
  auto [group_hosts, end] = group_of(lock_group_, all_hosts());
  lock_group_end_ = end;
  lock_reads_ = reads_of_phases(phases_, lock_group_, lock_group_end_, host_runs_, group_hosts,
                                opts_.planned_changes);
}

void EngineRun::connect_and_lock() {
  if (journal_stop_) {
    stop_ = true;
    return;
  }
  remote::run_parallel(hosts_.size(), eo_, [&](size_t i) { connect_host(i); });
  if (!opts_.dry_run)
    for (char f : failed_) stop_ |= f != 0;
}

size_t EngineRun::run_stage(size_t first) {
  size_t last = stage_end(first);
  std::vector<size_t> alive = alive_hosts();
  if (!opts_.dry_run && !phases_[first]->traits().cluster_wide && first >= read_until_)
    read_ahead(first, alive);
  after_until_ = std::max(last, read_until_);
  if (phases_[first]->traits().cluster_wide)
    run_cluster_wide(first, alive);
  else
    run_per_host(first, last, alive);
  // A failure stops the run at the barrier; a dry run goes on to show the whole plan.
  if (!opts_.dry_run)
    for (char f : failed_) stop_ |= f != 0;
  stop_ |= journal_stop_;
  return last;
}

void EngineRun::report_skipped() {
  for (size_t i = 0; i < hosts_.size(); ++i)
    for (auto& pr : res_.hosts[i].phases)
      if (pr.state == PhaseResult::State::Skipped && (failed_[i] || stop_))
        emit({Event::Kind::PhaseSkipped,
              hosts_[i].name,
              pr.phase,
              failed_[i]      ? "not run: this host failed earlier"
              : journal_stop_ ? "not run: the install journal cannot be written"
                              : "not run: another host failed",
              "",
              {},
              0});
}

void EngineRun::clean_up() {
  if (!stop_) return;
  // k0sctl's contract: every phase that applied in this run cleans up, newest first.
  for (auto it = applied_.rbegin(); it != applied_.rend(); ++it) {
    auto [pi, hi] = *it;
    const std::string& phase = phases_[pi]->name();
    emit({Event::Kind::CleanupStart, hosts_[hi].name, phase, "cleaning up", "", {}, 0});
    if (auto* c = dynamic_cast<CleansUp*>(phases_[pi].get())) c->cleanup(*runs_[hi]);
    res_.hosts[hi].phases[pi].cleaned = true;
    (void)journal_.append(
        {{"event", "cleanup"}, {"run", res_.run_id}, {"host", hosts_[hi].name}, {"phase", phase}});
    emit({Event::Kind::CleanupDone, hosts_[hi].name, phase, "cleaned up", "", {}, 0});
  }
}

RunResult EngineRun::unlock_and_finish() {
  std::vector<size_t> to_unlock;
  for (size_t i = 0; i < hosts_.size(); ++i)
    if (locked_[i]) to_unlock.push_back(i);
  remote::run_parallel(to_unlock.size(), eo_,
                       [&](size_t k) { runs_[to_unlock[k]]->sh(host_unlock_script(holder_)); });
  for (auto& r : runs_) r->log("--- end of run " + res_.run_id);
  res_.ms = ms_since(started_);
  (void)journal_.append({{"event", "run-end"},
                         {"run", res_.run_id},
                         {"ok", res_.ok()},
                         {"changed", res_.changed()},
                         {"ms", static_cast<int64_t>(res_.ms)}});
  // The connections stay for the next run of these options (the apply after a plan).
  for (size_t i = 0; i < hosts_.size(); ++i) {
    if (opts_.kept && runs_[i]->connection)
      opts_.kept->keep_connection(&transport_, hosts_[i].name, std::move(runs_[i]->connection));
    runs_[i]->connection.reset();
  }
  return std::move(res_);
}

// ------------------------------------------------------------------ stages and groups

size_t EngineRun::stage_end(size_t first) const {
  size_t last = first + 1;
  if (!phases_[first]->traits().cluster_wide)
    while (last < phases_.size() && !phases_[last]->traits().barrier &&
           !phases_[last]->traits().cluster_wide)
      ++last;
  return last;
}

std::pair<std::vector<size_t>, size_t> EngineRun::group_of(size_t first,
                                                           const std::vector<size_t>& alive) const {
  auto on = [&](size_t from, size_t to) {
    std::vector<size_t> v;
    for (size_t i : alive)
      for (size_t pi = from; pi < to; ++pi)
        if (phase_runs(*phases_[pi], hosts_[i])) {
          v.push_back(i);
          break;
        }
    return v;
  };
  std::vector<size_t> group_hosts = on(first, stage_end(first));
  size_t group_end = stage_end(first);
  while (group_end < phases_.size() && !phases_[group_end]->traits().cluster_wide) {
    size_t next = stage_end(group_end);
    if (on(group_end, next) != group_hosts) break;
    group_end = next;
  }
  return {group_hosts, group_end};
}

std::vector<size_t> EngineRun::alive_hosts() const {
  // A dry run shows the whole plan: a host whose phase failed still shows the rest.
  std::vector<size_t> alive;
  for (size_t i = 0; i < hosts_.size(); ++i)
    if (!failed_[i] || (opts_.dry_run && res_.hosts[i].reached)) alive.push_back(i);
  return alive;
}

// ------------------------------------------------------------------ connecting

void EngineRun::connect_host(size_t i) {
  HostRun& h = *runs_[i];
  HostResult& hr = res_.hosts[i];
  if (opts_.kept) h.connection = opts_.kept->take_connection(&transport_, hosts_[i].name);
  if (!h.connection) h.connection = transport_.connect(hosts_[i].target);
  remote::ExecResult r;
  if (opts_.dry_run && !dry_reads_[i].empty()) {
    // One session: every phase's observations of this host at once.
    r = read_in_one_session(h, dry_reads_[i], marker_, opts_.kept.get());
  } else if (opts_.dry_run || !opts_.host_lock) {
    r = h.sh("id -u");
  } else {
    r = lock_host(i);
  }
  if (!r.ok()) {
    hr.error = r.error;
    hr.hint = r.hint;
    failed_[i] = 1;
    emit({Event::Kind::PhaseFailed, hosts_[i].name, "connect", r.error, r.hint, {}, 0});
    return;
  }
  hr.reached = true;
  emit({Event::Kind::HostConnected,
        hosts_[i].name,
        "connect",
        r.auth_method.empty() ? "connected" : "connected (" + r.auth_method + ")",
        "",
        {},
        0});
  if (opts_.dry_run || !opts_.host_lock) return;
  if (r.exit_status != 0 || r.out.rfind("acquired", 0) != 0) return refuse_locked_host(i, r);
  locked_[i] = 1;
  emit({Event::Kind::HostLocked, hosts_[i].name, "lock", "locked", "", {}, 0});
}

remote::ExecResult EngineRun::lock_host(size_t i) {
  HostRun& h = *runs_[i];
  LockSession session = lock_then_read(h, host_lock_script(holder_, opts_.host_lock_stale_s),
                                       lock_reads_[i], marker_);
  locked_reads_[i] = std::move(session.reads);
  remote::ExecResult r = std::move(session.lock);
  if (r.ok() && r.exit_status == 0 && r.out.rfind("held", 0) == 0) {
    std::string cur = r.out.substr(r.out.find('\n') + 1);
    while (!cur.empty() && cur.back() == '\n') cur.pop_back();
    if (holder_is_dead_here(cur)) {
      emit({Event::Kind::Note,
            hosts_[i].name,
            "",
            "taking over the install lock of a run that is gone (" + cur + ")",
            "",
            {},
            0});
      r = h.sh(host_lock_script(holder_, opts_.host_lock_stale_s, cur));
    }
  }
  return r;
}

void EngineRun::refuse_locked_host(size_t i, const remote::ExecResult& r) {
  HostResult& hr = res_.hosts[i];
  std::string cur = r.out.rfind("held", 0) == 0 ? r.out.substr(r.out.find('\n') + 1) : r.out;
  while (!cur.empty() && cur.back() == '\n') cur.pop_back();
  auto parts = util::split(cur, ' ');
  std::string who = parts.size() >= 3
                        ? "pid " + std::string(parts[1]) + " on " + std::string(parts[0]) +
                              " (run " + std::string(parts[2]) + ")"
                        : "\"" + cur + "\"";
  hr.error = "another install holds this host's lock: " + who;
  hr.hint = "wait for it to finish; a lock untouched for " +
            std::to_string(opts_.host_lock_stale_s) +
            " s is stale (/run/lock/paictl-install on the host)";
  failed_[i] = 1;
  emit({Event::Kind::PhaseFailed, hosts_[i].name, "lock", hr.error, hr.hint, {}, 0});
}

// ------------------------------------------------------------------ running phases

void EngineRun::read_ahead(size_t first, const std::vector<size_t>& alive) {
  // A run that applies reads ahead too: the observations of this stage and of
  // the stages after it that run on the same hosts (the master's add-on
  // phases), in one session per host, instead of a session per phase and one
  // `kubectl get` of the cluster objects each. A phase that applies makes its
  // hosts' reads be read again (run_phase).
  auto [group_hosts, group_end] = group_of(first, alive);
  for (auto& r : runs_) r->observations().forget();
  if (first == 0)
    for (size_t i = 0; i < hosts_.size(); ++i)
      for (auto& [script, r] : plan_reads_[i]) runs_[i]->observations().keep(script, std::move(r));
  auto ahead =
      reads_of_phases(phases_, first, group_end, host_runs_, group_hosts, opts_.planned_changes);
  // What the lock's session read of this group serves it (only the reads this
  // group asks for).
  if (first == lock_group_ && group_end <= lock_group_end_)
    for (size_t i = 0; i < hosts_.size(); ++i) {
      std::map<std::string, remote::ExecResult> got;
      for (auto& [script, r] : locked_reads_[i]) got[script] = std::move(r);
      locked_reads_[i].clear();
      std::vector<ObservationRead> left;
      for (auto& rd : ahead[i]) {
        auto it = got.find(rd.script);
        if (it != got.end())
          runs_[i]->observations().keep(rd.script, std::move(it->second));
        else
          left.push_back(std::move(rd));
      }
      ahead[i] = std::move(left);
    }
  std::vector<size_t> targets;
  for (size_t i = 0; i < hosts_.size(); ++i)
    if (!ahead[i].empty() && runs_[i]->connection) targets.push_back(i);
  remote::run_parallel(targets.size(), eo_, [&](size_t k) {
    read_in_one_session(*runs_[targets[k]], ahead[targets[k]], marker_, nullptr);
  });
  read_until_ = group_end;
}

void EngineRun::run_cluster_wide(size_t pi, const std::vector<size_t>& alive) {
  auto& phase = dynamic_cast<ClusterWidePhase&>(*phases_[pi]);
  std::vector<size_t> which;
  std::vector<HostRun*> hs;
  for (size_t i : alive)
    if (phase_runs(phase, hosts_[i])) {
      which.push_back(i);
      hs.push_back(runs_[i].get());
      emit({Event::Kind::PhaseStart, hosts_[i].name, phase.name(), "", "", {}, 0});
    }
  double t0 = clock_.now();
  std::vector<util::Result<void>> st(hs.size());
  std::vector<std::vector<std::string>> needs(hs.size());
  if (!hs.empty()) phase.observe_all(hs, st, needs);
  std::vector<size_t> to_apply;
  for (size_t k = 0; k < which.size(); ++k) {
    size_t i = which[k];
    PhaseResult& pr = res_.hosts[i].phases[pi];
    pr.ms = ms_since(t0);
    if (!st[k].ok()) {
      pr.state = PhaseResult::State::Failed;
      pr.error = masker_->mask(st[k].error().message);
      pr.hint = masker_->mask(st[k].error().hint);
      failed_[i] = 1;
      emit({Event::Kind::PhaseFailed,
            hosts_[i].name,
            pr.phase,
            st[k].error().message,
            st[k].error().hint,
            {},
            pr.ms});
    } else if (needs[k].empty()) {
      pr.state = PhaseResult::State::UpToDate;
      observed_done(i, pr.phase);
      emit({Event::Kind::PhaseUpToDate, hosts_[i].name, pr.phase, "up to date", "", {}, pr.ms});
    } else if (opts_.dry_run) {
      pr.state = PhaseResult::State::Planned;
      pr.needs = needs[k];
      emit({Event::Kind::PhaseNeeds, hosts_[i].name, pr.phase, "would apply", "", needs[k], pr.ms});
    } else {
      to_apply.push_back(i);
    }
  }
  remote::run_parallel(to_apply.size(), eo_, [&](size_t k) {
    if (!run_phase(pi, to_apply[k])) failed_[to_apply[k]] = 1;
  });
}

void EngineRun::run_per_host(size_t first, size_t last, const std::vector<size_t>& alive) {
  remote::run_parallel(alive.size(), eo_, [&](size_t k) {
    size_t i = alive[k];
    for (size_t pi = first; pi < last; ++pi) {
      if (!phase_runs(*phases_[pi], hosts_[i])) continue;
      if (!run_phase(pi, i)) {
        failed_[i] = 1;
        if (!opts_.dry_run) return;
      }
    }
  });
}

bool EngineRun::run_phase(size_t pi, size_t hi) {
  Phase& phase = *phases_[pi];
  HostRun& h = *runs_[hi];
  PhaseResult& pr = res_.hosts[hi].phases[pi];
  const std::string& host = hosts_[hi].name;
  double t0 = clock_.now();
  emit({Event::Kind::PhaseStart, host, pr.phase, "", "", {}, 0});
  std::vector<std::string> needs;
  util::Result<void> s;
  {
    KeepLiveReads keep;
    s = phase.observe(h, needs);
  }
  if (!s.ok()) return phase_failed(pi, hi, s.error(), t0);
  for (auto& n : needs) n = masker_->mask(n);
  pr.needs = needs;
  if (needs.empty()) {
    pr.state = PhaseResult::State::UpToDate;
    observed_done(hi, pr.phase);
    pr.ms = ms_since(t0);
    emit({Event::Kind::PhaseUpToDate, host, pr.phase, "up to date", "", {}, pr.ms});
    return true;
  }
  if (opts_.dry_run) {
    pr.state = PhaseResult::State::Planned;
    pr.ms = ms_since(t0);
    emit({Event::Kind::PhaseNeeds, host, pr.phase, "would apply", "", needs, pr.ms});
    return true;
  }
  // What is about to change is journaled first; a step that cannot be is not taken.
  if (auto j = journal_.append({{"event", "start"},
                                {"run", res_.run_id},
                                {"host", host},
                                {"phase", pr.phase},
                                {"needs", needs}});
      !j) {
    journal_failed(j.error(), "the phases that were not journaled did not run");
    return phase_failed(
        pi, hi, util::Error{"not applied: the install journal cannot be written", res_.hint}, t0);
  }
  emit({Event::Kind::PhaseNeeds, host, pr.phase, "applying", "", needs, 0});
  h.log("phase " + pr.phase + ": " + util::join(needs, "; "));
  {
    std::lock_guard lock(applied_mu_);
    applied_.emplace_back(pi, hi);
  }
  s = apply_phase(pi, hi, needs);
  if (auto j =
          journal_.append({{"event", "end"},
                           {"run", res_.run_id},
                           {"host", host},
                           {"phase", pr.phase},
                           {"result", s.ok() ? "changed" : "failed"},
                           {"error", s.ok() ? std::string() : masker_->mask(s.error().message)}});
      !j)
    journal_failed(j.error(), "the phases under way finish, no other starts");
  if (!s.ok()) return phase_failed(pi, hi, s.error(), t0);
  pr.state = PhaseResult::State::Changed;
  pr.ms = ms_since(t0);
  emit({Event::Kind::PhaseApplied, host, pr.phase, "applied", "", needs, pr.ms});
  return true;
}

util::Result<void> EngineRun::apply_phase(size_t pi, size_t hi,
                                          const std::vector<std::string>& needs) {
  Phase& phase = *phases_[pi];
  HostRun& h = *runs_[hi];
  // What this phase read is about to change: every later observation of the
  // hosts it reads (its own, the master for a join) reads them again. Its last
  // step reads its verification's and the next phases' observations after it.
  forget_reads_changed_by(phase, h);
  h.observations().set_reads_after(
      reads_after_apply(phases_, pi, after_until_, h, opts_.planned_changes));
  util::Result<void> s = phase.apply(h, needs);
  auto read_after = h.observations().take_reads_after();
  // What others read meanwhile may predate the change: the verification reads
  // afresh (what the apply's last step read right after it, or live), and
  // keeps what it read for the phases after it.
  forget_reads_changed_by(phase, h);
  for (auto& [script, r] : read_after) h.observations().keep(script, std::move(r));
  if (!s.ok()) return s;
  KeepLiveReads keep;
  return verify_applied(phase, h);
}

void EngineRun::observed_done(size_t hi, const std::string& phase) {
  if (!journal_open_) return;
  for (const auto& e : res_.interrupted)
    if (e.host == hosts_[hi].name && e.phase == phase) {
      // Best effort: without this record a later run only repeats the
      // "interrupted earlier" notice; the step itself is done.
      (void)journal_.append(
          {{"event", "up-to-date"}, {"run", res_.run_id}, {"host", e.host}, {"phase", phase}});
      return;
    }
}

bool EngineRun::phase_failed(size_t pi, size_t hi, const util::Error& error, double t0) {
  PhaseResult& pr = res_.hosts[hi].phases[pi];
  pr.state = PhaseResult::State::Failed;
  pr.error = masker_->mask(error.message);
  pr.hint = masker_->mask(error.hint);
  pr.ms = ms_since(t0);
  runs_[hi]->log("phase " + pr.phase + " failed: " + error.message);
  emit({Event::Kind::PhaseFailed, hosts_[hi].name, pr.phase, error.message, error.hint, {}, pr.ms});
  return false;
}

}  // namespace engine_detail
}  // namespace pai::deploy
