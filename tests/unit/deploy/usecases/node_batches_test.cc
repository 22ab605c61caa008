// The node batch runner on a scripted master whose kubectl keeps the Nodes'
// cordon and annotation in memory: the order of a node's steps (annotated, then
// cordoned; uncordoned, then unannotated), batches in order, a node a killed run
// left cordoned finished first, a drain that times out leaving its node as it was
// found and stopping the run, a drain only when the plan evicts, a wait for a
// node's groups on the clock, a node cordoned before the run left cordoned.

#include "deploy/node_batches.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "deploy/journal.h"
#include "support/fake_clock.h"
#include "support/scripted_transport.h"
#include "util/json.h"

namespace pai::deploy {
namespace {

// The master's kubectl over a few Nodes: cordon, uncordon, annotate, drain,
// get nodes -o json. Every change is logged as "VERB NODE".
struct NodeBatchesKube {
  struct Node {
    bool unschedulable = false;
    std::string annotation;
  };
  std::mutex mu;
  std::map<std::string, Node> nodes;
  std::vector<std::string> log;
  int drain_exit = 0;

  testing::ScriptedAnswer answer(const testing::ScriptedCall& c) {
    std::lock_guard lock(mu);
    std::istringstream lines(c.script);
    testing::ScriptedAnswer a;
    for (std::string line; std::getline(lines, line);) {
      std::istringstream in(line);
      std::vector<std::string> w;
      for (std::string x; in >> x;) w.push_back(x);
      size_t i = 0;
      while (i < w.size() && w[i] != "kubectl") ++i;
      // kubectl --kubeconfig=... --cache-dir=... VERB ...
      i += 3;
      if (i >= w.size()) continue;
      std::string verb = w[i];
      auto arg = [&](size_t k) {
        std::string s = i + k < w.size() ? w[i + k] : "";
        if (s.size() >= 2 && s.front() == '\'') s = s.substr(1, s.size() - 2);
        return s;
      };
      if (verb == "get") {
        nlohmann::json items = nlohmann::json::array();
        for (const auto& [name, n] : nodes) {
          nlohmann::json o = {{"metadata", {{"name", name}}}, {"spec", nlohmann::json::object()}};
          if (n.unschedulable) o["spec"]["unschedulable"] = true;
          if (!n.annotation.empty())
            o["metadata"]["annotations"] = {{"paictl.io/maintenance", n.annotation}};
          items.push_back(o);
        }
        a.out = util::dump_json(nlohmann::json{{"items", items}});
      } else if (verb == "cordon" || verb == "uncordon") {
        nodes[arg(1)].unschedulable = verb == "cordon";
        log.push_back(verb + " " + arg(1));
      } else if (verb == "annotate") {
        std::string n = arg(2);
        std::string kv = line.substr(line.find("paictl.io/maintenance"));
        kv = kv.substr(0, kv.find(" >"));
        if (kv == "paictl.io/maintenance-") {
          nodes[n].annotation.clear();
          log.push_back("unannotate " + n);
        } else {
          std::string v = kv.substr(kv.find('=') + 1);
          if (v.size() >= 2 && v.front() == '\'') v = v.substr(1, v.size() - 2);
          nodes[n].annotation = v;
          log.push_back("annotate " + n);
        }
      } else if (verb == "drain") {
        log.push_back("drain " + arg(1));
        if (drain_exit) {
          a.exit_status = drain_exit;
          a.err = "error: timed out waiting for the condition";
          return a;
        }
      }
    }
    return a;
  }
  size_t index(const std::string& entry) {
    std::lock_guard lock(mu);
    for (size_t i = 0; i < log.size(); ++i)
      if (log[i] == entry) return i;
    return SIZE_MAX;
  }
};

remote::Target node_batches_target(const std::string& name) {
  remote::Target t;
  t.endpoint.name = name;
  t.endpoint.address = name;
  t.endpoint.user = "root";
  return t;
}

struct NodeBatchesFixture : ::testing::Test {
  testing::ScriptedTransport ssh;
  NodeBatchesKube kube;
  testing::FakeClock clock;
  NodeBatchDeps deps;
  std::vector<std::string> acted;

