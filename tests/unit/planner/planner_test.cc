// The planner on the bundled facts and on hand-made variations: SKUs, odd
// hosts, resources, virtual clusters that fit, and what it writes.

#include <gtest/gtest.h>

#include <cmath>

#include <filesystem>
#include <fstream>
#include <set>

#include "config/cluster_files.h"
#include "facts/host_facts.h"
#include "planner/diagram.h"
#include "planner/plan_output.h"
#include "planner/plan_run.h"
#include "planner/profiles.h"
#include "planner/unified_diff.h"
#include "planner_fixtures.h"
#include "scheduler/cluster.h"
#include "sim/engine.h"
#include "sim/trace.h"
#include "util/fs.h"

using namespace pai::planner;
using namespace pai::facts;
namespace fs = std::filesystem;

namespace {

// The error of a write, "" when it worked.
std::string planner_error_of(const pai::util::Result<void>& r) {
  return r.ok() ? std::string() : r.error().message;
}

using pai::test::kLayouts;
const std::string kFacts = std::string(PAI_SOURCE_DIR) + "/examples/facts";

using pai::test::dump;

bool has_code(const pai::diag::List& l, const std::string& code) {
  for (const auto& d : l.items())
    if (d.code == code) return true;
  return false;
}

const pai::diag::Diagnostic* find_code(const pai::diag::List& l, const std::string& code) {
  for (const auto& d : l.items())
    if (d.code == code) return &d;
  return nullptr;
}

// The tests written before --vc-cells assert the largest cells that fit (any).
PlanRun plan_facts(std::vector<std::string> vcs = {}, OddHosts odd = OddHosts::Split,
                   VcCells cells = VcCells::Any) {
  PlanInputs in;
  in.facts_dirs = {kFacts};
  in.layouts_dir = kLayouts;
  in.options.vcs = std::move(vcs);
  in.options.odd_hosts = odd;
  in.options.vc_cells = cells;
  return plan_from_inputs(in);
}

const Sku* sku_named(const Plan& p, const std::string& name) {
  for (const auto& s : p.skus)
    if (s.name == name) return &s;
  return nullptr;
}

Profile profile(const std::string& name) {
  pai::diag::List d;
  auto p = load_profile(kLayouts, name, d);
  EXPECT_TRUE(p) << dump(d);
  return *p;
}

// A master plus `n` hosts of a profile, with facts the test may change.
std::vector<Host> hosts_of(const std::string& prof, int n) {
  Profile p = profile(prof);
  std::vector<Host> hs = profile_hosts(p, n, 0, 7);
  Host m = p.facts;
  m.hostname = "master";
  m.hostip = "10.7.250.1";
  m.role = HostRole::Master;
  m.profile.clear();
  hs.push_back(m);
  return hs;
}

int64_t vc_leaves(const Plan& p, const std::string& vc) {
  for (const auto& v : p.vcs)
    if (v.name == vc) {
      int64_t n = 0;
      for (const auto& c : v.chains) n += c.leaves;
      return n;
    }
  return -1;
}

struct TempDir {
  std::string path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "paictl-plan-test-XXXXXX").string();
    std::vector<char> b(t.begin(), t.end());
    b.push_back(0);
    path = ::mkdtemp(b.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

// --- the bundled facts --------------------------------------------------------------

TEST(PlannerFacts, BundledClusterGivesItsSkusAndPassesCheckConfig) {
  PlanRun r = plan_facts({"research=60%", "prod=40%"});
  ASSERT_TRUE(r.ok()) << dump(r.diagnostics);
  const Plan& p = r.plan;
  ASSERT_NE(sku_named(p, "a100"), nullptr);
  EXPECT_EQ(sku_named(p, "a100")->hosts.size(), 4u);  // two directories, two JSON files
  EXPECT_EQ(sku_named(p, "t4")->hosts.size(), 3u);
  ASSERT_NE(sku_named(p, "cpu"), nullptr);
  EXPECT_FALSE(sku_named(p, "cpu")->has_gpu);
  EXPECT_EQ(sku_named(p, "cpu")->leaves, 64 - default_reserve_cpu(64));
  int m = p.master_host();
  ASSERT_GE(m, 0);
  EXPECT_EQ(p.hosts[static_cast<size_t>(m)].facts.hostname, "pai-master");
  // The racks of the JSON hosts came from their host.yaml overlay.
  ASSERT_EQ(p.chains.front().name, "A100-RACK");
  EXPECT_EQ(p.chains.front().cells.size(), 2u);
  EXPECT_EQ(p.chains.front().cells[1].address, "a100-r2");
  // Every VC's share of every SKU is what the percentages give, rounded down.
  EXPECT_EQ(vc_leaves(p, "research"), 19 + 7 + 36 + 1);
  EXPECT_EQ(vc_leaves(p, "prod"), 12 + 4 + 24 + 1);
  pai::diag::List check = check_plan_files(p);
  EXPECT_FALSE(check.has_errors()) << dump(check);
  EXPECT_FALSE(has_code(check, "H005"));
}

TEST(PlannerFacts, OddHostIsSplitIntoItsOwnSkuWithTheReason) {
  PlanRun r = plan_facts();
  ASSERT_TRUE(r.ok()) << dump(r.diagnostics);
  const Sku* odd = sku_named(r.plan, "t4-04");
  ASSERT_NE(odd, nullptr);
  EXPECT_TRUE(odd->odd);
  EXPECT_EQ(odd->peer, "t4");
  EXPECT_EQ(odd->gpus, 3);
  EXPECT_EQ(odd->leaf_type, "T4");  // it can honour the T4 sizes, so jobs asking for T4 may use it
  const auto* d = find_code(r.diagnostics, "P103");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->message.find("3 GPUs instead of 4"), std::string::npos);
  EXPECT_NE(d->message.find("t4-04"), std::string::npos);
}

TEST(PlannerFacts, OddHostExcludedIsLeftOutOfEveryFile) {
  PlanRun r = plan_facts({}, OddHosts::Exclude);
  ASSERT_TRUE(r.ok()) << dump(r.diagnostics);
  EXPECT_EQ(sku_named(r.plan, "t4-04"), nullptr);
  bool excluded = false;
  for (const auto& h : r.plan.hosts)
    if (h.facts.hostname == "t4-04") excluded = h.excluded && h.reason == "3 GPUs instead of 4";
  EXPECT_TRUE(excluded);
  PlanFiles f = render_files(r.plan, "");
  EXPECT_EQ(f.layout.find("t4-04"), std::string::npos);
  EXPECT_EQ(f.hived.find("t4-04"), std::string::npos);
  EXPECT_NE(f.layout.find("t4-03"), std::string::npos);
  EXPECT_FALSE(check_plan_files(r.plan).has_errors());
}

TEST(PlannerFacts, JsonFactsFromFactsCollect) {
  FactsSet set = load_facts_dir(kFacts);
  EXPECT_FALSE(set.diagnostics.has_errors()) << dump(set.diagnostics);
  const Host* h = nullptr;
  for (const auto& x : set.hosts)
    if (x.hostname == "dgx-03") h = &x;
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->hostip, "10.20.1.13");
  EXPECT_EQ(h->rack, "r2");
  EXPECT_EQ(h->gpus.size(), 8u);
  ASSERT_TRUE(h->topo);
  EXPECT_EQ(h->topo->gpu_count(), 8u);
  ASSERT_TRUE(h->cpu);
  EXPECT_EQ(h->cpu->logical, 256);
  EXPECT_EQ(h->driver_version, "535.161.08");
  // Natural order: dgx-01 .. t4-04.
  EXPECT_EQ(set.hosts.front().hostname, "cpu-01");
}

