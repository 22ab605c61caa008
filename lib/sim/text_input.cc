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

ByteSource::ByteSource(const std::string& path, uint64_t offset, uint64_t length)
    : name_(path), remaining_(length) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  struct stat st {};
  if (fd_ < 0)
    error_ = std::strerror(errno);
  else if (::fstat(fd_, &st) != 0)
    error_ = std::strerror(errno);
  else if (!S_ISREG(st.st_mode))
    error_ = "is not a regular file";
  else if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0)
    error_ = std::strerror(errno);
  if (!error_.empty()) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    return;
  }
  buffer_.resize(static_cast<size_t>(std::min<uint64_t>(length, 1u << 20)) + 1);
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
    n = std::min(
        {n, buffer_.size(), static_cast<size_t>(std::min<uint64_t>(remaining_, SIZE_MAX))});
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
      remaining_ -= static_cast<uint64_t>(r);
    }
  }
  return std::string_view(cur_, static_cast<size_t>(end_ - cur_));
}

size_t ByteSource::read(char* buf, size_t cap) {
  if (cur_ == end_ && !refill()) return 0;
  size_t n = std::min(cap, static_cast<size_t>(end_ - cur_));
  std::memcpy(buf, cur_, n);
  cur_ += n;
  return n;
}

void ByteSource::take_plain(std::string& out, size_t limit) {
  for (;;) {
    if (out.size() > limit) return;  // a line without an end (/dev/zero) stops here
    if (cur_ == end_ && !refill()) return;
    const char* q = cur_;
    while (q < end_ && *q != ',' && *q != '"' && *q != '\n' && *q != '\r') ++q;
    out.append(cur_, static_cast<size_t>(q - cur_));
    pos_.column += static_cast<uint32_t>(q - cur_);
    cur_ = q;
    if (q < end_) return;
  }
}

bool ByteSource::refill() {
  if (fd_ < 0) return false;
  consumed_ += static_cast<uint64_t>(end_ - begin_);
  ssize_t n = 0;
  if (!eof_ && remaining_ > 0) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buffer_.size(), remaining_));
    do {
      n = ::read(fd_, buffer_.data(), want);
    } while (n < 0 && errno == EINTR);
    if (n < 0) error_ = std::strerror(errno);
    if (n > 0) remaining_ -= static_cast<uint64_t>(n);
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

namespace {
std::string describe_char(int c) {
  if (c < 0) return "the end of the file";
  if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
  return buf;
}
}  // namespace

// ---------------------------------------------------------------------------
// CsvReader
// ---------------------------------------------------------------------------

bool CsvReader::start_record() {
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
  return true;
}

// Most records are a buffered line without quotes or CR: split in one pass,
// as views into the source's buffer, which stay valid until the source is
// read again. Any other line (a quote, a CR, over 1 MiB or 10000 fields) is
// left to read_record(), which reads it byte by byte and reports the limits.
bool CsvReader::split_plain(std::vector<std::string_view>& fields) {
  std::string_view text;
  if (!src_.buffered_line(text) || text.size() > (1u << 20)) return false;
  const uint32_t col0 = src_.position().column;
  const char *const b = text.data(), *const e = b + text.size();
  const char* start = b;
  fields.clear();
  for (const char* q = b;; ++q) {
    if (q == e || *q == ',') {
      fields.emplace_back(start, static_cast<size_t>(q - start));
      columns_.push_back(col0 + static_cast<uint32_t>(start - b));
      if (q == e) break;
      if (fields.size() > 10000) {
        columns_.clear();
        return false;
      }
      start = q + 1;
    } else if (*q == '"' || *q == '\r') {
      columns_.clear();
      return false;
    }
  }
  src_.skip_line(text.size());
  return true;
}

bool CsvReader::next(std::vector<std::string>& fields) {
  if (!start_record()) {
    fields.clear();
    return false;
  }
  if (split_plain(views_)) {
    // Into the strings of the last record: their buffers are reused.
    fields.resize(views_.size());
    for (size_t i = 0; i < views_.size(); ++i) fields[i].assign(views_[i]);
    return true;
  }
  return read_record(fields);
}

bool CsvReader::next(std::vector<std::string_view>& fields) {
  if (!start_record()) {
    fields.clear();
    return false;
  }
  if (split_plain(fields)) return true;
  if (!read_record(owned_)) {
    fields.clear();
    return false;
  }
  fields.assign(owned_.begin(), owned_.end());
  return true;
}

bool CsvReader::read_record(std::vector<std::string>& fields) {
  fields.clear();
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
        if (field.size() > (1u << 20)) {
          error_ = "a field longer than 1 MiB";
          error_pos_ = src_.position();
          return false;
        }
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
    if (c == '"') {  // a quote inside an unquoted field is data
      src_.get();
      field += '"';
    } else {
      src_.take_plain(field, 1u << 20);
    }
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
