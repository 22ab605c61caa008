// The install engine with a fake transport and in-memory phases: order,
// barriers, up-to-date re-runs, clean-up on failure, the journal, the locks,
// dry runs, masking and the parallel bound.

#include "deploy/engine.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "deploy/journal.h"
#include "deploy/openpai.h"
#include "support/scripted_transport.h"

namespace pai::deploy {
namespace {

namespace fs = std::filesystem;

// The engine's own commands (the host lock, the probe) answered by the shared
// scripted transport: the lock script is held where `held` names a holder,
// `echo X` prints X, anything else prints 0 (id -u).
void script_engine_commands(testing::ScriptedTransport& t,
                            std::map<std::string, std::string>& held) {
  t.fallback.out = "0\n";
  t.on("echo ", [](const testing::ScriptedCall& c) {
    return testing::ScriptedAnswer{c.script.substr(c.script.find("echo ") + 5)};
  });
  t.on("set -C", [&held](const testing::ScriptedCall& c) {
    auto it = held.find(c.host);
    return testing::ScriptedAnswer{it == held.end() ? "acquired\n"
                                                    : "held 5\n" + it->second + "\n"};
  });
}

// What the phases do, in order, across hosts.
struct Timeline {
  std::mutex mu;
  std::vector<std::string> events;  // "phase host what"
  void add(const std::string& e) {
    std::lock_guard lock(mu);
    events.push_back(e);
  }
  size_t index(const std::string& e) {
    std::lock_guard lock(mu);
    for (size_t i = 0; i < events.size(); ++i)
      if (events[i] == e) return i;
    return SIZE_MAX;
  }
  size_t count_prefix(const std::string& p) {
    std::lock_guard lock(mu);
    size_t n = 0;
    for (const auto& e : events) n += e.rfind(p, 0) == 0;
    return n;
  }
};

// A phase over an in-memory "host state": a set of keys per host it must make present.
class KeyPhase : public Phase, public CleansUp {
 public:
  enum class Where { All, Master, Workers };
  KeyPhase(std::string name, Where where, bool barrier, Timeline& tl,
           std::map<std::string, std::set<std::string>>& state)
      : Phase(name, {.hosts = where == Where::All      ? PhaseTraits::Hosts::All
                              : where == Where::Master ? PhaseTraits::Hosts::Master
                                                       : PhaseTraits::Hosts::AllButMaster,
                     .barrier = barrier}),
        name_(std::move(name)),
        tl_(tl),
        state_(state) {}
  util::Result<void> observe(HostRun& h, std::vector<std::string>& needs) override {
    std::lock_guard lock(mu_);
    if (!state_[h.spec().name].count(name_)) needs.push_back("make " + name_);
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    tl_.add(name_ + " " + h.spec().name + " start");
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    tl_.add(name_ + " " + h.spec().name + " end");
    if (fail_on == h.spec().name) return util::Error{"injected failure on " + fail_on, ""};
    std::lock_guard lock(mu_);
    state_[h.spec().name].insert(name_);
    return {};
  }
  void cleanup(HostRun& h) override { tl_.add(name_ + " " + h.spec().name + " cleanup"); }

  std::string fail_on;
  int delay_ms = 5;

 private:
  std::string name_;
  Timeline& tl_;
  std::map<std::string, std::set<std::string>>& state_;
  static std::mutex mu_;
};
std::mutex KeyPhase::mu_;

std::vector<HostSpec> cluster(int workers) {
  std::vector<HostSpec> out;
  HostSpec m;
  m.name = "master";
  m.master = true;
  m.target.endpoint.name = "master";
  m.target.endpoint.user = "root";
  out.push_back(m);
  for (int i = 1; i <= workers; ++i) {
    HostSpec w;
    w.name = "worker" + std::to_string(i);
    w.worker = true;
    w.target.endpoint.name = w.name;
    w.target.endpoint.user = "root";
    out.push_back(w);
  }
  return out;
}

struct DeployEngine : ::testing::Test {
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("paictl-engine-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
    script_engine_commands(transport, held);
  }
  void TearDown() override { fs::remove_all(dir); }
  PhaseList phases() {
    PhaseList p;
    auto add = [&](const char* n, KeyPhase::Where w, bool b) {
      auto ph = std::make_unique<KeyPhase>(n, w, b, tl, state);
      raw[n] = ph.get();
      p.push_back(std::move(ph));
    };
    add("prepare", KeyPhase::Where::All, false);
    add("control-plane", KeyPhase::Where::Master, true);
    add("workers", KeyPhase::Where::Workers, true);
    add("addons", KeyPhase::Where::Master, true);
    return p;
  }
  EngineOptions options() {
    EngineOptions o;
    o.journal_path = (dir / ".paictl" / "install.journal").string();
    o.on_event = [this](const Event& e) {
      std::lock_guard lock(ev_mu);
      events.push_back(e);
    };
    return o;
  }
  fs::path dir;
  Timeline tl;
  std::map<std::string, std::set<std::string>> state;
  std::map<std::string, KeyPhase*> raw;
  testing::ScriptedTransport transport;
  std::map<std::string, std::string> held;  // host -> the holder of its install lock
  std::mutex ev_mu;
  std::vector<Event> events;
};

TEST_F(DeployEngine, PhasesRunInOrderWithBarriers) {
  auto p = phases();
  raw["prepare"]->delay_ms = 20;
  Engine engine(transport, options());
  RunResult r = engine.run(cluster(3), p);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.changed());
  // Every host prepared before the control plane starts; the control plane before any join.
  size_t cp = tl.index("control-plane master start");
  ASSERT_NE(cp, SIZE_MAX);
  for (const char* h : {"master", "worker1", "worker2", "worker3"})
    EXPECT_LT(tl.index(std::string("prepare ") + h + " end"), cp) << h;
  for (const char* h : {"worker1", "worker2", "worker3"}) {
    EXPECT_GT(tl.index(std::string("workers ") + h + " start"),
              tl.index("control-plane master end"));
    EXPECT_LT(tl.index(std::string("workers ") + h + " end"), tl.index("addons master start"));
  }
  // The control plane never runs on a worker, nor joins on the master.
  EXPECT_EQ(tl.count_prefix("control-plane worker"), 0u);
  EXPECT_EQ(tl.count_prefix("workers master"), 0u);
  EXPECT_EQ(r.hosts[1].phases[1].state, PhaseResult::State::NotApplicable);
  // One connection per host for the whole run.
  EXPECT_EQ(transport.connections(), 4);
}

TEST_F(DeployEngine, SecondRunIsUpToDate) {
  auto p = phases();
  Engine engine(transport, options());
  ASSERT_TRUE(engine.run(cluster(2), p).ok());
  size_t applied = tl.count_prefix("");
  RunResult again = engine.run(cluster(2), p);
  EXPECT_TRUE(again.ok());
  EXPECT_FALSE(again.changed());
  EXPECT_EQ(tl.count_prefix(""), applied);  // nothing applied
  for (const auto& h : again.hosts)
    for (const auto& ph : h.phases)
      EXPECT_TRUE(ph.state == PhaseResult::State::UpToDate ||
                  ph.state == PhaseResult::State::NotApplicable)
          << h.host << " " << ph.phase;
}

TEST_F(DeployEngine, FailureStopsAtTheBarrierAndCleansUpNewestFirst) {
  auto p = phases();
  raw["control-plane"]->fail_on = "master";
  Engine engine(transport, options());
  RunResult r = engine.run(cluster(2), p);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(tl.count_prefix("workers"), 0u);
  EXPECT_EQ(r.hosts[0].phases[1].state, PhaseResult::State::Failed);
  EXPECT_NE(r.hosts[0].phases[1].error.find("injected failure"), std::string::npos);
  EXPECT_EQ(r.hosts[1].phases[2].state, PhaseResult::State::Skipped);
  // Clean-up: the failed phase first, then what prepared the hosts.
  size_t cp = tl.index("control-plane master cleanup");
  ASSERT_NE(cp, SIZE_MAX);
  for (const char* h : {"master", "worker1", "worker2"}) {
    size_t c = tl.index(std::string("prepare ") + h + " cleanup");
    ASSERT_NE(c, SIZE_MAX) << h;
    EXPECT_GT(c, cp);
  }
  // A re-run does only what is missing.
  raw["control-plane"]->fail_on.clear();
  RunResult again = engine.run(cluster(2), p);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(tl.count_prefix("prepare master start"), 1u);
  EXPECT_EQ(tl.count_prefix("control-plane master start"), 2u);
  EXPECT_EQ(again.hosts[0].phases[0].state, PhaseResult::State::UpToDate);
}

TEST_F(DeployEngine, UnreachableHostFailsTheRunBeforeAnyChange) {
  auto p = phases();
  transport.unreachable("worker2");
  Engine engine(transport, options());
  RunResult r = engine.run(cluster(2), p);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.hosts[2].reached);
  EXPECT_NE(r.hosts[2].error.find("refused"), std::string::npos);
  EXPECT_EQ(tl.count_prefix(""), 0u);
}