TEST(PlannerFacts, ReadsWhatFactsCollectWrites) {
  // The writer of `paictl facts collect` (facts::to_json) and the planner's reader
  // agree: a host written by one is the same host, with the same hierarchy, to the other.
  const std::string dir = kLayouts + "/dgx-a100/";
  pai::facts::HostFacts f;
  f.name = "gpu-07";
  f.address = "10.1.2.7";
  f.roles = {"worker"};
  f.hostname = "gpu-07";
  f.nvidia.smi_present = true;
  f.nvidia.smi_exit = 0;
  f.nvidia.driver_version = "535.161.08";
  f.nvidia.topo_matrix = pai::util::read_file(dir + "topo.txt").value();
  f.lscpu = pai::util::read_file(dir + "lscpu.txt").value();
  f.meminfo = pai::util::read_file(dir + "meminfo").value();
  auto gpus = parse_gpu_query(pai::util::read_file(dir + "gpus.csv").value(), "gpus.csv");
  ASSERT_TRUE(gpus.ok());
  for (const auto& g : gpus.value)
    f.gpus.push_back({g.index, g.name, g.memory_mib, g.bus_id, g.uuid});
  const std::string json = pai::facts::to_json(f).dump(2);

  pai::diag::List out;
  auto h = load_host_json("gpu-07.json", json, out);
  ASSERT_TRUE(h) << dump(out);
  EXPECT_TRUE(out.empty()) << dump(out);
  EXPECT_EQ(h->hostname, "gpu-07");
  EXPECT_EQ(h->hostip, "10.1.2.7");
  EXPECT_EQ(h->role, HostRole::Worker);
  EXPECT_EQ(h->driver_version, "535.161.08");
  ASSERT_EQ(h->gpus.size(), 8u);
  EXPECT_EQ(h->gpus[7].uuid, gpus.value[7].uuid);
  EXPECT_EQ(h->gpu_memory_mib(), 40960);

  pai::diag::List d2;
  Host from_dir = load_host_dir(dir, "gpu-07", d2);
  EXPECT_EQ(derive_hierarchy(*h).signature(), derive_hierarchy(from_dir).signature());
  EXPECT_EQ(derive_hierarchy(*h).signature(), "8:NUMA2/SOCKET2/NODE2");
  ASSERT_TRUE(h->cpu && h->mem && from_dir.cpu && from_dir.mem);
  EXPECT_EQ(h->cpu->logical, from_dir.cpu->logical);
  EXPECT_EQ(h->mem->total_bytes, from_dir.mem->total_bytes);

  // A master without GPUs, as facts collect writes it for a CPU host.
  pai::facts::HostFacts m;
  m.name = "head";
  m.address = "10.1.2.1";
  m.roles = {"master"};
  m.lscpu = pai::util::read_file(dir + "lscpu.txt").value();
  m.meminfo = pai::util::read_file(dir + "meminfo").value();
  auto hm = load_host_json("head.json", pai::facts::to_json(m).dump(), out);
  ASSERT_TRUE(hm) << dump(out);
  EXPECT_EQ(hm->role, HostRole::Master);
  EXPECT_EQ(hm->gpu_count(), 0u);
}

TEST(PlannerFacts, BadJsonAndHostYamlAreReportedWithPositions) {
  pai::diag::List out;
  auto none = load_host_json(
      "x.json", "{\n  \"schema\": \"paictl.facts/v1\",\n  \"name\": \"a\"\n  \"b\": 1\n}", out);
  EXPECT_FALSE(none);
  const auto* d = find_code(out, "P005");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->line, 4u);
  TempDir t;
  fs::create_directories(t.path + "/gpu-1");
  std::ofstream(t.path + "/gpu-1/host.yaml")
      << "hostip: 10.0.0.300\nrack: r1\nroles: [boss]\nrackk: r2\n";
  pai::diag::List out2;
  Host h = load_host_dir(t.path + "/gpu-1", "gpu-1", out2);
  std::vector<uint32_t> lines;
  for (const auto& x : out2.items())
    if (x.code == "P003") lines.push_back(x.line);
  EXPECT_EQ(lines, (std::vector<uint32_t>{1, 3, 4})) << dump(out2);
  EXPECT_EQ(h.rack, "r1");
  EXPECT_NE(find_code(out2, "P003")->hint.find("10.0.1.11"), std::string::npos);
}

