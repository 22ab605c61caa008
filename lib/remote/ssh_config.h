#pragma once
// The part of OpenSSH's client configuration (ssh_config(5)) that paictl honours:
// Host and Match blocks, Include, and the keywords below. Parsed by us so that
// every option is applied on purpose and libssh never reads the files behind
// our back.
//
// Honoured: Hostname, User, Port, IdentityFile, IdentitiesOnly, IdentityAgent,
// ProxyJump, UserKnownHostsFile, GlobalKnownHostsFile, ConnectTimeout,
// ServerAliveInterval, ServerAliveCountMax, PasswordAuthentication,
// PubkeyAuthentication. ProxyCommand is recognised and reported as unsupported
// (use ProxyJump). StrictHostKeyChecking is deliberately ignored: only
// --host-key-policy relaxes host-key checking. Other keywords are ignored.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diag/diagnostic.h"

namespace pai::remote {

struct SshConfigLine {
  std::string keyword;  // lower case
  std::vector<std::string> args;
  std::string file;
  uint32_t line = 0;
};

// One Host or Match block (the lines before the first block are a block that
// matches every host).
struct SshConfigBlock {
  enum class Kind { Global, Host, MatchAll, MatchHost, MatchUnsupported } kind = Kind::Global;
  std::vector<std::string> patterns;  // Host patterns, or Match host patterns
  std::vector<SshConfigLine> lines;
};

// Which blocks a host name can select (index_ssh_config).
struct SshHostIndex;

struct SshConfig {
  std::vector<SshConfigBlock> blocks;
  // The Host blocks of plain names looked up by name, so that resolving N hosts
  // against a config with a block per host costs N lookups, not N x N pattern
  // matches. Set by parse_ssh_config, load_ssh_config and append_ssh_config;
  // null, or made for another number of blocks: every block is matched.
  std::shared_ptr<const SshHostIndex> index;
  diag::List diagnostics;  // syntax problems, unknown keywords, unsupported Match, bad Include
  std::vector<std::string> ignore_unknown;  // IgnoreUnknown's patterns, once seen
};

// Values resolved for one host; unset optionals mean "not in the config".
struct SshHostConfig {
  std::optional<std::string> hostname;
  std::optional<std::string> user;
  std::optional<int> port;
  std::vector<std::string> identity_files;  // ~ and %-tokens expanded, in file order
  std::optional<bool> identities_only;
  std::optional<std::string> identity_agent;  // a socket path, or "none"
  std::optional<std::string> proxy_jump;      // "none" disables
  std::optional<std::string> proxy_command;   // recognised only to refuse it
  std::optional<std::string> user_known_hosts_file;
  std::optional<std::string> global_known_hosts_file;
  std::optional<int> connect_timeout_s;
  std::optional<int> server_alive_interval_s;
  std::optional<int> server_alive_count_max;
  std::optional<bool> password_authentication;
  std::optional<bool> pubkey_authentication;
};

// Environment the %-tokens and ~ expand against.
struct SshConfigEnv {
  std::string home;        // %d and ~
  std::string local_user;  // %u
};
SshConfigEnv default_ssh_config_env();  // $HOME (else the passwd entry) and the login name

// Parses `text` as the content of `file`. Include directives are read relative
// to `include_base` (~/.ssh for a user file, /etc/ssh for the system file).
SshConfig parse_ssh_config(const std::string& text, const std::string& file,
                           const std::string& include_base, const SshConfigEnv& env,
                           bool follow_includes = true);

// Reads and parses a file; a missing file is an empty config (no diagnostic)
// unless `must_exist`.
SshConfig load_ssh_config(const std::string& path, const SshConfigEnv& env, bool must_exist);

// Appends `more` after `base`: values in `base` win (first value obtained wins).
void append_ssh_config(SshConfig& base, SshConfig more);

// Makes config.index for its blocks as they are now.
void index_ssh_config(SshConfig& config);

// The settings for a host known by one or more names (a layout hostname and its
// IP): a Host block applies when one of its patterns matches one of the names
// and none of its negated patterns does.
SshHostConfig resolve_ssh_config(const SshConfig& config, const std::vector<std::string>& names,
                                 const SshConfigEnv& env);

// OpenSSH pattern matching: '*' and '?' wildcards, case-insensitive.
bool ssh_pattern_match(std::string_view pattern, std::string_view text);

// Expands ~ at the start and %d %u %h %p %r %% tokens.
std::string ssh_expand(std::string_view value, const SshConfigEnv& env, std::string_view host = {},
                       int port = 22, std::string_view remote_user = {});

}  // namespace pai::remote
