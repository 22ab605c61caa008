#pragma once
// Test helpers: HiveD models from YAML text, requests, and placements.

#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "config/context.h"
#include "config/hived.h"
#include "config/hived_model.h"
#include "scheduler/policy.h"
#include "yaml/yaml.h"

namespace pai::scheduler {
// Readable outcomes in test failures.
inline void PrintTo(Outcome o, std::ostream* os) {
  *os << to_string(o);
}
}  // namespace pai::scheduler

namespace pai::scheduler::test {

// Builds the checked model of a HiveD config; fails the test on config errors.
inline std::shared_ptr<config::HivedModel> model_from_yaml(const std::string& text) {
  yaml::Stream s = yaml::load(text);
  diag::List dl;
  config::Context ctx("test-hived.yaml", dl);
  const yaml::Node* root = config::single_document(s, ctx, "hivedscheduler.yaml");
  EXPECT_NE(root, nullptr);
  auto model = std::make_shared<config::HivedModel>();
  if (!root) return model;
  config::HivedConfig cfg = config::load_hived_config(root, ctx);
  *model = config::build_hived_model(cfg, ctx);
  for (const auto& d : dl.items())
    EXPECT_NE(d.severity, diag::Severity::Error)
        << d.code << " " << d.line << ":" << d.column << " " << d.message;
  return model;
}

// "g" + std::to_string(i), without GCC 12's -Wrestrict false positive on
// operator+(const char*, std::string&&) at -O2 and above.
inline std::string numbered(const char* prefix, int64_t i) {
  std::string s(prefix);
  s += std::to_string(i);
  return s;
}

inline std::unique_ptr<Policy> policy(const std::string& name, const config::HivedModel& m) {
  auto p = make_policy(name, m);
  EXPECT_TRUE(p.ok()) << p.error().message;
  return p.ok() ? std::move(*p) : nullptr;
}

inline GroupRequest req(const std::string& name, const std::string& vc, int32_t priority,
                        std::vector<AffinityGroupMember> members, const std::string& leaf_type = "",
                        const std::string& pinned = "", bool lazy = false) {
  GroupRequest r;
  r.affinity_group = name;
  r.virtual_cluster = vc;
  r.priority = priority;
  r.members = std::move(members);
  r.leaf_cell_type = leaf_type;
  r.pinned_cell_id = pinned;
  r.lazy_preemption_enable = lazy;
  return r;
}

// The nodes of a placement, by name.
inline std::set<std::string> nodes_of(const Policy& p, const ScheduleResult& r) {
  std::set<std::string> out;
  for (const auto& pod : r.pods) out.insert(p.cluster().nodes[static_cast<size_t>(pod.node)].name);
  return out;
}

inline int32_t leaf_cells(const ScheduleResult& r) {
  int32_t n = 0;
  for (const auto& pod : r.pods) n += static_cast<int32_t>(pod.physical_leaf_cell_indices.size());
  return n;
}

// A V100 chain of three racks (2 nodes x 2 sockets x 2 GPUs each), a K80 chain
// of two 4-GPU nodes (one pinned), and three VCs.
inline const char* kTwoSkuConfig = R"(
physicalCluster:
  skuTypes:
    V100: {gpu: 1, cpu: 8, memory: 60Gi}
    K80: {gpu: 1, cpu: 4, memory: 30Gi}
  cellTypes:
    V100-SOCKET: {childCellType: V100, childCellNumber: 2}
    V100-NODE: {childCellType: V100-SOCKET, childCellNumber: 2, isNodeLevel: true}
    V100-RACK: {childCellType: V100-NODE, childCellNumber: 2}
    K80-NODE: {childCellType: K80, childCellNumber: 4, isNodeLevel: true}
  physicalCells:
  - cellType: V100-RACK
    cellAddress: r1
    cellChildren: [{cellAddress: v1}, {cellAddress: v2}]
  - cellType: V100-RACK
    cellAddress: r2
    cellChildren: [{cellAddress: v3}, {cellAddress: v4}]
  - cellType: V100-RACK
    cellAddress: r3
    cellChildren: [{cellAddress: v5}, {cellAddress: v6}]
  - cellType: K80-NODE
    cellAddress: k1
  - cellType: K80-NODE
    cellAddress: k2
    pinnedCellId: pin-k2
virtualClusters:
  a:
    virtualCells:
    - {cellType: V100-RACK.V100-NODE, cellNumber: 2}
    - {cellType: K80-NODE, cellNumber: 1}
    pinnedCells:
    - {pinnedCellId: pin-k2}
  b:
    virtualCells:
    - {cellType: V100-RACK, cellNumber: 1}
  c:
    virtualCells:
    - {cellType: V100-RACK.V100-NODE.V100-SOCKET, cellNumber: 2}
)";

}  // namespace pai::scheduler::test

namespace pai::scheduler::test {

// One leaf type (A100) in three chains of different shapes, a second type (S)
// on a node that also holds A100s, pinned cells at leaf and at rack level.
//   chain A-NODE: n0, n1            chain A-TRIO: t0 t1 t2
//   chain A-QUAD: [q0 q1] (pinned pin-pair), [q2 q3]
//   chain S-NODE: node t0, leaf 4 pinned pin-s, leaf 5
inline const char* kMultiChainConfig = R"(
physicalCluster:
  cellTypes:
    A-2: {childCellType: A100, childCellNumber: 2}
    A-NODE: {childCellType: A-2, childCellNumber: 2, isNodeLevel: true}
    A-PAIR: {childCellType: A-NODE, childCellNumber: 2}
    A-TRIO: {childCellType: A-NODE, childCellNumber: 3}
    A-QUAD: {childCellType: A-PAIR, childCellNumber: 2}
    S-NODE: {childCellType: S, childCellNumber: 2, isNodeLevel: true}
  physicalCells:
  - {cellType: A-NODE, cellAddress: n0}
  - {cellType: A-NODE, cellAddress: n1}
  - cellType: A-TRIO
    cellChildren: [{cellAddress: t0}, {cellAddress: t1}, {cellAddress: t2}]
  - cellType: A-QUAD
    cellChildren:
    - pinnedCellId: pin-pair
      cellChildren: [{cellAddress: q0}, {cellAddress: q1}]
    - cellChildren: [{cellAddress: q2}, {cellAddress: q3}]
  - cellType: S-NODE
    cellAddress: t0
    cellChildren:
    - {cellAddress: 4, pinnedCellId: pin-s}
    - {cellAddress: 5}
virtualClusters:
  x:
    virtualCells:
    - {cellType: A-NODE, cellNumber: 1}
    - {cellType: A-TRIO.A-NODE, cellNumber: 2}
    - {cellType: A-QUAD.A-PAIR.A-NODE, cellNumber: 1}
    pinnedCells: [{pinnedCellId: pin-pair}, {pinnedCellId: pin-s}]
  y:
    virtualCells:
    - {cellType: A-NODE, cellNumber: 1}
    - {cellType: A-TRIO.A-NODE, cellNumber: 1}
    - {cellType: A-QUAD.A-PAIR.A-NODE, cellNumber: 1}
)";

}  // namespace pai::scheduler::test