TEST_F(DeployEngine, DryRunChangesNothingAndSaysWhatItWouldDo) {
  auto p = phases();
  EngineOptions o = options();
  o.dry_run = true;
  Engine engine(transport, o);
  RunResult r = engine.run(cluster(2), p);
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.changed());
  EXPECT_EQ(tl.count_prefix(""), 0u);
  EXPECT_EQ(r.hosts[0].phases[1].state, PhaseResult::State::Planned);
  EXPECT_EQ(r.hosts[0].phases[1].needs, std::vector<std::string>{"make control-plane"});
  EXPECT_FALSE(fs::exists(o.journal_path));
  EXPECT_FALSE(transport.ran("set -C")) << "a dry run took the host lock";
}

TEST_F(DeployEngine, JournalRecordsRunsAndFindsInterruptedSteps) {
  auto p = phases();
  EngineOptions o = options();
  {
    Engine engine(transport, o);
    ASSERT_TRUE(engine.run(cluster(1), p).ok());
  }
  auto records = read_journal(o.journal_path).value();
  size_t starts = 0, ends = 0;
  for (const auto& j : records) {
    starts += j["event"] == "start";
    ends += j["event"] == "end";
    EXPECT_TRUE(j.contains("time"));
  }
  EXPECT_EQ(starts, 5u);  // prepare x2, control-plane, workers, addons
  EXPECT_EQ(ends, starts);
  EXPECT_TRUE(interrupted_steps(records).empty());
  EXPECT_EQ(fs::status(o.journal_path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);

  // A kill -9 in the middle of a step: a start without its end, then a torn line.
  {
    std::ofstream out(o.journal_path, std::ios::app);
    out << R"({"time":"t","event":"start","run":"r9","host":"worker1","phase":"workers"})"
        << "\n"
        << R"({"time":"t","event":"en)";
  }
  auto steps = interrupted_steps(read_journal(o.journal_path).value());
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0]["host"], "worker1");
  Engine engine(transport, o);
  RunResult r = engine.run(cluster(1), p);
  EXPECT_TRUE(r.ok());
  ASSERT_EQ(r.interrupted.size(), 1u);
  EXPECT_EQ(r.interrupted[0].phase, "workers");
  // The torn line did not glue itself to the next record.
  auto after = read_journal(o.journal_path).value();
  EXPECT_GT(after.size(), records.size() + 1);

  // Losing the journal loses only the report.
  fs::remove(o.journal_path);
  state.clear();
  RunResult fresh = engine.run(cluster(1), p);
  EXPECT_TRUE(fresh.ok());
  EXPECT_TRUE(fresh.changed());
}

