// The cost of checking one host's key against a known_hosts file of N hosts, plain
// or hashed (ssh-keygen -H), as paictl does it (one parse, kept, then a lookup a
// host) against one libssh read of the file (it does two or three a connection:
// to order the host-key algorithms, then to check the key, in the user's and the
// global file). docs/benchmarks.md, "install engine cost".
#include <benchmark/benchmark.h>
#include <libssh/libssh.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "remote/known_hosts.h"
#include "util/fs.h"
#include "util/strings.h"

namespace {

const char* kKey = "AAAAC3NzaC1lZDI1NTE5AAAAIEHpbd3RwLgFukkXrf5OZ1XaPj+XwTeMpvDA3x299OAS";

// Hosts on port 22, which known_hosts names by their address alone.
std::string host_name(int i) {
  return "10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 2);
}

std::string b64(const std::string& raw) {
  std::string out(4 * ((raw.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(raw.data()),
                          static_cast<int>(raw.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

// A known_hosts text of n hosts, each with its own key line; hashed as ssh-keygen -H does.
std::string known_hosts_text(int n, bool hashed) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    std::string name = host_name(i);
    if (hashed) {
      std::string salt(20, '\0');
      for (int j = 0; j < 20; ++j) salt[j] = static_cast<char>((i * 31 + j * 7) & 0xff);
      unsigned char mac[EVP_MAX_MD_SIZE];
      unsigned int len = 0;
      HMAC(EVP_sha1(), salt.data(), 20, reinterpret_cast<const unsigned char*>(name.data()),
           name.size(), mac, &len);
      name = "|1|" + b64(salt) + "|" + b64(std::string(reinterpret_cast<char*>(mac), len));
    }
    text += name + " ssh-ed25519 " + kKey + "\n";
  }
  return text;
}

std::string write_temp(const std::string& text) {
  char path[] = "/tmp/pai-bench-kh-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) std::abort();
  if (write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) std::abort();
  close(fd);
  return path;
}

// paictl: every host of the file looked up once on a parsed copy (what an install of
// those hosts costs, the parse included), per host.
void BM_KnownHostsParsedPerHost(benchmark::State& state) {
  int n = static_cast<int>(state.range(0));
  bool hashed = state.range(1) != 0;
  std::string text = known_hosts_text(n, hashed);
  std::string blob = *pai::util::base64_decode(kKey);
  for (auto _ : state) {
    auto kh = pai::remote::KnownHosts::parse(text);
    for (int i = 0; i < n; ++i) {
      auto c = pai::remote::check_known_host({&kh}, host_name(i), "ssh-ed25519", blob);
      if (c.status != pai::remote::KnownHostStatus::Ok) std::abort();
      benchmark::DoNotOptimize(c);
    }
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetLabel(hashed ? "hashed" : "plain");
}
BENCHMARK(BM_KnownHostsParsedPerHost)
    ->Args({100, 0})
    ->Args({1000, 0})
    ->Args({100, 1})
    ->Args({1000, 1})
    ->Unit(benchmark::kMicrosecond);

// libssh: one read of the file for one host (ssh_session_has_known_hosts_entry, the
// read that orders the host-key algorithms; checking the key reads it again).
void BM_KnownHostsLibsshReadPerHost(benchmark::State& state) {
  int n = static_cast<int>(state.range(0));
  bool hashed = state.range(1) != 0;
  std::string path = write_temp(known_hosts_text(n, hashed));
  ssh_init();
  int i = 0;
  for (auto _ : state) {
    ssh_session s = ssh_new();
    std::string addr = host_name(i);
    unsigned int port = 22;
    ssh_options_set(s, SSH_OPTIONS_HOST, addr.c_str());
    ssh_options_set(s, SSH_OPTIONS_PORT, &port);
    ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, path.c_str());
    ssh_options_set(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
    if (ssh_session_has_known_hosts_entry(s) != SSH_KNOWN_HOSTS_OK) std::abort();
    ssh_free(s);
    i = (i + 1) % n;
  }
  unlink(path.c_str());
  state.SetLabel(hashed ? "hashed" : "plain");
}
BENCHMARK(BM_KnownHostsLibsshReadPerHost)
    ->Args({100, 0})
    ->Args({1000, 0})
    ->Args({100, 1})
    ->Args({1000, 1})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
BENCHMARK_MAIN();
