#pragma once
// The real Transport: libssh. One connection per exec() (or one kept for many
// commands, connect()): key exchange, host-key
// verification by policy, authentication (agent, identity files, password),
// one command with its stdin, stdout and stderr, exit status. ProxyJump hops are
// chained through direct-tcpip channels, each verified and authenticated like
// the host itself.

#include <memory>
#include <string>

#include "remote/secret.h"
#include "remote/transport.h"

namespace pai::remote {

struct KnownHostsFiles;

class SshTransport : public Transport {
 public:
  SshTransport();
  ~SshTransport() override;

  // The password for SSH password (and keyboard-interactive) authentication.
  void set_password(Secret password) { password_ = std::move(password); }

  ExecResult exec(const Target& target, const ExecRequest& request) override;
  // One SSH session kept open; a session lost while idle is re-established once.
  std::unique_ptr<Connection> connect(const Target& target) override;

 private:
  Secret password_;
  // The known_hosts files, parsed once for every connection and appended to under
  // accept-new (remote/known_hosts.h).
  std::unique_ptr<KnownHostsFiles> known_hosts_;
};

// "SHA256:..." of a public key in OpenSSH's authorized_keys/known_hosts form
// ("ssh-ed25519 AAAA..."), or "" if it cannot be read.
std::string public_key_fingerprint(const std::string& openssh_public_key);

}  // namespace pai::remote