// The notice of an interrupted step lasts until a run completes that step,
// whichever run it is, and then never comes back.
TEST_F(DeployEngine, AnInterruptedStepIsReportedUntilARunCompletesIt) {
  auto p = phases();
  EngineOptions o = options();
  ASSERT_TRUE(Engine(transport, o).run(cluster(1), p).ok());
  // Killed while `workers` ran on worker1 (its start, no end; the signal's
  // record): the host does not have it.
  state["worker1"].erase("workers");
  {
    std::ofstream out(o.journal_path, std::ios::app);
    out << R"({"time":"t","event":"run-start","run":"r9","hosts":2})"
        << "\n"
        << R"({"time":"t","event":"start","run":"r9","host":"worker1","phase":"workers"})"
        << "\n";
  }
  journal_interruption(o.journal_path, "SIGINT", {{"worker1", "workers"}});
  auto records = read_journal(o.journal_path).value();
  EXPECT_EQ(records.back()["event"], "interrupted");
  EXPECT_EQ(records.back()["steps"][0]["phase"], "workers");

  // A dry run shows the notice and changes nothing, the journal included.
  EngineOptions dry = o;
  dry.dry_run = true;
  RunResult plan = Engine(transport, dry).run(cluster(1), p);
  ASSERT_EQ(plan.interrupted.size(), 1u);
  EXPECT_EQ(read_journal(o.journal_path).value().size(), records.size());

  // The re-run shows it, and completes the step.
  RunResult rerun = Engine(transport, o).run(cluster(1), p);
  EXPECT_TRUE(rerun.ok());
  ASSERT_EQ(rerun.interrupted.size(), 1u);
  EXPECT_EQ(rerun.interrupted[0].host, "worker1");
  EXPECT_EQ(rerun.interrupted[0].phase, "workers");
  EXPECT_TRUE(state["worker1"].count("workers"));
  // Every run after it: no notice, in a plan or an apply.
  RunResult further = Engine(transport, o).run(cluster(1), p);
  EXPECT_TRUE(further.interrupted.empty());
  EXPECT_TRUE(Engine(transport, dry).run(cluster(1), p).interrupted.empty());

  // A step a later run finds done (the kill came after its work) ends too:
  // the plan made for an apply records it, though the apply has nothing to do.
  {
    std::ofstream out(o.journal_path, std::ios::app);
    out << R"({"time":"t","event":"start","run":"r10","host":"master","phase":"addons"})"
        << "\n";
  }
  EngineOptions plan_for_apply = dry;
  plan_for_apply.journal_plan = true;
  RunResult found = Engine(transport, plan_for_apply).run(cluster(1), p);
  ASSERT_EQ(found.interrupted.size(), 1u);
  EXPECT_FALSE(found.changed());
  EXPECT_TRUE(Engine(transport, dry).run(cluster(1), p).interrupted.empty());

  // A step that failed again after the interruption is not complete: still reported.
  {
    std::ofstream out(o.journal_path, std::ios::app);
    out << R"({"time":"t","event":"start","run":"r11","host":"worker1","phase":"workers"})"
        << "\n"
        << R"({"time":"t","event":"start","run":"r12","host":"worker1","phase":"workers"})"
        << "\n"
        << R"({"time":"t","event":"end","run":"r12","host":"worker1","phase":"workers",)"
        << R"("result":"failed"})"
        << "\n";
  }
  auto open = interrupted_steps(read_journal(o.journal_path).value());
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0]["run"], "r11");
}

TEST_F(DeployEngine, JournalReadOnlyItsTailAndNeverWaitsOnAFifo) {
  std::string path = (dir / "journal").string();
  // Many old records, then an interrupted step: only the tail is read, and
  // the interrupted step is still found.
  {
    std::ofstream out(path);
    std::string old = R"({"time":"t","event":"start","run":"old","host":"h","phase":"p"})"
                      "\n"
                      R"({"time":"t","event":"end","run":"old","host":"h","phase":"p"})"
                      "\n";
    for (int i = 0; i < 40000; ++i) out << old;  // about 5 MB
    out << R"({"time":"t","event":"start","run":"r9","host":"worker1","phase":"workers"})"
        << "\n";
  }
  auto all = read_journal(path).value();
  EXPECT_EQ(all.size(), 80001u);
  auto tail = read_journal(path, 4096).value();
  EXPECT_LT(tail.size(), 80u);
  EXPECT_GT(tail.size(), 10u);
  auto steps = interrupted_steps(tail);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0]["run"], "r9");

  // No journal yet: no records, no error.
  EXPECT_TRUE(read_journal((dir / "absent").string()).value().empty());

  // A FIFO: refused at once (a reader would wait for a writer for ever).
  std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto r = read_journal(fifo);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("FIFO"), std::string::npos) << r.error().message;

  // A plan whose journal is a FIFO goes on without it; a run that would
  // change hosts cannot keep its journal, so it stops before any host.
  EngineOptions o = options();
  o.journal_path = fifo;
  EngineOptions dry = o;
  dry.dry_run = true;
  EXPECT_TRUE(Engine(transport, dry).run(cluster(1), phases()).ok());
  RunResult run = Engine(transport, o).run(cluster(1), phases());
  EXPECT_FALSE(run.ok());
  EXPECT_NE(run.error.find("FIFO"), std::string::npos) << run.error;
  EXPECT_NE(run.error.find("nothing was changed"), std::string::npos) << run.error;
  EXPECT_EQ(tl.count_prefix(""), 0u) << "a phase applied without a journal";
}

// A journal that cannot be written at all stops the run before any host is reached.
TEST_F(DeployEngine, AJournalThatCannotBeWrittenStopsTheRunBeforeAnyHost) {
  auto p = phases();
  for (const std::string& journal :
       std::vector<std::string>{(dir / "journal-is-a-directory").string(), "/dev/full"}) {
    fs::create_directories(dir / "journal-is-a-directory");
    EngineOptions o = options();
    o.journal_path = journal;
    RunResult r = Engine(transport, o).run(cluster(1), p);
    EXPECT_FALSE(r.ok()) << journal;
    EXPECT_NE(r.error.find("the install journal cannot be written"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("nothing was changed"), std::string::npos) << r.error;
    EXPECT_NE(r.hint.find("free space"), std::string::npos) << r.hint;
    EXPECT_EQ(tl.count_prefix(""), 0u) << "a phase applied without a journal";
    EXPECT_FALSE(transport.ran("set -C")) << "a host was locked";
    EXPECT_EQ(r.to_json()["error"], r.error);
    bool said = false;
    for (const auto& e : events)
      said |= e.message.find("journal cannot be written") != std::string::npos;
    EXPECT_TRUE(said) << "the run did not say why it stopped";
  }
}

// The disk fills up in the middle of a run: the step whose start cannot be
// journaled is not taken, the run stops at the end of its stage, and the next
// run (with room again) finishes the work.
TEST_F(DeployEngine, AJournalWriteFailureMidRunStopsCleanlyAndResumes) {
  auto p = phases();
  EngineOptions o = options();
  fs::create_directories(dir / ".paictl");
  { std::ofstream(o.journal_path) << std::string(4000, ' ') << "\n"; }
  // Room for the run-start record and about one more: RLIMIT_FSIZE makes the
  // writes beyond it fail (EFBIG) as a full disk would.
  struct rlimit before {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = before;
  small.rlim_cur = 4001 + 300;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  RunResult r = Engine(transport, o).run(cluster(2), p);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &before), 0);
  std::signal(SIGXFSZ, old_handler);

  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error.find("the install journal cannot be written"), std::string::npos) << r.error;
  EXPECT_EQ(tl.index("control-plane master start"), SIZE_MAX) << "the run went past its stage";
  EXPECT_EQ(tl.index("addons master start"), SIZE_MAX);
  // Every step taken is in the journal.
  auto records = read_journal(o.journal_path).value();
  for (const auto& h : {"master", "worker1", "worker2"})
    if (tl.index(std::string("prepare ") + h + " start") != SIZE_MAX) {
      bool journaled = false;
      for (const auto& j : records)
        journaled |= j["event"] == "start" && j["host"] == h && j["phase"] == "prepare";
      EXPECT_TRUE(journaled) << h << " changed without a journal record";
    }
  bool refused = false;
  for (const auto& h : r.hosts)
    for (const auto& ph : h.phases)
      refused |= ph.error.find("not applied: the install journal cannot be written") == 0;
  EXPECT_TRUE(refused) << r.to_json().dump();

  // Room again: the next run observes, resumes and finishes.
  RunResult again = Engine(transport, o).run(cluster(2), p);
  EXPECT_TRUE(again.ok()) << again.error;
  EXPECT_NE(tl.index("addons master start"), SIZE_MAX);
}

