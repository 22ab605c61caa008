// The `labels` phase over the scripted transport.

#include <gtest/gtest.h>

#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

TEST(LabelsPhase, NeedsEveryMissingLabelOfEveryNode) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& labels = named(phases, "labels");
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  HostSpec gpu = worker_spec("w1", 4);
  gpu.labels["paictl.io/site"] = "azure";
  run.add(gpu);
  run.transport.on("/api/v1/nodes",
                   {.out = api_answer(
                        "NodeList", {node("master", true, {{"pai-master", "true"}}), node("w1")})});
  auto o = observe(labels, m);
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.needs,
            std::vector<std::string>{"label w1 pai-worker=true paictl.io/gpu=nvidia "
                                     "paictl.io/machine-type=gpu-node paictl.io/site=azure"});
  run.transport.on("/api/v1/nodes",
                   {.out = api_answer("NodeList", {node("master", true, {{"pai-master", "true"}}),
                                                   node("w1", true,
                                                        {{"pai-worker", "true"},
                                                         {"paictl.io/machine-type", "gpu-node"},
                                                         {"paictl.io/gpu", "nvidia"},
                                                         {"paictl.io/site", "azure"}})})});
  EXPECT_TRUE(observe(labels, m).needs.empty());
}

TEST(LabelsPhase, ApplyPatchesTheNodesThatMissASetInOneRequest) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& labels = named(phases, "labels");
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  run.add(worker_spec("w1"));
  run.add(worker_spec("w2", 0, "10.0.0.3"));
  run.transport.on("/api/v1/nodes",
                   {.out = api_answer("NodeList", {node("master", true, {{"pai-master", "true"}}),
                                                   node("w1"), node("w2")})});
  auto o = observe(labels, m);
  ASSERT_EQ(o.needs.size(), 2u);
  ASSERT_TRUE(labels.apply(m, o.needs).ok());
  std::string script = run.transport.calls().back().script;
  // One merge patch for both workers (the same labels), by curl; kubectl where curl cannot.
  EXPECT_NE(script.find("--data-binary '{\"metadata\":{\"labels\":{\"pai-worker\":\"true\","
                        "\"paictl.io/machine-type\":\"cpu-node\"}}}'"),
            std::string::npos);
  EXPECT_NE(script.find("/api/v1/nodes/w1?fieldManager=paictl"), std::string::npos);
  EXPECT_NE(script.find("/api/v1/nodes/w2?fieldManager=paictl"), std::string::npos);
  EXPECT_NE(script.find("label node w1 w2 --overwrite pai-worker=true"), std::string::npos);

  run.transport.on(
      "merge-patch",
      {.err = "paictl: the API server refused the labels of: w2 (403)\n", .exit_status = 1});
  auto r = labels.apply(m, o.needs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "labelling nodes failed (exit 1): paictl: the API server refused the labels of: w2 "
            "(403)");
}

}  // namespace
}  // namespace pai::deploy::phase_test

