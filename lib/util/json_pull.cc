#include "util/json_pull.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "util/utf8.h"

namespace pai::util {

namespace {

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Length of the valid UTF-8 sequence at p (lead byte >= 0x80), 0 when invalid.
size_t utf8_length(const unsigned char* p, const unsigned char* end) {
  unsigned char c = p[0];
  size_t n;
  uint32_t cp;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (static_cast<size_t>(end - p) < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

}  // namespace

JsonPull::JsonPull(std::string_view text, size_t max_depth)
    : begin_(text.data()),
      p_(text.data()),
      end_(text.data() + text.size()),
      max_depth_(max_depth) {}

JsonPull::JsonPull(Source& src, size_t max_depth, size_t window)
    : src_(&src), eof_(false), max_depth_(max_depth) {
  window_.resize(std::max<size_t>(window, 64));
  begin_ = p_ = end_ = window_.data();
}

bool JsonPull::more(const char*& keep) {
  if (eof_ || !ok()) return false;
  const size_t keep_off = static_cast<size_t>(keep - begin_);
  const size_t p_off = static_cast<size_t>(p_ - begin_);
  const size_t len = static_cast<size_t>(end_ - keep);
  // The lines of the text that leaves the window.
  line_column(offset_of(keep));
  begin_line_ = counted_line_;
  begin_line_start_ = counted_line_start_;
  if (len > kJsonPullMaxToken) {
    // A string without its closing quote from an endless stream: bounded.
    fail("a token longer than " + std::to_string(kJsonPullMaxToken >> 20) + " MiB");
    return false;
  }
  if (len > 0 && keep != window_.data()) std::memmove(window_.data(), keep, len);
  if (len > window_.size() / 2) window_.resize(window_.size() * 2);  // a long token
  char* w = window_.data();
  base_ += keep_off;
  begin_ = w;
  end_ = w + len;
  p_ = w + (p_off - keep_off);
  keep = w;
  auto n = src_->read(w + len, window_.size() - len);
  if (!n.ok() || *n == 0) {
    eof_ = true;
    if (!n.ok()) fail(std::move(n).error().message);
    return false;
  }
  end_ += *n;
  return true;
}

std::pair<uint32_t, uint32_t> JsonPull::line_column(size_t offset) const {
  const size_t window_end = offset_of(end_);
  if (offset > window_end) offset = window_end;
  if (offset < base_) offset = base_;
  if (offset < counted_ || counted_ < base_) {
    counted_ = base_;
    counted_line_ = begin_line_;
    counted_line_start_ = begin_line_start_;
  }
  const char* q = begin_ + (counted_ - base_);
  const char* stop = begin_ + (offset - base_);
  while (q < stop) {
    const void* nl = std::memchr(q, '\n', static_cast<size_t>(stop - q));
    if (!nl) break;
    q = static_cast<const char*>(nl) + 1;
    ++counted_line_;
    counted_line_start_ = offset_of(q);
  }
  counted_ = offset;
  return {counted_line_, static_cast<uint32_t>(offset - counted_line_start_ + 1)};
}

size_t JsonPull::value_offset() {
  if (ok()) skip_ws();
  return ok() ? offset_of(p_) : error_at_;
}

void JsonPull::fail(std::string message) {
  if (!error_.empty()) return;
  error_ = message.empty() ? std::string("invalid") : std::move(message);
  error_at_ = offset_of(p_);
}

bool JsonPull::fail_here(const char* message) {
  fail(message);
  return false;
}

bool JsonPull::fail_at(size_t offset, const char* message) {
  if (!error_.empty()) return false;
  fail(message);
  error_at_ = offset;
  return false;
}

bool JsonPull::fail_found(const char* expected) {
  std::string m = std::string("expected ") + expected + ", found ";
  if (p_ == end_) {
    m += "the end of the text";
  } else {
    unsigned char c = static_cast<unsigned char>(*p_);
    char buf[16];
    if (c >= 0x20 && c < 0x7f)
      std::snprintf(buf, sizeof buf, "'%c'", c);
    else
      std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
    m += buf;
  }
  fail(std::move(m));
  return false;
}

const char* JsonPull::kind_name(Kind k) {
  switch (k) {
    case Kind::Object:
      return "an object";
    case Kind::Array:
      return "an array";
    case Kind::String:
      return "a string";
    case Kind::Number:
      return "a number";
    case Kind::Bool:
      return "a boolean";
    case Kind::Null:
      return "null";
    case Kind::End:
      return "the end of the text";
    case Kind::Bad:
      break;
  }
  return "not a JSON value";
}

JsonPull::Kind JsonPull::peek() {
  if (!ok()) return Kind::Bad;
  skip_ws();
  if (p_ == end_) return Kind::End;
  switch (*p_) {
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
    default:
      if (*p_ == '-' || (*p_ >= '0' && *p_ <= '9')) return Kind::Number;
      return Kind::Bad;
  }
}

bool JsonPull::push() {
  if (first_.size() >= max_depth_) return fail_here("nested deeper than the reader allows");
  first_.push_back(1);
  return true;
}

bool JsonPull::begin_object() {
  if (peek() != Kind::Object) return ok() && fail_found("'{'");
  ++p_;
  return push();
}

bool JsonPull::begin_array() {
  if (peek() != Kind::Array) return ok() && fail_found("'['");
  ++p_;
  return push();
}

bool JsonPull::next_key(std::string_view& key, std::string& scratch) {
  if (!ok() || first_.empty()) return false;
  skip_ws();
  if (p_ == end_) return fail_found("',' or '}' in an object");
  if (first_.back()) {
    if (*p_ == '}') {
      ++p_;
      first_.pop_back();
      return false;
    }
    first_.back() = 0;
  } else if (*p_ == '}') {
    ++p_;
    first_.pop_back();
    return false;
  } else if (*p_ == ',') {
    ++p_;
    skip_ws();
  } else {
    return fail_found("',' or '}' in an object");
  }
  if (p_ == end_ || *p_ != '"') return fail_found("a string as the object key");
  if (!string_body(key, scratch)) return false;
  // Whitespace up to ':' without losing a key that is a view into the window.
  const bool in_window = key.data() != scratch.data();
  const char* k = key.data();
  for (;;) {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
    if (p_ < end_ || !(in_window ? more(k) : more(p_))) break;
  }
  if (in_window) key = std::string_view(k, key.size());
  if (p_ == end_ || *p_ != ':') return fail_found("':' after an object key");
  ++p_;
  return true;
}

bool JsonPull::next_element() {
  if (!ok() || first_.empty()) return false;
  skip_ws();
  if (p_ == end_) return fail_found("',' or ']' in an array");
  if (*p_ == ']') {
    ++p_;
    first_.pop_back();
    return false;
  }
  if (first_.back()) {
    first_.back() = 0;
    return true;
  }
  if (*p_ != ',') return fail_found("',' or ']' in an array");
  ++p_;
  skip_ws();
  if (p_ != end_ && *p_ == ']') return fail_here("a ',' before ']'");
  return true;
}

// At the opening quote.
bool JsonPull::string_body(std::string_view& out, std::string& scratch) {
  // The window keeps the whole string from its opening quote while it is
  // read, so that an error can still say where the string opens.
  const char* quote = p_;
  const size_t open = offset_of(p_);
  ++p_;
  auto at_byte = [&]() { return p_ < end_ || more(quote); };
  // The common case: no escapes, ASCII.
  for (;;) {
    if (!at_byte()) return fail_at(open, "unterminated string");
    unsigned char c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      out = std::string_view(quote + 1, static_cast<size_t>(p_ - quote - 1));
      ++p_;
      return true;
    }
    if (c == '\\' || c < 0x20) break;
    if (c >= 0x80) {
      // A sequence cut by the window's end: read on first.
      while (end_ - p_ < 4 && more(quote)) {
      }
      size_t n = utf8_length(reinterpret_cast<const unsigned char*>(p_),
                             reinterpret_cast<const unsigned char*>(end_));
      if (n == 0) return fail_here("invalid UTF-8 in a string");
      p_ += n;
      continue;
    }
    ++p_;
  }
  scratch.assign(quote + 1, static_cast<size_t>(p_ - quote - 1));
  for (;;) {
    if (!at_byte()) return fail_at(open, "unterminated string");
    unsigned char c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      ++p_;
      out = scratch;
      return true;
    }
    if (c < 0x20) return fail_here("a control character in a string (escape it)");
    if (c >= 0x80) {
      while (end_ - p_ < 4 && more(quote)) {
      }
      size_t n = utf8_length(reinterpret_cast<const unsigned char*>(p_),
                             reinterpret_cast<const unsigned char*>(end_));
      if (n == 0) return fail_here("invalid UTF-8 in a string");
      scratch.append(p_, n);
      p_ += n;
      continue;
    }
    if (c != '\\') {
      // A run of plain bytes at once.
      const char* run = p_;
      while (p_ < end_ && *p_ != '"' && *p_ != '\\' && static_cast<unsigned char>(*p_) >= 0x20 &&
             static_cast<unsigned char>(*p_) < 0x80)
        ++p_;
      scratch.append(run, static_cast<size_t>(p_ - run));
      continue;
    }
    // An escape: up to 12 bytes (\uXXXX\uXXXX) read at once.
    while (end_ - p_ < 12 && more(quote)) {
    }
    if (++p_ == end_) break;
    char e = *p_++;
    switch (e) {
      case '"':
      case '\\':
      case '/':
        scratch += e;
        break;
      case 'b':
        scratch += '\b';
        break;
      case 'f':
        scratch += '\f';
        break;
      case 'n':
        scratch += '\n';
        break;
      case 'r':
        scratch += '\r';
        break;
      case 't':
        scratch += '\t';
        break;
      case 'u': {
        auto four = [&](uint32_t& v) {
          if (end_ - p_ < 4) return false;
          v = 0;
          for (int i = 0; i < 4; ++i) {
            int h = hex(p_[i]);
            if (h < 0) return false;
            v = (v << 4) | static_cast<uint32_t>(h);
          }
          p_ += 4;
          return true;
        };
        uint32_t cp;
        if (!four(cp)) return fail_here("\\u needs four hex digits");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t lo;
          if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u')
            return fail_here("a high surrogate without its low surrogate");
          p_ += 2;
          if (!four(lo) || lo < 0xDC00 || lo > 0xDFFF)
            return fail_here("a high surrogate without its low surrogate");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return fail_here("a low surrogate without its high surrogate");
        }
        append_utf8(scratch, cp);
        break;
      }
      default:
        --p_;
        return fail_here("an invalid escape in a string");
    }
  }
  return fail_at(open, "unterminated string");
}