// Host logs that cannot be written are said, once per host; the run goes on.
TEST_F(DeployEngine, HostLogsThatCannotBeWrittenAreSaid) {
  auto p = phases();
  EngineOptions o = options();
  std::ofstream(dir / "logs-is-a-file") << "x";
  o.log_dir = (dir / "logs-is-a-file").string();
  RunResult r = Engine(transport, o).run(cluster(1), p);
  EXPECT_TRUE(r.ok()) << r.error;
  std::set<std::string> said;
  for (const auto& e : events)
    if (e.kind == Event::Kind::Note && e.message.find("logs-is-a-file/") != std::string::npos) {
      EXPECT_NE(e.message.find("Not a directory"), std::string::npos) << e.message;
      said.insert(e.host);
    }
  EXPECT_EQ(said, (std::set<std::string>{"master", "worker1"}));
}

TEST(DeployJournal, AppendSaysWhyItCannotWrite) {
  Journal j;
  ASSERT_TRUE(j.open("/dev/full"));
  auto a = j.append({{"event", "run-start"}});
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().message, "cannot write /dev/full: No space left on device");
  EXPECT_FALSE(j.append({{"event", "end"}})) << "a journal that failed keeps failing";
  EXPECT_EQ(j.error(), a.error().message);
  auto dir = fs::temp_directory_path() / ("paictl-journal-dir-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto c = check_journal_writable(dir.string());
  EXPECT_FALSE(c);
  fs::remove_all(dir);
  auto ok = fs::temp_directory_path() / ("paictl-journal-ok-" + std::to_string(::getpid()));
  EXPECT_TRUE(check_journal_writable(ok.string()));
  fs::remove(ok);
}

TEST_F(DeployEngine, LocalLockRefusesASecondInstallAndSaysWho) {
  std::string path = (dir / ".paictl" / "install.lock").string();
  LocalLock a;
  ASSERT_TRUE(a.acquire(path));
  LocalLock b;
  auto refused = b.acquire(path);
  ASSERT_FALSE(refused);
  const std::string why = refused.error().message;
  EXPECT_NE(why.find("another paictl run on this cluster is running"), std::string::npos) << why;
  EXPECT_NE(why.find("paictl install, pid " + std::to_string(::getpid())), std::string::npos)
      << why;
  EXPECT_NE(why.find("since "), std::string::npos) << why;
  a.release();
  EXPECT_TRUE(b.acquire(path));
  b.release();
  // A holder killed with SIGKILL leaves no lock behind.
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  if (child == 0) {
    LocalLock c;
    char ok = c.acquire(path) ? 'y' : 'n';
    if (::write(ready[1], &ok, 1) != 1) ::_exit(1);
    ::pause();
    ::_exit(0);
  }
  char ok = 0;
  ASSERT_EQ(::read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, 'y');
  LocalLock probe;
  auto taken = probe.acquire(path);
  ASSERT_FALSE(taken);
  const std::string held = taken.error().message;
  EXPECT_NE(held.find("pid " + std::to_string(child)), std::string::npos) << held;
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  LocalLock after;
  EXPECT_TRUE(after.acquire(path));
}

TEST_F(DeployEngine, HostLockHeldByAnotherRunStopsThatHost) {
  auto p = phases();
  held["worker1"] = "elsewhere 4242 run-7 2024";
  Engine engine(transport, options());
  RunResult r = engine.run(cluster(2), p);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.hosts[1].error.find("pid 4242 on elsewhere"), std::string::npos) << r.hosts[1].error;
  EXPECT_EQ(tl.count_prefix(""), 0u);
  // Hosts that were locked are unlocked at the end.
  size_t unlocks = 0;
  for (const auto& c : transport.calls())
    unlocks +=
        c.script.find("rm -f") != std::string::npos && c.script.find("set -C") == std::string::npos;
  EXPECT_EQ(unlocks, 2u);
}

// The lock script itself, run by a real sh against a temporary lock path.
std::string run_sh(const std::string& script) {
  FILE* f = ::popen(("sh -c " + std::string("'") + script + "'").c_str(), "r");
  std::string out;
  char buf[256];
  while (size_t n = std::fread(buf, 1, sizeof buf, f)) out.append(buf, n);
  ::pclose(f);
  return out;
}

