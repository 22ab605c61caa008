#pragma once
// Result<T, E>: the value of a fallible call, or why it failed; Result<void> for
// a call that returns nothing when it works. The one error shape of libpai
// (docs/coding-guidelines.md): a call that either works or fails for one reason
// returns Result<T>; domain errors stay rich through E (api::Error,
// hived::Error, cluster::AddError); a call that reads what a user wrote returns
// what it could read together with a diag::List, every problem with its file,
// line and column. Library calls do not throw across libpai's interface.

#include <string>
#include <utility>
#include <variant>

namespace pai::util {

// Why a call failed, in words a user can act on. Never holds a secret.
struct Error {
  // What failed, so that a front end can choose its exit code: what the caller
  // gave (a file, a flag's value) or a remote system (SSH, HTTP, Azure).
  enum class Kind { Other, Input, Remote };
  std::string message;
  std::string hint;  // what to do about it; may be empty
  Kind kind = Kind::Other;
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
  // The value, or `fallback` when !ok().
  T value_or(T fallback) const& { return ok() ? value() : std::move(fallback); }

  // Only when !ok().
  const E& error() const& { return std::get<1>(v_); }
  E& error() & { return std::get<1>(v_); }
  E&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, E> v_;
};

// A call that works or fails, with nothing to return: `return {};` (or
// util::ok()) when it works, `return util::Error{...};` when not.
template <class E>
class [[nodiscard]] Result<void, E> {
 public:
  Result() = default;
  Result(E error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit on purpose

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }

  // Only when !ok().
  const E& error() const& { return error_; }
  E& error() & { return error_; }
  E&& error() && { return std::move(error_); }

 private:
  E error_{};
  bool ok_ = true;
};

// The success of a Result<void>.
inline Result<void> ok() {
  return {};
}

}  // namespace pai::util
