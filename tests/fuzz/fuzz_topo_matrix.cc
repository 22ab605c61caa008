// Fuzz the nvidia-smi topo -m parser: any bytes give a matrix whose shape
// matches its device list, and diagnostics whose lines are inside the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "facts/parsers.h"
#include "planner/hierarchy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = pai::facts::parse_topo_matrix(text, "fuzz");
  uint32_t lines = 1;
  for (char c : text) lines += c == '\n';
  for (const auto& d : r.diagnostics.items())
    if (d.line > lines || d.message.empty()) std::abort();
  const auto& m = r.value;
  if (!m.links.empty() && m.links.size() != m.devices.size()) std::abort();
  for (const auto& row : m.links)
    if (row.size() != m.devices.size()) std::abort();
  if (r.ok() && m.gpu_count() == 0) std::abort();
  for (size_t i = 0; i < m.links.size(); ++i)
    for (size_t j = 0; j < m.links.size(); ++j) (void)pai::facts::link_rank(m.link(i, j).kind);
  // The planner's next step on whatever parsed.
  if (m.gpu_count() > 0) {
    pai::planner::Host h;
    h.hostname = "fuzz";
    h.topo = m;
    pai::planner::Hierarchy hi = pai::planner::derive_hierarchy(h);
    int leaves = hi.node_children;
    for (const auto& l : hi.levels) leaves *= l.children;
    if (leaves != hi.gpus || static_cast<int>(hi.leaf_order.size()) != hi.gpus) std::abort();
  }
  return 0;
}