TEST_F(DeployEngine, HostLockScriptTakesRefusesAndExpires) {
  std::string lock = (dir / "paictl-install").string();
  auto local = [&](std::string s) {
    auto pos = s.find("L=/run/lock/paictl-install; [ -d /run/lock ] || L=/tmp/paictl-install.lock");
    EXPECT_NE(pos, std::string::npos);
    s.replace(
        pos,
        std::string("L=/run/lock/paictl-install; [ -d /run/lock ] || L=/tmp/paictl-install.lock")
            .size(),
        "L=" + lock);
    std::string q;
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return run_sh(q);
  };
  EXPECT_EQ(local(host_lock_script("me 1 run-a", 60)), "acquired\n");
  EXPECT_EQ(local(host_lock_script("me 1 run-a", 60)), "acquired\n");  // re-entrant
  std::string held = local(host_lock_script("you 2 run-b", 60));
  EXPECT_EQ(held.rfind("held ", 0), 0u) << held;
  EXPECT_NE(held.find("\nme 1 run-a\n"), std::string::npos) << held;
  EXPECT_EQ(local(host_lock_script("you 2 run-b", 60, "me 1 run-a")), "acquired\n");
  // Stale: untouched for longer than the timeout.
  ::system(("touch -d '-2 minutes' " + lock).c_str());
  EXPECT_EQ(local(host_lock_script("me 1 run-a", 60)), "acquired\n");
  local(host_unlock_script("someone-else"));
  EXPECT_TRUE(fs::exists(lock));
  local(host_unlock_script("me 1 run-a"));
  EXPECT_FALSE(fs::exists(lock));
}

class TokenPhase : public Phase {
 public:
  TokenPhase() : Phase("token") {}
  util::Result<void> observe(HostRun&, std::vector<std::string>& needs) override {
    if (!done) needs.push_back("mint a token");
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    h.run().masker->add("abcdef.0123456789abcdef");
    auto r = h.sh("echo abcdef.0123456789abcdef");
    if (r.out.find("abcdef") == std::string::npos) return util::Error{"no echo", ""};
    return util::Error{"join with token abcdef.0123456789abcdef was refused", ""};
  }
  bool done = false;
};

TEST_F(DeployEngine, SecretsAreMaskedInEventsResultsAndLogs) {
  PhaseList p;
  p.push_back(std::make_unique<TokenPhase>());
  EngineOptions o = options();
  o.log_dir = dir.string();
  Engine engine(transport, o);
  RunResult r = engine.run(cluster(0), p);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.to_json().dump().find("0123456789abcdef"), std::string::npos);
  EXPECT_NE(r.hosts[0].phases[0].error.find("***"), std::string::npos);
  for (const auto& e : events) EXPECT_EQ(e.message.find("0123456789abcdef"), std::string::npos);
  std::ifstream in(dir / "master.log");
  std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(log.find("echo ***"), std::string::npos) << log;
  EXPECT_EQ(log.find("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(fs::status(dir / "master.log").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  std::ifstream j(o.journal_path);
  std::string journal((std::istreambuf_iterator<char>(j)), std::istreambuf_iterator<char>());
  EXPECT_EQ(journal.find("0123456789abcdef"), std::string::npos);
}

class CountingPhase : public Phase {
 public:
  CountingPhase() : Phase("count") {}
  util::Result<void> observe(HostRun&, std::vector<std::string>& needs) override {
    int now = ++running;
    int seen = max.load();
    while (now > seen && !max.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    --running;
    needs.clear();
    return {};
  }
  util::Result<void> apply(HostRun&, const std::vector<std::string>&) override { return {}; }
  std::atomic<int> running{0}, max{0};
};

TEST_F(DeployEngine, ParallelIsBounded) {
  PhaseList p;
  auto* c = new CountingPhase;
  p.emplace_back(c);
  EngineOptions o = options();
  o.parallel = 2;
  Engine engine(transport, o);
  EXPECT_TRUE(engine.run(cluster(7), p).ok());
  EXPECT_LE(c->max.load(), 2);
  EXPECT_GE(c->max.load(), 1);
}

// The shared scripted transport running each command in a local shell
// (testing::local_shell): the combined observation script of a dry run meets
// a real sh.
struct LocalShellTransport : testing::ScriptedTransport {
  explicit LocalShellTransport(const fs::path& dir) { on("", testing::local_shell(dir.string())); }
  size_t sessions(const std::string& host) const { return calls_to(host).size(); }
};

// Reads the host's file (and, on workers, one file of the master's) through
// observe_sh, as the install phases do.
class ReadingPhase : public Phase, public ReadsAhead {
 public:
  ReadingPhase() : Phase("read") {}
  static std::string own() {
    return "cat \"$DIR/state-$HOST\"; cat >/dev/null; echo; echo oops >&2";
  }
  static std::string of_master() { return "echo \"master says $(cat \"$DIR/state-$HOST\")\""; }
  static std::string failing() { return "echo partial; exit 3"; }
  void observation_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    out.push_back({&h, own()});
    out.push_back({&h, failing()});
    if (!h.spec().master) out.push_back({h.run().master(), of_master()});
  }
  util::Result<void> observe(HostRun& h, std::vector<std::string>& needs) override {
    auto r = h.observe_sh(own());
    if (util_trim(r.out) != "ok") needs.push_back("fix " + util_trim(r.out));
    auto f = h.observe_sh(failing());
    if (f.exit_status != 3 || util_trim(f.out) != "partial") needs.push_back("bad failing read");
    if (!h.spec().master) {
      auto m = h.run().master()->observe_sh(of_master());
      std::lock_guard lock(mu);
      master_said.push_back(util_trim(m.out));
    }
    return {};
  }
  util::Result<void> apply(HostRun&, const std::vector<std::string>&) override { return {}; }
  static std::string util_trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }
  std::mutex mu;
  std::vector<std::string> master_said;
};

TEST_F(DeployEngine, DryRunReadsEveryObservationOfAHostInOneSession) {
  for (const char* h : {"master", "worker1", "worker2"})
    std::ofstream(dir / (std::string("state-") + h))
        << (std::string(h) == "worker2" ? "bad" : "ok");
  LocalShellTransport shell(dir);
  PhaseList p;
  auto* rp = new ReadingPhase;
  p.emplace_back(rp);
  EngineOptions o = options();
  o.dry_run = true;
  RunResult r = Engine(shell, o).run(cluster(2), p);
  ASSERT_TRUE(r.ok());
  // One session per host, the master's included (it serves the workers' reads too).
  EXPECT_EQ(shell.sessions("master"), 1u);
  EXPECT_EQ(shell.sessions("worker1"), 1u);
  EXPECT_EQ(shell.sessions("worker2"), 1u);
  EXPECT_EQ(r.hosts[0].phases[0].state, PhaseResult::State::UpToDate);
  EXPECT_EQ(r.hosts[1].phases[0].state, PhaseResult::State::UpToDate);
  ASSERT_EQ(r.hosts[2].phases[0].state, PhaseResult::State::Planned);
  EXPECT_EQ(r.hosts[2].phases[0].needs, std::vector<std::string>{"fix bad"});
  EXPECT_EQ(rp->master_said, (std::vector<std::string>{"master says ok", "master says ok"}));

  // A run that applies reads the hosts live, each read on its own.
  shell.clear_calls();
  rp->master_said.clear();
  o.dry_run = false;
  o.host_lock = false;
  r = Engine(shell, o).run(cluster(2), p);
  EXPECT_GT(shell.sessions("master"), 1u);
  EXPECT_GT(shell.sessions("worker1"), 1u);
}

