#include "sim/text_input.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "util/strings.h"
#include "util/utf8.h"

namespace pai::sim {

// ---------------------------------------------------------------------------
// ByteSource
// ---------------------------------------------------------------------------

ByteSource::ByteSource(const std::string& path, int first_byte_timeout_ms) : name_(path) {
  // O_NONBLOCK so that opening a FIFO without a writer returns at once.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd_ < 0) {
    error_ = std::strerror(errno);
    return;
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    error_ = std::strerror(errno);
  } else if (S_ISDIR(st.st_mode)) {
    error_ = "is a directory";
  } else if (!S_ISREG(st.st_mode)) {
    // A FIFO, a pipe or a device: wait a bounded time for the first byte or the end.
    struct pollfd pfd {};
    pfd.fd = fd_;
    pfd.events = POLLIN;
    int r;
    do {
      r = ::poll(&pfd, 1, first_byte_timeout_ms);
    } while (r < 0 && errno == EINTR);
    if (r < 0) {
      error_ = std::strerror(errno);
    } else if (r == 0) {
      char buf[128];
      std::snprintf(buf, sizeof buf,
                    "nothing arrived within %d s (a FIFO that no process writes to?)",
                    (first_byte_timeout_ms + 999) / 1000);
      error_ = buf;
    }
  }
  if (!error_.empty()) {
    ::close(fd_);
    fd_ = -1;
    return;
  }
  int flags = ::fcntl(fd_, F_GETFL);
  if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
  buffer_.resize(1u << 20);
}

ByteSource::ByteSource(std::string_view data, std::string name) : name_(std::move(name)) {
  begin_ = cur_ = data.data();
  end_ = data.data() + data.size();
}

ByteSource::~ByteSource() {
  if (fd_ >= 0) ::close(fd_);
}

std::string_view ByteSource::head(size_t n) {
  if (fd_ >= 0 && consumed_ == 0 && cur_ == begin_) {
    if (!begin_) begin_ = cur_ = end_ = buffer_.data();
    n = std::min(n, buffer_.size());
    while (!eof_ && static_cast<size_t>(end_ - begin_) < n) {
      size_t have = static_cast<size_t>(end_ - begin_);
      ssize_t r = ::read(fd_, buffer_.data() + have, n - have);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        error_ = std::strerror(errno);
        eof_ = true;
        break;
      }
      if (r == 0) {
        eof_ = true;
        break;
      }
      end_ += r;
    }
  }
  return std::string_view(cur_, static_cast<size_t>(end_ - cur_));
}

bool ByteSource::refill() {
  if (fd_ < 0) return false;
  consumed_ += static_cast<uint64_t>(end_ - begin_);
  ssize_t n = 0;
  if (!eof_) {
    do {
      n = ::read(fd_, buffer_.data(), buffer_.size());
    } while (n < 0 && errno == EINTR);
    if (n < 0) error_ = std::strerror(errno);
  }
  if (n <= 0) {
    ::close(fd_);
    fd_ = -1;
    begin_ = cur_ = end_ = nullptr;
    return false;
  }
  begin_ = cur_ = buffer_.data();
  end_ = buffer_.data() + n;
  return true;
}

// ---------------------------------------------------------------------------
// JsonReader
// ---------------------------------------------------------------------------

namespace {
constexpr int kMaxDepth = 256;

std::string describe_char(int c) {
  if (c < 0) return "the end of the file";
  if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
  return buf;
}
}  // namespace

void JsonReader::fail(std::string message, Position at) {
  if (!error_.empty()) return;
  error_ = std::move(message);
  error_pos_ = at;
}

void JsonReader::skip_ws() {
  for (;;) {
    int c = src_.peek();
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
      src_.get();
    else
      return;
  }
}

Position JsonReader::value_position() {
  skip_ws();
  return src_.position();
}

JsonReader::Kind JsonReader::peek_kind() {
  skip_ws();
  int c = src_.peek();
  switch (c) {
    case '{':
      return Kind::Object;
    case '[':
      return Kind::Array;
    case '"':
      return Kind::String;
    case 't':
    case 'f':
      return Kind::Bool;
    case 'n':
      return Kind::Null;
    case -1:
      return Kind::End;
    default:
      return Kind::Number;  // digits and '-'; anything else fails when read
  }
}

