// Fuzz the cluster registry reader: a hand-edited or corrupted clusters.yaml
// must give findings, never a crash; what it accepts must serialise and read
// back to the same clusters.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cluster/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pai::diag::List d;
  auto c = pai::cluster::parse_config(std::string(reinterpret_cast<const char*>(data), size),
                                      "fuzz.yaml", d);
  if (!c) {
    if (!d.has_errors()) std::abort();
    return 0;
  }
  pai::diag::List d2;
  auto back = pai::cluster::parse_config(pai::cluster::serialize_config(*c), "again.yaml", d2);
  if (!back || back->clusters.size() != c->clusters.size()) std::abort();
  for (size_t i = 0; i < c->clusters.size(); ++i)
    if (back->clusters[i].name != c->clusters[i].name ||
        back->clusters[i].token != c->clusters[i].token ||
        back->clusters[i].uri != c->clusters[i].uri)
      std::abort();
  return 0;
}
