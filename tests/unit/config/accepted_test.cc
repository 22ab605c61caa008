// Files that HiveD and OpenPAI accept and run give no errors: at most a
// warning that says why they are risky. And one root cause is one finding, at
// the line to edit, with the places it affects as related locations.

#include <gtest/gtest.h>

#include <set>

#include "config/cluster_files.h"

namespace pai::config {
namespace {

std::set<std::string> codes(const CheckOutcome& out, diag::Severity sev) {
  std::set<std::string> s;
  for (const auto& d : out.diagnostics.items())
    if (d.severity == sev) s.insert(d.code);
  return s;
}

std::string dump(const CheckOutcome& out) {
  std::string s;
  for (const auto& d : out.diagnostics.items())
    s += d.code + " " + std::to_string(d.line) + ":" + std::to_string(d.column) + " " + d.message +
         "\n";
  return s;
}

// The features of HiveD's design example: several chains without skuTypes, a
// leaf type whose name is close to a defined type, non-standard leaf indices,
// `cellChildren: null`, one node with two leaf types (two chains),
// pinned cells at leaf and rack level, and VC names in upper case.
const char* kDesignLike = R"(kubeApiServerAddress: http://10.10.10.10:8080
physicalCluster:
  cellTypes:
    A1-NODE:
      childCellType: A1
      childCellNumber: 2
      isNodeLevel: true
    P4-SWITCH:
      childCellType: P4
      childCellNumber: 2
    P4-NODE:
      childCellType: P4-SWITCH
      childCellNumber: 2
      isNodeLevel: true
    3-P4-NODE:
      childCellType: P4-NODE
      childCellNumber: 3
    IB-T9-NODE-2-GPU:
      childCellType: IB-T9-NODE-T9
      childCellNumber: 2
    IB-T9-NODE:
      childCellType: IB-T9-NODE-2-GPU
      childCellNumber: 2
      isNodeLevel: true
    2-IB-T9-NODE:
      childCellType: IB-T9-NODE
      childCellNumber: 2
  physicalCells:
  - cellType: A1-NODE
    cellAddress: 0.0.0.0
  - cellType: A1-NODE
    cellAddress: 0.0.0.1
  - cellType: A1-NODE
    cellAddress: 1.0.0.2  # node name
    cellChildren:
    - cellAddress: 8  # GPU index
      pinnedCellId: VC1-A1
    - cellAddress: 9
  - cellType: 3-P4-NODE
    cellChildren:
    - cellAddress: 1.0.0.2  # the same node as above: two leaf types on one node
      cellChildren: null # null, empty or not given
    - cellAddress: 2.0.0.1
      cellChildren:
    - cellAddress: 2.0.0.0
      cellChildren:
      - cellAddress: 1
        cellChildren:
        - cellAddress: 1
        - cellAddress: 3
      - cellAddress: 0
        cellChildren:
        - cellAddress: 0
        - cellAddress: 2
  - cellType: 2-IB-T9-NODE
    pinnedCellId: VC1-IB
    cellChildren:
    - cellAddress: 0.1.0.0
    - cellAddress: 0.1.0.1
virtualClusters:
  VC1:
    virtualCells:
    - cellType: 3-P4-NODE.P4-NODE
      cellNumber: 1
    pinnedCells:
    - pinnedCellId: VC1-A1
    - pinnedCellId: VC1-IB
  VC2:
    virtualCells:
    - cellType: 3-P4-NODE.P4-NODE.P4-SWITCH
      cellNumber: 2
    - cellType: A1-NODE
      cellNumber: 1
)";

TEST(Accepted, HivedDesignFeaturesGiveNoErrors) {
  CheckOutcome out = check_sources({{"hivedscheduler.yaml", kDesignLike}});
  EXPECT_TRUE(codes(out, diag::Severity::Error).empty()) << dump(out);
  EXPECT_FALSE(out.input_error);
  // What is risky is still said, as warnings.
  std::set<std::string> w = codes(out, diag::Severity::Warning);
  EXPECT_TRUE(w.count("H008")) << dump(out);  // IB-T9-NODE-T9 looks like a typo
  EXPECT_TRUE(w.count("H015")) << dump(out);  // VC1, VC2
  ASSERT_EQ(out.clusters.size(), 1u);
  ASSERT_TRUE(out.clusters[0].model);
  EXPECT_TRUE(out.clusters[0].model->complete);
}

TEST(Accepted, CellNumberZeroIsAWarning) {
  std::string cfg = std::string(kDesignLike) +
                    "  VC3:\n    virtualCells:\n    - cellType: A1-NODE\n      cellNumber: 0\n";
  CheckOutcome out = check_sources({{"hivedscheduler.yaml", cfg}});
  EXPECT_TRUE(codes(out, diag::Severity::Error).empty()) << dump(out);
  EXPECT_TRUE(codes(out, diag::Severity::Warning).count("H026")) << dump(out);
  // A negative number is still an error: it hands other VCs cells that do not exist.
  std::string neg = std::string(kDesignLike) +
                    "  VC3:\n    virtualCells:\n    - cellType: A1-NODE\n      cellNumber: -1\n";
  EXPECT_TRUE(
      codes(check_sources({{"hivedscheduler.yaml", neg}}), diag::Severity::Error).count("H016"));
}

TEST(Accepted, KeyOnlyRootConfigYaml) {
  CheckOutcome out = check_sources(
      {{"config.yaml",
        "user: root\nssh_key_file_path: /root/.ssh/id_ed25519\ndocker_image_tag: v1.8.0\n"}});
  EXPECT_TRUE(out.diagnostics.empty()) << dump(out);
  // Without a password, a user other than root needs passwordless sudo: a warning.
  CheckOutcome user = check_sources(
      {{"config.yaml",
        "user: openpai\nssh_key_file_path: /home/openpai/.ssh/id\ndocker_image_tag: v1.8.0\n"}});
  EXPECT_TRUE(codes(user, diag::Severity::Error).empty()) << dump(user);
  EXPECT_TRUE(codes(user, diag::Severity::Warning).count("C008")) << dump(user);
  // A password of the wrong type is still an error.
  CheckOutcome bad =
      check_sources({{"config.yaml", "user: root\npassword: 12345\ndocker_image_tag: v1.8.0\n"}});
  EXPECT_TRUE(codes(bad, diag::Severity::Error).count("F005")) << dump(bad);
}

const char* kCpuLayout = R"(machine-sku:
  master-machine:
    mem: 60Gi
    cpu:
      vcore: 24
  dgx:
    computing-device:
      type: nvidia.com/gpu
      model: V100
      count: 8
    mem: 512Gi
    cpu:
      vcore: 64
machine-list:
  - hostname: pai-master
    hostip: 10.0.0.1
    machine-type: master-machine
    pai-master: "true"
  - hostname: w1
    hostip: 10.0.0.2
    machine-type: dgx
    pai-worker: "true"
  - hostname: w2
    hostip: 10.0.0.3
    machine-type: dgx
    pai-worker: "true"
  - hostname: w3
    hostip: 10.0.0.4
    machine-type: dgx
    pai-worker: "true"
)";