bool JsonReader::expect(char c, const char* what) {
  skip_ws();
  Position at = src_.position();
  int got = src_.peek();
  if (got != c) {
    fail(std::string("expected ") + what + ", found " + describe_char(got), at);
    return false;
  }
  src_.get();
  return true;
}

bool JsonReader::begin_object() {
  if (!ok()) return false;
  if (first_.size() >= kMaxDepth) {
    fail("JSON nested deeper than 256 levels", src_.position());
    return false;
  }
  if (!expect('{', "an object '{'")) return false;
  first_.push_back(1);
  return true;
}

std::optional<std::string> JsonReader::next_key() {
  if (!ok() || first_.empty()) return std::nullopt;
  skip_ws();
  Position at = src_.position();
  int c = src_.peek();
  if (c == '}') {
    src_.get();
    first_.pop_back();
    return std::nullopt;
  }
  if (!first_.back()) {
    if (c != ',') {
      fail("expected ',' or '}' after an object member, found " + describe_char(c), at);
      return std::nullopt;
    }
    src_.get();
    skip_ws();
    at = src_.position();
    c = src_.peek();
  }
  first_.back() = 0;
  if (c != '"') {
    fail("expected a key in double quotes, found " + describe_char(c), at);
    return std::nullopt;
  }
  std::string key;
  if (!parse_string(key)) return std::nullopt;
  if (!expect(':', "':' after the key")) return std::nullopt;
  return key;
}

bool JsonReader::begin_array() {
  if (!ok()) return false;
  if (first_.size() >= kMaxDepth) {
    fail("JSON nested deeper than 256 levels", src_.position());
    return false;
  }
  if (!expect('[', "an array '['")) return false;
  first_.push_back(1);
  return true;
}

bool JsonReader::next_element() {
  if (!ok() || first_.empty()) return false;
  skip_ws();
  Position at = src_.position();
  int c = src_.peek();
  if (c == ']') {
    src_.get();
    first_.pop_back();
    return false;
  }
  if (!first_.back()) {
    if (c != ',') {
      fail("expected ',' or ']' after an array element, found " + describe_char(c), at);
      return false;
    }
    src_.get();
  }
  first_.back() = 0;
  return true;
}

bool JsonReader::parse_string(std::string& out) {
  Position start = src_.position();
  src_.get();  // opening quote
  for (;;) {
    Position here = src_.position();
    int c = src_.get();
    if (c < 0) {
      fail("unterminated string", start);
      return false;
    }
    if (c == '"') return true;
    if (c < 0x20) {
      fail("control character in a string (escape it)", src_.position());
      return false;
    }
    if (c != '\\') {
      out += static_cast<char>(c);
      continue;
    }
    Position esc = here;
    int e = src_.get();
    switch (e) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        auto hex4 = [&](uint32_t& v) {
          v = 0;
          for (int i = 0; i < 4; ++i) {
            int h = src_.get();
            int d = (h >= '0' && h <= '9')   ? h - '0'
                    : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                    : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                             : -1;
            if (d < 0) return false;
            v = v * 16 + static_cast<uint32_t>(d);
          }
          return true;
        };
        uint32_t cp;
        if (!hex4(cp)) {
          fail("bad \\u escape (expected four hex digits)", esc);
          return false;
        }
        if (cp >= 0xD800 && cp < 0xDC00) {
          uint32_t lo;
          if (src_.get() != '\\' || src_.get() != 'u' || !hex4(lo) || lo < 0xDC00 || lo >= 0xE000) {
            fail("unpaired surrogate in a \\u escape", esc);
            return false;
          }
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
          fail("unpaired surrogate in a \\u escape", esc);
          return false;
        }
        util::append_utf8(out, cp);
        break;
      }
      default:
        fail("bad escape " + describe_char(e) + " in a string", esc);
        return false;
    }
  }
}

std::optional<std::string> JsonReader::read_string() {
  if (!ok()) return std::nullopt;
  skip_ws();
  if (src_.peek() != '"') {
    fail("expected a string, found " + describe_char(src_.peek()), src_.position());
    return std::nullopt;
  }
  std::string s;
  if (!parse_string(s)) return std::nullopt;
  return s;
}

