#pragma once
// Machine profiles (layouts/<name>/): the facts of one machine of a known
// model (topo.txt, gpus.csv, lscpu.txt, meminfo) plus profile.yaml, which names
// it and says which cell hierarchy it must yield:
//
//   name: dgx-a100
//   description: NVIDIA DGX A100, 8x A100-SXM4-40GB on NVSwitch, 2x AMD EPYC 7742
//   sku: DGX-A100            # the SKU name (cell types are DGX-A100-NODE, ...)
//   expect:                  # checked by the tests
//     leaf: A100
//     cell-types: [DGX-A100-NUMA x2, DGX-A100-SOCKET x2, DGX-A100-NODE x2]
//     leaf-order: [0, 1, 2, 3, 4, 5, 6, 7]
//
// `paictl plan --profile NAME --count N [--racks R]` plans N such machines.

#include <optional>
#include <string>
#include <vector>

#include "diag/diagnostic.h"
#include "planner/hosts.h"

namespace pai::planner {

struct Profile {
  std::string name;
  std::string description;
  std::string sku;  // e.g. DGX-A100
  std::string dir;
  Host facts;  // one machine; hostname and hostip are filled per host
  // What the tests assert.
  std::string expect_leaf;
  std::vector<std::pair<std::string, int>> expect_cell_types;  // bottom-up: type, childCellNumber
  std::vector<int> expect_leaf_order;
};

// Loads layouts_dir/<name>. Unknown names get a did-you-mean over the profiles there.
std::optional<Profile> load_profile(const std::string& layouts_dir, const std::string& name,
                                    diag::List& out);

// The profile of an Azure VM size: "Standard_NC24ads_A100_v4" -> "azure-nc24ads-a100-v4"
// (the layouts/ naming of the planner's Azure profiles). "" for an empty size.
std::string azure_profile_name(std::string_view vm_size);

// Profile names in a layouts directory, sorted.
std::vector<std::string> list_profiles(const std::string& layouts_dir);

// Hosts for `count` machines of a profile, named <profile>-001 ... with
// placeholder addresses from 10.<n>.0.0/16 and spread over `racks` racks
// (rack1 ... rackR; 0 = no racks) as evenly as possible.
std::vector<Host> profile_hosts(const Profile& p, int count, int racks, int subnet);

}  // namespace pai::planner
