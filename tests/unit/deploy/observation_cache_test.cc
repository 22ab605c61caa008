// The rules of the observation cache (deploy/observation_cache.h): what is
// served, what an apply forgets, the reads of other hosts, what a last step
// reads after it, secrets never kept for the apply, the age of a plan's reads.

#include "deploy/observation_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "phases/phase_fixture.h"

namespace pai::deploy {
namespace {

using phase_test::master_spec;
using phase_test::ScriptedHosts;
using phase_test::worker_spec;

remote::ExecResult output(const std::string& out, int rc = 0) {
  remote::ExecResult r;
  r.out = out;
  r.exit_status = rc;
  return r;
}

TEST(ObservationCache, ServesExactlyTheScriptThatReadIt) {
  ObservationCache c;
  remote::ExecResult r;
  EXPECT_FALSE(c.find("uname -m", r));
  c.keep("uname -m", output("x86_64\n"));
  ASSERT_TRUE(c.find("uname -m", r));
  EXPECT_EQ(r.out, "x86_64\n");
  EXPECT_TRUE(c.holds("uname -m"));
  EXPECT_FALSE(c.holds("uname -m "));  // another text is another read
  EXPECT_FALSE(c.find("uname -r", r));
  c.forget();
  EXPECT_FALSE(c.find("uname -m", r));
}

TEST(ObservationCache, AHostServesItsObservationsWithoutRunningThemAgain) {
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  run.transport.on("cat /etc/os-release", {.out = "ID=debian\n"});
  m.observations().keep("cat /etc/os-release", output("ID=ubuntu\n"));
  EXPECT_EQ(m.observe_sh("cat /etc/os-release").out, "ID=ubuntu\n");
  EXPECT_EQ(run.transport.count("os-release"), 0u);
  // Not held: run on the host.
  EXPECT_EQ(m.observe_sh("cat /etc/os-release ").out, "ID=debian\n");
  EXPECT_EQ(run.transport.count("os-release"), 1u);
}

TEST(ObservationCache, LiveReadsAreKeptOnlyWhileKeepLiveReadsLives) {
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  run.transport.on("swapon", {.out = "0\n"});
  m.observe_sh("swapon --show");  // an apply's wait: not kept
  EXPECT_FALSE(m.observations().holds("swapon --show"));
  {
    KeepLiveReads keep;
    EXPECT_TRUE(KeepLiveReads::active());
    m.observe_sh("swapon --show");  // an observation: kept for the phases after it
  }
  EXPECT_FALSE(KeepLiveReads::active());
  EXPECT_TRUE(m.observations().holds("swapon --show"));
  // A failed command is not an observation.
  run.transport.on("lsmod", {.failure = remote::Failure::Channel, .error = "channel closed"});
  KeepLiveReads keep;
  m.observe_sh("lsmod");
  EXPECT_FALSE(m.observations().holds("lsmod"));
}

TEST(ObservationCache, AReadRunningWhileTheHostChangesIsNotKept) {
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  // Another phase applies on this host while the read runs.
  run.transport.on("sysctl", [&](const testing::ScriptedCall&) {
    m.observations().forget();
    return testing::ScriptedAnswer{.out = "net.ipv4.ip_forward = 0\n"};
  });
  KeepLiveReads keep;
  EXPECT_EQ(m.observe_sh("sysctl net.ipv4.ip_forward").out, "net.ipv4.ip_forward = 0\n");
  EXPECT_FALSE(m.observations().holds("sysctl net.ipv4.ip_forward"));
}

// A phase whose observations read its host and the master.
class ReadsBoth : public Phase, public ReadsAhead {
 public:
  ReadsBoth(std::string name, PhaseTraits traits, std::vector<std::string> own,
            std::string of_master = {}, bool secret = false)
      : Phase(std::move(name), traits),
        own_(std::move(own)),
        of_master_(std::move(of_master)),
        secret_(secret) {}
  void observation_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    for (const auto& s : own_) out.push_back({&h, s, secret_});
    if (!of_master_.empty() && h.run().master()) out.push_back({h.run().master(), of_master_});
  }
  util::Result<void> observe(HostRun&, std::vector<std::string>&) override { return {}; }
  util::Result<void> apply(HostRun&, const std::vector<std::string>&) override { return {}; }

