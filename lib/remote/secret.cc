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

Secret read_secret_line(int fd, std::string* error) {
  util::ReadResult r = util::read_line(fd, util::kMaxSecretBytes);
  if (!r.ok) {
    if (error) *error = r.error;
    return Secret();
  }
  Secret s(std::move(r.content));
  wipe(r.content);
  return s;
}

}  // namespace pai::remote
