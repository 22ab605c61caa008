// Fuzz the paictl.facts/v1 reader: any JSON (or not-JSON) text must be refused
// with a message or read leniently, never crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "check/host_facts.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json j = nlohmann::json::parse(reinterpret_cast<const char*>(data), reinterpret_cast<const char*>(data) + size,
                                           nullptr, false);
  if (j.is_discarded()) return 0;
  pai::check::HostFacts f;
  std::string err;
  bool ok = pai::check::from_json(j, f, err);
  if (!ok && err.empty()) std::abort();
  if (ok) (void)pai::check::to_json(f);
  return 0;
}
