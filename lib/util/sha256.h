#pragma once
// SHA-256 (OpenSSL's libcrypto) as lower-case hex: the checksums of backup
// archives' members and of the archives themselves.

#include <string>
#include <string_view>

namespace pai::util {

// The SHA-256 of `data`, 64 lower-case hex digits.
std::string sha256_hex(std::string_view data);

// An incremental SHA-256, for data that arrives in pieces.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view data);
  // The digest as hex; the object may not be updated after.
  std::string hex();

 private:
  void* ctx_;
};

}  // namespace pai::util
