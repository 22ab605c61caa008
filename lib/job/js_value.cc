#include "job/js_value.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <vector>

namespace pai::job {

namespace {

bool is_dec(char c) {
  return c >= '0' && c <= '9';
}
bool is_oct(char c) {
  return c >= '0' && c <= '7';
}
bool is_hex(char c) {
  return is_dec(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// js-yaml 3 type/int.js: decimal with '_', 0b, 0x, leading-0 octal, sexagesimal.
bool resolve_int(std::string_view d) {
  if (d.empty()) return false;
  size_t i = 0;
  bool digits = false;
  char ch = d[0];
  if (ch == '-' || ch == '+') {
    if (++i >= d.size()) return false;
    ch = d[i];
  }
  if (ch == '0') {
    if (i + 1 == d.size()) return true;
    ch = d[++i];
    if (ch == 'b' || ch == 'x') {
      bool bin = ch == 'b';
      ++i;
      for (; i < d.size(); ++i) {
        ch = d[i];
        if (ch == '_') continue;
        if (bin ? (ch != '0' && ch != '1') : !is_hex(ch)) return false;
        digits = true;
      }
      return digits && ch != '_';
    }
    for (; i < d.size(); ++i) {
      ch = d[i];
      if (ch == '_') continue;
      if (!is_oct(ch)) return false;
      digits = true;
    }
    return digits && ch != '_';
  }
  if (ch == '_') return false;
  for (; i < d.size(); ++i) {
    ch = d[i];
    if (ch == '_') continue;
    if (ch == ':') break;
    if (!is_dec(ch)) return false;
    digits = true;
  }
  if (!digits || ch == '_') return false;
  if (ch != ':') return true;
  static const std::regex sexagesimal("^(:[0-5]?[0-9])+$");
  return std::regex_match(std::string(d.substr(i)), sexagesimal);
}

double construct_int(std::string_view d) {
  std::string v;
  for (char c : d)
    if (c != '_') v += c;
  double sign = 1;
  if (!v.empty() && (v[0] == '-' || v[0] == '+')) {
    if (v[0] == '-') sign = -1;
    v.erase(0, 1);
  }
  if (v == "0") return 0;
  auto parse_base = [](std::string_view digits, int base) {
    double r = 0;
    for (char c : digits) {
      int x = is_dec(c) ? c - '0' : (c >= 'a' ? c - 'a' + 10 : c - 'A' + 10);
      if (x >= base) break;  // parseInt stops at the first invalid digit
      r = r * base + x;
    }
    return r;
  };
  if (!v.empty() && v[0] == '0') {
    if (v.size() > 1 && v[1] == 'b') return sign * parse_base(std::string_view(v).substr(2), 2);
    if (v.size() > 1 && v[1] == 'x') return sign * parse_base(std::string_view(v).substr(2), 16);
    return sign * parse_base(v, 8);
  }
  if (v.find(':') != std::string::npos) {
    double value = 0;
    size_t pos = 0;
    std::vector<double> parts;
    while (true) {
      size_t c = v.find(':', pos);
      parts.push_back(parse_base(
          std::string_view(v).substr(pos, c == std::string::npos ? std::string::npos : c - pos),
          10));
      if (c == std::string::npos) break;
      pos = c + 1;
    }
    for (double p : parts) value = value * 60 + p;
    return sign * value;
  }
  return sign * parse_base(v, 10);
}

const std::regex& float_pattern() {
  static const std::regex re(
      "^(?:[-+]?(?:0|[1-9][0-9_]*)(?:\\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?"
      "|\\.[0-9_]+(?:[eE][-+]?[0-9]+)?"
      "|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\\.[0-9_]*"
      "|[-+]?\\.(?:inf|Inf|INF)"
      "|\\.(?:nan|NaN|NAN))$");
  return re;
}

bool resolve_float(std::string_view d) {
  if (d.empty() || d.back() == '_') return false;
  char f = d[0];
  if (!(is_dec(f) || f == '-' || f == '+' || f == '.')) return false;
  return std::regex_match(d.begin(), d.end(), float_pattern());
}

double construct_float(std::string_view d) {
  std::string v;
  for (char c : d)
    if (c != '_') v += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  double sign = v[0] == '-' ? -1 : 1;
  if (v[0] == '+' || v[0] == '-') v.erase(0, 1);
  if (v == ".inf") return sign * HUGE_VAL;
  if (v == ".nan") return NAN;
  if (v.find(':') != std::string::npos) {
    double value = 0;
    size_t pos = 0;
    while (true) {
      size_t c = v.find(':', pos);
      std::string part = v.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
      value = value * 60 + std::strtod(part.c_str(), nullptr);
      if (c == std::string::npos) break;
      pos = c + 1;
    }
    return sign * value;
  }
  return sign * std::strtod(v.c_str(), nullptr);
}

// js-yaml 3 type/timestamp.js
const std::regex& date_pattern() {
  static const std::regex re("^([0-9][0-9][0-9][0-9])-([0-9][0-9])-([0-9][0-9])$");
  return re;
}
const std::regex& timestamp_pattern() {
  static const std::regex re(
      "^([0-9][0-9][0-9][0-9])-([0-9][0-9]?)-([0-9][0-9]?)(?:[Tt]|[ "
      "\\t]+)([0-9][0-9]?):([0-9][0-9]):([0-9][0-9])"
      "(?:\\.([0-9]*))?(?:[ \\t]*(Z|([-+])([0-9][0-9]?)(?::([0-9][0-9]))?))?$");
  return re;
}

int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// Milliseconds since the epoch, as Date.UTC would compute them (months and
// days out of range roll over, which days_from_civil does for days).
std::optional<double> timestamp_ms(std::string_view text) {
  if (text.size() < 8 || !is_dec(text[0]) || !is_dec(text[3]) || text[4] != '-')
    return std::nullopt;
  std::string s(text);
  std::smatch m;
  if (!std::regex_match(s, m, date_pattern()) && !std::regex_match(s, m, timestamp_pattern()))
    return std::nullopt;
  int64_t year = std::stoll(m[1]), month = std::stoll(m[2]), day = std::stoll(m[3]);
  int64_t y = year + (month - 1) / 12;
  int64_t mo = (month - 1) % 12 + 1;
  double ms = static_cast<double>(days_from_civil(y, mo, 1) + day - 1) * 86400000.0;
  if (m.size() > 4 && m[4].matched) {
    ms += (std::stod(m[4]) * 3600 + std::stod(m[5]) * 60 + std::stod(m[6])) * 1000;
    if (m[7].matched && m[7].length() > 0) {
      std::string frac = m[7].str().substr(0, 3);
      while (frac.size() < 3) frac += '0';
      ms += std::stod(frac);
    }
    if (m[9].matched) {
      double delta = (std::stod(m[10]) * 60 + (m[11].matched ? std::stod(m[11]) : 0)) * 60000;
      if (m[9] == "-") delta = -delta;
      ms -= delta;
    }
  }
  return ms;
}

std::string date_to_string(double ms) {
  if (std::isnan(ms)) return "Invalid Date";
  int64_t days = static_cast<int64_t>(std::floor(ms / 86400000.0));
  int64_t rem = static_cast<int64_t>(ms - static_cast<double>(days) * 86400000.0) / 1000;
  // civil_from_days
  int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t mo = mp + (mp < 10 ? 3 : -9);
  y += mo <= 2;
  static const char* wd[] = {"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"};
  static const char* mn[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                             "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "%s %s %02lld %04lld %02lld:%02lld:%02lld GMT+0000 (Coordinated Universal Time)",
                wd[((days % 7) + 7) % 7], mn[mo - 1], static_cast<long long>(d),
                static_cast<long long>(y), static_cast<long long>(rem / 3600),
                static_cast<long long>(rem / 60 % 60), static_cast<long long>(rem % 60));
  return buf;
}

bool is_null_text(std::string_view t) {
  return t.empty() || t == "~" || t == "null" || t == "Null" || t == "NULL";
}

std::optional<bool> bool_text(std::string_view t) {
  if (t == "true" || t == "True" || t == "TRUE") return true;
  if (t == "false" || t == "False" || t == "FALSE") return false;
  return std::nullopt;
}

}  // namespace

std::string_view js_type_name(JsType t) {
  switch (t) {
    case JsType::Undefined:
      return "nothing";
    case JsType::Null:
      return "null";
    case JsType::Boolean:
      return "a boolean";
    case JsType::Number:
      return "a number";
    case JsType::String:
      return "a string";
    case JsType::Date:
      return "a date";
    case JsType::Binary:
      return "binary data";
    case JsType::Array:
      return "a list";
    case JsType::Object:
      return "a mapping";
  }
  return "?";
}

JsScalar js_resolve_plain(std::string_view text) {
  JsScalar r;
  r.text = std::string(text);
  if (is_null_text(text)) {
    r.type = JsType::Null;
  } else if (auto b = bool_text(text)) {
    r.type = JsType::Boolean;
    r.boolean = *b;
  } else if (resolve_int(text)) {
    r.type = JsType::Number;
    r.number = construct_int(text);
  } else if (resolve_float(text)) {
    r.type = JsType::Number;
    r.number = construct_float(text);
  } else if (auto ms = timestamp_ms(text)) {
    r.type = JsType::Date;
    r.number = *ms;
  } else {
    r.type = JsType::String;
  }
  return r;
}

std::string normalized_tag(const yaml::Node* n) {
  if (!n) return {};
  const std::string& t = n->tag();
  if (t.empty()) return {};
  if (t.rfind("!!", 0) == 0) return "tag:yaml.org,2002:" + t.substr(2);
  if (t.size() > 3 && t.rfind("!<", 0) == 0 && t.back() == '>') return t.substr(2, t.size() - 3);
  return t;
}

JsScalar js_scalar(const yaml::Node* n) {
  JsScalar r;
  if (!n) return r;
  if (n->is_sequence()) {
    r.type = JsType::Array;
    return r;
  }
  if (n->is_mapping()) {
    r.type = JsType::Object;
    return r;
  }
  const std::string tag = normalized_tag(n);
  const std::string& text = n->scalar();
  r.text = text;
  if (tag.empty()) {
    if (n->kind() == yaml::NodeKind::Null) {
      r.type = JsType::Null;
      return r;
    }
    if (n->style() == yaml::ScalarStyle::Plain) return js_resolve_plain(text);
    r.type = JsType::String;
    return r;
  }
  if (tag == "!" || tag == "tag:yaml.org,2002:str") {
    r.type = JsType::String;
    return r;
  }
  const std::string kind = tag.rfind("tag:yaml.org,2002:", 0) == 0 ? tag.substr(18) : std::string();
  bool resolved = false;
  if (kind == "null") {
    resolved = is_null_text(text);
    if (resolved) r.type = JsType::Null;
  } else if (kind == "bool") {
    if (auto b = bool_text(text)) {
      resolved = true;
      r.type = JsType::Boolean;
      r.boolean = *b;
    }
  } else if (kind == "int") {
    resolved = resolve_int(text);
    if (resolved) {
      r.type = JsType::Number;
      r.number = construct_int(text);
    }
  } else if (kind == "float") {
    resolved = resolve_float(text);
    if (resolved) {
      r.type = JsType::Number;
      r.number = construct_float(text);
    }
  } else if (kind == "timestamp") {
    if (auto ms = timestamp_ms(text)) {
      resolved = true;
      r.type = JsType::Date;
      r.number = *ms;
    }
  } else if (kind == "binary") {
    r.type = JsType::Binary;
    return r;
  } else if (kind == "map" || kind == "seq" || kind == "omap" || kind == "pairs" || kind == "set") {
    r.error = "the tag !<" + tag + "> does not fit a scalar";
    return r;
  } else {
    r.error = "unknown tag !<" + tag + ">";
    return r;
  }
  if (!resolved) r.error = "cannot resolve a node with !<" + tag + "> explicit tag";
  return r;
}

JsType js_type(const yaml::Node* n) {
  if (!n) return JsType::Undefined;
  if (n->is_sequence()) return JsType::Array;
  if (n->is_mapping()) return JsType::Object;
  JsScalar s = js_scalar(n);
  return s.error.empty() ? s.type : JsType::Undefined;
}

std::optional<double> js_number(const yaml::Node* n) {
  JsScalar s = js_scalar(n);
  if (s.type != JsType::Number || !s.error.empty()) return std::nullopt;
  return s.number;
}

bool js_is_integer(const yaml::Node* n) {
  auto v = js_number(n);
  if (!v) return false;
  // AJV 6: typeof x == "number" && !(x % 1) && !isNaN(x); Infinity % 1 is NaN, so it passes.
  if (std::isnan(*v)) return false;
  if (std::isinf(*v)) return true;
  return std::fmod(*v, 1.0) == 0;
}

std::string js_number_to_string(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (v == 0) return "0";
  std::string sign = v < 0 ? "-" : "";
  double a = std::fabs(v);
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, a, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  // d[.ddd]e[+-]XX  ->  digits and exponent n where a = 0.digits * 10^n
  size_t e = sci.find('e');
  std::string mant = sci.substr(0, e);
  int exp10 = std::atoi(sci.c_str() + e + 1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  int k = static_cast<int>(digits.size());
  int n = exp10 + 1;
  std::string out;
  if (k <= n && n <= 21) {
    out = digits + std::string(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out = digits.substr(0, static_cast<size_t>(n)) + "." + digits.substr(static_cast<size_t>(n));
  } else if (-6 < n && n <= 0) {
    out = "0." + std::string(static_cast<size_t>(-n), '0') + digits;
  } else {
    int ex = n - 1;
    out = digits.substr(0, 1);
    if (k > 1) out += "." + digits.substr(1);
    out += std::string("e") + (ex >= 0 ? "+" : "-") + std::to_string(ex >= 0 ? ex : -ex);
  }
  return sign + out;
}

std::string js_to_string(const JsScalar& s) {
  switch (s.type) {
    case JsType::Undefined:
      return "undefined";
    case JsType::Null:
      return "null";
    case JsType::Boolean:
      return s.boolean ? "true" : "false";
    case JsType::Number:
      return js_number_to_string(s.number);
    case JsType::String:
      return s.text;
    case JsType::Date:
      return date_to_string(s.number);
    case JsType::Binary:
      return s.text;
    case JsType::Array:
      return "";
    case JsType::Object:
      return "[object Object]";
  }
  return {};
}

std::string js_to_string(const yaml::Node* n) {
  if (!n) return "undefined";
  if (n->is_mapping()) return "[object Object]";
  if (n->is_sequence()) {
    // Array.prototype.join: null and undefined items are empty strings.
    std::string out;
    bool first = true;
    for (const yaml::Node* item : n->items()) {
      if (!first) out += ',';
      first = false;
      JsType t = js_type(item);
      if (t == JsType::Null || t == JsType::Undefined) continue;
      out += js_to_string(item);
    }
    return out;
  }
  return js_to_string(js_scalar(n));
}

}  // namespace pai::job
