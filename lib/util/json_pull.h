#pragma once
// A JSON pull reader (RFC 8259) for large documents read straight into
// structs: no document tree is built, keys and strings without escapes are
// views into the text, and line and column are only computed when asked for.
// It reads text in memory, or a stream (a trace of gigabytes, a pipe) through
// a window that slides over it: then a view stays valid until the next call.
// The first error sticks: every later call returns false (or Kind::Bad) and
// the error stays the first one.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/result.h"

namespace pai::util {

// The longest token (a string, a number) a streaming JsonPull reads: a string
// whose closing quote never comes (an endless stream) stops here.
inline constexpr size_t kJsonPullMaxToken = size_t{64} << 20;

class JsonPull {
 public:
  enum class Kind : uint8_t { Object, Array, String, Number, Bool, Null, End, Bad };

  // Where a streaming reader gets its text.
  class Source {
   public:
    virtual ~Source() = default;
    // Up to `cap` bytes into `buf`, how many; 0 at the end. A read error
    // becomes the reader's error.
    virtual Result<size_t> read(char* buf, size_t cap) = 0;
  };

  explicit JsonPull(std::string_view text, size_t max_depth = 512);
  // Streams `src` (which must outlive the reader) through a window of at
  // least `window` bytes; the window grows only for a token longer than half
  // of it, and a token longer than kJsonPullMaxToken is an error.
  explicit JsonPull(Source& src, size_t max_depth = 512, size_t window = size_t{1} << 20);
  JsonPull(const JsonPull&) = delete;
  JsonPull& operator=(const JsonPull&) = delete;

  bool ok() const { return error_.empty(); }
  // "expected ':' after an object key", ...; "" while ok().
  const std::string& error() const { return error_; }
  size_t error_offset() const { return error_at_; }
  // 1-based line and column (bytes) of a byte offset. Streaming, only
  // offsets still in the window are known (the current value's, an error's);
  // earlier ones give the window's start. Cheap when offsets grow.
  std::pair<uint32_t, uint32_t> line_column(size_t offset) const;
  // Byte offset of the next value (whitespace skipped), and its line/column.
  size_t value_offset();
  std::pair<uint32_t, uint32_t> value_position() { return line_column(value_offset()); }
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
  // A string's text, or a number's text as written; `was_null` for null
  // (then `out` is empty). Anything else is an error.
  bool read_scalar_text(std::string_view& out, std::string& scratch, bool& was_null);
  bool read_bool(bool& out);
  bool read_null();
  // Consumes one value of any shape.
  bool skip();
  // After the top-level value: only whitespace may follow.
  bool expect_end();

 private:
  // True when a byte is at p_ (reading more text when streaming).
  bool have() { return p_ < end_ || more(p_); }
  void skip_ws() {
    for (;;) {
      while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
      if (p_ < end_ || !more(p_)) return;
    }
  }
  // Streaming: slides the window so that it starts at `keep` (<= p_), reads
  // more text after it, and moves `keep` and p_ along; false at the end.
  bool more(const char*& keep);
  bool fail_here(const char* message);
  bool fail_found(const char* expected);  // "expected X, found Y"
  bool fail_at(size_t offset, const char* message);
  size_t offset_of(const char* q) const { return base_ + static_cast<size_t>(q - begin_); }
  bool string_body(std::string_view& out, std::string& scratch);
  bool push();
  bool skip_value(size_t depth);
  bool literal(std::string_view word);

  const char* begin_;  // the window: text from offset base_ on
  const char* p_;
  const char* end_;
  size_t base_ = 0;
  Source* src_ = nullptr;
  std::vector<char> window_;
  bool eof_ = true;
  size_t max_depth_;
  std::vector<uint8_t> first_;  // per open container: no element read yet
  std::string error_;
  size_t error_at_ = 0;
  // Lines: at the window's start, and a cache of the last line_column().
  uint32_t begin_line_ = 1;
  size_t begin_line_start_ = 0;  // offset where the window's first line starts
  mutable size_t counted_ = 0;   // offset up to which the cache has counted
  mutable uint32_t counted_line_ = 1;
  mutable size_t counted_line_start_ = 0;
};

}  // namespace pai::util
