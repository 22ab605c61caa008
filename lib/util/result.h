#pragma once
// Result<T>: the value of a fallible call, or why it failed. The convention
// (docs/coding-guidelines.md): a call that either works or fails for one reason
// returns Result<T>; a call that reads what a user wrote returns what it could
// read together with a diag::List, every problem with its file, line and column.
// Library calls do not throw across libpai's interface.

#include <string>
#include <utility>
#include <variant>

namespace pai::util {

// Why a call failed, in words a user can act on. Never holds a secret.
struct Error {
  std::string message;
  std::string hint;  // what to do about it; may be empty
};

template <class T, class E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit on purpose
  Result(E error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit on purpose

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // Only when ok().
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // Only when !ok().
  const E& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, E> v_;
};

}  // namespace pai::util