bool JsonPull::read_string(std::string_view& out, std::string& scratch) {
  if (peek() != Kind::String) return ok() && fail_found("a string");
  return string_body(out, scratch);
}

bool JsonPull::read_string(std::string& out) {
  std::string_view v;
  if (!read_string(v, out)) return false;
  if (v.data() != out.data()) out.assign(v.data(), v.size());
  return true;
}

bool JsonPull::read_number(std::string_view& text, bool& integer) {
  if (peek() != Kind::Number) return ok() && fail_found("a number");
  const char* start = p_;
  integer = true;
  auto digits = [&]() {
    const size_t d = static_cast<size_t>(p_ - start);
    for (;;) {
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      if (p_ < end_ || !more(start)) break;
    }
    return static_cast<size_t>(p_ - start) > d;
  };
  if (*p_ == '-') ++p_;
  if ((p_ < end_ || more(start)) && *p_ == '0') {
    ++p_;
  } else if (!digits()) {
    return fail_here("a number needs digits");
  }
  // `start` stays valid through more(start) only: p_ < end_ or more(start).
  if ((p_ < end_ || more(start)) && *p_ == '.') {
    ++p_;
    integer = false;
    if (!digits()) return fail_here("a number needs digits after '.'");
  }
  if ((p_ < end_ || more(start)) && (*p_ == 'e' || *p_ == 'E')) {
    ++p_;
    integer = false;
    if ((p_ < end_ || more(start)) && (*p_ == '+' || *p_ == '-')) ++p_;
    if (!digits()) return fail_here("a number needs digits in its exponent");
  }
  text = std::string_view(start, static_cast<size_t>(p_ - start));
  return true;
}

