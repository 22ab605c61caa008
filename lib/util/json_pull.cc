#include "util/json_pull.h"

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

std::pair<uint32_t, uint32_t> JsonPull::line_column(size_t offset) const {
  uint32_t line = 1, col = 1;
  for (const char* q = begin_; q < begin_ + offset && q < end_; ++q) {
    if (*q == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

void JsonPull::fail(std::string message) {
  if (!error_.empty()) return;
  error_ = message.empty() ? std::string("invalid") : std::move(message);
  error_at_ = static_cast<size_t>(p_ - begin_);
}

bool JsonPull::fail_here(const char* message) {
  fail(message);
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
  if (peek() != Kind::Object) return fail_here("expected '{'");
  ++p_;
  return push();
}

bool JsonPull::begin_array() {
  if (peek() != Kind::Array) return fail_here("expected '['");
  ++p_;
  return push();
}

bool JsonPull::next_key(std::string_view& key, std::string& scratch) {
  if (!ok() || first_.empty()) return false;
  skip_ws();
  if (p_ == end_) return fail_here("unterminated object");
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
    return fail_here("expected ',' or '}' in an object");
  }
  if (p_ == end_ || *p_ != '"') return fail_here("expected a string as the object key");
  if (!string_body(key, scratch)) return false;
  skip_ws();
  if (p_ == end_ || *p_ != ':') return fail_here("expected ':' after an object key");
  ++p_;
  return true;
}

bool JsonPull::next_element() {
  if (!ok() || first_.empty()) return false;
  skip_ws();
  if (p_ == end_) return fail_here("unterminated array");
  if (*p_ == ']') {
    ++p_;
    first_.pop_back();
    return false;
  }
  if (first_.back()) {
    first_.back() = 0;
    return true;
  }
  if (*p_ != ',') return fail_here("expected ',' or ']' in an array");
  ++p_;
  skip_ws();
  if (p_ != end_ && *p_ == ']') return fail_here("a ',' before ']'");
  return true;
}

// At the opening quote.
bool JsonPull::string_body(std::string_view& out, std::string& scratch) {
  ++p_;
  const char* start = p_;
  // The common case: no escapes, ASCII.
  while (p_ < end_) {
    unsigned char c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      out = std::string_view(start, static_cast<size_t>(p_ - start));
      ++p_;
      return true;
    }
    if (c == '\\' || c < 0x20) break;
    if (c >= 0x80) {
      size_t n = utf8_length(reinterpret_cast<const unsigned char*>(p_),
                             reinterpret_cast<const unsigned char*>(end_));
      if (n == 0) return fail_here("invalid UTF-8 in a string");
      p_ += n;
      continue;
    }
    ++p_;
  }
  scratch.assign(start, static_cast<size_t>(p_ - start));
  while (p_ < end_) {
    unsigned char c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      ++p_;
      out = scratch;
      return true;
    }
    if (c < 0x20) return fail_here("a control character in a string (escape it)");
    if (c >= 0x80) {
      size_t n = utf8_length(reinterpret_cast<const unsigned char*>(p_),
                             reinterpret_cast<const unsigned char*>(end_));
      if (n == 0) return fail_here("invalid UTF-8 in a string");
      scratch.append(p_, n);
      p_ += n;
      continue;
    }
    if (c != '\\') {
      scratch += static_cast<char>(c);
      ++p_;
      continue;
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
  return fail_here("unterminated string");
}

bool JsonPull::read_string(std::string_view& out, std::string& scratch) {
  if (peek() != Kind::String) return fail_here("expected a string");
  return string_body(out, scratch);
}

bool JsonPull::read_string(std::string& out) {
  std::string_view v;
  if (!read_string(v, out)) return false;
  if (v.data() != out.data()) out.assign(v.data(), v.size());
  return true;
}

bool JsonPull::read_number(std::string_view& text, bool& integer) {
  if (peek() != Kind::Number) return fail_here("expected a number");
  const char* start = p_;
  integer = true;
  auto digits = [&]() {
    const char* d = p_;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    return p_ > d;
  };
  if (*p_ == '-') ++p_;
  if (p_ < end_ && *p_ == '0') {
    ++p_;
  } else if (!digits()) {
    return fail_here("a number needs digits");
  }
  if (p_ < end_ && *p_ == '.') {
    ++p_;
    integer = false;
    if (!digits()) return fail_here("a number needs digits after '.'");
  }
  if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
    ++p_;
    integer = false;
    if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
    if (!digits()) return fail_here("a number needs digits in its exponent");
  }
  text = std::string_view(start, static_cast<size_t>(p_ - start));
  return true;
}

bool JsonPull::literal(std::string_view word) {
  if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word)
    return fail_here("not a JSON value");
  p_ += word.size();
  return true;
}

bool JsonPull::read_bool(bool& out) {
  if (peek() != Kind::Bool) return fail_here("expected true or false");
  out = *p_ == 't';
  return literal(out ? "true" : "false");
}

bool JsonPull::read_null() {
  if (peek() != Kind::Null) return fail_here("expected null");
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