TEST_F(DeployEngine, APlanAndItsApplyShareOneConnectionPerHost) {
  auto p = phases();
  EngineOptions o = options();
  o.dry_run = true;
  RunResult plan = Engine(transport, o).run(cluster(2), p);
  ASSERT_TRUE(plan.changed());
  o.dry_run = false;
  RunResult r = Engine(transport, o).run(cluster(2), p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(transport.connections(), 3);  // the copies of `o` share them
  // Options that are not copies of one another share nothing.
  Engine(transport, options()).run(cluster(2), p);
  EXPECT_EQ(transport.connections(), 6);
}

// A phase that changes nothing, whose read counts its runs on the host.
class ReadOnlyPhase : public Phase, public ReadsAhead {
 public:
  ReadOnlyPhase() : Phase("look", {.read_only = true}) {}
  static std::string script() { return "echo read >> \"$DIR/looked-$HOST\"; echo seen"; }
  void observation_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    out.push_back({&h, script()});
  }
  util::Result<void> observe(HostRun& h, std::vector<std::string>&) override {
    auto r = h.observe_sh(script());
    if (r.exit_status != 0 || ReadingPhase::util_trim(r.out) != "seen")
      return util::Error{"bad read: " + r.out, ""};
    return {};
  }
  util::Result<void> apply(HostRun&, const std::vector<std::string>&) override { return {}; }
};

TEST_F(DeployEngine, TheApplyTakesThePlansReadsOfReadOnlyPhasesWhileFresh) {
  auto lines = [&](const char* h) {
    std::ifstream in(dir / (std::string("looked-") + h));
    size_t n = 0;
    for (std::string l; std::getline(in, l);) ++n;
    return n;
  };
  for (double max_age : {60.0, -1.0}) {
    PhaseList p;
    p.emplace_back(new ReadOnlyPhase);
    p.emplace_back(new KeyPhase("prepare", KeyPhase::Where::All, false, tl, state));
    state.clear();
    LocalShellTransport shell(dir);
    fs::remove(dir / "looked-master");
    fs::remove(dir / "looked-worker1");
    EngineOptions o = options();
    o.host_lock = false;
    o.reuse_reads_s = max_age;
    o.dry_run = true;
    RunResult plan = Engine(shell, o).run(cluster(1), p);
    ASSERT_TRUE(plan.ok());
    ASSERT_TRUE(plan.changed());  // "make prepare": the apply runs
    EXPECT_EQ(lines("master"), 1u);
    o.dry_run = false;
    RunResult r = Engine(shell, o).run(cluster(1), p);
    ASSERT_TRUE(r.ok()) << max_age;
    EXPECT_EQ(r.hosts[1].phases[0].state, PhaseResult::State::UpToDate);
    // Fresh: read once in the command; too old: read again by the apply.
    size_t want = max_age > 0 ? 1u : 2u;
    EXPECT_EQ(lines("master"), want) << max_age;
    EXPECT_EQ(lines("worker1"), want) << max_age;
  }
}

// Two phases that observe their host with the same script (as the master's
// add-on phases share their read of the cluster objects); each makes a flag.
class FlagPhase : public Phase, public ReadsAhead {
 public:
  explicit FlagPhase(std::string flag, bool last_step = false)
      : Phase("flag-" + flag), flag_(std::move(flag)), last_(last_step) {}
  static std::string script() {
    return "echo r >> \"$DIR/reads-$HOST\"; for f in a b; do [ -e \"$DIR/flag-$HOST-$f\" ] && "
           "echo \"$f\"; done; true";
  }
  void observation_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    out.push_back({&h, script()});
  }
  util::Result<void> observe(HostRun& h, std::vector<std::string>& needs) override {
    auto r = h.observe_sh(script());
    if (r.out.find(flag_) == std::string::npos) needs.push_back("make " + flag_);
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    std::string step = "touch \"$DIR/flag-$HOST-" + flag_ + "\"";
    if (!last_) return run_step(h, "flag", step);
    // The step reads its stdin (as kubeadm join reads its configuration) and
    // fails with its own exit status where the host has a file saying so.
    return run_last_step(h, "flag",
                         "[ \"$(cat)\" = secret-input ] || exit 9\n"
                         "[ ! -e \"$DIR/fail-$HOST\" ] || exit 7\n" +
                             step,
                         "secret-input");
  }

 private:
  std::string flag_;
  bool last_;
};

TEST_F(DeployEngine, AVerificationsReadServesThePhasesAfterIt) {
  LocalShellTransport shell(dir);
  PhaseList p;
  p.emplace_back(new FlagPhase("a"));
  p.emplace_back(new FlagPhase("b"));
  EngineOptions o = options();
  o.host_lock = false;
  RunResult r = Engine(shell, o).run(cluster(0), p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.hosts[0].phases[0].state, PhaseResult::State::Changed);
  EXPECT_EQ(r.hosts[0].phases[1].state, PhaseResult::State::Changed);
  // The read ahead (a's observation), a's verification (b's observation too: it
  // sees a's flag and not its own), b's verification; never a read from before
  // an apply served after it.
  std::ifstream in(dir / "reads-master");
  size_t n = 0;
  for (std::string l; std::getline(in, l);) ++n;
  EXPECT_EQ(n, 3u);
}

