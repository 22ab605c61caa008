#include "remote/secret.h"

#include <unistd.h>

#include <cstring>

#include "util/stdin.h"

namespace pai::remote {

namespace {
void wipe(std::string& s) {
  if (!s.empty()) {
    // volatile keeps the compiler from removing stores to memory about to be freed.
    volatile char* p = s.data();
    for (size_t i = 0; i < s.size(); ++i) p[i] = 0;
  }
  s.clear();
  s.shrink_to_fit();
}
}  // namespace

Secret& Secret::operator=(const Secret& o) {
  if (this != &o) {
    wipe(value_);
    value_ = o.value_;
  }
  return *this;
}

Secret::Secret(Secret&& o) noexcept : value_(std::move(o.value_)) {
  o.value_.clear();
}

Secret& Secret::operator=(Secret&& o) noexcept {
  if (this != &o) {
    wipe(value_);
    value_ = std::move(o.value_);
    o.value_.clear();
  }
  return *this;
}

Secret::~Secret() {
  wipe(value_);
}

void Secret::clear() {
  wipe(value_);
}

util::Result<Secret> read_secret_line(int fd) {
  auto r = util::read_line(fd, util::kMaxSecretBytes);
  if (!r.ok()) return std::move(r).error();
  Secret s(std::move(*r));
  wipe(*r);
  return s;
}

}  // namespace pai::remote
