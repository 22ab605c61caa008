// Fuzz the known_hosts reader that every SSH connection's host-key check uses: any
// file must parse (what does not parse is skipped), and every lookup must answer
// with a line inside the input, never a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "remote/known_hosts.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto kh = pai::remote::KnownHosts::parse(text);
  int lines = 1;
  for (char ch : text) lines += ch == '\n';
  if (kh.size() > static_cast<size_t>(lines)) std::abort();
  for (const char* name : {"10.0.0.1", "[10.0.0.1]:2222", "gpu-1.example.org", "", "[::1]:22"}) {
    std::vector<std::string> types;
    for (const auto* k : kh.keys_for(name)) {
      if (k->line < 1 || k->line > lines || k->type.empty() || k->blob.empty()) std::abort();
      types.push_back(k->type);
    }
    auto c = pai::remote::check_known_host({&kh}, name, "ssh-ed25519", std::string(32, 'k'));
    if (c.line < 0 || c.line > lines) std::abort();
    if (pai::remote::host_key_algorithms(types).empty()) std::abort();
  }
  return 0;
}