TEST(PlannerFacts, BinaryFilesAndFilesOfTheWrongKind) {
  TempDir t;
  const std::string d = t.path + "/gpu-1";
  fs::create_directories(d);
  std::ofstream(d + "/host.yaml") << "hostip: 10.0.0.3\n";
  std::ofstream(d + "/meminfo", std::ios::binary) << std::string("MemTotal:\0\x01\x02", 13);
  std::string wrong;  // a file of the wrong kind: 200 lines that are not "key: value"
  for (int i = 0; i < 200; ++i) wrong += "\xff\xfe line " + std::to_string(i) + "\n";
  wrong += "CPU(s): 8\n";
  std::ofstream(d + "/lscpu.txt", std::ios::binary) << wrong;
  pai::diag::List out;
  Host h = load_host_dir(d, "gpu-1", out);
  const auto* bin = find_code(out, "P001");
  ASSERT_NE(bin, nullptr) << dump(out);
  EXPECT_EQ(bin->file, d + "/meminfo");
  EXPECT_NE(bin->message.find("binary data"), std::string::npos);
  EXPECT_FALSE(h.mem);
  size_t lscpu_findings = 0;
  bool summary = false;
  for (const auto& x : out.items()) {
    if (x.file != d + "/lscpu.txt") continue;
    ++lscpu_findings;
    summary |= x.message == "180 more findings in this file are not shown";
    // Excerpts of the input are valid UTF-8: the bytes 0xff 0xfe become '?'.
    EXPECT_EQ(x.message.find('\xff'), std::string::npos);
  }
  EXPECT_EQ(lscpu_findings, 21u) << dump(out);
  EXPECT_TRUE(summary) << dump(out);
  ASSERT_TRUE(h.cpu);  // what could be read is kept
  EXPECT_EQ(h.cpu->logical, 8);
}

TEST(PlannerFacts, MissingOrEmptyFactsDirectory) {
  PlanInputs in;
  in.facts_dirs = {"/nonexistent/facts"};
  PlanRun r = plan_from_inputs(in);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(has_code(r.diagnostics, "P001"));
  TempDir t;
  in.facts_dirs = {t.path};
  PlanRun e = plan_from_inputs(in);
  EXPECT_TRUE(has_code(e.diagnostics, "P009"));
}

// --- heterogeneity ----------------------------------------------------------------------

TEST(PlannerOdd, LessMemoryOrAnotherTopologyMakesAnOddHost) {
  std::vector<Host> hs = hosts_of("dgx-a100", 5);
  hs[2].mem->total_bytes /= 2;  // half the memory
  // hs[4]: GPU 7 lost its NVLinks (a broken NVSwitch port): PCIe only to the others.
  hs[4].profile.clear();  // its facts are its own now (profile hosts share one derivation)
  TopoMatrix& m = *hs[4].topo;
  for (size_t i = 0; i < 8; ++i)
    if (i != 7) {
      m.links[i][7].kind = m.links[7][i].kind = LinkKind::Sys;
      m.links[i][7].nvlinks = m.links[7][i].nvlinks = 0;
    }
  PlanOptions o;
  Plan p = make_plan(hs, o);
  ASSERT_TRUE(p.ok()) << dump(p.diagnostics);
  std::set<std::string> odd_reasons;
  for (const auto& h : p.hosts)
    if (!h.reason.empty()) odd_reasons.insert(h.facts.hostname + ": " + h.reason);
  ASSERT_EQ(odd_reasons.size(), 2u);
  EXPECT_NE(odd_reasons.begin()->find("of memory instead of"), std::string::npos)
      << *odd_reasons.begin();
  EXPECT_NE(std::next(odd_reasons.begin())->find("another GPU topology"), std::string::npos);
  // The half-memory host cannot give each GPU the A100 memory: its own leaf type.
  const Sku* half = sku_named(p, "dgx-a100-dgx-a100-003");
  ASSERT_EQ(half, nullptr);  // named after the host: it already starts with the SKU name
  half = sku_named(p, "dgx-a100-003");
  ASSERT_NE(half, nullptr);
  EXPECT_NE(half->leaf_type, "A100");
  EXPECT_FALSE(check_plan_files(p).has_errors());
}

TEST(PlannerOdd, TwoRealMachineTypesOfOneGpuAreNotOdd) {
  std::vector<Host> hs = hosts_of("dgx1-v100", 4);
  std::vector<Host> nc = profile_hosts(profile("azure-nc24s-v3"), 3, 0, 8);
  hs.insert(hs.end(), nc.begin(), nc.end());
  Plan p = make_plan(hs, {});
  ASSERT_TRUE(p.ok()) << dump(p.diagnostics);
  EXPECT_FALSE(has_code(p.diagnostics, "P103"));
  EXPECT_NE(sku_named(p, "dgx1-v100"), nullptr);
  EXPECT_NE(sku_named(p, "nc24s-v3"), nullptr);
}

// --- masters and host checks -----------------------------------------------------------

