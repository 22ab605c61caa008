#pragma once
// Where and how to reach one host: address, port, user, keys, jump hosts and the
// host-key policy, resolved from the command line, the cluster's config.yaml and
// ~/.ssh/config.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "remote/secret.h"
#include "remote/ssh_config.h"
#include "util/result.h"

namespace pai::remote {

enum class HostKeyPolicy {
  Strict,     // the key must already be in known_hosts (default)
  AcceptNew,  // unknown hosts are added to known_hosts; a changed key is still refused
  Off,        // no verification at all (loudly warned about)
};
std::optional<HostKeyPolicy> parse_host_key_policy(std::string_view s);
std::string_view to_string(HostKeyPolicy p);

// One SSH server to log in to: the host itself or a jump host.
struct Endpoint {
  std::string name;     // as the user knows it, for messages
  std::string address;  // what to connect to
  int port = 22;
  std::string user;
  std::vector<std::string> identity_files;  // tried in order
  std::string agent_socket;                 // "" = do not use an agent
  bool password_auth = true;
  bool pubkey_auth = true;
};

struct Target {
  Endpoint endpoint;
  std::vector<Endpoint> jumps;  // ProxyJump chain, the first hop first
  std::string known_hosts_file;
  std::string global_known_hosts_file;
  HostKeyPolicy host_key_policy = HostKeyPolicy::Strict;
  int connect_timeout_ms = 10000;
  int keepalive_interval_s = 15;  // 0 = none
  int keepalive_count_max = 3;
  // Non-empty when the target cannot be reached as configured (e.g. a
  // ProxyCommand): the reason, reported as a failed connection.
  std::string unsupported;
};

// What the command line and the cluster files say, for every host.
struct TargetDefaults {
  std::string user;                         // config.yaml `user` or --user
  std::vector<std::string> identity_files;  // --identity, config.yaml `ssh_key_file_path`
  std::string known_hosts_file;  // --known-hosts ("" = ssh config, else ~/.ssh/known_hosts)
  HostKeyPolicy host_key_policy = HostKeyPolicy::Strict;
  std::optional<int>
      connect_timeout_ms;  // --connect-timeout (else ssh config ConnectTimeout, else 10 s)
  std::optional<int> keepalive_interval_s;  // else ssh config ServerAliveInterval, else 15 s
  bool use_agent = true;            // SSH_AUTH_SOCK, unless --no-agent or IdentityAgent none
  bool password_available = false;  // a password was given (config.yaml, stdin or environment)
};

// A host as the user wrote it: "[user@]host[:port]" (or "[v6addr]:port").
struct HostSpec {
  std::string user;
  std::string host;
  std::optional<int> port;
};
// Parses a --hosts entry; the error's message says what is wrong with it.
util::Result<HostSpec> parse_host_spec(std::string_view s);

// Resolves one host. `names` are the names the ssh config may know it by (its
// layout hostname and its IP); `address` is where to connect unless the ssh
// config gives a Hostname.
Target resolve_target(const std::string& display_name, const std::string& address,
                      const std::vector<std::string>& names, const HostSpec* spec,
                      const SshConfig& ssh_config, const SshConfigEnv& env,
                      const TargetDefaults& defaults);

// Loads ~/.ssh/config then /etc/ssh/ssh_config (OpenSSH's order), or only
// `path` when given ("none" = no file at all).
SshConfig load_user_ssh_config(const std::string& path, const SshConfigEnv& env);

}  // namespace pai::remote
