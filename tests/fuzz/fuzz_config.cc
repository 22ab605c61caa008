// Fuzz the cluster loaders and validators. The input is split on NUL bytes into
// up to four files: layout.yaml, config.yaml, services-configuration.yaml and
// hivedscheduler.yaml, so cross-file checks run on arbitrary combinations.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "config/cluster_files.h"
#include "diag/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const char* names[] = {"layout.yaml", "config.yaml", "services-configuration.yaml",
                                "hivedscheduler.yaml"};
  std::vector<std::pair<std::string, std::string>> files;
  std::string cur;
  size_t idx = 0;
  for (size_t i = 0; i < size && idx < 4; ++i) {
    if (data[i] == 0) {
      files.emplace_back(names[idx++], cur);
      cur.clear();
    } else {
      cur += static_cast<char>(data[i]);
    }
  }
  if (idx < 4) files.emplace_back(names[idx], cur);
  pai::config::CheckOutcome out = pai::config::check_sources(files);
  for (const auto& d : out.diagnostics.items())
    if (d.code.empty() || d.message.empty()) std::abort();
  (void)pai::diag::dump_json(pai::diag::write_json(out.diagnostics.items(), out.files.size()));
  return 0;
}
