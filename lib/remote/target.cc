#include "remote/target.h"

#include <algorithm>
#include <cstdlib>

#include "util/fs.h"
#include "util/strings.h"

namespace pai::remote {

std::optional<HostKeyPolicy> parse_host_key_policy(std::string_view s) {
  if (s == "strict") return HostKeyPolicy::Strict;
  if (s == "accept-new") return HostKeyPolicy::AcceptNew;
  if (s == "off") return HostKeyPolicy::Off;
  return std::nullopt;
}

std::string_view to_string(HostKeyPolicy p) {
  switch (p) {
    case HostKeyPolicy::Strict:
      return "strict";
    case HostKeyPolicy::AcceptNew:
      return "accept-new";
    case HostKeyPolicy::Off:
      return "off";
  }
  return "strict";
}

util::Result<HostSpec> parse_host_spec(std::string_view s) {
  HostSpec out;
  s = util::trim(s);
  if (s.empty()) return util::Error{"empty host", {}};
  if (s.rfind("ssh://", 0) == 0) s.remove_prefix(6);
  size_t at = s.rfind('@');
  if (at != std::string_view::npos) {
    out.user = std::string(s.substr(0, at));
    s.remove_prefix(at + 1);
    if (out.user.empty()) return util::Error{"empty user before '@'", {}};
  }
  std::string_view port;
  if (!s.empty() && s[0] == '[') {
    size_t close = s.find(']');
    if (close == std::string_view::npos)
      return util::Error{"missing ']' after an IPv6 address", {}};
    out.host = std::string(s.substr(1, close - 1));
    std::string_view rest = s.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return util::Error{"expected ':PORT' after ']'", {}};
      port = rest.substr(1);
      if (port.empty()) return util::Error{"empty port after ':'", {}};
    }
  } else {
    size_t colon = s.find(':');
    if (colon != std::string_view::npos && s.find(':', colon + 1) == std::string_view::npos) {
      out.host = std::string(s.substr(0, colon));
      port = s.substr(colon + 1);
      if (port.empty()) return util::Error{"empty port after ':'", {}};
    } else {
      out.host = std::string(s);  // a bare IPv6 address has several ':'
    }
  }
  if (out.host.empty()) return util::Error{"empty host name", {}};
  for (char c : out.host)
    if (c == ' ' || c == '\t' || c == '/' || c == '\'' || c == '"' || c == ',' ||
        static_cast<unsigned char>(c) < 0x20)
      return util::Error{"'" + out.host + "' is not a host name or address", {}};
  if (!port.empty()) {
    auto p = util::parse_int(port);
    if (!p || *p < 1 || *p > 65535)
      return util::Error{"port '" + std::string(port) + "' is not a number from 1 to 65535", {}};
    out.port = static_cast<int>(*p);
  }
  return out;
}

namespace {

std::vector<std::string> default_identities(const SshConfigEnv& env) {
  return {env.home + "/.ssh/id_ed25519", env.home + "/.ssh/id_ecdsa", env.home + "/.ssh/id_rsa"};
}

Endpoint make_endpoint(const std::string& name, const std::string& address,
                       const std::vector<std::string>& names, const HostSpec* spec,
                       const SshHostConfig& hc, const SshConfigEnv& env, const TargetDefaults& d,
                       std::vector<std::string> explicit_identities) {
  Endpoint e;
  e.name = name;
  // Precedence: the host as written (user@host:port) > command line and config.yaml > ssh config >
  // defaults.
  e.port = spec && spec->port ? *spec->port : hc.port.value_or(22);
  e.user = spec && !spec->user.empty() ? spec->user
           : !d.user.empty()           ? d.user
                                       : hc.user.value_or(env.local_user);
  std::string host_for_tokens = address;
  e.address =
      hc.hostname ? ssh_expand(*hc.hostname, env, host_for_tokens, e.port, e.user) : address;
  for (auto& f : explicit_identities)
    e.identity_files.push_back(ssh_expand(f, env, e.address, e.port, e.user));
  for (const auto& f : hc.identity_files)
    e.identity_files.push_back(ssh_expand(f, env, e.address, e.port, e.user));
  if (e.identity_files.empty()) e.identity_files = default_identities(env);
  // The same key named twice (config.yaml and ~/.ssh/config) is offered once.
  std::vector<std::string> unique;
  for (auto& f : e.identity_files)
    if (std::find(unique.begin(), unique.end(), f) == unique.end()) unique.push_back(std::move(f));
  e.identity_files = std::move(unique);
  (void)names;
  bool identities_only = hc.identities_only.value_or(false);
  if (d.use_agent && !identities_only) {
    std::string agent;
    if (hc.identity_agent) {
      if (*hc.identity_agent == "SSH_AUTH_SOCK") {
        if (const char* s = std::getenv("SSH_AUTH_SOCK")) agent = s;
      } else if (*hc.identity_agent != "none") {
        agent = ssh_expand(*hc.identity_agent, env);
      }
    } else if (const char* s = std::getenv("SSH_AUTH_SOCK")) {
      agent = s;
    }
    e.agent_socket = agent;
  }
  e.password_auth = hc.password_authentication.value_or(true);
  e.pubkey_auth = hc.pubkey_authentication.value_or(true);
  return e;
}

}  // namespace