  void SetUp() override {
    for (auto n : {"w1", "w2", "w3"}) kube.nodes[n] = {};
    ssh.on(
        "kubectl", [this](const testing::ScriptedCall& c) { return kube.answer(c); }, "master");
    deps.transport = &ssh;
    deps.master.name = "master";
    deps.master.target = node_batches_target("master");
    for (auto n : {"w1", "w2", "w3"}) deps.nodes[n] = node_batches_target(n);
    deps.clock = clock.clock();
    deps.action = [this](const std::string& node, remote::Connection& h) -> util::Result<void> {
      remote::ExecRequest req;
      req.command = "apt-get install -y nvidia-driver-550";
      auto x = h.exec(req);
      if (x.exit_status != 0) return util::Error{"apt-get failed", {}};
      std::lock_guard lock(kube.mu);
      acted.push_back(node);
      kube.log.push_back("action " + node);
      return {};
    };
  }
  NodeBatchRequest request(std::vector<NodeBatch> batches) {
    NodeBatchRequest r;
    r.operation = "maintain";
    r.run_id = "RUN2";
    r.batches = std::move(batches);
    r.wait_for_groups_s = 60;
    r.poll_s = 10;
    return r;
  }
};

TEST_F(NodeBatchesFixture, AnnotatesBeforeCordonAndUncordonsBeforeUnannotatingBatchesInOrder) {
  std::vector<std::string> annotation_seen;
  deps.verify = [&](const std::string& node, remote::Connection&,
                    remote::Connection&) -> util::Result<void> {
    std::lock_guard lock(kube.mu);
    annotation_seen.push_back(kube.nodes[node].annotation);
    EXPECT_TRUE(kube.nodes[node].unschedulable) << node << " is cordoned while it changes";
    return {};
  };
  auto o = run_node_batches(request({{{{"w2"}}}, {{{"w1"}}}}), deps, {});
  ASSERT_TRUE(o.ok) << (o.error ? o.error->error.message : "");
  EXPECT_EQ(annotation_seen, (std::vector<std::string>{"maintain RUN2", "maintain RUN2"}));
  std::vector<std::string> expect = {"annotate w2",   "cordon w2",    "action w2", "uncordon w2",
                                     "unannotate w2", "annotate w1",  "cordon w1", "action w1",
                                     "uncordon w1",   "unannotate w1"};
  EXPECT_EQ(kube.log, expect);
  for (const auto& [n, s] : kube.nodes) {
    EXPECT_FALSE(s.unschedulable) << n;
    EXPECT_EQ(s.annotation, "") << n;
  }
  EXPECT_FALSE(ssh.ran("drain"));
  ASSERT_EQ(o.nodes.size(), 2u);
  EXPECT_EQ(o.nodes[0].node, "w2");
  EXPECT_EQ(o.nodes[0].end, NodeResult::End::Done);
}

TEST_F(NodeBatchesFixture, NodesOfABatchRunTogetherEachOnItsOwnSession) {
  auto o = run_node_batches(request({{{{"w1"}, {"w2"}, {"w3"}}}}), deps, {});
  ASSERT_TRUE(o.ok);
  EXPECT_EQ(acted.size(), 3u);
  for (auto n : {"w1", "w2", "w3"}) EXPECT_EQ(ssh.count("apt-get install", n), 1u) << n;
  EXPECT_EQ(ssh.count("apt-get install", "master"), 0u);
}

TEST_F(NodeBatchesFixture, AKilledRunsNodeIsFinishedFirstAndUncordoned) {
  // An earlier run was killed while w3 was cordoned; w1 (not in this plan) was
  // left annotated by it too; another operation's node is left alone.
  kube.nodes["w3"] = {true, "maintain RUN1"};
  kube.nodes["w1"] = {true, "maintain RUN1"};
  kube.nodes["w2"] = {true, "upgrade RUN9"};
  std::vector<std::string> warnings;
  Callbacks cb;
  cb.on_event = [&](const UseCaseEvent& e) {
    if (e.kind == UseCaseEvent::Kind::Warning) warnings.push_back(e.message);
  };
  auto o = run_node_batches(request({{{{"w3"}}}}), deps, cb);
  ASSERT_TRUE(o.ok) << (o.error ? o.error->error.message : "");
  EXPECT_EQ(o.resumed, (std::vector<std::string>{"w1", "w3"}));
  EXPECT_FALSE(kube.nodes["w3"].unschedulable);
  EXPECT_EQ(kube.nodes["w3"].annotation, "");
  EXPECT_FALSE(kube.nodes["w1"].unschedulable);
  EXPECT_EQ(kube.nodes["w1"].annotation, "");
  EXPECT_EQ(acted, (std::vector<std::string>{"w3"}));  // w3 once (not again as batch 0)
  EXPECT_EQ(kube.index("action w1"), SIZE_MAX);        // w1's change is not this run's
  EXPECT_TRUE(kube.nodes["w2"].unschedulable);
  EXPECT_EQ(kube.nodes["w2"].annotation, "upgrade RUN9");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("w2"), std::string::npos);
}

TEST_F(NodeBatchesFixture, AResumedNodeTheJournalSaysWasVerifiedIsOnlyUncordoned) {
  auto dir = std::filesystem::temp_directory_path() / ("node-batches-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream j(dir / "maintain.journal");
    j << R"({"run":"RUN1","event":"start","host":"w3","phase":"maintain:cordon","was_unschedulable":true})"
      << "\n"
      << R"({"run":"RUN1","event":"end","host":"w3","phase":"maintain:verify","result":"ok"})"
      << "\n";
  }
  kube.nodes["w3"] = {true, "maintain RUN1"};
  auto r = request({{{{"w3"}}}});
  r.state_dir = dir.string();
  auto o = run_node_batches(r, deps, {});
  ASSERT_TRUE(o.ok);
  EXPECT_TRUE(acted.empty());
  // It was cordoned before RUN1 began: it stays cordoned, unannotated.
  EXPECT_TRUE(kube.nodes["w3"].unschedulable);
  EXPECT_EQ(kube.nodes["w3"].annotation, "");
  // This run journaled its steps.
  auto recs = read_journal((dir / "maintain.journal").string());
  ASSERT_TRUE(recs.ok());
  bool uncordon = false;
  for (const auto& rec : *recs)
    if (rec.value("run", "") == "RUN2" && rec.value("phase", "") == "maintain:uncordon" &&
        rec.value("result", "") == "ok")
      uncordon = true;
  EXPECT_TRUE(uncordon);
  std::filesystem::remove_all(dir);
}

TEST_F(NodeBatchesFixture, ADrainThatTimesOutLeavesTheNodeAsFoundAndStops) {
  kube.drain_exit = 1;
  BatchNode w1{"w1", {"admin~train"}, true};
  auto r = request({{{w1}}, {{{"w2"}}}});
  r.drain_timeout_s = 30;
  auto o = run_node_batches(r, deps, {});
  EXPECT_FALSE(o.ok);
  ASSERT_TRUE(o.error);
  EXPECT_NE(o.error->error.message.find("w1"), std::string::npos) << o.error->error.message;
  EXPECT_NE(o.error->error.message.find("--timeout=30s"), std::string::npos);
  EXPECT_TRUE(ssh.ran("drain w1 --ignore-daemonsets --delete-emptydir-data --timeout=30s"));
  EXPECT_FALSE(kube.nodes["w1"].unschedulable);
  EXPECT_EQ(kube.nodes["w1"].annotation, "");
  EXPECT_TRUE(acted.empty());
  EXPECT_EQ(kube.index("cordon w2"), SIZE_MAX);  // the next batch never started
  ASSERT_EQ(o.nodes.size(), 2u);
  EXPECT_EQ(o.nodes[0].end, NodeResult::End::DrainFailed);
  EXPECT_EQ(o.nodes[1].end, NodeResult::End::NotReached);
}

TEST_F(NodeBatchesFixture, DrainsOnlyTheNodesThePlanEvicts) {
  BatchNode w1{"w1", {"admin~a"}, true};
  BatchNode w2{"w2", {"admin~b"}, false};
  deps.groups_on_node = [](const std::string&) -> util::Result<std::vector<std::string>> {
    return std::vector<std::string>{};
  };
  auto o = run_node_batches(request({{{w1, w2}}}), deps, {});
  ASSERT_TRUE(o.ok);
  EXPECT_EQ(ssh.count("drain w1"), 1u);
  EXPECT_EQ(ssh.count("drain w2"), 0u);
  EXPECT_LT(kube.index("cordon w1"), kube.index("drain w1"));
  EXPECT_LT(kube.index("drain w1"), kube.index("action w1"));
}

TEST_F(NodeBatchesFixture, WaitsForTheNodesGroupsOnTheClock) {
  int polls = 0;
  deps.groups_on_node = [&](const std::string& n) -> util::Result<std::vector<std::string>> {
    EXPECT_EQ(n, "w1");
    if (++polls < 3) return std::vector<std::string>{"admin~train", "other"};
    return std::vector<std::string>{"other"};
  };
  auto o = run_node_batches(request({{{{"w1", {"admin~train"}, false}}}}), deps, {});
  ASSERT_TRUE(o.ok) << (o.error ? o.error->error.message : "");
  EXPECT_EQ(polls, 3);
  EXPECT_EQ(clock.taken(), (std::vector<double>{10, 10}));
  EXPECT_EQ(acted, (std::vector<std::string>{"w1"}));
}

TEST_F(NodeBatchesFixture, AWaitThatTimesOutNamesTheGroupAndUncordons) {
  deps.groups_on_node = [](const std::string&) -> util::Result<std::vector<std::string>> {
    return std::vector<std::string>{"admin~train"};
  };
  auto r = request({{{{"w1", {"admin~train"}, false}}}});
  r.wait_for_groups_s = 25;
  auto o = run_node_batches(r, deps, {});
  EXPECT_FALSE(o.ok);
  ASSERT_TRUE(o.error);
  EXPECT_NE(o.error->error.message.find("admin~train"), std::string::npos);
  EXPECT_EQ(o.nodes[0].end, NodeResult::End::WaitTimedOut);
  double waited = 0;
  for (double s : clock.taken()) waited += s;
  EXPECT_DOUBLE_EQ(waited, 25);
  EXPECT_FALSE(kube.nodes["w1"].unschedulable);
  EXPECT_EQ(kube.nodes["w1"].annotation, "");
  EXPECT_TRUE(acted.empty());
}

TEST_F(NodeBatchesFixture, ANodeCordonedBeforeTheRunStaysCordoned) {
  kube.nodes["w2"].unschedulable = true;
  auto o = run_node_batches(request({{{{"w2"}}}}), deps, {});
  ASSERT_TRUE(o.ok);
  EXPECT_TRUE(kube.nodes["w2"].unschedulable);
  EXPECT_EQ(kube.nodes["w2"].annotation, "");
  EXPECT_EQ(kube.index("uncordon w2"), SIZE_MAX);
}

TEST_F(NodeBatchesFixture, AFailedActionLeavesTheNodeCordonedForARerun) {
  ssh.on("apt-get install", {.err = "E: broken", .exit_status = 100}, "w1");
  auto o = run_node_batches(request({{{{"w1"}}}}), deps, {});
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.nodes[0].end, NodeResult::End::ActionFailed);
  EXPECT_TRUE(kube.nodes["w1"].unschedulable);
  EXPECT_EQ(kube.nodes["w1"].annotation, "maintain RUN2");
}

TEST_F(NodeBatchesFixture, AnUnknownNodeStopsBeforeAnyChange) {
  auto o = run_node_batches(request({{{{"w9"}}}}), deps, {});
  EXPECT_FALSE(o.ok);
  ASSERT_TRUE(o.error);
  EXPECT_EQ(o.error->error.kind, util::Error::Kind::Input);
  EXPECT_TRUE(kube.log.empty());
}

}  // namespace
}  // namespace pai::deploy