bool JsonPull::read_scalar_text(std::string_view& out, std::string& scratch, bool& was_null) {
  was_null = false;
  bool integer;
  switch (peek()) {
    case Kind::String:
      return string_body(out, scratch);
    case Kind::Number:
      return read_number(out, integer);
    case Kind::Null:
      was_null = true;
      out = {};
      return literal("null");
    case Kind::Bad:
    case Kind::End:
      if (!ok()) return false;
      return fail_found("a string, a number or null");
    default:
      return fail_here("expected a string, a number or null");
  }
}

bool JsonPull::literal(std::string_view word) {
  while (static_cast<size_t>(end_ - p_) < word.size() && more(p_)) {
  }
  if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word)
    return fail_here("not a JSON value");
  p_ += word.size();
  return true;
}

bool JsonPull::read_bool(bool& out) {
  if (peek() != Kind::Bool) return ok() && fail_found("true or false");
  out = *p_ == 't';
  return literal(out ? "true" : "false");
}

bool JsonPull::read_null() {
  if (peek() != Kind::Null) return ok() && fail_found("null");
  return literal("null");
}

bool JsonPull::skip_value(size_t depth) {
  std::string scratch;
  std::string_view v;
  bool integer;
  switch (peek()) {
    case Kind::Object: {
      if (!begin_object()) return false;
      while (next_key(v, scratch))
        if (!skip_value(depth + 1)) return false;
      return ok();
    }
    case Kind::Array:
      if (!begin_array()) return false;
      while (next_element())
        if (!skip_value(depth + 1)) return false;
      return ok();
    case Kind::String:
      return read_string(v, scratch);
    case Kind::Number:
      return read_number(v, integer);
    case Kind::Bool: {
      bool b;
      return read_bool(b);
    }
    case Kind::Null:
      return read_null();
    case Kind::End:
      return fail_here("unexpected end of the text");
    case Kind::Bad:
      break;
  }
  return fail_here("not a JSON value");
}

bool JsonPull::skip() {
  return skip_value(0);
}

bool JsonPull::expect_end() {
  if (!ok()) return false;
  skip_ws();
  if (p_ != end_) return fail_here("text after the JSON value");
  return true;
}

}  // namespace pai::util
