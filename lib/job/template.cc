#include "job/template.h"

#include <regex>

namespace pai::job {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// One entry per template character or tag, like mustache.js before it squashes
// text: standalone-line stripping deletes single whitespace characters.
struct Token {
  char kind;  // 't' text, 'n' variable, or the tag type
  std::string value;
  size_t begin;
  size_t end;
  bool deleted = false;
};

struct Scanner {
  std::string_view s;
  size_t pos = 0;
  bool eos() const { return pos >= s.size(); }
  void skip_space() {
    while (pos < s.size() && is_space(s[pos])) ++pos;
  }
  // Index where `\s*<lit>` first matches at or after pos, or npos.
  size_t search_ws_then(std::string_view lit) const {
    size_t j = s.find(lit, pos);
    if (j == std::string_view::npos) return j;
    size_t k = j;
    while (k > pos && is_space(s[k - 1])) --k;
    return k;
  }
  // Consumes up to the next `\s*<lit>` (or to the end) and returns what it skipped.
  std::string scan_until_ws_then(std::string_view lit) {
    size_t k = search_ws_then(lit);
    if (k == std::string_view::npos) k = s.size();
    std::string v(s.substr(pos, k - pos));
    pos = k;
    return v;
  }
  // Consumes `\s*<lit>` at pos; false if it is not there.
  bool scan_ws_then(std::string_view lit) {
    size_t p = pos;
    while (p < s.size() && is_space(s[p])) ++p;
    if (s.substr(p, lit.size()) != lit) return false;
    pos = p + lit.size();
    return true;
  }
};

}  // namespace

std::string js_trim(std::string_view s) {
  auto ws_at_start = [&](size_t i) -> size_t {  // bytes of a whitespace character at i, or 0
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (is_space(s[i])) return 1;
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0xA0) return 2;
    if (c == 0xEF && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0xBB &&
        static_cast<unsigned char>(s[i + 2]) == 0xBF)
      return 3;
    return 0;
  };
  size_t b = 0;
  while (b < s.size()) {
    size_t w = ws_at_start(b);
    if (!w) break;
    b += w;
  }
  size_t e = s.size();
  while (e > b) {
    if (is_space(s[e - 1])) {
      --e;
    } else if (e - b >= 2 && static_cast<unsigned char>(s[e - 2]) == 0xC2 &&
               static_cast<unsigned char>(s[e - 1]) == 0xA0) {
      e -= 2;
    } else if (e - b >= 3 && static_cast<unsigned char>(s[e - 3]) == 0xEF &&
               static_cast<unsigned char>(s[e - 2]) == 0xBB &&
               static_cast<unsigned char>(s[e - 1]) == 0xBF) {
      e -= 3;
    } else {
      break;
    }
  }
  return std::string(s.substr(b, e - b));
}

std::string lookup_name(std::string_view name) {
  static const std::regex index_re("\\[(\\d+)\\]");
  std::string n(name);
  if (n.find('[') == std::string::npos) return n;
  return std::regex_replace(n, index_re, ".$1");
}

