#pragma once
// A JSON pull reader (RFC 8259) over text in memory, for large answers read
// straight into structs: no document tree is built, keys and strings without
// escapes are views into the text, and the line and column of an error are
// only computed when asked for. The first error sticks: every later call
// returns false (or Kind::Bad) and the error stays the first one.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pai::util {

class JsonPull {
 public:
  enum class Kind : uint8_t { Object, Array, String, Number, Bool, Null, End, Bad };

  explicit JsonPull(std::string_view text, size_t max_depth = 512);

  bool ok() const { return error_.empty(); }
  // "expected ':' after an object key", ...; "" while ok().
  const std::string& error() const { return error_; }
  size_t error_offset() const { return error_at_; }
  // 1-based line and column (bytes) of a byte offset.
  std::pair<uint32_t, uint32_t> line_column(size_t offset) const;
  // Records an error at the current position (the first one wins).
  void fail(std::string message);

  // The kind of the next value, without consuming it. End at the end of the
  // text, Bad after an error or before a byte no value starts with.
  Kind peek();
  static const char* kind_name(Kind k);  // "an object", "a string", "null", ...

  bool begin_object();  // consumes '{'
  // The next key of the current object, or false after consuming '}' (or on
  // an error: see ok()). The key is a view into the text, or into `scratch`
  // when it has escapes; it stays valid until `scratch` is used again.
  bool next_key(std::string_view& key, std::string& scratch);
  bool begin_array();  // consumes '['
  // True when the current array has another element; false after ']'.
  bool next_element();

  bool read_string(std::string& out);
  // A view into the text, or into `scratch` when the string has escapes.
  bool read_string(std::string_view& out, std::string& scratch);
  // A number's text as written; `integer` when it has no fraction or exponent.
  bool read_number(std::string_view& text, bool& integer);
  bool read_bool(bool& out);
  bool read_null();
  // Consumes one value of any shape.
  bool skip();
  // After the top-level value: only whitespace may follow.
  bool expect_end();

 private:
  void skip_ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool fail_here(const char* message);
  bool string_body(std::string_view& out, std::string& scratch);
  bool push();
  bool skip_value(size_t depth);
  bool literal(std::string_view word);

  const char* begin_;
  const char* p_;
  const char* end_;
  size_t max_depth_;
  std::vector<uint8_t> first_;  // per open container: no element read yet
  std::string error_;
  size_t error_at_ = 0;
};

}  // namespace pai::util
