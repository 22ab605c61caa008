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