TEST_F(DeployEngine, ALastStepReadsTheVerificationAndTheNextPhaseInItsSession) {
  LocalShellTransport shell(dir);
  PhaseList p;
  p.emplace_back(new FlagPhase("a", true));
  p.emplace_back(new FlagPhase("b", true));
  EngineOptions o = options();
  o.host_lock = false;
  RunResult r = Engine(shell, o).run(cluster(0), p);
  ASSERT_TRUE(r.ok()) << r.to_json().dump();
  EXPECT_EQ(r.hosts[0].phases[0].state, PhaseResult::State::Changed);
  EXPECT_EQ(r.hosts[0].phases[1].state, PhaseResult::State::Changed);
  // The lock-free start (id -u), the read ahead, then one session per apply:
  // a's step with a's verification and b's observation after it (b's needs
  // seen there: it applied), b's step with b's verification.
  EXPECT_EQ(shell.sessions("master"), 4u);
  std::ifstream in(dir / "reads-master");
  size_t n = 0;
  for (std::string l; std::getline(in, l);) ++n;
  EXPECT_EQ(n, 3u);
  ASSERT_TRUE(fs::exists(dir / "flag-master-a"));
  ASSERT_TRUE(fs::exists(dir / "flag-master-b"));

  // A failing step reads nothing after it, and its error is its own.
  fs::remove(dir / "flag-master-a");
  fs::remove(dir / "flag-master-b");
  fs::remove(dir / "reads-master");
  std::ofstream(dir / "fail-master") << "x";
  shell.clear_calls();
  r = Engine(shell, o).run(cluster(0), p);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.hosts[0].phases[0].state, PhaseResult::State::Failed);
  EXPECT_NE(r.hosts[0].phases[0].error.find("exit 7"), std::string::npos)
      << r.hosts[0].phases[0].error;
  std::ifstream in2(dir / "reads-master");
  n = 0;
  for (std::string l; std::getline(in2, l);) ++n;
  EXPECT_EQ(n, 1u);  // the read ahead only
}

TEST(CombinedObservation, SplitsOutputsAndExitStatusesAndRefusesACutOutput) {
  std::string script =
      combined_observation_script({"printf 'a\\nb'", "echo x; exit 4", "true"}, "@@M");
  EXPECT_NE(script.find("</dev/null"), std::string::npos);
  std::string out =
      "@@M begin 0\na\nb\n@@M end 0 0\n@@M begin 1\nx\n\n@@M end 1 4\n@@M begin 2\n\n@@M end 2 0\n";
  std::vector<remote::ExecResult> parts;
  ASSERT_TRUE(split_combined_output(out, "@@M", 3, parts));
  EXPECT_EQ(parts[0].out, "a\nb");
  EXPECT_EQ(parts[0].exit_status, 0);
  EXPECT_EQ(parts[1].out, "x\n");
  EXPECT_EQ(parts[1].exit_status, 4);
  EXPECT_EQ(parts[2].out, "");
  EXPECT_FALSE(split_combined_output(out.substr(0, out.size() - 20), "@@M", 3, parts));
  EXPECT_FALSE(split_combined_output(out, "@@N", 3, parts));
}

