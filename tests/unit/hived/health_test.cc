// Quarantine candidates from host facts (lib/hived/health.h): the SKU's GPU
// count, the GPUs' health, each SKU's driver (given, else its hosts' most
// common), and the facts directory reader.

#include "hived/health.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "util/fs.h"

namespace pai::hived {
namespace {

config::Layout health_layout(int workers) {
  config::Layout l;
  config::MachineSku gpu;
  gpu.name = "gpu8";
  gpu.device = config::ComputingDevice{"nvidia.com/gpu", "V100", 8, {}};
  config::MachineSku cpu;
  cpu.name = "cpu";
  l.skus = {gpu, cpu};
  config::Machine m;
  m.hostname = "master";
  m.machine_type = "cpu";
  m.master = true;
  l.machines.push_back(m);
  for (int i = 1; i <= workers; ++i) {
    config::Machine w;
    w.hostname = "w" + std::to_string(i);
    w.hostip = "10.0.0." + std::to_string(i);
    w.machine_type = "gpu8";
    w.worker = true;
    l.machines.push_back(w);
  }
  return l;
}

facts::HostFacts health_host(const std::string& name, int gpus, const std::string& driver) {
  facts::HostFacts f;
  f.name = name;
  f.nvidia.smi_present = true;
  f.nvidia.smi_exit = 0;
  f.nvidia.driver_version = driver;
  for (int i = 0; i < gpus; ++i)
    f.gpus.push_back({i, "Tesla V100", 16160, "00000000:0" + std::to_string(i) + ":00.0", ""});
  return f;
}

TEST(Health, CandidatesOfEachKind) {
  auto layout = health_layout(4);
  std::map<std::string, facts::HostFacts> facts;
  facts["w1"] = health_host("w1", 8, "550.127.05");
  facts["w2"] = health_host("w2", 7, "550.127.05");  // a GPU lost
  facts["w3"] = health_host("w3", 8, "535.104.05");  // left behind
  facts["w3"].nvidia.health.push_back({});
  facts["w3"].nvidia.health.back().bus_id = "00000000:00:00.0";
  facts["w3"].nvidia.health.back().volatile_uncorrectable = 3;
  // w4: no facts.
  auto r = health_candidates(layout, facts);
  EXPECT_EQ(r.gpu_hosts, 4);
  EXPECT_EQ(r.checked, 3);
  EXPECT_EQ(r.without_facts, std::vector<std::string>{"w4"});
  EXPECT_EQ(r.drivers.at("gpu8"), "550.127.05");  // two of three hosts
  ASSERT_EQ(r.candidates.size(), 2u);
  EXPECT_EQ(r.candidates[0].node, "w2");
  ASSERT_EQ(r.candidates[0].findings.size(), 1u);
  EXPECT_EQ(r.candidates[0].findings[0].code, "N010");
  EXPECT_EQ(r.candidates[1].node, "w3");
  ASSERT_EQ(r.candidates[1].findings.size(), 2u);
  EXPECT_EQ(r.candidates[1].findings[0].code, "N011");
  EXPECT_EQ(r.candidates[1].findings[1].code, "N014");
  EXPECT_EQ(r.kinds.at("gpusDropped"), 1);
  EXPECT_EQ(r.kinds.at("driverMismatch"), 1);
  // A driver given for the SKU: the two others differ from it.
  HealthOptions o;
  o.drivers["gpu8"] = "535";
  auto g = health_candidates(layout, facts, o);
  ASSERT_EQ(g.candidates.size(), 3u);
  EXPECT_EQ(g.candidates[0].node, "w1");
  EXPECT_EQ(g.candidates[0].findings.at(0).kind, "driverMismatch");
}

TEST(Health, ATieTakesTheNewestDriver) {
  auto layout = health_layout(2);
  std::map<std::string, facts::HostFacts> facts;
  facts["w1"] = health_host("w1", 8, "535.104.05");
  facts["10.0.0.2"] = health_host("10.0.0.2", 8, "550.127.05");  // facts named by address
  auto r = health_candidates(layout, facts);
  EXPECT_EQ(r.checked, 2);
  EXPECT_EQ(r.drivers.at("gpu8"), "550.127.05");
  ASSERT_EQ(r.candidates.size(), 1u);
  EXPECT_EQ(r.candidates[0].node, "w1");
}

TEST(Health, ReadsFactsFilesAndHostDirectories) {
  char tmpl[] = "/tmp/paictl-health-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  ASSERT_TRUE(util::make_directories(dir + "/w2").ok());
  std::ofstream(dir + "/w2/gpus.csv")
      << "index, name, memory.total [MiB], pci.bus_id, uuid, driver_version\n"
         "0, Tesla V100, 16160 MiB, 00000000:06:00.0, GPU-1, 535.104.05\n";
  std::ofstream(dir + "/w2/dmesg.txt")
      << "[ 1.0] NVRM: Xid (PCI:0000:06:00): 79, pid=0, GPU has fallen off the bus.\n";
  std::ofstream(dir + "/w1.json") << facts::to_json(health_host("w1", 8, "535.104.05")).dump();
  std::ofstream(dir + "/broken.json") << "{\"schema\": ";
  diag::List out;
  size_t files = 0;
  auto facts = read_health_facts(dir, out, &files);
  EXPECT_TRUE(out.has_errors());  // broken.json
  EXPECT_EQ(files, 3u);
  ASSERT_EQ(facts.size(), 2u);
  EXPECT_EQ(facts.at("w1").gpus.size(), 8u);
  const auto& w2 = facts.at("w2");
  EXPECT_EQ(w2.gpus.size(), 1u);
  EXPECT_EQ(w2.nvidia.driver_version, "535.104.05");
  ASSERT_EQ(w2.nvidia.xids.size(), 1u);
  auto r = health_candidates(health_layout(2), facts);
  ASSERT_EQ(r.candidates.size(), 1u);
  EXPECT_EQ(r.candidates[0].node, "w2");
  EXPECT_EQ(r.candidates[0].findings.size(), 2u);  // N010 (1 of 8), N013
  [[maybe_unused]] int rc = std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace pai::hived