Target resolve_target(const std::string& display_name, const std::string& address,
                      const std::vector<std::string>& names, const HostSpec* spec,
                      const SshConfig& ssh_config, const SshConfigEnv& env,
                      const TargetDefaults& d) {
  Target t;
  SshHostConfig hc = resolve_ssh_config(ssh_config, names, env);
  t.endpoint = make_endpoint(display_name, address, names, spec, hc, env, d, d.identity_files);
  t.host_key_policy = d.host_key_policy;
  t.known_hosts_file = !d.known_hosts_file.empty() ? d.known_hosts_file
                       : hc.user_known_hosts_file  ? *hc.user_known_hosts_file
                                                   : env.home + "/.ssh/known_hosts";
  t.global_known_hosts_file = hc.global_known_hosts_file.value_or("/etc/ssh/ssh_known_hosts");
  t.connect_timeout_ms = d.connect_timeout_ms   ? *d.connect_timeout_ms
                         : hc.connect_timeout_s ? *hc.connect_timeout_s * 1000
                                                : 10000;
  t.keepalive_interval_s =
      d.keepalive_interval_s ? *d.keepalive_interval_s : hc.server_alive_interval_s.value_or(15);
  t.keepalive_count_max = hc.server_alive_count_max.value_or(3);

  if (hc.proxy_jump && util::to_lower(*hc.proxy_jump) != "none") {
    for (auto hop_sv : util::split(*hc.proxy_jump, ',')) {
      auto parsed = parse_host_spec(hop_sv);
      if (!parsed) {
        t.unsupported =
            "ProxyJump '" + *hc.proxy_jump + "' in the SSH config: " + parsed.error().message;
        break;
      }
      HostSpec hop = std::move(*parsed);
      // A hop takes its own settings from the ssh config (its ProxyJump is not followed).
      SshHostConfig jc = resolve_ssh_config(ssh_config, {hop.host}, env);
      jc.proxy_jump.reset();
      TargetDefaults jd = d;
      jd.user.clear();  // config.yaml's user is the cluster's, not the bastion's
      std::string hop_name = std::string(util::trim(hop_sv));
      Endpoint je =
          make_endpoint(hop_name, hop.host, {hop.host}, &hop, jc, env, jd, d.identity_files);
      t.jumps.push_back(std::move(je));
    }
  } else if (hc.proxy_command && util::to_lower(*hc.proxy_command) != "none") {
    t.unsupported =
        "the SSH config sets ProxyCommand for this host, which paictl does not run; use ProxyJump";
  }
  return t;
}

SshConfig load_user_ssh_config(const std::string& path, const SshConfigEnv& env) {
  if (path == "none") return {};
  if (!path.empty()) return load_ssh_config(path, env, true);
  SshConfig c = load_ssh_config(env.home + "/.ssh/config", env, false);
  append_ssh_config(c, load_ssh_config("/etc/ssh/ssh_config", env, false));
  return c;
}

}  // namespace pai::remote