const char* kCpuHived = R"(physicalCluster:
  skuTypes:
    V100:
      gpu: 1
      cpu: 9
      memory: 60Gi
  cellTypes:
    V100-NODE:
      childCellType: V100
      childCellNumber: 8
      isNodeLevel: true
  physicalCells:
  - cellType: V100-NODE
    cellAddress: w1
  - cellType: V100-NODE
    cellAddress: w2
  - cellType: V100-NODE
    cellAddress: w3
virtualClusters:
  default:
    virtualCells:
    - cellType: V100-NODE
      cellNumber: 3
)";

TEST(RootCause, SkuCpuOverflowIsOneFindingAtTheCpuLine) {
  CheckOutcome out =
      check_sources({{"layout.yaml", kCpuLayout}, {"hivedscheduler.yaml", kCpuHived}});
  std::vector<const diag::Diagnostic*> x003;
  for (const auto& d : out.diagnostics.items())
    if (d.code == "X003") x003.push_back(&d);
  ASSERT_EQ(x003.size(), 1u) << dump(out);
  const diag::Diagnostic& d = *x003[0];
  EXPECT_EQ(d.file, "hivedscheduler.yaml");
  EXPECT_EQ(d.line, 5u);  // cpu: 9
  EXPECT_EQ(d.column, 12u);
  EXPECT_NE(d.message.find("72 CPUs"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("64 vcores"), std::string::npos) << d.message;
  EXPECT_NE(d.hint.find("at most 8"), std::string::npos) << d.hint;
  // The machine SKU and the three nodes are related locations.
  ASSERT_EQ(d.related.size(), 4u);
  EXPECT_EQ(d.related[0].file, "layout.yaml");
  EXPECT_EQ(d.related[0].line, 6u);
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(d.related[i].file, "hivedscheduler.yaml");
    EXPECT_EQ(d.related[i].line, 13u + 2 * static_cast<uint32_t>(i - 1)) << i;
    EXPECT_NE(d.related[i].message.find("w" + std::to_string(i)), std::string::npos);
  }
}

// A machine of 2^63 vcores (or devices) is no machine: OpenPAI would make a cell
// for each. Bounded, with the limit in the message.
TEST(LayoutBounds, HugeVcoreAndDeviceCountsAreErrors) {
  std::string layout = kCpuLayout;
  std::string huge = layout;
  huge.replace(huge.find("vcore: 24"), 9, "vcore: 0x7fffffffffffffff");
  CheckOutcome out = check_sources({{"layout.yaml", huge}});
  EXPECT_TRUE(codes(out, diag::Severity::Error).count("L014")) << dump(out);
  EXPECT_NE(dump(out).find("at most 8192"), std::string::npos) << dump(out);
  std::string devices = layout;
  devices.replace(devices.find("count: 8"), 8, "count: 9223372036854775807");
  CheckOutcome dev = check_sources({{"layout.yaml", devices}});
  EXPECT_TRUE(codes(dev, diag::Severity::Error).count("L014")) << dump(dev);
  // The bound itself is accepted.
  std::string edge = layout;
  edge.replace(edge.find("vcore: 24"), 9, "vcore: 8192");
  EXPECT_FALSE(codes(check_sources({{"layout.yaml", edge}}), diag::Severity::Error).count("L014"));
}

}  // namespace
}  // namespace pai::config
