#include "facts/host_facts.h"

#include <gtest/gtest.h>

#include "check/report.h"
#include "check/test_support.h"
#include "planner/hosts.h"

using namespace pai::facts;

TEST(FactsJson, RoundTrip) {
  HostFacts f = pai::check::testing::good_host().facts;
  f.roles = {"worker"};
  f.machine_type = "gpu-machine";
  nlohmann::json j = to_json(f);
  EXPECT_EQ(j["schema"], "paictl.facts/v1");
  auto back = from_json(j);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(to_json(*back), j);  // nothing lost
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
  std::string text = pai::check::dump(to_json(f));
  pai::diag::List diags;
  auto h = pai::planner::load_host_json("gpu-ok.json", text, diags);
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
  EXPECT_FALSE(from_json(nlohmann::json::array()));
  auto v2 = from_json({{"schema", "paictl.facts/v2"}, {"hostname", "x"}});
  ASSERT_FALSE(v2);
  EXPECT_NE(v2.error().message.find("v2"), std::string::npos);
  EXPECT_FALSE(from_json({{"schema", "paictl.facts/v1"}}));
  nlohmann::json j = {{"schema", "paictl.facts/v1"},
                      {"hostname", "h"},
                      {"cpu", {{"logical", "many"}}},
                      {"gpus", {1, 2}}};
  auto f = from_json(j);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->cpu.logical, 0);
  EXPECT_TRUE(f->gpus.empty());
}

TEST(FactsJson, InvalidUtf8FromAHostDoesNotThrow) {
  HostFacts f;
  f.hostname = "h";
  f.lscpu = std::string("Model name: \xff\xfe bad");
  std::string s;
  EXPECT_NO_THROW(s = pai::check::dump(to_json(f)));
  EXPECT_NE(s.find("Model name"), std::string::npos);
}

// The reader of facts files (`plan` reads them, remote hosts print the same JSON):
// a number too large for a double is bad input at its position, not an abort.
// A key given twice: nlohmann keeps the last silently; the reader refuses the
// file at the second one.
TEST(FactsJson, DuplicateKeysAreInputErrorsWithTheirPosition) {
  pai::diag::List out;
  std::string text =
      "{\n  \"schema\": \"paictl.facts/v1\",\n  \"name\": \"h\",\n  \"name\": \"other\"\n}\n";
  auto f = read_facts_json("h.json", text, out);
  EXPECT_FALSE(f.has_value());
  ASSERT_EQ(out.size(), 1u);
  const auto& d = out.items()[0];
  EXPECT_EQ(d.severity, pai::diag::Severity::Error);
  EXPECT_EQ(d.line, 4u);
  EXPECT_NE(d.message.find("duplicate key \"name\""), std::string::npos) << d.message;
}

TEST(FactsJson, HugeNumbersAreInputErrorsWithTheirPosition) {
  for (const char* number : {"1e400", "9e616", "-1e400"}) {
    pai::diag::List out;
    std::string text = std::string("{\n  \"schema\": \"paictl.facts/v1\",\n  \"name\": \"h\",\n") +
                       "  \"x\": " + number + "\n}\n";
    std::optional<HostFacts> f;
    EXPECT_NO_THROW(f = read_facts_json("h.json", text, out)) << number;
    EXPECT_FALSE(f.has_value()) << number;
    ASSERT_EQ(out.size(), 1u) << number;
    const auto& d = out.items()[0];
    EXPECT_EQ(d.code, "P005");
    EXPECT_EQ(d.severity, pai::diag::Severity::Error);
    EXPECT_EQ(d.file, "h.json");
    EXPECT_EQ(d.line, 4u) << number;
    EXPECT_EQ(d.column, 8u) << number;
    EXPECT_NE(d.message.find(number), std::string::npos) << d.message;
  }
  // The fuzz target's input, alone.
  pai::diag::List out;
  EXPECT_FALSE(read_facts_json("f.json", "9e616", out).has_value());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out.items()[0].line, 1u);
  EXPECT_EQ(out.items()[0].column, 1u);
}

TEST(FactsJson, NumbersOutOfRangeKeepTheirDefaults) {
  pai::diag::List out;
  auto f = read_facts_json("h.json",
                           R"({"schema": "paictl.facts/v1", "name": "h",
                               "cpu": {"logical": 1e30, "sockets": -1e300, "numa_nodes": 2.0},
                               "memory": {"total_bytes": 18446744073709551615},
                               "gpus": [{"index": 1e20}, {"index": 3, "memory_mib": 16384}]})",
                           out);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->cpu.logical, 0);
  EXPECT_EQ(f->cpu.sockets, 0);
  EXPECT_EQ(f->cpu.numa_nodes, 2);
  EXPECT_EQ(f->memory.total_bytes, 0);
  ASSERT_EQ(f->gpus.size(), 1u);  // gpus[0] has no valid index: reported and left out
  EXPECT_EQ(f->gpus[0].index, 3);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out.items()[0].message.find("gpus[0]"), std::string::npos);
}

TEST(FactsJson, TheReaderAndFromJsonAgree) {
  HostFacts f = pai::check::testing::good_host().facts;
  f.rack = "r7";
  nlohmann::json j = to_json(f);
  pai::diag::List out;
  auto read = read_facts_json("gpu-ok.json", j.dump(), out);
  ASSERT_TRUE(read.has_value());
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(to_json(*read), j);
  EXPECT_EQ(read->rack, "r7");
}
