// Fuzz the ~/.ssh/config reader and target resolution that check hosts and facts
// collect use: any file must give settings or diagnostics with a line inside the
// input, never a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "remote/ssh_config.h"
#include "remote/target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  pai::remote::SshConfigEnv env{"/home/fuzz", "fuzz"};
  // Include is not followed: the fuzzer must not read the machine's files.
  pai::remote::SshConfig c =
      pai::remote::parse_ssh_config(text, "config", "/nonexistent-fuzz-dir", env, false);
  uint32_t lines = 1;
  for (char ch : text) lines += ch == '\n';
  for (const auto& d : c.diagnostics.items())
    if (d.line > lines) std::abort();
  for (const char* host : {"gpu-1", "10.0.0.1", "bastion"}) {
    pai::remote::Target t = pai::remote::resolve_target(host, host, {host}, nullptr, c, env, {});
    if (t.endpoint.port < 1 || t.endpoint.port > 65535) std::abort();
  }
  return 0;
}