ParsedTemplate parse_template(std::string_view text) {
  ParsedTemplate out;
  if (text.empty()) return out;
  std::string open = "<%", close = "%>";
  std::vector<Token> tokens;
  std::vector<size_t> spaces;
  bool has_tag = false, non_space = false;
  std::vector<size_t> sections;  // token indices of open sections

  auto strip_space = [&]() {
    if (has_tag && !non_space) {
      for (size_t i : spaces) tokens[i].deleted = true;
    }
    spaces.clear();
    has_tag = false;
    non_space = false;
  };

  Scanner sc{text};
  while (!sc.eos()) {
    size_t start = sc.pos;
    size_t at = text.find(open, sc.pos);
    size_t text_end = at == std::string_view::npos ? text.size() : at;
    for (size_t i = start; i < text_end; ++i) {
      char ch = text[i];
      if (is_space(ch))
        spaces.push_back(tokens.size());
      else
        non_space = true;
      tokens.push_back({'t', std::string(1, ch), i, i + 1});
      if (ch == '\n') strip_space();
    }
    sc.pos = text_end;
    if (at == std::string_view::npos) break;
    start = sc.pos;
    sc.pos += open.size();
    sc.skip_space();
    has_tag = true;
    char type = 'n';
    if (!sc.eos() && std::string_view("#^/>{&=!").find(sc.s[sc.pos]) != std::string_view::npos)
      type = sc.s[sc.pos++];
    sc.skip_space();
    std::string value;
    if (type == '=') {
      value = sc.scan_until_ws_then("=");
      sc.scan_ws_then("=");
      sc.scan_until_ws_then(close);
    } else if (type == '{') {
      value = sc.scan_until_ws_then("}" + close);
      sc.scan_ws_then("}");
      sc.scan_until_ws_then(close);
      type = '&';
    } else {
      value = sc.scan_until_ws_then(close);
    }
    if (!sc.scan_ws_then(close)) {
      out.error = TemplateError{"unclosed tag: \"" + open + "\" without \"" + close + "\"", start};
      break;
    }
    tokens.push_back({type, value, start, sc.pos});
    if (type == '#' || type == '^') {
      sections.push_back(tokens.size() - 1);
    } else if (type == '/') {
      if (sections.empty()) {
        out.error = TemplateError{"closing section \"" + value + "\" that was never opened", start};
        break;
      }
      const Token& opened = tokens[sections.back()];
      sections.pop_back();
      if (opened.value != value) {
        out.error =
            TemplateError{"section \"" + opened.value + "\" is closed by \"" + value + "\"", start};
        break;
      }
    } else if (type == 'n' || type == '&') {
      non_space = true;
    } else if (type == '=') {
      // The new delimiters are the two words of the tag.
      std::string v = value;
      size_t a = 0;
      while (a < v.size() && is_space(v[a])) ++a;
      size_t b = a;
      while (b < v.size() && !is_space(v[b])) ++b;
      size_t c = b;
      while (c < v.size() && is_space(v[c])) ++c;
      size_t d = c;
      while (d < v.size() && !is_space(v[d])) ++d;
      if (a == b || c == d) {
        out.error = TemplateError{"invalid delimiters \"" + v + "\"", start};
        break;
      }
      open = v.substr(a, b - a);
      close = v.substr(c, d - c);
    }
  }
  if (!out.error && !sections.empty())
    out.error = TemplateError{"section \"" + tokens[sections.back()].value + "\" is never closed",
                              tokens[sections.back()].begin};

  // Tags for diagnostics, and the pieces the server's loop sees: top-level text
  // and variables; sections (with their content) and other tags are dropped.
  int depth = 0;
  for (const Token& t : tokens) {
    if (t.kind != 't') {
      TemplateTag tag;
      tag.type = t.kind == 'n' ? 0 : t.kind;
      tag.name = t.value;
      tag.begin = t.begin;
      tag.end = t.end;
      tag.dropped = t.kind != 'n' || depth > 0;
      out.tags.push_back(tag);
    }
    if (t.kind == '#' || t.kind == '^') {
      ++depth;
      continue;
    }
    if (t.kind == '/') {
      if (depth > 0) --depth;
      continue;
    }
    if (depth > 0 || t.deleted) continue;
    if (t.kind == 't') {
      if (!out.pieces.empty() && !out.pieces.back().is_variable)
        out.pieces.back().text += t.value;
      else
        out.pieces.push_back({false, t.value, t.begin});
    } else if (t.kind == 'n') {
      out.pieces.push_back({true, t.value, t.begin});
    }
  }
  return out;
}

std::string render_template(const ParsedTemplate& t, const Lookup& lookup) {
  std::string result;
  for (const TemplatePiece& p : t.pieces) {
    if (!p.is_variable) {
      result += p.text;
      continue;
    }
    std::string name = lookup_name(p.text);
    if (auto v = lookup(name))
      result += *v;
    else
      result += "<% " + name + " %>";
  }
  return js_trim(result);
}

}  // namespace pai::job
