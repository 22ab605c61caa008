#include "check/host_facts.h"

#include <gtest/gtest.h>

#include "check/report.h"
#include "test_support.h"
#include "topology/host_facts.h"

using namespace pai::check;

TEST(FactsJson, RoundTrip) {
  HostFacts f = pai::check::testing::good_host().facts;
  f.roles = {"worker"};
  f.machine_type = "gpu-machine";
  nlohmann::json j = to_json(f);
  EXPECT_EQ(j["schema"], "paictl.facts/v1");
  HostFacts back;
  std::string err;
  ASSERT_TRUE(from_json(j, back, err)) << err;
  EXPECT_EQ(to_json(back), j);  // nothing lost
}

TEST(FactsJson, TheKeysThePlannerNeeds) {
  nlohmann::json j = to_json(pai::check::testing::good_host().facts);
  for (const char* k : {"schema", "hostname", "ip_addresses", "cpu", "memory", "gpus", "nvidia",
                        "lscpu", "meminfo"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_TRUE(j["cpu"].contains("logical"));
  EXPECT_TRUE(j["cpu"].contains("sockets"));
  EXPECT_TRUE(j["cpu"].contains("model"));
  EXPECT_TRUE(j["memory"].contains("total_bytes"));
  EXPECT_TRUE(j["memory"].contains("available_bytes"));
  for (const char* k : {"index", "name", "memory_mib", "bus_id", "uuid"})
    EXPECT_TRUE(j["gpus"][0].contains(k)) << k;
  EXPECT_TRUE(j["nvidia"].contains("driver_version"));
  EXPECT_TRUE(j["nvidia"].contains("topo_matrix"));
  EXPECT_FALSE(j["daemon_json"].contains("raw"));  // may hold proxy credentials
}

// The contract with the topology planner: its reader gets the same hardware back.
TEST(FactsJson, ThePlannersReaderReadsIt) {
  HostFacts f = pai::check::testing::good_host().facts;
  std::string text = dump(to_json(f));
  pai::diag::List diags;
  auto h = pai::topology::load_host_json("gpu-ok.json", text, diags);
  ASSERT_TRUE(h.has_value());
  for (const auto& d : diags.items())
    EXPECT_NE(d.severity, pai::diag::Severity::Error) << d.message;
  EXPECT_EQ(h->hostname, "gpu-ok");
  EXPECT_EQ(h->gpu_count(), 4u);
  EXPECT_EQ(h->gpu_model(), "Tesla V100-SXM2-16GB");
  EXPECT_EQ(h->driver_version, "535.104.05");
  ASSERT_TRUE(h->topo.has_value());
  EXPECT_EQ(h->topo->gpu_count(), 4u);
  ASSERT_TRUE(h->cpu.has_value());
  EXPECT_EQ(h->cpu->logical, 2);
  ASSERT_TRUE(h->mem.has_value());
  EXPECT_EQ(h->mem->total_bytes, 67108864LL * 1024);
}

TEST(FactsJson, RejectsOtherSchemasAndIsLenientWithTypes) {
  HostFacts f;
  std::string err;
  EXPECT_FALSE(from_json(nlohmann::json::array(), f, err));
  EXPECT_FALSE(from_json({{"schema", "paictl.facts/v2"}, {"hostname", "x"}}, f, err));
  EXPECT_NE(err.find("v2"), std::string::npos);
  EXPECT_FALSE(from_json({{"schema", "paictl.facts/v1"}}, f, err));
  nlohmann::json j = {{"schema", "paictl.facts/v1"},
                      {"hostname", "h"},
                      {"cpu", {{"logical", "many"}}},
                      {"gpus", {1, 2}}};
  ASSERT_TRUE(from_json(j, f, err)) << err;
  EXPECT_EQ(f.cpu.logical, 0);
  EXPECT_TRUE(f.gpus.empty());
}

TEST(FactsJson, InvalidUtf8FromAHostDoesNotThrow) {
  HostFacts f;
  f.hostname = "h";
  f.lscpu = std::string("Model name: \xff\xfe bad");
  std::string s;
  EXPECT_NO_THROW(s = dump(to_json(f)));
  EXPECT_NE(s.find("Model name"), std::string::npos);
}
