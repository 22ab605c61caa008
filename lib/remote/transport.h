#pragma once
// Running one command on one host. `Transport` is the seam between the checks
// and the network: `SshTransport` (ssh_transport.h) is the real one, tests may
// provide their own.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "remote/target.h"

namespace pai::remote {

// Why a command did not run to completion. The stage tells the operator where
// to look: the network, the host key, the credentials or the host itself.
enum class Failure {
  None,
  Unsupported,     // the target cannot be reached as configured (e.g. ProxyCommand)
  Resolve,         // the name does not resolve
  Connect,         // refused, unreachable, reset before the SSH banner
  ConnectTimeout,  // no SSH banner or key exchange within the connect timeout
  HostKeyUnknown,  // strict policy and the host is not in known_hosts
  HostKeyChanged,  // known_hosts holds another key for this host
  HostKeyError,    // known_hosts unreadable, or the key could not be added
  Auth,            // no method was accepted
  Channel,         // the session or the command could not be started
  CommandTimeout,  // the command ran longer than the command timeout
  OutputTooLarge,  // more output than the limit
  Protocol,        // the connection broke while the command ran
  Jump,            // a jump host failed (the message says which and why)
};
std::string_view to_string(Failure f);

struct ExecRequest {
  std::string command;  // run by the login shell
  std::string input;    // written to the command's stdin, then EOF; may hold a secret: never logged
  int timeout_ms = 60000;
  size_t max_output = 16u << 20;
};

struct ExecResult {
  Failure failure = Failure::None;
  std::string error;  // one sentence for the operator (never a secret)
  std::string hint;   // how to fix it, when we know
  int exit_status = -1;
  std::string out;
  std::string err;
  std::string host_key;             // "ssh-ed25519 SHA256:..." of the server
  std::string auth_method;          // the method that was accepted: "publickey (agent)", "publickey
                                    // (FILE)", "password"
  bool host_key_added = false;      // accept-new wrote it to known_hosts
  bool host_key_unchecked = false;  // policy off
  double connect_ms = 0;            // TCP + key exchange (+ jumps)
  double auth_ms = 0;
  double exec_ms = 0;
  double first_output_epoch =
      0;           // this machine's clock (s since 1970) when stdout's first byte came
  int logins = 0;  // SSH sessions this command opened (0: it ran on a kept one)
  bool ok() const { return failure == Failure::None; }
};

// One host reached once and kept for many commands (an installer's phases):
// one login per host per run instead of one per command. exec() may be called
// from several threads; commands on one connection run one at a time.
class Connection {
 public:
  virtual ~Connection() = default;
  virtual ExecResult exec(const ExecRequest& request) = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual ExecResult exec(const Target& target, const ExecRequest& request) = 0;
  // A kept connection to `target`. The default runs each command through exec(),
  // which suits test transports; SshTransport keeps one SSH session open.
  virtual std::unique_ptr<Connection> connect(const Target& target);
  // File descriptors one exec() holds at most, for the executor's budget.
  virtual size_t fds_per_exec(const Target& target) const { return 4 + 3 * target.jumps.size(); }
};

}  // namespace pai::remote
