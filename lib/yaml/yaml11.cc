#include "yaml/yaml11.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_set>

#include "util/strings.h"

namespace pai::yaml {
namespace {

using Type = ScalarReading::Type;

bool one_of(std::string_view t, std::initializer_list<std::string_view> words) {
  for (auto w : words)
    if (t == w) return true;
  return false;
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Digits of `base` (and '_' when `underscores`), at least one; value into v.
bool parse_digits(std::string_view d, int base, bool underscores, double& v) {
  v = 0;
  bool any = false;
  for (char c : d) {
    if (c == '_' && underscores) continue;
    int x;
    if (is_digit(c))
      x = c - '0';
    else if (c >= 'a' && c <= 'f')
      x = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      x = c - 'A' + 10;
    else
      return false;
    if (x >= base) return false;
    v = v * base + x;
    any = true;
  }
  return any;
}

// "1:20:30" -> 4830 (PyYAML's base 60); the first part may hold '_'.
bool parse_sexagesimal(std::string_view t, double& v) {
  size_t colon = t.find(':');
  if (colon == std::string_view::npos || colon == 0 || t[0] == '0') return false;
  double head;
  if (!parse_digits(t.substr(0, colon), 10, true, head)) return false;
  v = head;
  size_t p = colon;
  while (p < t.size()) {
    size_t e = t.find(':', p + 1);
    if (e == std::string_view::npos) e = t.size();
    std::string_view part = t.substr(p + 1, e - p - 1);
    if (part.empty() || part.size() > 2) return false;
    double d;
    if (!parse_digits(part, 10, false, d) || (part.size() == 2 && part[0] > '5')) return false;
    v = v * 60 + d;
    p = e;
  }
  return true;
}

// PyYAML's timestamp: 2001-12-14, or a date with a time.
bool is_timestamp(std::string_view t) {
  auto digits = [&](size_t p, size_t n) {
    if (p + n > t.size()) return false;
    for (size_t i = 0; i < n; ++i)
      if (!is_digit(t[p + i])) return false;
    return true;
  };
  if (!digits(0, 4) || t.size() < 8 || t[4] != '-') return false;
  if (t.size() == 10 && digits(5, 2) && t[7] == '-' && digits(8, 2)) return true;
  // Y-M-D with 1-2 digit month/day, then T or blanks and a time.
  size_t p = 5;
  size_t n = 0;
  while (p + n < t.size() && is_digit(t[p + n])) ++n;
  if (n < 1 || n > 2 || p + n >= t.size() || t[p + n] != '-') return false;
  p += n + 1;
  n = 0;
  while (p + n < t.size() && is_digit(t[p + n])) ++n;
  if (n < 1 || n > 2 || p + n >= t.size()) return false;
  p += n;
  if (t[p] == 'T' || t[p] == 't')
    ++p;
  else if (t[p] == ' ' || t[p] == '\t')
    while (p < t.size() && (t[p] == ' ' || t[p] == '\t')) ++p;
  else
    return false;
  n = 0;
  while (p + n < t.size() && is_digit(t[p + n])) ++n;
  size_t h = p + n;
  return n >= 1 && n <= 2 && h + 6 <= t.size() && t[h] == ':' && digits(h + 1, 2) &&
         t[h + 3] == ':' && digits(h + 4, 2);
}

ScalarReading make(Type t, double v = 0, bool b = false) {
  ScalarReading r;
  r.type = t;
  r.number = v;
  r.boolean = b;
  return r;
}

// PyYAML 5/6 (SafeLoader) implicit resolvers.
ScalarReading read_pyyaml(std::string_view t) {
  if (one_of(t, {"", "~", "null", "Null", "NULL"})) return make(Type::Null);
  if (one_of(t, {"yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}))
    return make(Type::Bool, 0, true);
  if (one_of(t, {"no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"}))
    return make(Type::Bool, 0, false);
  std::string_view u = t;
  double sign = 1;
  if (!u.empty() && (u[0] == '+' || u[0] == '-')) {
    sign = u[0] == '-' ? -1 : 1;
    u.remove_prefix(1);
  }
  if (one_of(u, {".inf", ".Inf", ".INF"})) return make(Type::Float, sign * HUGE_VAL);
  if (one_of(t, {".nan", ".NaN", ".NAN"})) return make(Type::Float, NAN);
  double v;
  // int: 0b..., 0[0-7_]+ (octal), 0, [1-9][0-9_]*, 0x..., base 60.
  if (u.size() > 2 && u[0] == '0' && u[1] == 'b' && parse_digits(u.substr(2), 2, true, v))
    return make(Type::Int, sign * v);
  if (u.size() > 2 && u[0] == '0' && u[1] == 'x' && parse_digits(u.substr(2), 16, true, v))
    return make(Type::Int, sign * v);
  if (u == "0") return make(Type::Int, 0);
  if (u.size() > 1 && u[0] == '0' && parse_digits(u.substr(1), 8, true, v))
    return make(Type::Int, sign * v);
  if (!u.empty() && u[0] >= '1' && u[0] <= '9' && parse_digits(u, 10, true, v))
    return make(Type::Int, sign * v);
  if (u.find('.') == std::string_view::npos && parse_sexagesimal(u, v))
    return make(Type::Int, sign * v);
  // float: needs a '.'; an exponent needs its sign.
  if (size_t dot = u.find('.'); dot != std::string_view::npos) {
    std::string_view whole = u.substr(0, dot), rest = u.substr(dot + 1);
    std::string_view frac = rest, exp;
    if (size_t e = rest.find_first_of("eE"); e != std::string_view::npos) {
      frac = rest.substr(0, e);
      exp = rest.substr(e + 1);
    }
    bool ok = true;
    double w = 0;
    if (whole.find(':') != std::string_view::npos) {
      ok = exp.empty() && parse_sexagesimal(whole, w);
    } else if (!whole.empty()) {
      ok = is_digit(whole[0]) && parse_digits(whole, 10, true, w);
    } else {
      ok = sign == 1 && t[0] == '.' && !frac.empty() && frac[0] != '_';
    }
    double f = 0, scale = 1;
    for (char c : frac) {
      if (c == '_') continue;
      if (!is_digit(c)) ok = false;
      scale /= 10;
      f += (c - '0') * scale;
    }
    double ev = 0;
    if (ok && !exp.empty()) {
      ok = exp.size() >= 2 && (exp[0] == '+' || exp[0] == '-') &&
           parse_digits(exp.substr(1), 10, false, ev);
      if (exp[0] == '-') ev = -ev;
    }
    if (ok) return make(Type::Float, sign * (w + f) * std::pow(10.0, ev));
  }
  if (is_timestamp(t)) return make(Type::Timestamp);
  return make(Type::String);
}

// gopkg.in/yaml.v2 resolve(): its bool words, then numbers through strconv with
// '_' removed (base prefixes 0b, 0o, 0x and a leading 0 for octal), timestamps.
ScalarReading read_go(std::string_view t) {
  if (one_of(t, {"", "~", "null", "Null", "NULL"})) return make(Type::Null);
  if (one_of(t, {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}))
    return make(Type::Bool, 0, true);
  if (one_of(t, {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"}))
    return make(Type::Bool, 0, false);
  if (one_of(t, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"}))
    return make(Type::Float, HUGE_VAL);
  if (one_of(t, {"-.inf", "-.Inf", "-.INF"})) return make(Type::Float, -HUGE_VAL);
  if (one_of(t, {".nan", ".NaN", ".NAN"})) return make(Type::Float, NAN);
  if (t.empty() || !(is_digit(t[0]) || t[0] == '+' || t[0] == '-' || t[0] == '.'))
    return make(Type::String);
  std::string plain;
  for (char c : t)
    if (c != '_') plain += c;
  std::string_view u = plain;
  double sign = 1;
  if (!u.empty() && (u[0] == '+' || u[0] == '-')) {
    sign = u[0] == '-' ? -1 : 1;
    u.remove_prefix(1);
  }
  double v;
  if (u.size() > 2 && u[0] == '0' && (u[1] == 'b' || u[1] == 'B') &&
      parse_digits(u.substr(2), 2, false, v))
    return make(Type::Int, sign * v);
  if (u.size() > 2 && u[0] == '0' && (u[1] == 'o' || u[1] == 'O') &&
      parse_digits(u.substr(2), 8, false, v))
    return make(Type::Int, sign * v);
  if (u.size() > 2 && u[0] == '0' && (u[1] == 'x' || u[1] == 'X') &&
      parse_digits(u.substr(2), 16, false, v))
    return make(Type::Int, sign * v);
  if (u.size() > 1 && u[0] == '0' && parse_digits(u.substr(1), 8, false, v))
    return make(Type::Int, sign * v);
  if (parse_digits(u, 10, false, v)) return make(Type::Int, sign * v);
  if (auto f = util::parse_double(plain)) return make(Type::Float, *f);
  if (t.size() >= 10 && is_timestamp(t)) return make(Type::Timestamp);
  return make(Type::String);
}

}  // namespace

ScalarReading read_yaml12(const Node& n) {
  const std::string& text = n.scalar();
  if (n.is_null()) return make(Type::Null);
  if (auto b = n.as_bool()) return make(Type::Bool, 0, *b);
  if (auto i = n.as_int()) return make(Type::Int, static_cast<double>(*i));
  if (auto f = n.as_float()) return make(Type::Float, *f);
  if (n.style() != ScalarStyle::Plain) return make(Type::String);
  // The core schema's float syntax, also where the value does not fit a double
  // (1e400 is +infinity to YAML 1.2; paictl's as_float() refuses it).
  {
    std::string_view t = text;
    size_t i = 0;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    size_t digits = 0;
    while (i < t.size() && is_digit(t[i])) ++i, ++digits;
    if (i < t.size() && t[i] == '.') {
      ++i;
      while (i < t.size() && is_digit(t[i])) ++i, ++digits;
    }
    bool ok = digits > 0;
    if (ok && i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
      ++i;
      if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
      size_t e = 0;
      while (i < t.size() && is_digit(t[i])) ++i, ++e;
      ok = e > 0;
    }
    if (ok && i == t.size()) return make(Type::Float, std::strtod(std::string(t).c_str(), nullptr));
  }
  if (one_of(text, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"}))
    return make(Type::Float, HUGE_VAL);
  if (one_of(text, {"-.inf", "-.Inf", "-.INF"})) return make(Type::Float, -HUGE_VAL);
  if (one_of(text, {".nan", ".NaN", ".NAN"})) return make(Type::Float, NAN);
  return make(Type::String);
}

ScalarReading read_yaml11(std::string_view text, Loader loader) {
  return loader == Loader::PyYaml ? read_pyyaml(text) : read_go(text);
}

std::string ScalarReading::describe(std::string_view text) const {
  switch (type) {
    case Type::Null:
      return "null";
    case Type::Bool:
      return boolean ? "the boolean true" : "the boolean false";
    case Type::Int:
    case Type::Float: {
      if (std::isnan(number)) return "the number NaN";
      if (std::isinf(number)) return number > 0 ? "the number +infinity" : "the number -infinity";
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.15g", number);
      if (type == Type::Float && std::string_view(buf).find_first_of(".e") == std::string::npos)
        return std::string("the number ") + buf + ".0";
      return std::string("the number ") + buf;
    }
    case Type::Timestamp:
      return "the date " + std::string(text);
    case Type::String:
      break;
  }
  return "the string \"" + std::string(text) + "\"";
}

bool ScalarReading::same_value(const ScalarReading& o) const {
  bool num = type == Type::Int || type == Type::Float;
  bool onum = o.type == Type::Int || o.type == Type::Float;
  if (num && onum)  // loaders round long numbers differently in the last bits
    return number == o.number || (std::isnan(number) && std::isnan(o.number)) ||
           std::fabs(number - o.number) <= 1e-12 * std::max(std::fabs(number), std::fabs(o.number));
  if (type != o.type) return false;
  return type != Type::Bool || boolean == o.boolean;
}

std::vector<LoaderDifference> loader_differences(const Stream& s, Loader loader,
                                                 std::string_view consumer) {
  return loader_differences(
      s, [loader](std::string_view t) { return std::optional(read_yaml11(t, loader)); }, consumer);
}

std::vector<LoaderDifference> loader_differences(const Stream& s, const PlainReader& read,
                                                 std::string_view consumer) {
  std::vector<LoaderDifference> out;
  std::unordered_set<const Node*> seen;
  std::vector<const Node*> stack(s.documents.rbegin(), s.documents.rend());
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!n || !seen.insert(n).second) continue;
    if (n->is_mapping()) {
      for (auto it = n->pairs().rbegin(); it != n->pairs().rend(); ++it) {
        stack.push_back(it->value);
        stack.push_back(it->key);
      }
      continue;
    }
    if (n->is_sequence()) {
      stack.insert(stack.end(), n->items().rbegin(), n->items().rend());
      continue;
    }
    if (!n->is_scalar() || n->style() != ScalarStyle::Plain || !n->tag().empty()) continue;
    const std::string& t = n->scalar();
    if (t.size() > 64 || t.find('\n') != std::string::npos) continue;
    std::optional<ScalarReading> r = read(t);
    if (!r) continue;
    ScalarReading ours = read_yaml12(*n), theirs = *r;
    if (ours.same_value(theirs)) continue;
    std::string hint;
    if (theirs.type == Type::Bool)
      hint = "write true or false for a boolean, or quote it (\"" + t + "\") for the text";
    else if (ours.type == Type::String)
      hint = "quote it (\"" + t + "\") to keep the text";
    else if (theirs.type == Type::String || theirs.type == Type::Timestamp)
      hint = "quote it (\"" + t + "\") if you mean the text, or write the number plainly";
    else
      hint = "write the number in plain decimal if that is what you mean, or quote it (\"" + t +
             "\") for the text";
    out.push_back({n,
                   std::string(consumer) + " reads " + t + " as " + theirs.describe(t) +
                       ", while YAML 1.2 (and paictl) reads " + ours.describe(t),
                   hint});
  }
  return out;
}

}  // namespace pai::yaml