TEST(PlannerHosts, MasterRulesAndBadHosts) {
  std::vector<Host> hs = hosts_of("t4-2socket", 2);
  hs.back().role = HostRole::Worker;  // no master left, and not only profile hosts
  hs.back().profile.clear();
  Plan none = make_plan(hs, {});
  EXPECT_TRUE(has_code(none.diagnostics, "P101"));
  PlanOptions o;
  o.master = "master";
  EXPECT_TRUE(make_plan(hs, o).ok());
  o.master = "mastr";
  Plan typo = make_plan(hs, o);
  ASSERT_TRUE(has_code(typo.diagnostics, "P101"));
  EXPECT_NE(find_code(typo.diagnostics, "P101")->hint.find("master"), std::string::npos);
  hs[0].role = HostRole::Master;
  hs.back().role = HostRole::Master;
  EXPECT_TRUE(has_code(make_plan(hs, {}).diagnostics, "P102"));
  std::vector<Host> bad = hosts_of("t4-2socket", 3);
  bad[0].hostname = "GPU_01";
  bad[1].hostip.clear();
  bad[2].hostip = bad.back().hostip;
  Plan b = make_plan(bad, {});
  EXPECT_TRUE(has_code(b.diagnostics, "P002"));
  EXPECT_TRUE(has_code(b.diagnostics, "P004"));
  EXPECT_TRUE(has_code(b.diagnostics, "P008"));
}

// --- resources -----------------------------------------------------------------------------

TEST(PlannerResources, ReserveAndPerLeafSizes) {
  EXPECT_EQ(default_reserve_cpu(80), 3);
  EXPECT_EQ(default_reserve_cpu(256), 7);
  EXPECT_EQ(default_reserve_memory(100LL << 30),
            (2LL << 30) + static_cast<int64_t>(0.03 * (100LL << 30)));
  Plan p = make_plan(hosts_of("t4-2socket", 2), {});
  const Sku* t4 = sku_named(p, "t4");
  ASSERT_NE(t4, nullptr);
  EXPECT_EQ(t4->vcore, 80);
  EXPECT_EQ(t4->cpu_per_leaf, (80 - 3) / 4);
  int64_t left = t4->mem_bytes - default_reserve_memory(t4->mem_bytes);
  EXPECT_EQ(t4->memory_per_leaf, left / 4 / (1LL << 30) * (1LL << 30));
  PlanOptions o;
  o.reserve_cpu = 0;
  o.reserve_memory = 0;
  Plan q = make_plan(hosts_of("t4-2socket", 2), o);
  EXPECT_EQ(sku_named(q, "t4")->cpu_per_leaf, 20);
}

// --- virtual clusters ----------------------------------------------------------------------

TEST(PlannerVcs, SharesBecomeCellsThatFitAndTheRestGoesToDefault) {
  Plan p = make_plan(hosts_of("dgx-a100", 6), [] {
    PlanOptions o;
    o.vcs = {"a=33%", "b=2nodes", "c=5"};
    o.vc_cells = VcCells::Any;
    return o;
  }());
  ASSERT_TRUE(p.ok()) << dump(p.diagnostics);
  EXPECT_EQ(vc_leaves(p, "a"), 15);  // 33% of 48 = 15.84
  EXPECT_EQ(vc_leaves(p, "b"), 16);
  EXPECT_EQ(vc_leaves(p, "c"), 5);
  EXPECT_EQ(vc_leaves(p, "default"), 48 - 15 - 16 - 5);
  EXPECT_TRUE(has_code(p.diagnostics, "P107"));
  bool explained = false;
  for (const auto& v : p.vcs)
    for (const auto& e : v.explanations)
      explained |= e.find("33% of 48 = 15.84, rounded down to 15") != std::string::npos;
  EXPECT_TRUE(explained);
  // b asked for nodes: it gets node cells, not smaller ones.
  for (const auto& v : p.vcs)
    if (v.name == "b") {
      ASSERT_EQ(v.chains.size(), 1u);
      EXPECT_EQ(v.chains[0].count[0], 2);
    }
  pai::diag::List check = check_plan_files(p);
  EXPECT_FALSE(check.has_errors()) << dump(check);
}

TEST(PlannerVcs, ARequestGoesWholeIntoOneChainWhenOneHasRoom) {
  // Racks of 4 and 3 nodes are two chains; a job's pods must fit in one chain.
  std::vector<Host> hs = hosts_of("dgx-a100", 7);
  for (size_t i = 0; i + 1 < hs.size(); ++i) hs[i].rack = i < 4 ? "r1" : "r2";
  PlanOptions o;
  o.vcs = {"a=3nodes", "b=4nodes"};
  o.vc_cells = VcCells::Any;
  Plan p = make_plan(hs, o);
  ASSERT_TRUE(p.ok()) << dump(p.diagnostics);
  ASSERT_EQ(p.chains.size(), 2u);
  ASSERT_EQ(p.chains[0].name, "DGX-A100-4NODE-RACK");
  for (const auto& v : p.vcs) {
    ASSERT_EQ(v.chains.size(), 1u) << v.name << " is split over two chains";
    EXPECT_EQ(v.chains[0].chain, v.name == "a" ? 1 : 0) << v.name;
    EXPECT_EQ(v.chains[0].count[0], 1) << v.name << " gets its rack as one cell";
  }
  // Too big for any one chain: spread over as few as possible, the roomiest first.
  o.vcs = {"a=5nodes", "b=2nodes"};
  Plan q = make_plan(hs, o);
  ASSERT_TRUE(q.ok()) << dump(q.diagnostics);
  for (const auto& v : q.vcs) {
    if (v.name == "b") {
      ASSERT_EQ(v.chains.size(), 1u);
      EXPECT_EQ(v.chains[0].chain, 1);  // the 3-node rack holds 2 nodes whole
    }
    if (v.name == "a") {
      EXPECT_EQ(v.chains.size(), 2u);
      EXPECT_EQ(v.chains[0].leaves, 32);  // the whole 4-node rack, then 1 node of the other
    }
  }
  EXPECT_FALSE(check_plan_files(q).has_errors());
}