 private:
  std::vector<std::string> own_;
  std::string of_master_;
  bool secret_;
};

TEST(ObservationCache, AnApplyForgetsItsHostsReadsAndTheOnesItReadOfOthers) {
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  HostRun& w = run.add(worker_spec("w1"));
  ReadsBoth join("join", {.hosts = PhaseTraits::Hosts::AllButMaster}, {"own"}, "nodes");
  ReadsBoth quiet("quiet",
                  {.hosts = PhaseTraits::Hosts::AllButMaster, .apply_changes_others_reads = false},
                  {"own"}, "nodes");
  for (Phase* p : {static_cast<Phase*>(&join), static_cast<Phase*>(&quiet)}) {
    m.observations().keep("nodes", output("{}"));
    w.observations().keep("own", output("x"));
    forget_reads_changed_by(*p, w);
    EXPECT_FALSE(w.observations().holds("own")) << p->name();
    // The master's read is stale unless the apply leaves what it shows others.
    EXPECT_EQ(m.observations().holds("nodes"), p == &quiet) << p->name();
  }
}

// A phase that reads one given host.
class ReadsOf : public Phase, public ReadsAhead {
 public:
  explicit ReadsOf(HostRun* target) : Phase("reads-of"), target_(target) {}
  void observation_reads(HostRun&, std::vector<ObservationRead>& out) override {
    out.push_back({target_, "hostname"});
  }
  util::Result<void> observe(HostRun&, std::vector<std::string>&) override { return {}; }
  util::Result<void> apply(HostRun&, const std::vector<std::string>&) override { return {}; }

