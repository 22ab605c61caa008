#include "util/yaml_emit.h"

#include <cstdio>

namespace pai::util {

namespace {

bool is_reserved_word(std::string_view s) {
  // YAML 1.1 booleans and nulls in every case, plus the single letters y/n.
  std::string lower;
  for (char c : s) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  static const char* words[] = {"null", "~", "true", "false", "yes",   "no",    "on",
                                "off",  "y", "n",    ".inf",  "-.inf", "+.inf", ".nan"};
  for (const char* w : words)
    if (lower == w) return true;
  return false;
}

bool plain_is_safe(std::string_view s) {
  if (s.empty() || s.size() > 200) return false;
  if (is_reserved_word(s)) return false;
  char f = s.front();
  // Anything starting like a number, a sign or a dot may be read as a number,
  // a date or a sexagesimal integer by some loader: quote it.
  if ((f >= '0' && f <= '9') || f == '-' || f == '+' || f == '.') return false;
  if (std::string_view("?:,[]{}#&*!|>'\"%@` =<\\").find(f) != std::string_view::npos) return false;
  if (s.back() == ' ' || s.back() == ':') return false;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c == ':' && (i + 1 == s.size() || s[i + 1] == ' ')) return false;
    if (c == '#' && i > 0 && s[i - 1] == ' ') return false;
    // Flow indicators are legal in block plain scalars but confuse readers of
    // flow collections; keep the output boring.
    if (c == '{' || c == '}' || c == '[' || c == ']' || c == ',') return false;
  }
  return true;
}

template <class Json>
std::string scalar_text(const Json& v, int indent) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return v.template get<bool>() ? "true" : "false";
  if (v.is_number()) return v.dump();
  const std::string& s = v.template get_ref<const std::string&>();
  if (yaml_literal_is_exact(s)) return yaml_literal_block(s, indent);
  return yaml_scalar(s);
}

template <class Json>
void emit(const Json& v, int indent, std::string& out);

template <class Json>
bool is_inline(const Json& v) {
  return !(v.is_object() || v.is_array()) || v.empty();
}

template <class Json>
std::string inline_text(const Json& v, int indent) {
  if (v.is_object()) return "{}";
  if (v.is_array()) return "[]";
  return scalar_text(v, indent);
}

// Writes `v` as the content of a node at column `indent` (the caller has written
// the key or dash and expects either an inline value or a newline).
template <class Json>
void emit(const Json& v, int indent, std::string& out) {
  std::string pad(static_cast<size_t>(indent), ' ');
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      out += pad + yaml_scalar(it.key()) + ":";
      const auto& child = it.value();
      if (is_inline(child)) {
        out += " " + inline_text(child, indent + 2) + "\n";
      } else if (child.is_array()) {
        out += "\n";
        emit(child, indent, out);  // sequences under a key stay at the key's column
      } else {
        out += "\n";
        emit(child, indent + 2, out);
      }
    }
  } else if (v.is_array()) {
    for (const auto& child : v) {
      if (is_inline(child)) {
        out += pad + "- " + inline_text(child, indent + 2) + "\n";
      } else {
        // The first line of the child goes after the dash.
        std::string sub;
        emit(child, indent + 2, sub);
        out += pad + "- " + sub.substr(static_cast<size_t>(indent) + 2);
      }
    }
  } else {
    out += pad + scalar_text(v, indent) + "\n";
  }
}

template <class Json>
std::string document(const Json& value) {
  std::string out;
  if (is_inline(value)) return inline_text(value, 2) + "\n";
  emit(value, 0, out);
  return out;
}

}  // namespace

std::string yaml_double_quoted(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02X", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  out += '"';
  return out;
}

bool yaml_literal_is_exact(std::string_view s) {
  if (s.find('\n') == std::string_view::npos) return false;
  if (s.front() == ' ' || s.front() == '\n' || s.front() == '\t') return false;
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && ch != '\n') || c == 0x7f) return false;
  }
  return true;
}

std::string yaml_literal_block(std::string_view s, int indent) {
  size_t trailing = 0;
  while (trailing < s.size() && s[s.size() - 1 - trailing] == '\n') ++trailing;
  std::string out = trailing == 0 ? "|-" : trailing == 1 ? "|" : "|+";
  std::string_view body = s.substr(0, s.size() - trailing);
  std::string pad(static_cast<size_t>(indent), ' ');
  size_t pos = 0;
  while (true) {
    size_t nl = body.find('\n', pos);
    std::string_view line =
        body.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    out += '\n';
    if (!line.empty()) out += pad + std::string(line);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  for (size_t i = 1; i < trailing; ++i) out += '\n';
  return out;
}

std::string yaml_scalar(std::string_view s) {
  return plain_is_safe(s) ? std::string(s) : yaml_double_quoted(s);
}

std::string to_yaml(const nlohmann::json& value) {
  return document(value);
}
std::string to_yaml(const nlohmann::ordered_json& value) {
  return document(value);
}

}  // namespace pai::util