TEST(PlannerVcs, ManyShareMixesAlwaysPassHivedsCapacityCheck) {
  // A sweep of shares over racks of uneven size: whatever fits must pass HiveD's rule.
  std::vector<Host> base = hosts_of("dgx2", 7);
  for (size_t i = 0; i + 1 < base.size(); ++i) base[i].rack = i < 4 ? "r1" : "r2";
  for (int a = 0; a <= 100; a += 17)
    for (int b = 0; a + b <= 100; b += 23) {
      PlanOptions o;
      o.vcs = {"a=" + std::to_string(a) + "%", "b=" + std::to_string(b) + "%",
               "c=" + std::to_string((100 - a - b) / 3)};
      o.vc_cells = VcCells::Any;
      Plan p = make_plan(base, o);
      ASSERT_TRUE(p.ok()) << a << " " << b << "\n" << dump(p.diagnostics);
      pai::diag::List check = check_plan_files(p);
      ASSERT_FALSE(check.has_errors()) << a << " " << b << "\n" << dump(check);
      int64_t total = 0;
      for (const auto& v : p.vcs) total += vc_leaves(p, v.name);
      EXPECT_EQ(total, 7 * 16);  // every GPU is guaranteed to someone
    }
}

namespace {

// A plan's HiveD model, as check config reads the files plan writes.
std::shared_ptr<pai::config::HivedModel> vc_cells_model(const Plan& p, pai::diag::List& found) {
  TempDir t;
  EXPECT_EQ(planner_error_of(
                pai::util::write_file_atomic(t.path + "/hivedscheduler.yaml", render_hived(p))),
            "");
  EXPECT_EQ(
      planner_error_of(pai::util::write_file_atomic(t.path + "/layout.yaml", render_layout(p))),
      "");
  auto c = pai::config::check_paths({t.path});
  found = c.diagnostics;
  if (c.clusters.empty() || !c.clusters[0].model) return nullptr;
  return c.clusters[0].model;
}

// jobs "small" (1 GPU) and "big" (8 GPUs) in research, in that order or the other.
pai::sim::PolicyRun vc_cells_run(const pai::config::HivedModel& m, bool small_first) {
  pai::sim::Trace t;
  pai::sim::TraceError e;
  std::string csv = "job_id,submit_time,duration,vc,gpus\n";
  csv += small_first ? "small,0,36000,research,1\nbig,60,3600,research,8\n"
                     : "big,0,3600,research,8\nsmall,60,36000,research,1\n";
  EXPECT_TRUE(pai::sim::read_native_csv(csv, "t.csv", {}, t, e)) << e.message;
  t.finish();
  pai::sim::SimOptions o;
  o.vc_map = "strict";
  pai::sim::Simulator sim(m, t, o);
  EXPECT_TRUE(sim.prepare().ok());
  pai::sim::PolicyRun r;
  EXPECT_TRUE(sim.run("hived", r).ok());
  return r;
}

}  // namespace

// The case behind --vc-cells: two HGX H100 nodes in one rack, research=60% = 9 H100.
// As the largest cells that fit (1 node + 1 GPU), a 1-GPU job placed first lands in
// the node cell and the 8-GPU job after it waits although 8 of research's GPUs are
// free; in the other order both run. As whole nodes (the default) research gets one
// node, and nothing it is guaranteed is ever blocked.
TEST(PlannerVcs, IssueCaseEightGpuJobWaitsBehindOneGpuJobUnlessWholeCells) {
  auto plan_with = [](VcCells cells) {
    PlanInputs in;
    in.layouts_dir = kLayouts;
    in.profiles.push_back({"hgx-h100", 2, 1});
    in.options.vcs = {"research=60%"};
    in.options.vc_cells = cells;
    return plan_from_inputs(in);
  };
  PlanRun any = plan_with(VcCells::Any);
  ASSERT_TRUE(any.ok()) << dump(any.diagnostics);
  EXPECT_EQ(vc_leaves(any.plan, "research"), 9);
  // P115 for research (its node cell can be blocked by 8-GPU jobs) and for default
  // (7 H100 = a socket and 3 GPUs: 4-GPU jobs).
  std::string p115;
  for (const auto& d : any.diagnostics.items())
    if (d.code == "P115") p115 += d.message + "\n";
  EXPECT_NE(p115.find("virtual cluster research holds 1 HGX-H100-NODE beside smaller cells in "
                      "chain HGX-H100-RACK (1 HGX-H100-NODE + 1 H100): a job of 8 H100 can wait"),
            std::string::npos)
      << p115;
  EXPECT_NE(p115.find("virtual cluster default holds 1 HGX-H100-SOCKET"), std::string::npos)
      << p115;
  pai::diag::List found;
  auto m = vc_cells_model(any.plan, found);
  ASSERT_TRUE(m);
  EXPECT_TRUE(has_code(found, "H027")) << dump(found);
  const int32_t research = pai::scheduler::describe_cluster(*m).find_vc("research");
  ASSERT_GE(research, 0);
  auto blocked = vc_cells_run(*m, true);
  EXPECT_EQ(blocked.jobs[1].first_start, 36000);  // big waits until small ends
  EXPECT_EQ(blocked.vcs[static_cast<size_t>(research)].anomaly_jobs, 1);
  auto fine = vc_cells_run(*m, false);
  EXPECT_EQ(fine.jobs[0].first_start, 0);
  EXPECT_EQ(fine.jobs[1].first_start, 60);

  PlanRun node = plan_with(VcCells::Node);
  ASSERT_TRUE(node.ok()) << dump(node.diagnostics);
  EXPECT_EQ(vc_leaves(node.plan, "research"), 8);
  EXPECT_EQ(vc_leaves(node.plan, "default"), 8);
  EXPECT_FALSE(has_code(node.diagnostics, "P115"));
  bool costed = false;
  for (const auto& v : node.plan.vcs)
    for (const auto& e : v.explanations)
      costed |= e.find(
                    "60% of 16 = 9.60, rounded down to 9 H100 -> 1 HGX-H100-NODE (whole cells "
                    "of one level: 1 H100 GPU fewer)") != std::string::npos;
  EXPECT_TRUE(costed);
  auto mn = vc_cells_model(node.plan, found);
  ASSERT_TRUE(mn);
  EXPECT_FALSE(has_code(found, "H027")) << dump(found);
  EXPECT_EQ(found.count(pai::diag::Severity::Warning), 0u) << dump(found);
  auto kept = vc_cells_run(*mn, true);
  EXPECT_EQ(kept.vcs[static_cast<size_t>(research)].anomaly_jobs, 0);
}

