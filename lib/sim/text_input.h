#pragma once
// Streaming readers for trace files: a byte source that knows its line and
// column, a CSV record reader on top of it (JSON traces are read with
// util::JsonPull over the source), and the timestamp formats the public
// traces use. Traces can be gigabytes, so
// nothing here holds a whole file; every error carries a position.

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pai::sim {

struct Position {
  uint32_t line = 1;
  uint32_t column = 1;
};

// Bytes from a file (or an in-memory string), buffered, with line/column.
// The file is read once, front to back, so a FIFO or a process substitution
// (`--trace <(zcat trace.json.gz)`) works like a regular file.
class ByteSource {
 public:
  // How long a FIFO, pipe or device may take to deliver its first byte (or
  // its end) before the source gives up: a FIFO nobody writes to never hangs.
  static constexpr int kDefaultFirstByteTimeoutMs = 30'000;
  // Opens `path`; on failure `error()` is set and the source is empty.
  explicit ByteSource(const std::string& path,
                      int first_byte_timeout_ms = kDefaultFirstByteTimeoutMs);
  // Reads bytes [offset, offset + length) of the regular file `path` as if
  // they were a file of their own (line 1, column 1 at `offset`): one part of
  // a trace that is read on several threads. Messages name `path`.
  ByteSource(const std::string& path, uint64_t offset, uint64_t length);
  // Reads from memory (tests, fuzzing); `data` must outlive the source.
  ByteSource(std::string_view data, std::string name);
  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  const std::string& name() const { return name_; }
  const std::string& error() const { return error_; }
  Position position() const { return pos_; }
  uint64_t offset() const { return consumed_ + static_cast<uint64_t>(cur_ - begin_); }

  // Up to `n` bytes from the start of the input, without consuming them (to
  // tell a format from its content). Only before the first get(); else what
  // is buffered.
  std::string_view head(size_t n);

  // -1 at the end.
  int peek() {
    if (cur_ == end_ && !refill()) return -1;
    return static_cast<unsigned char>(*cur_);
  }
  // Up to `cap` bytes in bulk (0 at the end; a read error sets error()).
  // Lines and columns are not counted for them: a reader that takes bytes
  // this way counts its own.
  size_t read(char* buf, size_t cap);
  // Appends the bytes up to the next ',', '"', CR or LF (or the end) to
  // `out`, in bulk: the CSV reader's unquoted runs. Stops early once `out`
  // holds more than `limit` bytes, so that a line without an end is bounded.
  void take_plain(std::string& out, size_t limit = SIZE_MAX);
  // The rest of the current line, up to its LF, when all of it is buffered
  // (else false); skip_line() then consumes it and the LF.
  bool buffered_line(std::string_view& line) const {
    if (cur_ == end_) return false;
    const void* lf = std::memchr(cur_, '\n', static_cast<size_t>(end_ - cur_));
    if (!lf) return false;
    line = std::string_view(cur_, static_cast<size_t>(static_cast<const char*>(lf) - cur_));
    return true;
  }
  void skip_line(size_t length) {
    cur_ += length + 1;
    ++pos_.line;
    pos_.column = 1;
  }
  int get() {
    if (cur_ == end_ && !refill()) return -1;
    unsigned char c = static_cast<unsigned char>(*cur_++);
    if (c == '\n') {
      ++pos_.line;
      pos_.column = 1;
    } else {
      ++pos_.column;
    }
    return c;
  }

 private:
  bool refill();
  std::string name_;
  std::string error_;
  int fd_ = -1;
  bool eof_ = false;
  std::vector<char> buffer_;
  const char* begin_ = nullptr;
  const char* cur_ = nullptr;
  const char* end_ = nullptr;
  uint64_t consumed_ = 0;
  uint64_t remaining_ = UINT64_MAX;  // bytes left to read from fd_ (a range of a file)
  Position pos_;
};

// RFC 4180 CSV records (quoted fields, "" escapes, CRLF), one at a time.
class CsvReader {
 public:
  explicit CsvReader(ByteSource& src) : src_(src) {}
  // Reads the next record; false at end of input or on error (see error()).
  // Empty lines and lines starting with '#' are skipped.
  bool next(std::vector<std::string>& fields);
  // The same as views, valid until the next call (no copy for plain lines:
  // they point into the source's buffer).
  bool next(std::vector<std::string_view>& fields);
  uint32_t line() const { return line_; }  // line where the last record starts
  // 1-based column (bytes) where field i of the last record starts.
  uint32_t column(size_t i) const { return i < columns_.size() ? columns_[i] : 1; }
  const std::string& error() const { return error_; }
  Position error_position() const { return error_pos_; }

 private:
  bool start_record();  // skips blank and comment lines; false at the end or after an error
  bool split_plain(std::vector<std::string_view>& fields);
  bool read_record(std::vector<std::string>& fields);  // byte by byte, quotes and CRs
  ByteSource& src_;
  std::vector<std::string_view> views_;  // next()'s split of a plain line
  std::vector<std::string> owned_;       // next()'s fields of a quoted line, for the views
  uint32_t line_ = 0;
  std::vector<uint32_t> columns_;
  std::string error_;
  Position error_pos_;
};

// "2017-10-03 06:47:47" (also with 'T', optional fractional seconds and 'Z')
// as seconds since 1970-01-01 in UTC; nullopt when malformed.
std::optional<double> parse_timestamp(std::string_view s);
// A timestamp as above or plain seconds.
std::optional<double> parse_time_value(std::string_view s);
// Seconds since the epoch back to "YYYY-MM-DD HH:MM:SS" (UTC).
std::string format_timestamp(double seconds);
// "90", "1.5h", "30m", "2d", "45s" -> seconds; nullopt when malformed.
std::optional<double> parse_duration(std::string_view s);

}  // namespace pai::sim