std::optional<double> JsonReader::read_number() {
  if (!ok()) return std::nullopt;
  skip_ws();
  Position at = src_.position();
  std::string text;
  for (int c = src_.peek();
       c >= 0 && (std::isdigit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E');
       c = src_.peek()) {
    text += static_cast<char>(src_.get());
    if (text.size() > 64) break;
  }
  auto v = util::parse_double(text);
  // JSON numbers: no leading '+', no leading zeros, digits around '.'.
  bool shape_ok =
      !text.empty() && text[0] != '+' && text[0] != '.' &&
      !(text.size() > 1 && text[0] == '0' && std::isdigit(static_cast<unsigned char>(text[1]))) &&
      !(text.size() > 2 && text[0] == '-' && text[1] == '0' &&
        std::isdigit(static_cast<unsigned char>(text[2])));
  if (!v || !shape_ok || !std::isfinite(*v)) {
    fail(text.empty() ? "expected a value, found " + describe_char(src_.peek())
                      : "malformed number \"" + text + "\"",
         at);
    return std::nullopt;
  }
  return v;
}

std::optional<bool> JsonReader::read_bool() {
  if (!ok()) return std::nullopt;
  skip_ws();
  Position at = src_.position();
  const char* word = src_.peek() == 't' ? "true" : "false";
  for (const char* p = word; *p; ++p)
    if (src_.get() != *p) {
      fail("expected true or false", at);
      return std::nullopt;
    }
  return word[0] == 't';
}

bool JsonReader::read_null() {
  if (!ok()) return false;
  skip_ws();
  Position at = src_.position();
  for (const char* p = "null"; *p; ++p)
    if (src_.get() != *p) {
      fail("expected null", at);
      return false;
    }
  return true;
}

std::optional<std::string> JsonReader::read_scalar_text(bool& was_null) {
  was_null = false;
  switch (peek_kind()) {
    case Kind::String:
      return read_string();
    case Kind::Null:
      was_null = read_null();
      return std::nullopt;
    case Kind::Number: {
      auto v = read_number();
      if (!v) return std::nullopt;
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", *v);
      return std::string(buf);
    }
    default:
      fail("expected a string, a number or null", value_position());
      skip();
      return std::nullopt;
  }
}

bool JsonReader::skip_value(int depth) {
  if (depth > kMaxDepth) {
    fail("JSON nested deeper than 256 levels", src_.position());
    return false;
  }
  switch (peek_kind()) {
    case Kind::Object:
      if (!begin_object()) return false;
      while (next_key())
        if (!skip_value(depth + 1)) return false;
      return ok();
    case Kind::Array:
      if (!begin_array()) return false;
      while (next_element())
        if (!skip_value(depth + 1)) return false;
      return ok();
    case Kind::String:
      return read_string().has_value();
    case Kind::Bool:
      return read_bool().has_value();
    case Kind::Null:
      return read_null();
    case Kind::Number:
      return read_number().has_value();
    case Kind::End:
      fail("unexpected end of the file", src_.position());
      return false;
  }
  return false;
}

void JsonReader::skip() {
  skip_value(static_cast<int>(first_.size()));
}

bool JsonReader::expect_end() {
  skip_ws();
  if (src_.peek() >= 0) {
    fail("unexpected " + describe_char(src_.peek()) + " after the end of the JSON value",
         src_.position());
    return false;
  }
  return ok();
}

// ---------------------------------------------------------------------------
// CsvReader
// ---------------------------------------------------------------------------

bool CsvReader::next(std::vector<std::string>& fields) {
  fields.clear();
  columns_.clear();
  if (!error_.empty()) return false;
  for (;;) {
    // Skip blank and comment lines.
    int c = src_.peek();
    if (c < 0) return false;
    if (c == '\n' || c == '\r') {
      src_.get();
      continue;
    }
    if (c == '#' && src_.position().column == 1) {
      while ((c = src_.get()) >= 0 && c != '\n') {
      }
      continue;
    }
    break;
  }
  line_ = src_.position().line;
  std::string field;
  bool quoted = false, in_quotes = false, field_started = false;
  columns_.push_back(src_.position().column);
  for (;;) {
    int c = src_.peek();
    if (in_quotes) {
      if (c < 0) {
        error_ = "unterminated quoted field";
        error_pos_ = {line_, columns_.back()};
        return false;
      }
      src_.get();
      if (c == '"') {
        if (src_.peek() == '"') {
          src_.get();
          field += '"';
        } else {
          in_quotes = false;
        }
      } else {
        field += static_cast<char>(c);
      }
      continue;
    }
    if (c < 0 || c == '\n' || c == '\r') {
      if (c == '\r') {
        src_.get();
        if (src_.peek() == '\n') src_.get();
      } else if (c == '\n') {
        src_.get();
      }
      fields.push_back(std::move(field));
      return true;
    }
    if (c == ',') {
      src_.get();
      fields.push_back(std::move(field));
      field.clear();
      quoted = false;
      field_started = false;
      columns_.push_back(src_.position().column);
      if (fields.size() > 10000) {
        error_ = "more than 10000 fields in one record";
        error_pos_ = src_.position();
        return false;
      }
      continue;
    }
    if (c == '"' && !field_started) {
      src_.get();
      quoted = in_quotes = true;
      field_started = true;
      continue;
    }
    if (quoted) {
      error_ = "unexpected " + describe_char(c) + " after a closing quote";
      error_pos_ = src_.position();
      return false;
    }
    src_.get();
    field += static_cast<char>(c);
    field_started = true;
    if (field.size() > (1u << 20)) {
      error_ = "a field longer than 1 MiB";
      error_pos_ = src_.position();
      return false;
    }
  }
}

// ---------------------------------------------------------------------------
// Time
// ---------------------------------------------------------------------------

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void civil_from_days(int64_t z, int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp + (mp < 10 ? 3 : -9);
  y += m <= 2;
}

bool digits(std::string_view s, size_t pos, size_t n, int& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

}  // namespace

std::optional<double> parse_timestamp(std::string_view s) {
  s = util::trim(s);
  int y, mo, d, h, mi, se;
  if (s.size() < 19 || !digits(s, 0, 4, y) || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' ||
      !digits(s, 8, 2, d) || (s[10] != ' ' && s[10] != 'T') || !digits(s, 11, 2, h) ||
      s[13] != ':' || !digits(s, 14, 2, mi) || s[16] != ':' || !digits(s, 17, 2, se))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return std::nullopt;
  double frac = 0;
  size_t i = 19;
  if (i < s.size() && s[i] == '.') {
    double scale = 0.1;
    ++i;
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      frac += (s[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
    if (i == start) return std::nullopt;
  }
  if (i < s.size() && s[i] == 'Z') ++i;
  if (i != s.size()) return std::nullopt;
  int64_t days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return static_cast<double>(days * 86400 + h * 3600 + mi * 60 + se) + frac;
}

std::optional<double> parse_time_value(std::string_view s) {
  s = util::trim(s);
  if (auto t = parse_timestamp(s)) return t;
  auto v = util::parse_double(s);
  if (v && std::isfinite(*v)) return v;
  return std::nullopt;
}

std::string format_timestamp(double seconds) {
  int64_t t = static_cast<int64_t>(std::floor(seconds));
  int64_t days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
  int64_t rem = t - days * 86400;
  int64_t y;
  unsigned m, d;
  civil_from_days(days, y, m, d);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u %02lld:%02lld:%02lld", static_cast<long long>(y),
                m, d, static_cast<long long>(rem / 3600), static_cast<long long>((rem / 60) % 60),
                static_cast<long long>(rem % 60));
  return buf;
}

std::optional<double> parse_duration(std::string_view s) {
  s = util::trim(s);
  if (s.empty()) return std::nullopt;
  double unit = 1;
  char last = s.back();
  if (last == 's' || last == 'm' || last == 'h' || last == 'd' || last == 'w') {
    unit = last == 's' ? 1 : last == 'm' ? 60 : last == 'h' ? 3600 : last == 'd' ? 86400 : 604800;
    s.remove_suffix(1);
  }
  auto v = util::parse_double(s);
  if (!v || !std::isfinite(*v) || *v < 0) return std::nullopt;
  return *v * unit;
}

}  // namespace pai::sim