TEST(PlannerVcs, WholeCellsOfOneLevelForEveryShareMix) {
  // The sweep above with --vc-cells node: every VC's cells of a chain are of one
  // level, nothing is over-committed, and what is in no VC is less than a node per chain.
  std::vector<Host> base = hosts_of("dgx2", 7);
  for (size_t i = 0; i + 1 < base.size(); ++i) base[i].rack = i < 4 ? "r1" : "r2";
  for (int a = 0; a <= 100; a += 17)
    for (int b = 0; a + b <= 100; b += 23) {
      PlanOptions o;
      o.vcs = {"a=" + std::to_string(a) + "%", "b=" + std::to_string(b) + "%",
               "c=" + std::to_string((100 - a - b) / 3)};
      Plan p = make_plan(base, o);
      ASSERT_TRUE(p.ok()) << a << " " << b << "\n" << dump(p.diagnostics);
      EXPECT_FALSE(has_code(p.diagnostics, "P115")) << a << " " << b;
      pai::diag::List check = check_plan_files(p);
      ASSERT_FALSE(check.has_errors()) << a << " " << b << "\n" << dump(check);
      EXPECT_FALSE(has_code(check, "H027")) << a << " " << b << "\n" << dump(check);
      for (const auto& v : p.vcs)
        for (const auto& c : v.chains) {
          int levels = 0;
          for (int64_t n : c.count) levels += n > 0;
          EXPECT_EQ(levels, 1) << v.name << " " << a << " " << b;
        }
      int64_t total = 0;
      for (const auto& v : p.vcs) total += vc_leaves(p, v.name);
      EXPECT_LE(total, 7 * 16);
      EXPECT_GT(total, 7 * 16 - 2 * 16);  // at most one node's rest per chain is in no VC
    }
}

TEST(PlannerVcs, OneLevelCellsRule) {
  // A chain of racks of 2 nodes of 8 GPUs in 2 sockets of 4: levels 16, 8, 4, 1; node at 1.
  const std::vector<int64_t> per{16, 8, 4, 1};
  auto one = one_level_cells(per, 1, 9);
  EXPECT_EQ(one.level, 1);  // 1 node, 1 GPU left out
  EXPECT_EQ(one.cost, 1);
  one = one_level_cells(per, 1, 16);
  EXPECT_EQ(one.level, 0);  // a whole rack: nothing left out, the larger cell
  one = one_level_cells(per, 1, 24);
  EXPECT_EQ(one.level, 1);  // 3 nodes, not 1 rack and 8 GPUs left out
  EXPECT_EQ(one.count, 3);
  one = one_level_cells(per, 1, 6);
  EXPECT_EQ(one.level, 2);  // less than a node: 1 socket
  EXPECT_EQ(one.cost, 2);
  one = one_level_cells(per, 1, 3);
  EXPECT_EQ(one.level, 3);
  EXPECT_EQ(one.count, 3);
  EXPECT_EQ(one_level_cells(per, 1, 0).level, -1);
  EXPECT_EQ(blockable_sizes(per, {0, 1, 0, 1}), (std::vector<int64_t>{8}));
  EXPECT_EQ(blockable_sizes(per, {1, 1, 1, 0}), (std::vector<int64_t>{16, 8}));
  EXPECT_TRUE(blockable_sizes(per, {0, 3, 0, 0}).empty());
}

TEST(PlannerVcs, InfeasibleAndMalformedRequestsAreErrors) {
  auto plan = [](std::vector<std::string> vcs) {
    std::vector<Host> hs = hosts_of("dgx-a100", 2);
    std::vector<Host> t4 = profile_hosts(profile("t4-2socket"), 2, 0, 9);
    hs.insert(hs.end(), t4.begin(), t4.end());
    PlanOptions o;
    o.vcs = std::move(vcs);
    return make_plan(hs, o);
  };
  Plan over = plan({"a=60%", "b=dgx-a100:50%"});
  ASSERT_TRUE(has_code(over.diagnostics, "P106")) << dump(over.diagnostics);
  EXPECT_NE(find_code(over.diagnostics, "P106")->message.find("(a: 9, b: 8)"), std::string::npos)
      << find_code(over.diagnostics, "P106")->message;
  EXPECT_TRUE(has_code(plan({"a=t4:3nodes"}).diagnostics, "P106"));
  EXPECT_TRUE(has_code(plan({"a=t4:17"}).diagnostics, "P106"));
  Plan unqualified = plan({"a=4"});
  ASSERT_TRUE(has_code(unqualified.diagnostics, "P105"));
  EXPECT_NE(find_code(unqualified.diagnostics, "P105")->hint.find("a=dgx-a100:4"),
            std::string::npos);
  Plan typo = plan({"a=dgx-a10:4"});
  ASSERT_TRUE(has_code(typo.diagnostics, "P105"));
  EXPECT_NE(find_code(typo.diagnostics, "P105")->hint.find("dgx-a100"), std::string::npos);
  for (const char* bad : {"Research=10%", "a", "a=", "a=120%", "a=x%", "a=t4:1,t4:2", "a=5%,t4:1"})
    EXPECT_TRUE(has_code(plan({bad}).diagnostics, "P105")) << bad;
  EXPECT_TRUE(has_code(plan({"a=1%", "a=2%"}).diagnostics, "P105"));
  Plan zero = plan({"tiny=t4:0"});
  EXPECT_TRUE(zero.ok());
  EXPECT_TRUE(has_code(zero.diagnostics, "P108"));
  EXPECT_EQ(vc_leaves(zero, "tiny"), -1);  // left out
}

