// Fuzz the paictl.facts/v1 reader the planner uses: any bytes give a host or
// diagnostics, never a crash, an exception or an unbounded allocation.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "planner/hierarchy.h"
#include "planner/hosts.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  pai::diag::List out;
  auto h = pai::planner::load_host_json("fuzz.json", text, out);
  if (h) {
    if (h->hostname.empty()) std::abort();
    // What the planner does next with the facts must hold too.
    pai::planner::Hierarchy hi = pai::planner::derive_hierarchy(*h);
    int leaves = hi.node_children;
    for (const auto& l : hi.levels) leaves *= l.children;
    if (hi.gpus > 0 && leaves != hi.gpus) std::abort();
    if (static_cast<int>(hi.leaf_order.size()) != hi.gpus) std::abort();
  }
  return 0;
}