// Runs a script with /bin/sh -s in `dir` (its TMPDIR), as a session does, and
// returns its standard output.
std::string run_sh(const std::string& script, const fs::path& dir, const std::string& env = "") {
  fs::path in = dir / "script.sh", out = dir / "out.txt";
  std::ofstream(in) << script;
  std::string cmd = "cd '" + dir.string() + "' && TMPDIR='" + dir.string() + "' " + env +
                    " /bin/sh -s < '" + in.string() + "' > '" + out.string() + "' 2>/dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream f(out);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// A script that cannot end the session or change what the later ones see runs in
// the session's shell (no fork); one that could (exit, set, cd, a function) in a
// subshell, so the scripts after it still run and see the session as it was.
TEST(CombinedObservation, ScriptsThatCouldEndTheSessionRunInASubshell) {
  EXPECT_TRUE(runs_in_session_shell("[ -f /etc/x ] && echo x=1\nv=$(cat /etc/y 2>&1)"));
  EXPECT_TRUE(runs_in_session_shell("while read -r a b; do echo $a; done < /proc/modules"));
  EXPECT_FALSE(runs_in_session_shell("[ -f /etc/x ] || exit 0"));
  EXPECT_FALSE(runs_in_session_shell("set -f"));
  EXPECT_FALSE(runs_in_session_shell("cd /tmp; ls"));
  EXPECT_FALSE(runs_in_session_shell("f() { :; }; f"));
  EXPECT_FALSE(runs_in_session_shell("exec 3>/tmp/x"));
  EXPECT_FALSE(runs_in_session_shell(". /etc/os-release\necho \"$ID\""));  // sets ID, NAME...
  EXPECT_FALSE(runs_in_session_shell("x=1\n. /etc/default/kubelet"));
  EXPECT_TRUE(runs_in_session_shell("echo a.b. c"));
  fs::path dir = fs::temp_directory_path() / ("paictl-inshell-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::vector<std::string> scripts = {"echo one",
                                            "set -- a b; cd /; echo \"$# $(pwd)\"; exit 3",
                                            "echo \"$# $(pwd)\"", "printf 'no newline'", "false"};
  std::string script = combined_observation_script(scripts, "@@M");
  EXPECT_NE(script.find("{\necho one\n}"), std::string::npos) << script;
  EXPECT_NE(script.find("(\nset -- a b"), std::string::npos) << script;
  std::vector<remote::ExecResult> parts;
  ASSERT_TRUE(split_combined_output(run_sh(script, dir), "@@M", scripts.size(), parts));
  EXPECT_EQ(parts[0].out, "one\n");
  EXPECT_EQ(parts[1].out, "2 /\n");
  EXPECT_EQ(parts[1].exit_status, 3);
  EXPECT_EQ(parts[2].out, "0 " + dir.string() + "\n");  // the subshell's set and cd undone
  EXPECT_EQ(parts[3].out, "no newline");
  EXPECT_EQ(parts[4].exit_status, 1);
  fs::remove_all(dir);
}

TEST(CombinedObservation, ConcurrentScriptsGiveTheSameOutputsInOrder) {
  fs::path dir = fs::temp_directory_path() / ("paictl-concurrent-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  // The second sleeps longest and ends last: the outputs still come in order.
  // Trailing newlines, an empty output, exit statuses and a secret's output
  // (held in the shell, not a file) come back as the one-by-one form gives them.
  const std::vector<std::string> scripts = {"printf 'a\\nb'",
                                            "sleep 0.3; echo slow; exit 4",
                                            "printf 'pw\\n\\n'; exit 3",
                                            "true",
                                            "cat; echo \"read $(wc -c </dev/stdin) bytes\"",
                                            "echo two-secret"};
  const std::vector<bool> secret = {false, false, true, false, false, true};
  std::vector<remote::ExecResult> one, many, fallback;
  ASSERT_TRUE(split_combined_output(run_sh(combined_observation_script(scripts, "@@M"), dir), "@@M",
                                    scripts.size(), one));
  std::string script = concurrent_observation_script(scripts, secret, "@@M");
  // The secret scripts' output never goes to a file.
  EXPECT_EQ(script.find("printf 'pw\\n\\n'; exit 3\n) </dev/null >"), std::string::npos) << script;
  // A mkdir that notes the directory it makes, to see that it is gone after.
  fs::create_directories(dir / "note");
  std::ofstream(dir / "note" / "mkdir") << "#!/bin/sh\nfor a; do last=$a; done\necho \"$last\" >> '"
                                        << (dir / "made").string() << "'\nexec /bin/mkdir \"$@\"\n";
  fs::permissions(dir / "note" / "mkdir", fs::perms::owner_all);
  std::string out = run_sh(script, dir, "PATH='" + (dir / "note").string() + ":/usr/bin:/bin'");
  ASSERT_TRUE(split_combined_output(out, "@@M", scripts.size(), many)) << out;
  std::ifstream made(dir / "made");
  std::string made_dir;
  ASSERT_TRUE(std::getline(made, made_dir));
  EXPECT_NE(made_dir.find("paictl-reads."), std::string::npos) << made_dir;
  EXPECT_FALSE(fs::exists(made_dir)) << made_dir;  // removed at the end
  for (size_t i = 0; i < scripts.size(); ++i) {
    EXPECT_EQ(many[i].out, one[i].out) << i;
    EXPECT_EQ(many[i].exit_status, one[i].exit_status) << i;
  }
  EXPECT_EQ(many[0].out, "a\nb");
  EXPECT_EQ(many[1].out, "slow\n");
  EXPECT_EQ(many[1].exit_status, 4);
  EXPECT_EQ(many[2].out, "pw\n\n");
  EXPECT_EQ(many[2].exit_status, 3);
  EXPECT_EQ(many[4].out, "read 0 bytes\n");  // stdin is /dev/null, not the session's script
  // Where the directory cannot be made (a mkdir that fails), one after the other.
  fs::create_directories(dir / "bin");
  std::ofstream(dir / "bin" / "mkdir") << "#!/bin/sh\nexit 1\n";
  fs::permissions(dir / "bin" / "mkdir", fs::perms::owner_all);
  out = run_sh(script, dir, "PATH='" + (dir / "bin").string() + ":/usr/bin:/bin'");
  ASSERT_TRUE(split_combined_output(out, "@@M", scripts.size(), fallback)) << out;
  for (size_t i = 0; i < scripts.size(); ++i) EXPECT_EQ(fallback[i].out, one[i].out) << i;
  fs::remove_all(dir);
}

TEST(CombinedObservation, ClusterReadsAreKnownByTheirGuard) {
  EXPECT_TRUE(is_cluster_read(kubectl_json_read_script("get nodes -o json")));
  EXPECT_FALSE(is_cluster_read("uname -m"));
  EXPECT_FALSE(is_cluster_read("kubectl get nodes"));
  EXPECT_TRUE(is_cluster_read(api_json_read_script({"/api/v1/nodes"}, "get nodes -o json")));
}

// An API read names its kubectl read, keeps its credentials off argv, and its
// answers become the List kubectl prints: the items' kind filled in from their
// list's, a 404 left out (--ignore-not-found), anything else a reason to ask
// kubectl instead.
TEST(ApiRead, AnswersBecomeKubectlsListOrKubectlAnswers) {
  std::string script = api_json_read_script({"/api/v1/nodes", "/api/v1/namespaces/x/secrets/s"},
                                            "get nodes -o json");
  EXPECT_EQ(api_read_fallback(script), "get nodes -o json");
  EXPECT_EQ(api_read_fallback(kubectl_json_read_script("get nodes -o json")), "");
  EXPECT_NE(script.find("--cert /dev/fd/4 --key /dev/fd/5"), std::string::npos);
  EXPECT_NE(script.find("\"$pai_s\"/api/v1/namespaces/x/secrets/s"), std::string::npos);

  std::string out;
  ASSERT_TRUE(api_read_as_list(
      "{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"items\":[{\"metadata\":{\"name\":"
      "\"n1\"}},{\"kind\":\"Node\",\"metadata\":{\"name\":\"n2\"}}]}\n@@paictl-api 200\n"
      "{\"kind\":\"Status\",\"code\":404}\n@@paictl-api 404\n"
      "{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"s\"}}\n"
      "@@paictl-api 200\n",
      out));
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["kind"], "List");
  ASSERT_EQ(j["items"].size(), 3u);
  EXPECT_EQ(j["items"][0]["kind"], "Node");
  EXPECT_EQ(j["items"][0]["apiVersion"], "v1");
  EXPECT_EQ(j["items"][1]["metadata"]["name"], "n2");
  EXPECT_EQ(j["items"][2]["kind"], "Secret");
  EXPECT_TRUE(find_listed_object(out, "Secret", "s").is_object());

  ASSERT_TRUE(api_read_as_list("{}\n", out));  // no admin.conf: no cluster yet
  EXPECT_EQ(out, "{}");
  ASSERT_TRUE(api_read_as_list("{\"kind\":\"Status\"}\n@@paictl-api 404\n", out));
  EXPECT_TRUE(nlohmann::json::parse(out)["items"].empty());

  EXPECT_FALSE(api_read_as_list("@@paictl-api-unavailable\n", out));  // no curl, no certificate
  EXPECT_FALSE(api_read_as_list("{\"kind\":\"Status\"}\n@@paictl-api 401\n", out));
  EXPECT_FALSE(api_read_as_list("\n@@paictl-api 000\n", out));  // no answer
  EXPECT_FALSE(api_read_as_list("{\"kind\":\"NodeList\",\"items\":[\n@@paictl-api 200\n", out));
  EXPECT_FALSE(api_read_as_list("{\"kind\":\"NodeList\",\"items\":[]}", out));  // cut
  EXPECT_FALSE(api_read_as_list("", out));
}
}  // namespace
}  // namespace pai::deploy