// --- output -----------------------------------------------------------------------------------

TEST(PlannerOutput, LeafOrderFollowsTheTopologyWhenItIsNotTheIndexOrder) {
  // GPUs 0 and 2 on socket 0, 1 and 3 on socket 1.
  std::vector<Host> hs = hosts_of("t4-2socket", 2);
  auto r = parse_topo_matrix(
      "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n"
      "GPU0\t X \tSYS\tNODE\tSYS\t0-19,40-59\t0\n"
      "GPU1\tSYS\t X \tSYS\tNODE\t20-39,60-79\t1\n"
      "GPU2\tNODE\tSYS\t X \tSYS\t0-19,40-59\t0\n"
      "GPU3\tSYS\tNODE\tSYS\t X \t20-39,60-79\t1\n");
  ASSERT_TRUE(r.ok());
  for (auto& h : hs)
    if (h.role == HostRole::Worker) h.topo = r.value;
  Plan p = make_plan(hs, {});
  ASSERT_TRUE(p.ok()) << dump(p.diagnostics);
  EXPECT_EQ(p.hosts[0].hierarchy.leaf_order, (std::vector<int>{0, 2, 1, 3}));
  std::string hived = render_hived(p);
  EXPECT_NE(hived.find("    cellAddress: t4-2socket-001\n    cellChildren:\n    - cellChildren:\n  "
                       "    - cellAddress: 0\n"
                       "      - cellAddress: 2\n    - cellChildren:\n      - cellAddress: 1\n      "
                       "- cellAddress: 3\n"),
            std::string::npos)
      << hived;
  TempDir t;
  ASSERT_EQ(planner_error_of(pai::util::write_file_atomic(t.path + "/hivedscheduler.yaml", hived)),
            "");
  ASSERT_EQ(
      planner_error_of(pai::util::write_file_atomic(t.path + "/layout.yaml", render_layout(p))),
      "");
  auto c = pai::config::check_paths({t.path});
  EXPECT_FALSE(c.diagnostics.has_errors()) << dump(c.diagnostics);
  ASSERT_EQ(c.clusters.size(), 1u);
  ASSERT_TRUE(c.clusters[0].model);
  std::vector<int> leaves;
  for (const auto& cell : c.clusters[0].model->cells)
    if (cell.level == 1 && cell.node == 0) leaves.push_back(cell.leaf_index);
  EXPECT_EQ(leaves, (std::vector<int>{0, 2, 1, 3}));
}

TEST(PlannerOutput, ServicesConfigurationKeepsEverythingButTheHivedConfig) {
  Plan p = make_plan(hosts_of("t4-2socket", 2), {});
  const std::string existing =
      "cluster:\n  common:\n    cluster-id: pai\n\n"
      "# the scheduler\n"
      "hivedscheduler:\n  config: |\n    physicalCluster:\n      old: true\n\n    virtualClusters: "
      "{}\n"
      "  webservice-port: 30096\n\n"
      "# auth\nauthentication:\n  OIDC: false\n";
  std::string merged = render_services(p, existing);
  EXPECT_EQ(merged.find("old: true"), std::string::npos);
  EXPECT_NE(merged.find("cluster-id: pai"), std::string::npos);
  EXPECT_NE(merged.find("  webservice-port: 30096\n"), std::string::npos);
  EXPECT_NE(merged.find("# auth\nauthentication:\n  OIDC: false\n"), std::string::npos);
  EXPECT_NE(
      merged.find("# the scheduler\nhivedscheduler:\n  config: |\n    # HiveD scheduler config"),
      std::string::npos)
      << merged;
  EXPECT_EQ(render_services(p, merged), merged);  // idempotent
  std::string appended = render_services(p, "cluster:\n  common:\n    cluster-id: pai\n");
  EXPECT_NE(appended.find("cluster-id: pai\n\nhivedscheduler:\n  config: |\n"), std::string::npos);
}

