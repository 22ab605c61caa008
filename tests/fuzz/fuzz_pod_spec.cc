// Fuzz HiveD's pod-scheduling-spec parser: any bytes give a spec that passes
// HiveD's validation, or HiveD's error message; never a crash or a hang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "scheduler/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = pai::scheduler::parse_pod_scheduling_spec(text, "fuzz/pod");
  if (parsed.ok()) {
    const pai::scheduler::PodSchedulingSpec& s = *parsed;
    if (!pai::scheduler::validate_request(s.group).empty()) std::abort();
    if (s.leaf_cell_number <= 0) std::abort();
  } else if (parsed.error().message.rfind("Pod annotation ", 0) != 0) {
    std::abort();
  }
  return 0;
}
