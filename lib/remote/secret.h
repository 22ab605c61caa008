#pragma once
// A password or passphrase held in memory: never printed, logged or formatted,
// wiped when it goes away.

#include <string>
#include <string_view>

#include "util/result.h"

namespace pai::remote {

class Secret {
 public:
  Secret() = default;
  explicit Secret(std::string value) : value_(std::move(value)) {}
  Secret(const Secret& o) : value_(o.value_) {}
  Secret& operator=(const Secret& o);
  Secret(Secret&& o) noexcept;
  Secret& operator=(Secret&& o) noexcept;
  ~Secret();

  bool empty() const { return value_.empty(); }
  // The value itself, for the one place that must hand it to the SSH library or a
  // remote stdin. Never for messages.
  const std::string& reveal() const { return value_; }
  void clear();

 private:
  std::string value_;
};

// Where a secret came from, for messages that must say which one was used
// without showing it: "config.yaml", "stdin", "PAICTL_SSH_PASSWORD".
struct SecretSource {
  Secret secret;
  std::string origin;
};

// Reads one line from a file descriptor (stdin), without echo handling: the
// caller pipes it in. Strips the trailing newline (and a CR). A line longer
// than util::kMaxSecretBytes is not a secret: an error says why.
util::Result<Secret> read_secret_line(int fd);

}  // namespace pai::remote