 private:
  HostRun* target_;
};

TEST(ObservationCache, ReadsOfPhasesGoToTheHostTheyReadOnceEach) {
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  run.add(worker_spec("w1"));
  run.add(worker_spec("w2"));
  HostSpec outside = worker_spec("elsewhere");
  RunContext other;
  HostRun stranger(outside, other);
  PhaseList phases;
  phases.push_back(std::make_unique<ReadsBoth>("os", PhaseTraits{.read_only = true},
                                               std::vector<std::string>{"os", "os"}));
  phases.push_back(
      std::make_unique<ReadsBoth>("join", PhaseTraits{.hosts = PhaseTraits::Hosts::AllButMaster},
                                  std::vector<std::string>{"kubelet"}, "nodes"));
  phases.push_back(std::make_unique<ReadsBoth>(
      "labels", PhaseTraits{.hosts = PhaseTraits::Hosts::Master, .cluster_scope = true},
      std::vector<std::string>{"nodes"}));
  std::vector<HostRun*> hosts(run.run.hosts.begin(), run.run.hosts.end());

  auto reads = reads_of_phases(phases, 0, phases.size(), hosts, {0, 1, 2}, {});
  ASSERT_EQ(reads.size(), 3u);
  std::vector<std::string> master_reads;
  for (const auto& r : reads[0]) master_reads.push_back(r.script);
  // The workers' joins read the master's nodes: one read, with the labels'.
  EXPECT_EQ(master_reads, (std::vector<std::string>{"os", "nodes"}));
  ASSERT_EQ(reads[1].size(), 2u);
  EXPECT_EQ(reads[1][0].script, "os");
  EXPECT_TRUE(reads[1][0].read_only);  // of a phase that changes nothing
  EXPECT_EQ(reads[1][1].script, "kubelet");
  EXPECT_FALSE(reads[1][1].read_only);

  // What a host holds already (a plan's read) is not read again; a planned
  // change stops a host's reads at that phase.
  m.observations().keep("os", output("ID=debian"));
  reads = reads_of_phases(phases, 0, phases.size(), hosts, {0, 1, 2}, {{"w1", {"os"}}});
  master_reads.clear();
  for (const auto& r : reads[0]) master_reads.push_back(r.script);
  EXPECT_EQ(master_reads, (std::vector<std::string>{"nodes"}));
  ASSERT_EQ(reads[1].size(), 1u);  // w1: the os phase only
  EXPECT_EQ(reads[1][0].script, "os");
  EXPECT_EQ(reads[2].size(), 2u);

  // Only the hosts asked for.
  reads = reads_of_phases(phases, 1, 2, hosts, {1}, {});
  EXPECT_EQ(reads[2].size(), 0u);
  EXPECT_EQ(reads[0].size(), 1u);  // w1's join reads the master
  EXPECT_EQ(reads[1].size(), 1u);

  // A read of a host outside the run is left out.
  PhaseList odd;
  odd.push_back(std::make_unique<ReadsOf>(&stranger));
  for (const auto& r : reads_of_phases(odd, 0, 1, hosts, {0, 1, 2}, {})) EXPECT_TRUE(r.empty());
}

TEST(ObservationCache, ReadsAfterAnApplyAreTheHostsOwnAndNoSecret) {
  ScriptedHosts run;
  run.add(master_spec());
  HostRun& w = run.add(worker_spec("w1"));
  PhaseList phases;
  phases.push_back(
      std::make_unique<ReadsBoth>("a", PhaseTraits{}, std::vector<std::string>{"a1"}, "nodes"));
  phases.push_back(
      std::make_unique<ReadsBoth>("b", PhaseTraits{}, std::vector<std::string>{"pw"}, "", true));
  phases.push_back(std::make_unique<ReadsBoth>(
      "m", PhaseTraits{.hosts = PhaseTraits::Hosts::Master}, std::vector<std::string>{"m1"}));
  phases.push_back(
      std::make_unique<ReadsBoth>("c", PhaseTraits{}, std::vector<std::string>{"c1", "a1"}));
  phases.push_back(std::make_unique<ReadsBoth>("d", PhaseTraits{}, std::vector<std::string>{"d1"}));
  // Its verification's (a1), the next phases' on this host (c1), once each;
  // not the master's, not a secret, not past `until`.
  EXPECT_EQ(reads_after_apply(phases, 0, 4, w, {}), (std::vector<std::string>{"a1", "c1"}));
  EXPECT_EQ(reads_after_apply(phases, 0, 5, w, {}), (std::vector<std::string>{"a1", "c1", "d1"}));
  // Up to the host's next planned change.
  EXPECT_EQ(reads_after_apply(phases, 0, 5, w, {{"w1", {"c"}}}),
            (std::vector<std::string>{"a1", "c1"}));
}

// Answers a session of reads (the combined script) the way a host's shell does:
// each script's output between its markers. `answers`: script -> output.
testing::ScriptedAnswer session_answer(const testing::ScriptedCall& call,
                                       const std::map<std::string, std::string>& answers) {
  const std::string& s = call.script;
  size_t q = s.find("echo '");
  size_t b = s.find(" begin 0'", q);
  std::string marker = s.substr(q + 6, b - q - 6);
  std::string out;
  for (size_t i = 0;; ++i) {
    std::string open = "echo '" + marker + " begin " + std::to_string(i) + "'\n";
    size_t at = s.find(open);
    if (at == std::string::npos) break;
    std::string body = s.substr(at + open.size() + 2);  // after "{\n" or "(\n"
    std::string script;
    for (const auto& [text, answer] : answers)
      if (body.starts_with(text + "\n")) script = text;
    out += marker + " begin " + std::to_string(i) + "\n" + answers.at(script) + "\n" + marker +
           " end " + std::to_string(i) + " 0\n";
  }
  return {.out = out};
}

TEST(ObservationCache, AOneSessionReadKeepsWhatCameBackWholeAndAPlansReadOnlyReadsForTheApply) {
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  const std::map<std::string, std::string> answers = {
      {"echo os", "ID=debian"}, {"echo pw", "hunter2"}, {"echo state", "swap=1"}};
  run.transport.on("@@m begin 0",
                   [&](const testing::ScriptedCall& c) { return session_answer(c, answers); });
  std::vector<ObservationRead> reads = {
      {&m, "echo os", false, true}, {&m, "echo pw", true, true}, {&m, "echo state", false, false}};
  KeptHosts kept;
  auto r = read_in_one_session(m, reads, "@@m", &kept);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(run.transport.calls().size(), 1u);  // one session
  remote::ExecResult got;
  ASSERT_TRUE(m.observations().find("echo os", got));
  EXPECT_EQ(got.out, "ID=debian");
  ASSERT_TRUE(m.observations().find("echo pw", got));  // this run may serve it
  EXPECT_EQ(got.out, "hunter2");
  EXPECT_TRUE(m.observations().holds("echo state"));
  // For the apply: the read of a phase that changes nothing, never a secret,
  // never the read of a phase that changes the host.
  auto for_apply = kept.take_reads("master", 60);
  ASSERT_EQ(for_apply.size(), 1u);
  EXPECT_EQ(for_apply.begin()->first, "echo os");
  EXPECT_TRUE(kept.take_reads("master", 60).empty());  // taken once

  // A cut output keeps nothing: the phases read again.
  m.observations().forget();
  run.transport.on("@@m begin 0", {.out = "@@m begin 0\nID=deb"});
  read_in_one_session(m, reads, "@@m", nullptr);
  EXPECT_FALSE(m.observations().holds("echo os"));
}

TEST(ObservationCache, APlansReadsServeTheApplyOnlyWhileFresh) {
  phase_test::FakeClock fc;
  KeptHosts kept(fc.clock());
  ObservationRead os{nullptr, "os", false, true};
  ObservationRead pw{nullptr, "pw", true, true};
  ObservationRead state{nullptr, "state", false, false};
  EXPECT_TRUE(keep_for_apply(os));
  EXPECT_FALSE(keep_for_apply(pw));
  EXPECT_FALSE(keep_for_apply(state));
  kept.keep_read("w1", "os", output("ID=debian"));
  fc.t += 30;
  EXPECT_EQ(kept.take_reads("w1", 60).size(), 1u);
  kept.keep_read("w1", "os", output("ID=debian"));
  fc.t += 61;
  EXPECT_TRUE(kept.take_reads("w1", 60).empty());  // too old: the apply reads again
  EXPECT_TRUE(kept.take_reads("w2", 60).empty());
}

TEST(ObservationCache, TheLockSessionReadsOnlyOnceTheLockIsTaken) {
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  const std::map<std::string, std::string> answers = {{"echo a", "1"}};
  std::vector<ObservationRead> reads = {{&m, "echo a"}};
  run.transport.on("LOCK", [&](const testing::ScriptedCall& c) {
    auto a = session_answer(c, answers);
    a.out = "acquired\n" + a.out;
    return a;
  });
  LockSession s = lock_then_read(m, "LOCK", reads, "@@l");
  EXPECT_EQ(s.lock.out.rfind("acquired", 0), 0u);
  ASSERT_EQ(s.reads.size(), 1u);
  EXPECT_EQ(s.reads[0].second.out, "1");
  // The script reads only in the branch where the lock printed "acquired".
  EXPECT_NE(run.transport.calls().back().script.find("case $o in acquired*)"), std::string::npos);
  run.transport.on("LOCK", {.out = "held 5\nother 1 run\n"});
  s = lock_then_read(m, "LOCK", reads, "@@l");
  EXPECT_TRUE(s.reads.empty());
  // No reads: the lock script alone.
  s = lock_then_read(m, "LOCK", {}, "@@l");
  EXPECT_EQ(run.transport.calls().back().script, "LOCK");
}

}  // namespace
}  // namespace pai::deploy

