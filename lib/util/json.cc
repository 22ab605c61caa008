#include "util/json.h"

#include <algorithm>
#include <vector>

namespace pai::util {

namespace {

// 1-based line and column of the byte at `offset` (0-based).
void locate(std::string_view text, size_t offset, JsonError& e) {
  e.line = 1;
  e.column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++e.line;
      e.column = 1;
    } else {
      ++e.column;
    }
  }
}

std::string without_prefix(const char* what) {
  std::string s = what;
  if (s.rfind("[json.exception.", 0) == 0)
    if (size_t end = s.find("] "); end != std::string::npos) s.erase(0, end + 2);
  return s;
}

// Finds where the parser stopped: a SAX pass that keeps nothing but the position.
struct Locator final : nlohmann::json_sax<nlohmann::json> {
  size_t offset = 0;
  std::string message;
  bool failed = false;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& ex) override {
    failed = true;
    // `position` is just past the token that failed; point at its first byte.
    offset = position >= last_token.size() ? position - last_token.size() : 0;
    message = without_prefix(ex.what());
    return false;
  }
};

}  // namespace

std::optional<size_t> json_too_deep(std::string_view text, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > max_depth) return i;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return std::nullopt;
}

std::optional<JsonError> json_duplicate_key(std::string_view text) {
  // One frame per open array or object; an object's frame holds its keys.
  struct Frame {
    bool object = false;
    std::vector<std::string_view> keys;
  };
  std::vector<Frame> stack;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '{' || c == '[') {
      stack.push_back({c == '{', {}});
    } else if (c == '}' || c == ']') {
      if (!stack.empty()) stack.pop_back();
    } else if (c == '"') {
      size_t start = i;
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      std::string_view str = text.substr(start, i - start + 1);  // with its quotes
      size_t k = i + 1;
      while (k < text.size() &&
             (text[k] == ' ' || text[k] == '\t' || text[k] == '\n' || text[k] == '\r'))
        ++k;
      bool is_key = k < text.size() && text[k] == ':' && !stack.empty() && stack.back().object;
      if (!is_key) continue;
      auto& keys = stack.back().keys;
      if (std::find(keys.begin(), keys.end(), str) != keys.end()) {
        JsonError err;
        locate(text, start, err);
        err.message = "duplicate key " + std::string(str);
        return err;
      }
      keys.push_back(str);
    }
  }
  return std::nullopt;
}

Result<nlohmann::json, JsonError> parse_json(std::string_view text, size_t max_depth) {
  if (auto at = json_too_deep(text, max_depth)) {
    JsonError err;
    locate(text, *at, err);
    err.message = "arrays and objects nested deeper than " + std::to_string(max_depth) + " levels";
    return err;
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    JsonError err;
    locate(text, e.byte > 0 ? e.byte - 1 : 0, err);
    err.message = without_prefix(e.what());
    return err;
  } catch (const nlohmann::json::exception& e) {
    // A number out of range, or anything else without a position: find it.
    JsonError err;
    err.message = without_prefix(e.what());
    Locator loc;
    try {
      nlohmann::json::sax_parse(text, &loc);
    } catch (const nlohmann::json::exception&) {
    }
    if (loc.failed) {
      locate(text, loc.offset, err);
      err.message = loc.message;
    }
    return err;
  }
}

nlohmann::json parse_json_or_discarded(std::string_view text, size_t max_depth) {
  if (json_too_deep(text, max_depth)) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text, nullptr, false);
}

std::string dump_json(const nlohmann::json& j, int indent) {
  return j.dump(indent);
}

}  // namespace pai::util