namespace pai::deploy::phase_test {
namespace {

// A node as listed, with paictl's built-in labels of worker_spec("w1") and more.
nlohmann::json labelled_w1(const std::map<std::string, std::string>& more,
                           const nlohmann::json& taints, const std::string& managed_labels,
                           const std::string& managed_taints) {
  std::map<std::string, std::string> labels = {{"pai-worker", "true"},
                                               {"paictl.io/machine-type", "cpu-node"}};
  for (const auto& [k, v] : more) labels[k] = v;
  nlohmann::json n = node("w1", true, labels);
  if (!taints.is_null()) n["spec"]["taints"] = taints;
  if (!managed_labels.empty())
    n["metadata"]["annotations"]["paictl.io/managed-labels"] = managed_labels;
  if (!managed_taints.empty())
    n["metadata"]["annotations"]["paictl.io/managed-taints"] = managed_taints;
  return n;
}

TEST(LabelsPhase, SetsTheOperatorsLabelsAndTaintsAndRecordsThem) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& labels = named(phases, "labels");
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  HostSpec w = worker_spec("w1");
  w.operator_labels = {{"example.com/rack", "r12"}};
  w.taints = {{"example.com/dedicated", "ops", "NoSchedule"}};
  run.add(w);
  // The node already holds a taint of its own (the node controller's): kept.
  nlohmann::json own =
      nlohmann::json::array({{{"key", "node.kubernetes.io/unreachable"}, {"effect", "NoExecute"}}});
  run.transport.on("/api/v1/nodes",
                   {.out = api_answer("NodeList", {node("master", true, {{"pai-master", "true"}}),
                                                   labelled_w1({}, own, "", "")})});
  auto o = observe(labels, m);
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.needs, (std::vector<std::string>{"label w1 example.com/rack=r12",
                                               "taint w1 example.com/dedicated=ops:NoSchedule"}));
  ASSERT_TRUE(labels.apply(m, o.needs).ok());
  std::string script = run.transport.calls().back().script;
  EXPECT_NE(script.find("--data-binary '{\"metadata\":{\"annotations\":{\"paictl.io/"
                        "managed-labels\":\"example.com/rack\",\"paictl.io/managed-taints\":"
                        "\"example.com/dedicated:NoSchedule\"},\"labels\":{\"example.com/rack\":"
                        "\"r12\"}},\"spec\":{\"taints\":[{\"effect\":\"NoExecute\",\"key\":\"node."
                        "kubernetes.io/unreachable\"},{\"effect\":\"NoSchedule\",\"key\":\"example."
                        "com/dedicated\",\"value\":\"ops\"}]}}'"),
            std::string::npos)
      << script;
  // Where curl cannot: the same patch with kubectl.
  EXPECT_NE(script.find("patch node w1 --type merge -p '{\"metadata\""), std::string::npos);

  // The node as the patch left it: nothing more to do (a re-run changes nothing).
  nlohmann::json both = own;
  both.push_back({{"key", "example.com/dedicated"}, {"value", "ops"}, {"effect", "NoSchedule"}});
  run.transport.on(
      "/api/v1/nodes",
      {.out = api_answer("NodeList",
                         {node("master", true, {{"pai-master", "true"}}),
                          labelled_w1({{"example.com/rack", "r12"}}, both, "example.com/rack",
                                      "example.com/dedicated:NoSchedule")})});
  EXPECT_TRUE(observe(labels, m).needs.empty());
}

TEST(LabelsPhase, RemovesOnlyWhatPaictlSetAndLayoutNoLongerGives) {
  InstallSettings s = install_settings();
  auto phases = install_phases(s);
  Phase& labels = named(phases, "labels");
  ScriptedHosts run;
  HostRun& m = run.add(master_spec());
  run.add(worker_spec("w1"));  // layout.yaml gives no labels or taints any more
  nlohmann::json taints = nlohmann::json::array(
      {{{"key", "example.com/dedicated"}, {"value", "ops"}, {"effect", "NoSchedule"}},
       {{"key", "someone.else/own"}, {"effect", "PreferNoSchedule"}}});
  run.transport.on(
      "/api/v1/nodes",
      {.out = api_answer(
           "NodeList",
           {node("master", true, {{"pai-master", "true"}}),
            labelled_w1({{"example.com/rack", "r12"}, {"someone.else/label", "x"}}, taints,
                        "example.com/rack", "example.com/dedicated:NoSchedule")})});
  auto o = observe(labels, m);
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.needs, (std::vector<std::string>{"unlabel w1 example.com/rack",
                                               "untaint w1 example.com/dedicated:NoSchedule"}));
  ASSERT_TRUE(labels.apply(m, o.needs).ok());
  std::string script = run.transport.calls().back().script;
  // The label removed (null), the other taint and label kept, the records removed.
  EXPECT_NE(
      script.find("{\"metadata\":{\"annotations\":{\"paictl.io/managed-labels\":null,"
                  "\"paictl.io/managed-taints\":null},\"labels\":{\"example.com/rack\":null}},"
                  "\"spec\":{\"taints\":[{\"effect\":\"PreferNoSchedule\",\"key\":\"someone."
                  "else/own\"}]}}"),
      std::string::npos)
      << script;
  EXPECT_EQ(script.find("someone.else/label"), std::string::npos);
}

}  // namespace
}  // namespace pai::deploy::phase_test