namespace pai::deploy {
namespace {

// Every worker's join reads the master's Nodes: the held answer is shared, and
// turned into kubectl's List once, not once a reader.
TEST(ObservationCache, SharedReadsAreTurnedIntoAListOnceAndOutliveAForget) {
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  const std::string script = api_json_read_script({"/api/v1/nodes"}, "get nodes -o json");
  m.observations().keep(
      script, output("{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"items\":[{\"metadata\":"
                     "{\"name\":\"w1\"}}]}\n@@paictl-api 200\n"));
  auto raw = m.observations().find_shared(script);
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(m.observations().find_shared(script), raw) << "the held output itself, not a copy";
  auto a = m.observe_shared(script);
  auto b = m.observe_shared(script);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, b) << "one held output is turned into a List once";
  auto list = nlohmann::json::parse(a->out);
  EXPECT_EQ(list["kind"], "List");
  EXPECT_EQ(list["items"][0]["kind"], "Node");
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "w1");
  EXPECT_EQ(run.transport.count("/api/v1/nodes"), 0u);
  // The host changes: what a reader holds stays whole; the next read is another.
  m.observations().forget();
  EXPECT_NE(raw->out.find("NodeList"), std::string::npos) << "a shared output is not overwritten";
  EXPECT_EQ(m.observations().find_shared(script), nullptr);
  m.observations().keep(script,
                        output("{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"items\":[]}\n"
                               "@@paictl-api 200\n"));
  auto c = m.observe_shared(script);
  EXPECT_NE(c, a);
  EXPECT_EQ(nlohmann::json::parse(c->out)["items"].size(), 0u);
  // A script that is no API read is served as it was read.
  m.observations().keep("uname -m", output("x86_64\n"));
  EXPECT_EQ(m.observe_shared("uname -m"), m.observations().find_shared("uname -m"));
}

}  // namespace
}  // namespace pai::deploy
