#pragma once
// OpenSSH's known_hosts files, read once and looked up many times.
//
// libssh reads and parses a whole known_hosts file two or three times in every
// connection (to order the host-key algorithms, then to check the key, in both
// the user's and the global file), and matches every hashed line with an HMAC
// each time: with a thousand hosts in the file that is a term that grows with
// the cluster in every connection. paictl checks host keys itself against one
// parsed copy of each file, kept while the file is unchanged (its inode, size and
// modification time), and hands libssh the host-key algorithms to offer.
//
// The format (sshd(8), "SSH_KNOWN_HOSTS FILE FORMAT"): one key a line,
//   [@marker] hostpatterns keytype base64-key [comment]
// hostpatterns: names separated by commas, "[host]:port" for a port other than 22,
// '*' and '?' wildcards, '!' negating (a line whose negated pattern matches does
// not apply), or one hashed name "|1|base64(salt)|base64(HMAC-SHA1(salt, name))".
// Markers: @revoked (that key is refused for every host), @cert-authority (a CA
// for host certificates, which paictl does not use: skipped, as libssh does).
// Blank lines, '#' comments and lines that do not parse are skipped, as OpenSSH
// skips them.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "util/result.h"

namespace pai::remote {

// One key line of a known_hosts file.
struct KnownHostKey {
  std::string type;  // "ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa", ...
  std::string blob;  // the key, base64-decoded
  int line = 0;      // 1-based, for messages
};

class KnownHosts {
 public:
  // Parses a file's text. Never fails: what does not parse is skipped.
  static KnownHosts parse(std::string_view text);

  // The keys of the lines that apply to `name` ("addr", or "[addr]:port" for a
  // port other than 22), in file order. Names compare case-insensitively. A name's
  // answer is kept: hashed lines cost an HMAC each, once a name, not once a call.
  std::vector<const KnownHostKey*> keys_for(std::string_view name) const;
  // Whether an @revoked line holds this key.
  bool revoked(std::string_view type, std::string_view blob) const;
  size_t size() const { return keys_.size(); }

 private:
  struct Line {
    std::vector<std::string> patterns;  // lower-cased; empty for a hashed line
    std::string salt, hash;             // a hashed line's, decoded
    size_t key = 0;                     // index into keys_
  };
  bool applies(const Line& l, std::string_view lower_name) const;

  std::vector<KnownHostKey> keys_;
  // Lines whose patterns are plain names (no wildcard, no negation), by each name.
  std::unordered_map<std::string, std::vector<size_t>> by_name_;
  // Lines that must be matched one by one: hashed names, wildcards, negations.
  std::vector<Line> scanned_;
  std::unordered_set<std::string> revoked_;  // type + ' ' + blob
  // keys_for's answers for the names looked up so far, by lower-cased name.
  struct Memo {
    std::mutex mu;
    std::unordered_map<std::string, std::vector<size_t>> names;
  };
  std::unique_ptr<Memo> memo_ = std::make_unique<Memo>();
};

// The result of checking a server's key against known_hosts files.
enum class KnownHostStatus {
  Ok,        // a line for the host holds this key
  Changed,   // lines for the host hold another key of the same type
  Other,     // lines for the host hold keys of other types only
  NotFound,  // no line applies to the host
  Revoked,   // an @revoked line holds this key
};
struct KnownHostCheck {
  KnownHostStatus status = KnownHostStatus::NotFound;
  int line = 0;  // the matching (Ok, Revoked) or conflicting (Changed) line
};
KnownHostCheck check_known_host(const std::vector<const KnownHosts*>& files, std::string_view name,
                                std::string_view type, std::string_view blob);

// The host-key algorithms to offer a host, as libssh orders them from its
// known_hosts: those of the key types known for the host first, then the rest of
// libssh's defaults, so a server with several keys answers with one that can be
// checked. `known_types` as known_hosts spells them ("ssh-rsa" offers rsa-sha2-512
// and rsa-sha2-256).
std::string host_key_algorithms(const std::vector<std::string>& known_types);

// The line accept-new appends: "name type base64\n", as ssh and libssh write it.
std::string known_hosts_line(std::string_view name, std::string_view type,
                             std::string_view base64_key);

// Parsed known_hosts files kept while unchanged on disk. Thread-safe. A file that
// does not exist is an empty one; anything else that cannot be read is an error.
class KnownHostsCache {
 public:
  util::Result<std::shared_ptr<const KnownHosts>> get(const std::string& path);

 private:
  struct Entry {
    uint64_t dev = 0, ino = 0, size = 0;
    int64_t mtime_ns = -1;
    bool present = false;
    std::shared_ptr<const KnownHosts> parsed;
  };
  std::mutex mu_;
  std::unordered_map<std::string, Entry> files_;
};

}  // namespace pai::remote