TEST(PlannerOutput, DiagramColoursEveryGuaranteedLeafOnce) {
  PlanRun r = plan_facts({"research=60%", "prod=40%"});
  ASSERT_TRUE(r.ok());
  auto binding = example_binding(r.plan);
  std::map<int, int64_t> bound;
  for (const auto& h : binding)
    for (int v : h) ++bound[v];
  EXPECT_EQ(bound.count(-1), 0u);  // default takes the rest: nothing is unbound
  for (size_t v = 0; v < r.plan.vcs.size(); ++v)
    EXPECT_EQ(bound[static_cast<int>(v)], vc_leaves(r.plan, r.plan.vcs[v].name));
  std::string svg = render_svg(r.plan);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("research ("), std::string::npos);
  EXPECT_NE(svg.find("dgx-01"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

// The contrast ratio of two "#rrggbb" colours (WCAG 2).
double diagram_test_contrast(const std::string& a, const std::string& b) {
  auto lum = [](const std::string& c) {
    auto ch = [&](size_t at) {
      double v = std::stoi(c.substr(at, 2), nullptr, 16) / 255.0;
      return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * ch(1) + 0.7152 * ch(3) + 0.0722 * ch(5);
  };
  double x = lum(a) + 0.05, y = lum(b) + 0.05;
  return std::max(x, y) / std::min(x, y);
}

size_t diagram_test_count(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t p = s.find(part); p != std::string::npos; p = s.find(part, p + 1)) ++n;
  return n;
}

TEST(PlannerOutput, DiagramLabelsLevelsMarksOddHostsAndTheMasterReadably) {
  PlanRun r = plan_facts({"research=60%", "prod=40%"});
  ASSERT_TRUE(r.ok());
  std::string svg = render_svg(r.plan);
  // Every machine-level box (socket, NUMA, ...) has its label.
  size_t levels = diagram_test_count(svg, "class=\"level\"");
  EXPECT_GT(levels, 0u);
  EXPECT_EQ(diagram_test_count(svg, "font-size=\"8\" fill=\"#333333\">"), levels);
  bool named = svg.find(">socket</text>") != std::string::npos ||
               svg.find(">NUMA</text>") != std::string::npos ||
               svg.find(">NVLink</text>") != std::string::npos ||
               svg.find(">PCIe</text>") != std::string::npos;
  EXPECT_TRUE(named);
  // The odd host t4-04 is marked, with why in its tooltip; the master too.
  size_t odd = svg.find("class=\"odd\"");
  ASSERT_NE(odd, std::string::npos);
  EXPECT_EQ(diagram_test_count(svg, "class=\"odd\""), 1u);
  std::string odd_title = svg.substr(odd, svg.find("</title>", odd) - odd);
  EXPECT_NE(odd_title.find("t4-04"), std::string::npos) << odd_title;
  EXPECT_NE(odd_title.find("odd host: "), std::string::npos) << odd_title;
  EXPECT_EQ(diagram_test_count(svg, "class=\"master\""), 1u);
  EXPECT_NE(svg.find(">master "), std::string::npos);
  // A GPU's number is readable on its leaf's colour, white (unbound) leaves included.
  size_t pairs = 0;
  for (size_t p = svg.find("pointer-events=\"none\">"); p != std::string::npos;
       p = svg.find("pointer-events=\"none\">", p + 1)) {
    size_t text = svg.rfind("<text ", p);
    size_t tf = svg.find("fill=\"", text) + 6;
    size_t rect = svg.rfind("<rect ", text);
    size_t rf = svg.find("fill=\"", rect) + 6;
    std::string fg = svg.substr(tf, 7), bg = svg.substr(rf, 7);
    EXPECT_GE(diagram_test_contrast(fg, bg), 3.0) << fg << " on " << bg;
    ++pairs;
  }
  EXPECT_GT(pairs, 10u);
}

TEST(PlannerOutput, JsonSummaryHasSkusHostsChainsAndVcs) {
  PlanRun r = plan_facts({"research=50%"});
  ASSERT_TRUE(r.ok());
  auto j = plan_to_json(r.plan);
  EXPECT_EQ(j["schema"], "paictl.plan/v1");
  EXPECT_EQ(j["hosts"].size(), 10u);
  EXPECT_EQ(j["virtual_clusters"][0]["name"], "research");
  EXPECT_FALSE(j["virtual_clusters"][0]["virtual_cells"].empty());
  EXPECT_EQ(j["skus"][1]["cell_levels"].back()["cell_type"], "A100-NODE");
}

TEST(UnifiedDiff, HunksWithContext) {
  EXPECT_EQ(unified_diff("a\nb\n", "a\nb\n", "x", "y"), "");
  std::string d = unified_diff("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n",
                               "old", "new");
  EXPECT_EQ(d, "--- old\n+++ new\n@@ -2,8 +2,9 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n+10\n");
  std::string add = unified_diff("", "a\nb\n", "/dev/null", "f");
  EXPECT_EQ(add, "--- /dev/null\n+++ f\n@@ -0,0 +1,2 @@\n+a\n+b\n");
  // Far-apart changes make separate hunks.
  std::string text, text2;
  for (int i = 0; i < 30; ++i) {
    text += std::to_string(i) + "\n";
    text2 += (i == 2 || i == 25 ? "x" : std::to_string(i)) + "\n";
  }
  std::string two = unified_diff(text, text2, "a", "b");
  EXPECT_EQ(std::count(two.begin(), two.end(), '@'), 8);
}

TEST(Hierarchy, TooManyGpusForOneMachineGiveOneFlatNode) {
  std::string text = "";
  for (int i = 0; i < 40; ++i) text += "\tGPU" + std::to_string(i);
  text += "\n";
  for (int i = 0; i < 40; ++i) {
    text += "GPU" + std::to_string(i);
    for (int j = 0; j < 40; ++j) text += i == j ? "\t X " : (i / 2 == j / 2 ? "\tPIX" : "\tSYS");
    text += "\n";
  }
  auto r = parse_topo_matrix(text);
  ASSERT_TRUE(r.ok());
  Host h;
  h.topo = r.value;
  Hierarchy hi = derive_hierarchy(h);
  EXPECT_EQ(hi.gpus, 40);
  EXPECT_TRUE(hi.levels.empty());
  EXPECT_EQ(hi.node_children, 40);
  ASSERT_EQ(hi.notes.size(), 1u);
  EXPECT_NE(hi.notes[0].find("more than 32"), std::string::npos);
}

TEST(Hierarchy, UnequalGroupsAreLeftOutWithANote) {
  // Three GPUs on socket 0 and one on socket 1: no socket level.
  Host h;
  auto r = parse_topo_matrix(
      "\tGPU0\tGPU1\tGPU2\tGPU3\tNUMA Affinity\n"
      "GPU0\t X \tNODE\tNODE\tSYS\t0\nGPU1\tNODE\t X \tNODE\tSYS\t0\n"
      "GPU2\tNODE\tNODE\t X \tSYS\t0\nGPU3\tSYS\tSYS\tSYS\t X \t1\n");
  ASSERT_TRUE(r.ok());
  h.topo = r.value;
  Hierarchy hi = derive_hierarchy(h);
  EXPECT_TRUE(hi.levels.empty());
  EXPECT_EQ(hi.node_children, 4);
  ASSERT_FALSE(hi.notes.empty());
  EXPECT_NE(hi.notes[0].find("3+1"), std::string::npos) << hi.notes[0];
}
