// Differential fuzzing of the YAML reader against libfyaml: for any input both
// must agree, either both rejecting it or both reading the same content (see
// tests/conformance/yaml_oracle.h for what "the same" means). A difference aborts
// with both readings on stderr. lib/yaml refusing what libfyaml reads counts only
// with PAI_YAML_DIFF_REFUSALS=1: libfyaml accepts much invalid YAML beyond the
// test suite, so those findings need a look at the spec each. Where lib/yaml
// follows YAML 1.2 and libfyaml (and PyYAML) refuse the input (a line of only
// tabs, a root block scalar starting in column 1), compare() checks lib/yaml's
// reading against libfyaml's of the rewritten text instead (yaml_oracle.h;
// tests/data/yaml/known-differences holds examples), so the fuzzer runs on.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "yaml_oracle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 8192) return 0;  // small inputs find the same defects, much faster
  std::string_view text(reinterpret_cast<const char*>(data), size);
  static const bool refusals = [] {
    const char* e = std::getenv("PAI_YAML_DIFF_REFUSALS");
    return e && std::strcmp(e, "1") == 0;
  }();
  if (auto diff = pai::yaml::oracle::compare(text, refusals)) {
    std::fprintf(stderr, "lib/yaml and libfyaml differ: %s\n", diff->c_str());
    std::abort();
  }
  return 0;
}
