// Fuzz the host.yaml reader of facts directories (hostip, rack, roles): any
// bytes give a host or diagnostics with positions inside the input, never a
// crash or an exception.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "planner/hosts.h"
#include "util/strings.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  uint32_t lines = 1;
  for (char c : text) lines += c == '\n';
  pai::planner::Host h;
  h.hostname = "fuzz";
  pai::diag::List out;
  pai::planner::read_host_yaml("host.yaml", text, h, out);
  for (const auto& d : out.items())
    if (d.line > lines + 1 || d.message.empty() || d.code != "P003") std::abort();
  // What is kept is what the planner may write into layout.yaml.
  if (!h.hostip.empty() && !pai::util::is_ipv4(h.hostip)) std::abort();
  if (out.empty() && h.rack.find('\0') != std::string::npos) std::abort();
  return 0;
}
