#include "yaml/yaml.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <unordered_map>

#include "util/strings.h"
#include "util/utf8.h"
#include "util/yaml_emit.h"

namespace pai::yaml {

// ---------------------------------------------------------------------------
// Node
// ---------------------------------------------------------------------------

namespace {
bool is_str_tag(const std::string& tag) {
  return tag == "!!str" || tag == "tag:yaml.org,2002:str" || tag == "!";
}
}  // namespace

bool Node::is_null() const {
  if (kind_ == NodeKind::Null) return true;
  if (kind_ != NodeKind::Scalar || style_ != ScalarStyle::Plain || is_str_tag(tag_)) return false;
  return text_.empty() || text_ == "~" || text_ == "null" || text_ == "Null" || text_ == "NULL";
}

const Pair* Node::find(std::string_view key) const {
  if (kind_ != NodeKind::Mapping) return nullptr;
  for (const auto& p : pairs_)
    if (p.key->kind_ == NodeKind::Scalar && p.key->text_ == key) return &p;
  return nullptr;
}

const Node* Node::get(std::string_view key) const {
  const Pair* p = find(key);
  return p ? p->value : nullptr;
}

std::optional<int64_t> Node::as_int() const {
  if (kind_ != NodeKind::Scalar || is_str_tag(tag_)) return std::nullopt;
  if (style_ != ScalarStyle::Plain && tag_ != "!!int") return std::nullopt;
  std::string_view t = text_;
  if (t.empty()) return std::nullopt;
  bool neg = false;
  if (t[0] == '+' || t[0] == '-') {
    neg = t[0] == '-';
    t.remove_prefix(1);
  }
  if (t.empty()) return std::nullopt;
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'o')) {
    base = t[1] == 'x' ? 16 : 8;
    t.remove_prefix(2);
  }
  int64_t v = 0;
  auto r = std::from_chars(t.data(), t.data() + t.size(), v, base);
  if (r.ec != std::errc() || r.ptr != t.data() + t.size()) return std::nullopt;
  return neg ? -v : v;
}

std::optional<double> Node::as_float() const {
  if (auto i = as_int()) return static_cast<double>(*i);
  if (kind_ != NodeKind::Scalar || is_str_tag(tag_)) return std::nullopt;
  if (style_ != ScalarStyle::Plain && tag_ != "!!float") return std::nullopt;
  return util::parse_double(text_);
}

std::optional<bool> Node::as_bool() const {
  if (kind_ != NodeKind::Scalar || is_str_tag(tag_)) return std::nullopt;
  if (style_ != ScalarStyle::Plain && tag_ != "!!bool") return std::nullopt;
  if (text_ == "true" || text_ == "True" || text_ == "TRUE") return true;
  if (text_ == "false" || text_ == "False" || text_ == "FALSE") return false;
  return std::nullopt;
}

std::string Node::describe() const {
  switch (kind_) {
    case NodeKind::Null:
      return "an empty value";
    case NodeKind::Sequence:
      return "a list";
    case NodeKind::Mapping:
      return "a mapping";
    case NodeKind::Scalar:
      break;
  }
  if (is_null()) return "null";
  if (as_bool()) return "the boolean " + text_;
  if (as_int() || as_float()) return "the number " + text_;
  std::string shown = text_.size() > 40 ? text_.substr(0, 37) + "..." : text_;
  for (char& c : shown)
    if (c == '\n') c = ' ';
  return "the string \"" + shown + "\"";
}

std::string Node::resolved_tag() const {
  if (tag_.rfind("!!", 0) == 0) return "tag:yaml.org,2002:" + tag_.substr(2);
  if (tag_.size() > 3 && tag_.rfind("!<", 0) == 0 && tag_.back() == '>')
    return tag_.substr(2, tag_.size() - 3);
  return tag_;
}

Mark Node::inner_mark(uint32_t line, uint32_t column) const {
  if (content_line_ == 0) return mark_;
  if (style_ == ScalarStyle::Literal)
    return {content_line_ + line - 1, content_column_ + column - 1};
  if (line <= 1) return {content_line_, content_column_ + column - 1};
  return mark_;
}

// ---------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------

namespace {
struct Failure {
  SyntaxError error;
};

struct Props {
  std::string anchor;
  std::string tag;  // shorthand form, see Node::tag()
  Mark mark;        // of the first property
  bool empty() const { return anchor.empty() && tag.empty(); }
};

int hex_value(char h) {
  if (h >= '0' && h <= '9') return h - '0';
  if (h >= 'a' && h <= 'f') return h - 'a' + 10;
  if (h >= 'A' && h <= 'F') return h - 'A' + 10;
  return -1;
}

// A resolved tag in the form Node::tag() keeps: needs no %TAG directive to be read back.
std::string tag_shorthand(const std::string& resolved) {
  static constexpr std::string_view core = "tag:yaml.org,2002:";
  if (resolved.rfind(core, 0) == 0) return "!!" + resolved.substr(core.size());
  if (!resolved.empty() && resolved[0] == '!') return resolved;
  return "!<" + resolved + ">";
}
}  // namespace

class Parser {
 public:
  Parser(std::string_view src, const LoadOptions& opt, Stream& out)
      : s_(src), opt_(opt), out_(out) {}

  void run() {
    try {
      prepass();
      parse_stream();
    } catch (const Failure& f) {
      out_.error = f.error;
    }
  }

 private:
  std::string_view s_;
  const LoadOptions& opt_;
  Stream& out_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  size_t line_start_ = 0;
  uint32_t depth_ = 0;
  uint64_t weight_ = 0;
  std::unordered_map<std::string, Node*> anchors_;
  std::vector<std::pair<std::string, std::string>> handles_;  // %TAG of this document
  // Continuation lines of flow collections and quoted scalars must be indented
  // more than this (the enclosing block collection's indentation; -1 at the top).
  int cont_indent_ = -1;

  // --- character access -----------------------------------------------------
  char at(size_t p) const { return p < s_.size() ? s_[p] : '\0'; }
  char c(size_t k = 0) const { return at(pos_ + k); }
  bool eof() const { return pos_ >= s_.size(); }
  bool eol_at(size_t p) const { return p >= s_.size() || s_[p] == '\n' || s_[p] == '\r'; }
  bool blank_at(size_t p) const { return p < s_.size() && (s_[p] == ' ' || s_[p] == '\t'); }
  bool blank_or_eol(size_t p) const { return eol_at(p) || blank_at(p); }
  bool flow_indicator(char ch) const {
    return ch == ',' || ch == '[' || ch == ']' || ch == '{' || ch == '}';
  }
  Mark mark() const { return {line_, static_cast<uint32_t>(pos_ - line_start_ + 1)}; }
  uint32_t column0() const { return static_cast<uint32_t>(pos_ - line_start_); }

  [[noreturn]] void fail(Mark m, std::string msg, std::string hint = {}) const {
    throw Failure{SyntaxError{m, std::move(msg), std::move(hint)}};
  }
  [[noreturn]] void fail_limit(Mark m, std::string msg, std::string hint = {}) const {
    throw Failure{SyntaxError{m, std::move(msg), std::move(hint), ErrorKind::Limit}};
  }

  void skip_inline_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  // Consumes the line break at pos_ (\n or \r\n). No-op at EOF.
  void consume_newline() {
    if (pos_ < s_.size() && s_[pos_] == '\r') ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '\n') ++pos_;
    ++line_;
    line_start_ = pos_;
  }
  void skip_rest_of_line() {
    while (!eol_at(pos_)) ++pos_;
    if (pos_ < s_.size()) consume_newline();
  }
  bool at_comment_or_eol() const { return eol_at(pos_) || s_[pos_] == '#'; }
  // After a complete value on a line: allow blanks and a comment, then the line break.
  void finish_line() {
    size_t before = pos_;
    skip_inline_ws();
    if (!eof() && s_[pos_] == '#') {
      // Only a '#' right after the value's last character starts no comment
      // (the caller may already have skipped the blanks before it).
      if (pos_ == before && pos_ != line_start_ && s_[pos_ - 1] != ' ' && s_[pos_ - 1] != '\t')
        fail(mark(), "a comment must be separated from the value by a space",
             "write ' #' instead of '#'");
      while (!eol_at(pos_)) ++pos_;
    }
    if (!eol_at(pos_))
      fail(mark(), "unexpected text after the value",
           "a value ends at the end of its line; quote it if it contains ': ' or ' #'");
    if (pos_ < s_.size()) consume_newline();
  }

  bool is_doc_marker_at(size_t p, char ch) const {
    return p + 2 < s_.size() + 0 && at(p) == ch && at(p + 1) == ch && at(p + 2) == ch &&
           blank_or_eol(p + 3);
  }
  bool at_line_start_marker() const {
    return pos_ == line_start_ && (is_doc_marker_at(pos_, '-') || is_doc_marker_at(pos_, '.'));
  }

  // From the start of a line, skips empty and comment-only lines. Returns the
  // indentation (leading spaces) of the next content line, leaving pos_ at its
  // start, or -1 at EOF or at a document marker. Tabs after the indentation are
  // separation, which only flow content may use (see tab_after()).
  int next_content_line() {
    for (;;) {
      if (eof()) return -1;
      size_t p = pos_;
      while (p < s_.size() && s_[p] == ' ') ++p;
      int ind = static_cast<int>(p - pos_);
      size_t q = p;
      while (blank_at(q)) ++q;
      if (eol_at(q)) {
        pos_ = q;
        consume_newline();
        continue;
      }
      if (s_[q] == '#') {
        pos_ = q;
        skip_rest_of_line();
        continue;
      }
      if (ind == 0 && (is_doc_marker_at(p, '-') || is_doc_marker_at(p, '.'))) return -1;
      return ind;
    }
  }
  // Whether the content line starting at p has a tab right after its indentation.
  bool tab_after(size_t p) const {
    while (at(p) == ' ') ++p;
    return at(p) == '\t';
  }
  [[noreturn]] void fail_tab(size_t p) const {
    while (at(p) == ' ') ++p;
    fail({line_, static_cast<uint32_t>(p - line_start_ + 1)}, "tab character used for indentation",
         "YAML indents with spaces only; replace the tab with spaces");
  }
  // Skips blanks on this line; whether one of them was a tab.
  bool skip_inline_ws_tab() {
    bool tab = false;
    while (blank_at(pos_)) tab |= s_[pos_++] == '\t';
    return tab;
  }

  // --- nodes ------------------------------------------------------------------
  Node* new_node(NodeKind k, Mark m) {
    Node& n = out_.arena_.emplace_back();
    n.kind_ = k;
    n.mark_ = m;
    if (++weight_ > opt_.max_nodes)
      fail_limit(m,
                 "document is too large (more than " + std::to_string(opt_.max_nodes) + " nodes)");
    return &n;
  }

  Node* finish(Node* n, const Props& props) {
    if (!props.tag.empty()) n->tag_ = props.tag;
    if (!props.anchor.empty()) anchors_[props.anchor] = n;
    return n;
  }

  Node* make_null(Mark m, const Props& props) { return finish(new_node(NodeKind::Null, m), props); }

  struct DepthGuard {
    Parser& p;
    DepthGuard(Parser& parser, Mark m) : p(parser) {
      if (++p.depth_ > p.opt_.max_depth)
        p.fail_limit(m, "nesting is deeper than " + std::to_string(p.opt_.max_depth) + " levels",
                     "flatten the document; no cluster file needs this much nesting");
    }
    ~DepthGuard() { --p.depth_; }
  };

  // An anchor (&name) or a tag (!tag) at pos_. `flow`: inside a flow collection,
  // where , ] } may follow directly.
  void parse_property(Props& props, bool flow) {
    Mark m = mark();
    if (props.empty()) props.mark = m;
    const char kind = c();
    if (kind == '&') {
      size_t start = ++pos_;
      while (!blank_or_eol(pos_) && !flow_indicator(s_[pos_])) ++pos_;
      if (pos_ == start) fail(m, "anchor without a name", "write &name before the value");
      if (!props.anchor.empty())
        fail(m, "a node can have only one anchor, and this one already has &" + props.anchor,
             "remove one of the anchors");
      props.anchor.assign(s_.substr(start, pos_ - start));
    } else {
      if (!props.tag.empty())
        fail(m, "a node can have only one tag, and this one already has " + props.tag,
             "remove one of the tags");
      props.tag = parse_tag(m);
    }
    if (!blank_or_eol(pos_) && !(flow && (c() == ',' || c() == ']' || c() == '}')))
      fail(mark(),
           std::string("unexpected '") + c() + "' after the " + (kind == '&' ? "anchor" : "tag"),
           kind == '&' ? "an anchor name ends at a space; separate it from the value"
                       : "a tag ends at a space and may not contain , [ ] { }; separate it from "
                         "the value");
  }

  std::string parse_tag(Mark m) {
    ++pos_;  // '!'
    std::string resolved;
    if (c() == '<') {  // verbatim: !<tag:example.com,2000:app/x>
      size_t start = ++pos_;
      while (!blank_or_eol(pos_) && s_[pos_] != '>') ++pos_;
      if (c() != '>' || pos_ == start)
        fail(m, "unterminated verbatim tag", "write it as !<tag:example.com,2000:type>");
      resolved.assign(s_.substr(start, pos_ - start));
      for (char ch : resolved)
        if (!uri_char(ch))
          fail(m, "invalid character in a verbatim tag", "write other characters as %-escapes");
      if (!escapes_ok(resolved)) fail(m, "a % in the verbatim tag is not an escape", kEscapeHint);
      ++pos_;
      if (resolved == "!")
        fail(m, "the verbatim tag !<!> is not allowed", "write ! for a non-specific tag");
      return tag_shorthand(resolved);
    }
    size_t start = pos_;
    while (!blank_or_eol(pos_) && !flow_indicator(s_[pos_])) {
      if (!uri_char(s_[pos_]))
        fail(mark(), "invalid character in a tag",
             "a tag holds letters, digits and URI punctuation; write other characters as "
             "%-escapes");
      ++pos_;
    }
    std::string_view t = s_.substr(start, pos_ - start);
    std::string handle = "!";
    std::string_view suffix = t;
    if (size_t bang = t.find('!'); bang != std::string_view::npos) {
      handle = "!" + std::string(t.substr(0, bang + 1));
      suffix = t.substr(bang + 1);
      for (char ch : handle.substr(1, handle.size() - 2))
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-')
          fail(m, "invalid tag handle " + handle, "a named tag handle looks like !name!");
      if (suffix.find('!') != std::string_view::npos)
        fail(m, "invalid tag !" + std::string(t), "a tag holds at most a handle and a suffix");
      if (suffix.empty())
        fail(m, "the tag " + handle + " has no suffix",
             "write " + handle + "type, e.g. !!str or !e!foo");
    }
    if (handle == "!" && suffix.empty()) return "!";  // non-specific
    const std::string* prefix = nullptr;
    for (const auto& [h, pre] : handles_)
      if (h == handle) prefix = &pre;
    static const std::string primary = "!", secondary = "tag:yaml.org,2002:";
    if (!prefix && handle == "!") prefix = &primary;
    if (!prefix && handle == "!!") prefix = &secondary;
    if (!prefix)
      fail(m, "undefined tag handle " + handle,
           "declare it before the document with %TAG " + handle +
               " <prefix>; a %TAG "
               "directive applies to the next document only");
    if (!escapes_ok(suffix))
      fail(m, "a % in the tag !" + std::string(t) + " is not an escape", kEscapeHint);
    resolved = *prefix;
    for (size_t i = 0; i < suffix.size(); ++i) {  // %-escapes, e.g. %21 for '!'
      int hi, lo;
      if (suffix[i] == '%' && i + 2 < suffix.size() && (hi = hex_value(suffix[i + 1])) >= 0 &&
          (lo = hex_value(suffix[i + 2])) >= 0) {
        resolved += static_cast<char>(hi * 16 + lo);
        i += 2;
      } else {
        resolved += suffix[i];
      }
    }
    if (!valid_utf8(resolved))
      fail(m, "a %-escape in the tag is not UTF-8", "escape each byte of a UTF-8 character");
    return tag_shorthand(resolved);
  }

  // Every '%' of a URI starts an escape of two hex digits (ns-uri-char).
  static bool escapes_ok(std::string_view t) {
    for (size_t i = 0; i < t.size(); ++i)
      if (t[i] == '%') {
        if (i + 2 >= t.size() || hex_value(t[i + 1]) < 0 || hex_value(t[i + 2]) < 0) return false;
        i += 2;
      }
    return true;
  }
  static constexpr const char* kEscapeHint =
      "a % in a tag starts an escape of two hex digits, e.g. %21 for '!'";

  // YAML's ns-uri-char (the '%' of an escape included).
  static bool uri_char(char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) ||
           std::string_view("-#;/?:@&=+$,_.!~*'()[]%").find(ch) != std::string_view::npos;
  }
  static bool valid_utf8(std::string_view t) {
    for (size_t i = 0; i < t.size(); ++i) {
      auto b = static_cast<unsigned char>(t[i]);
      if (b < 0x80) continue;
      size_t n = b >= 0xC2 && b <= 0xDF   ? 2
                 : b >= 0xE0 && b <= 0xEF ? 3
                 : b >= 0xF0 && b <= 0xF4 ? 4
                                          : 0;
      if (n == 0 || i + n > t.size()) return false;
      for (size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(t[i + k]) & 0xC0) != 0x80) return false;
      i += n - 1;
    }
    return true;
  }

  Node* parse_alias(const Props& props = {}) {
    Mark m = mark();
    if (!props.empty())
      fail(props.mark, "an alias cannot have an anchor or a tag",
           "an alias stands for the anchored node as it is; remove the anchor or tag before *");
    size_t start = ++pos_;
    while (!blank_or_eol(pos_) && !flow_indicator(s_[pos_])) ++pos_;
    std::string name(s_.substr(start, pos_ - start));
    if (name.empty()) fail(m, "alias without a name", "write *name to refer to an &name anchor");
    auto it = anchors_.find(name);
    if (it == anchors_.end())
      fail(m, "unknown alias *" + name, "define the anchor &" + name + " before using it");
    weight_ += it->second->weight_;
    if (weight_ > opt_.max_nodes)
      fail_limit(m, "aliases expand to more than " + std::to_string(opt_.max_nodes) + " nodes",
                 "the document repeats anchors recursively (a 'billion laughs' document?)");
    return it->second;
  }

  // --- stream -----------------------------------------------------------------
  void prepass() {
    if (s_.size() >= 3 && s_.substr(0, 3) == "\xEF\xBB\xBF") {
      pos_ = 3;
      line_start_ = 3;
    }
    uint32_t line = 1;
    size_t ls = 0;
    for (size_t i = 0; i < s_.size(); ++i) {
      unsigned char ch = static_cast<unsigned char>(s_[i]);
      if (ch >= 0x20 && ch < 0x7f) continue;
      if (ch >= 0x80) {
        size_t n = utf8_length(i);
        if (n == 0)
          fail({line, static_cast<uint32_t>(i - ls + 1)},
               "invalid UTF-8, or a character that YAML does not allow",
               "YAML files are UTF-8 text; convert the file (e.g. iconv -f latin1 -t utf-8)");
        i += n - 1;
        continue;
      }
      if (ch == '\n') {
        ++line;
        ls = i + 1;
        continue;
      }
      if (ch == '\t') continue;
      if (ch == '\r' && i + 1 < s_.size() && s_[i + 1] == '\n') continue;
      char buf[8];
      std::snprintf(buf, sizeof buf, "0x%02X", ch);
      fail({line, static_cast<uint32_t>(i - ls + 1)},
           std::string("control character ") + buf + " is not allowed in YAML",
           ch == '\r' ? "convert old Mac line endings (CR) to LF" : "is this a binary file?");
    }
  }

  // pos_ at '%' at the start of a line.
  void parse_directive(bool& seen_yaml) {
    Mark m = mark();
    size_t start = ++pos_;
    while (!blank_or_eol(pos_)) ++pos_;
    std::string_view name = s_.substr(start, pos_ - start);
    auto word = [&]() {
      skip_inline_ws();
      size_t b = pos_;
      while (!blank_or_eol(pos_)) ++pos_;
      return s_.substr(b, pos_ - b);
    };
    if (name == "YAML") {
      if (seen_yaml) fail(m, "duplicate %YAML directive", "a document takes one %YAML line");
      seen_yaml = true;
      std::string_view v = word();
      size_t dot = v.find('.');
      bool ok = dot != std::string_view::npos && dot > 0 && dot + 1 < v.size();
      for (size_t i = 0; ok && i < v.size(); ++i)
        ok = i == dot || std::isdigit(static_cast<unsigned char>(v[i]));
      if (!ok) fail(m, "invalid %YAML directive", "write %YAML 1.2");
      if (v.substr(0, dot) != "1")
        fail(m, "unsupported YAML version " + std::string(v), "this reader reads YAML 1.x");
    } else if (name == "TAG") {
      std::string_view handle = word();
      bool ok = handle.size() >= 1 && handle.front() == '!' && handle.back() == '!';
      for (size_t i = 1; ok && i + 1 < handle.size(); ++i)
        ok = std::isalnum(static_cast<unsigned char>(handle[i])) || handle[i] == '-';
      std::string_view prefix = word();
      for (char ch : prefix) ok = ok && uri_char(ch);
      ok = ok && escapes_ok(prefix);
      if (!ok || prefix.empty())
        fail(m, "invalid %TAG directive", "write %TAG !e! tag:example.com,2000: (handle, prefix)");
      for (const auto& h : handles_)
        if (h.first == handle)
          fail(m, "duplicate %TAG directive for " + std::string(handle), "declare a handle once");
      handles_.emplace_back(std::string(handle), std::string(prefix));
    } else {
      while (!eol_at(pos_) && !(s_[pos_] == '#' && blank_at(pos_ - 1)))
        ++pos_;  // reserved: ignored
    }
    finish_line();
  }

  // The length of the valid, printable UTF-8 sequence at i (YAML's c-printable:
  // no surrogates, no U+FFFE/U+FFFF, no C1 controls but U+0085), or 0.
  size_t utf8_length(size_t i) const {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(at(i + k)); };
    unsigned char b0 = byte(0);
    size_t n;
    uint32_t cp;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      n = 2;
      cp = b0 & 0x1Fu;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      n = 3;
      cp = b0 & 0x0Fu;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      n = 4;
      cp = b0 & 0x07u;
    } else {
      return 0;
    }
    if (i + n > s_.size()) return 0;
    for (size_t k = 1; k < n; ++k) {
      if ((byte(k) & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (byte(k) & 0x3Fu);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF) return 0;
    if (cp >= 0x80 && cp <= 0x9F && cp != 0x85) return 0;
    return n;
  }

  void parse_stream() {
    bool open_doc = false;  // a document ended without '...' (directives need one first)
    for (;;) {
      bool seen_yaml = false, directives = false;
      Mark directive_mark;
      handles_.clear();
      for (;;) {
        int ind = next_content_line();
        if (ind == 0 && c() == '%') {
          if (open_doc)
            fail(mark(), "a directive after a document needs '...' to end that document first",
                 "write ... on the line before the directive");
          if (!directives) directive_mark = mark();
          directives = true;
          parse_directive(seen_yaml);
          continue;
        }
        break;
      }
      if (eof() || is_doc_marker_at(pos_, '.')) {
        if (directives)
          fail(directive_mark, "directives without a document",
               "a directive applies to the document after it: add '---' and the document");
        if (eof()) return;
        pos_ += 3;
        finish_line();
        open_doc = false;
        continue;
      }
      Mark dm = mark();
      Node* root;
      if (is_doc_marker_at(pos_, '-')) {
        pos_ += 3;
        bool tab = skip_inline_ws_tab();
        if (at_comment_or_eol()) {
          finish_line();
          root = parse_block_after_eol(-1, false, dm, {});
        } else {
          if (starts_block_collection(pos_))
            fail(mark(), "a block mapping or list cannot start on the '---' line",
                 "start it on the line after '---'");
          root = parse_block_node(-1, {}, false, tab);
        }
      } else {
        if (directives)
          fail(mark(), "directives must be followed by '---'",
               "write --- on the line after the directives");
        root = parse_block_after_eol(-1, false, dm, {});
      }
      out_.documents.push_back(root);
      anchors_.clear();
      open_doc = true;
      int ind = next_content_line();
      if (ind < 0) {
        if (eof()) return;
        if (is_doc_marker_at(pos_, '.')) {
          pos_ += 3;
          finish_line();
          open_doc = false;
        }
        continue;
      }
      if (ind == 0 && c() == '%')
        fail(mark(), "a directive after a document needs '...' to end that document first",
             "write ... on the line before the directive");
      pos_ += static_cast<size_t>(ind);
      fail(mark(), "unexpected content at this indentation",
           "this line is less indented than the block above it; check its indentation");
    }
  }

  // Whether a block collection (mapping or list) starts at p: '- ', '? ', ': ' or a key.
  bool starts_block_collection(size_t p) const {
    char ch = at(p);
    if ((ch == '-' || ch == '?' || ch == ':') && blank_or_eol(p + 1)) return true;
    return line_has_mapping_key(p);
  }

  // pos_ at the start of a line. Parses the block node that starts on a following
  // line, indented more than parent_indent (or a '-' list at parent_indent when the
  // parent is a mapping). An absent node is null.
  Node* parse_block_after_eol(int parent_indent, bool allow_seq_at_parent, Mark empty_mark,
                              Props props) {
    int ind = next_content_line();
    if (ind >= 0) {
      if (ind > parent_indent) {
        pos_ += static_cast<size_t>(ind);
        bool tab = skip_inline_ws_tab();
        return parse_block_node(parent_indent, std::move(props), allow_seq_at_parent, tab);
      }
      if (ind == parent_indent && allow_seq_at_parent && at(pos_ + ind) == '-' &&
          blank_or_eol(pos_ + ind + 1)) {
        pos_ += static_cast<size_t>(ind);
        return parse_block_sequence(props, mark());
      }
    }
    return make_null(props.empty() ? empty_mark : props.mark, props);
  }

  // Adds the properties of a line to those of the lines before (both belong to one node).
  void merge_props(Props& into, const Props& line) {
    if (line.empty()) return;
    if (!into.anchor.empty() && !line.anchor.empty())
      fail(line.mark, "a node can have only one anchor, and this one already has &" + into.anchor,
           "remove one of the anchors");
    if (!into.tag.empty() && !line.tag.empty())
      fail(line.mark, "a node can have only one tag, and this one already has " + into.tag,
           "remove one of the tags");
    if (into.empty()) into.mark = line.mark;
    if (!line.anchor.empty()) into.anchor = line.anchor;
    if (!line.tag.empty()) into.tag = line.tag;
  }

  // pos_ at the first character of a node in block context. `after_tab`: a tab
  // separated it from its indicator or indentation, so it may not be a block collection.
  Node* parse_block_node(int parent_indent, Props props, bool allow_seq_at_parent,
                         bool after_tab = false) {
    Mark m = mark();
    DepthGuard guard(*this, m);
    const size_t start = pos_;
    // Properties on the line of a mapping key belong to that key, not to the mapping.
    if (line_has_mapping_key(start)) {
      if (after_tab) fail_tab_separation(m);
      return parse_block_mapping(props, m);
    }
    Props line;
    while (c() == '&' || c() == '!') {
      parse_property(line, false);
      skip_inline_ws();
      if (at_comment_or_eol()) {
        merge_props(props, line);
        finish_line();
        return parse_block_after_eol(parent_indent, allow_seq_at_parent, m, std::move(props));
      }
    }
    merge_props(props, line);
    m = props.empty() ? m : mark();
    char ch = c();
    if ((ch == '-' || ch == '?' || ch == ':') && blank_or_eol(pos_ + 1)) {
      if (!line.empty())
        fail(m, "a block collection cannot start on the line of its anchor or tag",
             "put the anchor or tag on a line of its own before the collection");
      if (after_tab) fail_tab_separation(m);
      if (ch == '-') return parse_block_sequence(props, m);
      return parse_block_mapping(props, m);
    }
    if (ch == '|' || ch == '>') return parse_block_scalar(parent_indent, props, m);
    if (ch == '[' || ch == '{') {
      cont_indent_ = parent_indent;
      Node* n = parse_flow_node(mark(), props);
      finish_line();
      return n;
    }
    if (ch == '*') {
      Node* n = parse_alias(props);
      finish_line();
      return n;
    }
    if (ch == '"' || ch == '\'') {
      cont_indent_ = parent_indent;
      Node* n = parse_quoted(props);
      finish_line();
      return n;
    }
    check_plain_start(false);
    return parse_plain_block(parent_indent, props, m);
  }

  [[noreturn]] void fail_tab_separation(Mark m) const {
    fail(m, "a tab cannot indent a nested block collection",
         "YAML indents with spaces only; replace the tab with spaces");
  }

  // Characters that cannot start a plain scalar (YAML indicators).
  void check_plain_start(bool flow) const {
    char ch = c();
    if (ch == '@' || ch == '`')
      fail(mark(), std::string("'") + ch + "' is reserved and cannot start a plain value",
           "quote the value");
    if (ch == '%' || ch == '#' || ch == '|' || ch == '>' || ch == ']' || ch == '}' ||
        (ch == ',' && !flow))
      fail(mark(), std::string("'") + ch + "' cannot start a plain value",
           ch == '#' ? "a comment needs a space before '#'" : "quote the value");
    if ((ch == '-' || ch == '?' || ch == ':') &&
        (blank_or_eol(pos_ + 1) || (flow && flow_indicator(at(pos_ + 1)))))
      fail(mark(), std::string("a lone '") + ch + "' is not a value here",
           "quote it to mean the text " + std::string(1, ch));
  }

  // The end (exclusive) of a flow collection starting at p if it closes on this line.
  size_t flow_end_on_line(size_t p) const {
    int depth = 0;
    for (size_t q = p; !eol_at(q); ++q) {
      char ch = s_[q];
      if (ch == '"' || ch == '\'') {
        size_t e = quoted_end_on_line(q);
        if (e == std::string::npos) return e;
        q = e - 1;
      } else if (ch == '[' || ch == '{') {
        ++depth;
      } else if (ch == ']' || ch == '}') {
        if (--depth == 0) return q + 1;
      } else if (ch == '#' && blank_at(q - 1)) {
        return std::string::npos;
      }
    }
    return std::string::npos;
  }
  // The end (exclusive) of a quoted scalar starting at p if it closes on this line.
  size_t quoted_end_on_line(size_t p) const {
    const char ch = s_[p];
    for (size_t q = p + 1; !eol_at(q); ++q) {
      if (ch == '\'' && s_[q] == '\'') {
        if (at(q + 1) == '\'') {
          ++q;
          continue;
        }
        return q + 1;
      }
      if (ch == '"' && s_[q] == '\\') {
        ++q;
        continue;
      }
      if (ch == '"' && s_[q] == '"') return q + 1;
    }
    return std::string::npos;
  }

  // Whether the text from p on this line is `key: ...`, `? key` or `: value` (block
  // context); a key may carry an anchor and a tag.
  bool line_has_mapping_key(size_t p) const {
    bool props = false;
    while (at(p) == '&' || at(p) == '!') {
      props = true;
      while (!blank_or_eol(p)) ++p;
      while (blank_at(p)) ++p;
    }
    char ch = at(p);
    if (ch == ':' && blank_or_eol(p + 1)) return true;  // `: v`, or `&a : v` (empty key)
    if (ch == '?' && blank_or_eol(p + 1)) return !props;
    size_t e = std::string::npos;
    if (ch == '"' || ch == '\'')
      e = quoted_end_on_line(p);
    else if (ch == '[' || ch == '{')
      e = flow_end_on_line(p);
    else if (ch == '*') {
      e = p;
      while (!blank_or_eol(e)) ++e;
    } else if (ch == '#' || eol_at(p) || (ch == '-' && blank_or_eol(p + 1))) {
      return false;
    } else {
      for (size_t q = p; !eol_at(q); ++q) {
        if (s_[q] == ':' && blank_or_eol(q + 1)) return true;
        if (s_[q] == '#' && q > p && blank_at(q - 1)) return false;
      }
      return false;
    }
    if (e == std::string::npos) return false;
    while (blank_at(e)) ++e;
    return at(e) == ':' && blank_or_eol(e + 1);
  }

  // An implicit key (on one line) at pos_, with its anchor and tag.
  Node* parse_key() {
    Mark m = mark();
    Props props;
    while (c() == '&' || c() == '!') {
      parse_property(props, false);
      skip_inline_ws();
    }
    char ch = c();
    Node* k;
    if (ch == ':' && blank_or_eol(pos_ + 1)) {
      k = make_null(props.mark, props);  // an empty key with properties: `!!null : a`
    } else if (ch == '*') {
      k = parse_alias(props);
    } else if (ch == '"' || ch == '\'' || ch == '[' || ch == '{') {
      cont_indent_ = -1;
      k = ch == '[' || ch == '{' ? parse_flow_node(mark(), props) : parse_quoted(props);
      if (line_ != m.line)
        fail(m, "a mapping key must be on one line", "use a shorter key, or the '? ' form");
    } else {
      check_plain_start(false);
      Mark km = mark();
      size_t start = pos_, end = pos_;
      while (!eol_at(pos_) && !(s_[pos_] == ':' && blank_or_eol(pos_ + 1))) {
        if (!blank_at(pos_)) end = pos_ + 1;
        ++pos_;
      }
      k = new_node(NodeKind::Scalar, km);
      k->text_.assign(s_.substr(start, end - start));
      k->content_line_ = km.line;
      k->content_column_ = km.column;
      finish(k, props);
    }
    return k;
  }

  void add_pair(Node* map, Node* key, Node* value,
                std::unordered_map<std::string_view, size_t>& index) {
    if (key->kind_ == NodeKind::Scalar) {
      std::string_view k = key->text_;
      size_t found = SIZE_MAX;
      if (map->pairs_.size() < 12 && index.empty()) {
        for (size_t i = 0; i < map->pairs_.size(); ++i)
          if (map->pairs_[i].key->kind_ == NodeKind::Scalar && map->pairs_[i].key->text_ == k) {
            found = i;
            break;
          }
      } else {
        if (index.empty())
          for (size_t i = 0; i < map->pairs_.size(); ++i)
            if (map->pairs_[i].key->kind_ == NodeKind::Scalar)
              index.emplace(map->pairs_[i].key->text_, i);
        auto it = index.find(k);
        if (it != index.end()) found = it->second;
      }
      if (found != SIZE_MAX && k != "<<") {
        Pair& prev = map->pairs_[found];
        out_.warnings.push_back(
            {key->mark_, "duplicate-key",
             "duplicate key \"" + std::string(k) + "\" (first defined at line " +
                 std::to_string(prev.key->mark_.line) + ")",
             "YAML loaders keep only the last one, silently; remove or rename one of them",
             prev.key->mark_});
        prev.value = value;
        map->weight_ += value->weight_;
        return;
      }
      if (!index.empty()) index.emplace(k, map->pairs_.size());
    }
    map->pairs_.push_back({key, value});
    map->weight_ += key->weight_ + value->weight_;
  }

  // Expands `<<: *anchor` merge keys: local keys win, then merged maps in order.
  void expand_merges(Node* map) {
    if (!opt_.merge_keys) return;
    bool has_merge = false;
    for (const auto& p : map->pairs_)
      if (p.key->kind_ == NodeKind::Scalar && p.key->style_ == ScalarStyle::Plain &&
          p.key->text_ == "<<")
        has_merge = true;
    if (!has_merge) return;
    std::vector<Pair> local, merged;
    std::vector<const Node*> sources;
    for (const auto& p : map->pairs_) {
      if (p.key->kind_ == NodeKind::Scalar && p.key->style_ == ScalarStyle::Plain &&
          p.key->text_ == "<<") {
        if (p.value->kind_ == NodeKind::Mapping) {
          sources.push_back(p.value);
        } else if (p.value->kind_ == NodeKind::Sequence) {
          for (const Node* item : p.value->items_) {
            if (item->kind_ != NodeKind::Mapping)
              fail(item->mark_, "a merge key (<<) takes a mapping or a list of mappings", "");
            sources.push_back(item);
          }
        } else {
          fail(p.value->mark_, "a merge key (<<) takes a mapping or a list of mappings, not " +
                                   p.value->describe());
        }
      } else {
        local.push_back(p);
      }
    }
    auto present = [&](const std::string& k) {
      for (const auto& p : local)
        if (p.key->kind_ == NodeKind::Scalar && p.key->text_ == k) return true;
      for (const auto& p : merged)
        if (p.key->kind_ == NodeKind::Scalar && p.key->text_ == k) return true;
      return false;
    };
    for (const Node* src : sources)
      for (const auto& p : src->pairs_)
        if (p.key->kind_ != NodeKind::Scalar || !present(p.key->text_)) merged.push_back(p);
    local.insert(local.end(), merged.begin(), merged.end());
    map->pairs_ = std::move(local);
  }

  // The value after an explicit ':' (of '? key' or of an empty key), pos_ at ':'.
  Node* parse_explicit_value(int indent) {
    Mark m = mark();
    ++pos_;
    bool tab = skip_inline_ws_tab();
    if (at_comment_or_eol()) {
      finish_line();
      return parse_block_after_eol(indent, true, m, {});
    }
    return parse_block_node(indent, {}, false, tab);
  }

  // pos_ at the first key; its column is the mapping's indentation.
  Node* parse_block_mapping(const Props& props, Mark m) {
    const int indent = static_cast<int>(column0());
    Node* map = new_node(NodeKind::Mapping, m);
    std::unordered_map<std::string_view, size_t> index;
    for (;;) {
      Node* key;
      Node* value;
      if (c() == '?' && blank_or_eol(pos_ + 1)) {  // explicit key: ? key \n : value
        Mark km = mark();
        ++pos_;
        bool tab = skip_inline_ws_tab();
        if (at_comment_or_eol()) {
          finish_line();
          key = parse_block_after_eol(indent, true, km, {});
        } else {
          key = parse_block_node(indent, {}, false, tab);
        }
        int ind = next_content_line();
        if (ind == indent && at(pos_ + ind) == ':' && blank_or_eol(pos_ + ind + 1)) {
          pos_ += static_cast<size_t>(ind);
          value = parse_explicit_value(indent);
        } else {
          value = make_null(key->mark_, {});
        }
      } else if (c() == ':' && blank_or_eol(pos_ + 1)) {  // empty key
        key = make_null(mark(), {});
        value = parse_explicit_value(indent);
      } else {
        key = parse_key();
        skip_inline_ws();
        if (c() != ':') fail(mark(), "expected ':' after the mapping key", "write key: value");
        Mark after_colon = mark();
        ++pos_;
        bool tab = skip_inline_ws_tab();
        if (at_comment_or_eol()) {
          finish_line();
          value = parse_block_after_eol(indent, true, after_colon, {});
        } else {
          value = parse_inline_value(indent, tab);
        }
      }
      add_pair(map, key, value, index);
      int ind = next_content_line();
      if (ind < 0 || ind < indent) break;
      if (ind > indent) {
        pos_ += static_cast<size_t>(ind);
        fail(mark(), "unexpected indentation",
             "this line is indented more than the keys of the mapping above it (column " +
                 std::to_string(indent + 1) +
                 "); align it with them or indent it under a key that has no value");
      }
      if (tab_after(pos_)) fail_tab(pos_);
      pos_ += static_cast<size_t>(ind);
      if (!line_has_mapping_key(pos_)) {
        if (c() == '-' && blank_or_eol(pos_ + 1))
          fail(mark(), "a list item where a mapping key was expected",
               "indent the '- ' items under their key, or add a key before them");
        fail(mark(), "expected a mapping key (key: value)",
             "each line at this indentation must be 'key: value'; a value that continues belongs "
             "further right");
      }
    }
    expand_merges(map);
    return finish(map, props);
  }

  // A value that starts on the same line as its implicit key, after ": ".
  Node* parse_inline_value(int parent_indent, bool after_tab = false) {
    Mark m = mark();
    Props props;
    while (c() == '&' || c() == '!') {
      parse_property(props, false);
      skip_inline_ws();
      if (at_comment_or_eol()) {
        finish_line();
        return parse_block_after_eol(parent_indent, true, m, std::move(props));
      }
    }
    DepthGuard guard(*this, m);
    m = mark();
    char ch = c();
    if (ch == '|' || ch == '>') return parse_block_scalar(parent_indent, props, m);
    if (ch == '[' || ch == '{') {
      cont_indent_ = parent_indent;
      Node* n = parse_flow_node(mark(), props);
      finish_line();
      return n;
    }
    if (ch == '*') {
      Node* n = parse_alias(props);
      finish_line();
      return n;
    }
    if (ch == '"' || ch == '\'') {
      cont_indent_ = parent_indent;
      Node* n = parse_quoted(props);
      skip_inline_ws();
      if (c() == ':' && blank_or_eol(pos_ + 1))
        fail(mark(), "mapping values are not allowed here",
             "a nested mapping cannot start on the line of its key; put it on the next line, "
             "indented");
      finish_line();
      return n;
    }
    if (ch == '-' && blank_or_eol(pos_ + 1))
      fail(m, "a list cannot start on the same line as its key",
           "put each '- item' on its own line below the key, indented");
    if (ch == '?' && blank_or_eol(pos_ + 1))
      fail(m, "a complex key ('? ') cannot start on the same line as its key",
           "put the '? key' on its own line below the key, indented");
    (void)after_tab;
    check_plain_start(false);
    return parse_plain_block(parent_indent, props, m);
  }

  // Scans one line segment of a plain scalar; returns [start, end) without
  // trailing blanks, and whether a comment ended it. pos_ ends at the line end or '#'.
  std::pair<std::string_view, bool> plain_segment(bool continuation = false) {
    size_t start = pos_, end = pos_;
    bool comment = false;
    while (!eol_at(pos_)) {
      char ch = s_[pos_];
      if (ch == ':' && blank_or_eol(pos_ + 1))
        fail(
            mark(), "mapping values are not allowed here",
            continuation
                ? "this line is indented more than the key above it, so it continues that key's "
                  "value; "
                  "align it with the other keys"
                : "quote the value if it contains ': ', or move a nested mapping to its own lines");
      if (ch == '#' && pos_ > start && blank_at(pos_ - 1)) {
        comment = true;
        break;
      }
      if (!blank_at(pos_)) end = pos_ + 1;
      ++pos_;
    }
    return {s_.substr(start, end - start), comment};
  }

  Node* parse_plain_block(int parent_indent, const Props& props, Mark m) {
    Node* n = new_node(NodeKind::Scalar, m);
    n->content_line_ = m.line;
    n->content_column_ = m.column;
    auto [seg, comment] = plain_segment();
    n->text_.assign(seg);
    skip_rest_of_line();
    while (!comment && !eof()) {
      // Look ahead: empty lines, then a more-indented content line continues the scalar.
      size_t save_pos = pos_, save_ls = line_start_;
      uint32_t save_line = line_;
      int empties = 0;
      int ind = -1;
      size_t first = pos_;
      for (;;) {
        if (eof()) break;
        size_t p = pos_;
        while (p < s_.size() && s_[p] == ' ') ++p;
        size_t q = p;
        while (blank_at(q)) ++q;
        if (eol_at(q)) {
          pos_ = q;
          consume_newline();
          ++empties;
          continue;
        }
        ind = static_cast<int>(p - pos_);
        first = q;  // tabs after the indentation are separation
        break;
      }
      if (ind < 0 || ind <= parent_indent || at(first) == '#' ||
          (ind == 0 && (is_doc_marker_at(pos_, '-') || is_doc_marker_at(pos_, '.')))) {
        pos_ = save_pos;
        line_start_ = save_ls;
        line_ = save_line;
        break;
      }
      pos_ = first;
      auto [more, c2] = plain_segment(true);
      if (empties == 0)
        n->text_ += ' ';
      else
        n->text_.append(static_cast<size_t>(empties), '\n');
      n->text_.append(more);
      comment = c2;
      skip_rest_of_line();
    }
    return finish(n, props);
  }

  // pos_ at '-' of the first item; its column is the sequence's indentation.
  Node* parse_block_sequence(const Props& props, Mark m) {
    const int indent = static_cast<int>(column0());
    Node* seq = new_node(NodeKind::Sequence, m);
    for (;;) {
      Mark im = mark();
      ++pos_;
      bool tab = skip_inline_ws_tab();
      Node* item;
      if (at_comment_or_eol()) {
        finish_line();
        item = parse_block_after_eol(indent, false, im, {});
      } else {
        item = parse_block_node(indent, {}, false, tab);
      }
      seq->items_.push_back(item);
      seq->weight_ += item->weight_;
      int ind = next_content_line();
      if (ind < 0 || ind < indent) break;
      if (ind > indent) {
        pos_ += static_cast<size_t>(ind);
        fail(mark(), "unexpected indentation",
             "this line is indented more than the '- ' items above it (column " +
                 std::to_string(indent + 1) +
                 "); align it with them, or with the keys of the item's mapping");
      }
      if (tab_after(pos_)) fail_tab(pos_);
      if (!(at(pos_ + ind) == '-' && blank_or_eol(pos_ + ind + 1))) break;
      pos_ += static_cast<size_t>(ind);
    }
    return finish(seq, props);
  }

  Node* parse_block_scalar(int parent_indent, const Props& props, Mark m) {
    const bool literal = c() == '|';
    ++pos_;
    int chomp = 0;  // -1 strip, 0 clip, +1 keep
    int explicit_indent = 0;
    for (int i = 0; i < 2; ++i) {
      char ch = c();
      if ((ch == '-' || ch == '+') && chomp == 0) {
        chomp = ch == '-' ? -1 : 1;
        ++pos_;
      } else if (ch >= '1' && ch <= '9' && explicit_indent == 0) {
        explicit_indent = ch - '0';
        ++pos_;
      }
    }
    if (!blank_or_eol(pos_))
      fail(mark(), "invalid block scalar header",
           "after | or > only a chomping indicator (- or +) and one indentation digit (1-9) may "
           "follow");
    finish_line();

    Node* n = new_node(NodeKind::Scalar, m);
    n->style_ = literal ? ScalarStyle::Literal : ScalarStyle::Folded;
    n->content_line_ = line_;

    // Find the content indentation.
    int indent;
    if (explicit_indent) {
      // At the top (parent -1) libyaml, PyYAML and libfyaml all indent by the indicator.
      indent = std::max(parent_indent, 0) + explicit_indent;
    } else {
      size_t p = pos_;
      uint32_t l = line_;
      int max_empty = 0;
      uint32_t max_empty_line = 0;
      indent = -1;
      while (p < s_.size()) {
        size_t q = p;
        while (q < s_.size() && s_[q] == ' ') ++q;
        if (eol_at(q)) {
          int sp = static_cast<int>(q - p);
          if (sp > max_empty) {
            max_empty = sp;
            max_empty_line = l;
          }
          while (q < s_.size() && s_[q] != '\n') ++q;
          p = q + 1;
          ++l;
          continue;
        }
        indent = static_cast<int>(q - p);
        break;
      }
      // An empty scalar: its empty lines may hold up to the most spaces of any of them.
      if (indent <= parent_indent) indent = std::max(parent_indent + 1, max_empty);
      if (max_empty > indent && indent > parent_indent && p < s_.size())
        fail({max_empty_line, 1},
             "a leading empty line has more spaces than the first line of the block scalar",
             "remove the trailing spaces on that line, or use an indentation indicator such as |2");
    }
    n->content_column_ = static_cast<uint32_t>(indent + 1);

    std::vector<std::string_view> lines;
    bool final_break = true;  // whether the last line ends with a line break (not EOF)
    while (!eof()) {
      size_t p = pos_;
      while (p < s_.size() && s_[p] == ' ') ++p;
      int sp = static_cast<int>(p - pos_);
      if (eol_at(p)) {
        lines.push_back(sp > indent ? s_.substr(pos_ + indent, p - pos_ - indent)
                                    : std::string_view());
        final_break = p < s_.size();
        pos_ = p;
        consume_newline();
        continue;
      }
      if (sp < indent) {
        size_t q = p;
        while (blank_at(q)) ++q;
        if (eol_at(q))  // only blanks, and a tab among the indentation
          fail({line_, static_cast<uint32_t>(sp + 1)},
               "tab character in the indentation of a block scalar",
               "YAML indents with spaces only; remove the tab or replace it with spaces");
        break;
      }
      if (sp == 0 && (is_doc_marker_at(pos_, '-') || is_doc_marker_at(pos_, '.'))) break;
      size_t e = p;
      while (e < s_.size() && s_[e] != '\n') ++e;
      size_t content_end = (e > p && s_[e - 1] == '\r') ? e - 1 : e;
      lines.push_back(s_.substr(pos_ + indent, content_end - pos_ - indent));
      final_break = e < s_.size();
      pos_ = e;
      consume_newline();
    }
    // Empty lines at the end belong to the chomping, not the content. A line with
    // more spaces than the indentation is content, even if it holds only spaces.
    size_t last = lines.size();
    while (last > 0 && lines[last - 1].empty()) --last;
    std::string& out = n->text_;
    if (literal) {
      for (size_t i = 0; i < last; ++i) {
        out.append(lines[i]);
        if (i + 1 < last) out += '\n';
      }
    } else {
      bool first = true, prev_more = false;
      size_t empties = 0;
      for (size_t i = 0; i < last; ++i) {
        std::string_view l = lines[i];
        if (l.empty()) {
          ++empties;
          continue;
        }
        bool more = l[0] == ' ' || l[0] == '\t';
        if (first) {
          out.append(empties, '\n');
        } else if (!more && !prev_more) {
          if (empties == 0)
            out.push_back(' ');
          else
            out.append(empties, '\n');
        } else {
          out.append(empties + 1, '\n');
        }
        out.append(l);
        first = false;
        prev_more = more;
        empties = 0;
      }
    }
    // |+ keeps the line breaks after the content, not the lines: a last line of
    // only spaces that the file ends without a break adds none (" a\n " is "a\n").
    size_t kept = lines.size() - last;
    if (kept > 0 && !final_break) --kept;
    if (last > 0) {
      // Like libfyaml: |+ keeps no break that the file lacks at its very end.
      if (chomp == 0 || (chomp > 0 && (last < lines.size() || final_break))) out += '\n';
      if (chomp > 0) out.append(kept, '\n');
    } else if (chomp > 0) {
      // |+ keeps the lines of an empty scalar, the last one too when no break
      // ends it (the YAML test suite's JEF9: "- |+\n   " is "\n").
      out.append(lines.size(), '\n');
    }
    return finish(n, props);
  }

  // pos_ past the blanks of a continuation line of a multi-line flow collection or
  // quoted scalar that started at `start`: its indentation must be deeper than the
  // enclosing block collection's.
  void check_continuation_indent(const char* what, Mark start) const {
    if (eof() || cont_indent_ < 0) return;
    size_t p = line_start_;
    while (at(p) == ' ') ++p;
    if (static_cast<int>(p - line_start_) > cont_indent_) return;
    Mark here{line_, static_cast<uint32_t>(p - line_start_ + 1)};
    std::string opened = " opened at line " + std::to_string(start.line) + ", column " +
                         std::to_string(start.column);
    std::string deeper = "indent it more than column " + std::to_string(cont_indent_ + 1);
    if (at(p) == '\t') deeper += " (with spaces: YAML does not indent with tabs)";
    if (std::string_view(what) == "quoted string")
      fail(start,
           "unterminated quoted string: the string" + opened + " goes on to line " +
               std::to_string(here.line) + ", which is not indented enough to continue it",
           "add the closing quote, or if line " + std::to_string(here.line) +
               " continues the string, " + deeper);
    fail(start,
         "unterminated flow collection: the collection" + opened + " goes on to line " +
             std::to_string(here.line) + ", which is not indented enough to continue it",
         "close it with ']' or '}', or if line " + std::to_string(here.line) + " continues it, " +
             deeper);
  }

  // Quoted scalars, single- or multi-line, block or flow context.
  Node* parse_quoted(const Props& props) {
    Mark m = mark();
    const char q = c();
    ++pos_;
    Node* n = new_node(NodeKind::Scalar, m);
    n->style_ = q == '"' ? ScalarStyle::DoubleQuoted : ScalarStyle::SingleQuoted;
    n->content_line_ = m.line;
    n->content_column_ = m.column + 1;
    std::string& out = n->text_;
    size_t raw_ws = std::string::npos;  // where trailing raw blanks begin in `out`
    for (;;) {
      if (eof())
        fail(m, std::string("unterminated ") + (q == '"' ? "double" : "single") + "-quoted string",
             std::string("add the closing ") + q);
      char ch = s_[pos_];
      if (ch == '\n' || ch == '\r') {
        if (raw_ws != std::string::npos) out.resize(raw_ws);
        raw_ws = std::string::npos;
        consume_newline();
        size_t empties = 0;
        for (;;) {
          if (at_line_start_marker())
            fail(mark(), "document marker inside a quoted string",
                 std::string("the string opened at line ") + std::to_string(m.line) +
                     " is not closed");
          while (blank_at(pos_)) ++pos_;
          if (!eof() && (s_[pos_] == '\n' || s_[pos_] == '\r')) {
            consume_newline();
            ++empties;
            continue;
          }
          check_continuation_indent("quoted string", m);
          break;
        }
        if (empties == 0)
          out += ' ';
        else
          out.append(empties, '\n');
        continue;
      }
      if (ch == q) {
        if (q == '\'' && c(1) == '\'') {
          out += '\'';
          pos_ += 2;
          raw_ws = std::string::npos;
          continue;
        }
        ++pos_;
        break;
      }
      if (q == '"' && ch == '\\') {
        raw_ws = std::string::npos;
        if (eol_at(pos_ + 1)) {  // escaped line break: join without a space
          ++pos_;
          if (eof()) continue;
          consume_newline();
          while (blank_at(pos_)) ++pos_;
          if (!eol_at(pos_)) check_continuation_indent("quoted string", m);
          continue;
        }
        parse_escape(out);
        continue;
      }
      if (ch == ' ' || ch == '\t') {
        if (raw_ws == std::string::npos) raw_ws = out.size();
      } else {
        raw_ws = std::string::npos;
      }
      out += ch;
      ++pos_;
    }
    return finish(n, props);
  }

  void parse_escape(std::string& out) {
    Mark m = mark();
    char e = c(1);
    pos_ += 2;
    switch (e) {
      case '0':
        out += '\0';
        return;
      case 'a':
        out += '\a';
        return;
      case 'b':
        out += '\b';
        return;
      case 't':
      case '\t':
        out += '\t';
        return;
      case 'n':
        out += '\n';
        return;
      case 'v':
        out += '\v';
        return;
      case 'f':
        out += '\f';
        return;
      case 'r':
        out += '\r';
        return;
      case 'e':
        out += '\x1b';
        return;
      case ' ':
        out += ' ';
        return;
      case '"':
        out += '"';
        return;
      case '/':
        out += '/';
        return;
      case '\\':
        out += '\\';
        return;
      case 'N':
        out += "\xC2\x85";
        return;
      case '_':
        out += "\xC2\xA0";
        return;
      case 'L':
        out += "\xE2\x80\xA8";
        return;
      case 'P':
        out += "\xE2\x80\xA9";
        return;
      case 'x':
        append_hex(out, 2, m);
        return;
      case 'u':
        append_hex(out, 4, m);
        return;
      case 'U':
        append_hex(out, 8, m);
        return;
      default:
        fail(m, std::string("unknown escape sequence \\") + (e ? std::string(1, e) : std::string()),
             "use single quotes to keep backslashes literally, or write \\\\");
    }
  }

  void append_hex(std::string& out, int digits, Mark m) {
    uint32_t cp = 0;
    for (int i = 0; i < digits; ++i) {
      char h = c();
      int v;
      if (h >= '0' && h <= '9')
        v = h - '0';
      else if (h >= 'a' && h <= 'f')
        v = h - 'a' + 10;
      else if (h >= 'A' && h <= 'F')
        v = h - 'A' + 10;
      else
        fail(m, "invalid hexadecimal escape", "\\x takes 2, \\u 4 and \\U 8 hex digits");
      cp = cp * 16 + static_cast<uint32_t>(v);
      ++pos_;
    }
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      fail(m, "escape is not a valid Unicode code point");
    util::append_utf8(out, cp);
  }

  // --- flow context -------------------------------------------------------------
  // Skips blanks, line breaks and comments inside the flow collection that starts
  // at `start`. Returns whether a line break was crossed.
  bool skip_flow_ws(Mark start) {
    bool crossed = false;
    for (;;) {
      if (eof()) return crossed;
      char ch = s_[pos_];
      if (ch == ' ' || ch == '\t') {
        ++pos_;
      } else if (ch == '\n' || ch == '\r') {
        consume_newline();
        crossed = true;
        if (at_line_start_marker())
          fail(mark(), "document marker inside a flow collection",
               "close the [ or { of line " + std::to_string(start.line) +
                   " before the document ends");
        while (blank_at(pos_)) ++pos_;
        if (!eol_at(pos_)) check_continuation_indent("flow collection", start);
      } else if (ch == '#' && (pos_ == line_start_ || blank_at(pos_ - 1))) {
        while (!eol_at(pos_)) ++pos_;
      } else {
        return crossed;
      }
    }
  }

  bool flow_value_end(size_t p) const { return blank_or_eol(p) || flow_indicator(at(p)); }
  // A key whose ':' may follow without a space: {"a":1}.
  static bool json_like(const Node* n) {
    return n->kind_ == NodeKind::Sequence || n->kind_ == NodeKind::Mapping ||
           (n->kind_ == NodeKind::Scalar &&
            (n->style_ == ScalarStyle::SingleQuoted || n->style_ == ScalarStyle::DoubleQuoted));
  }

  Node* parse_flow_node(Mark outer, Props props = {}) {
    skip_flow_ws(outer);
    Mark m = mark();
    DepthGuard guard(*this, m);
    while (c() == '&' || c() == '!') {
      parse_property(props, true);
      skip_flow_ws(outer);
    }
    m = mark();
    char ch = c();
    if (ch == '[') return parse_flow_sequence(props, m);
    if (ch == '{') return parse_flow_mapping(props, m);
    if (ch == '"' || ch == '\'') return parse_quoted(props);
    if (ch == '*') return parse_alias(props);
    if (eof()) fail(outer, "unterminated flow collection", "close it with ']' or '}'");
    if (ch == ']' || ch == '}' || ch == ',' ||
        (ch == ':' && !props.empty() && flow_value_end(pos_ + 1)))
      return make_null(props.empty() ? m : props.mark, props);
    if (ch == '|' || ch == '>')
      fail(m, "a block scalar (| or >) cannot be inside a flow collection",
           "use a quoted string with \\n, or write the collection in block style");
    check_plain_start(true);
    // A plain scalar in flow context: ends at , [ ] { }, at ': ' or ' #', and may
    // continue on the next lines (folded like any plain scalar).
    Node* n = new_node(NodeKind::Scalar, m);
    n->content_line_ = m.line;
    n->content_column_ = m.column;
    std::string& out = n->text_;
    for (;;) {
      size_t start = pos_, end = pos_;
      while (!eol_at(pos_)) {
        char x = s_[pos_];
        if (flow_indicator(x)) break;
        if (x == ':' && flow_value_end(pos_ + 1)) break;
        if (x == '#' && pos_ > start && blank_at(pos_ - 1)) break;
        if (!blank_at(pos_)) end = pos_ + 1;
        ++pos_;
      }
      out.append(s_.substr(start, end - start));
      if (!eol_at(pos_) || eof()) break;
      // Does the scalar continue on a following line?
      size_t save_pos = pos_, save_ls = line_start_;
      uint32_t save_line = line_;
      size_t empties = 0;
      bool more = false;
      for (;;) {
        consume_newline();
        if (at_line_start_marker()) break;
        while (blank_at(pos_)) ++pos_;
        if (eof()) break;
        if (eol_at(pos_)) {
          ++empties;
          continue;
        }
        char x = s_[pos_];
        more = !(flow_indicator(x) || x == '#' || (x == ':' && flow_value_end(pos_ + 1)));
        break;
      }
      if (!more) {
        pos_ = save_pos;
        line_start_ = save_ls;
        line_ = save_line;
        break;
      }
      check_continuation_indent("flow collection", outer);
      if (empties == 0)
        out += ' ';
      else
        out.append(empties, '\n');
    }
    return finish(n, props);
  }

  Node* single_pair(Node* key, Node* value) {
    Node* map = new_node(NodeKind::Mapping, key->mark_);
    map->pairs_.push_back({key, value});
    map->weight_ += key->weight_ + value->weight_;
    return map;
  }

  // The value after ':' in a flow collection, pos_ at ':'.
  Node* flow_pair_value(Mark outer, char close) {
    Mark m = mark();
    ++pos_;
    skip_flow_ws(outer);
    if (c() == ',' || c() == close) return make_null(m, {});
    return parse_flow_node(outer);
  }

  Node* parse_flow_sequence(const Props& props, Mark m) {
    Node* seq = new_node(NodeKind::Sequence, m);
    ++pos_;
    for (;;) {
      skip_flow_ws(m);
      if (eof())
        fail(m, "unterminated flow sequence",
             "add the closing ']' for the '[' at line " + std::to_string(m.line));
      if (c() == ']') {
        ++pos_;
        break;
      }
      if (c() == ',') fail(mark(), "empty entry in a flow sequence", "remove the extra ','");
      Node* item;
      if ((c() == '?' || c() == ':') && flow_value_end(pos_ + 1)) {
        // [? key : value] and [: value] are one-pair mappings.
        Mark km = mark();
        Node* key;
        if (c() == '?') {
          ++pos_;
          skip_flow_ws(m);
          key = (c() == ',' || c() == ']' || (c() == ':' && flow_value_end(pos_ + 1)))
                    ? make_null(km, {})
                    : parse_flow_node(m);
          skip_flow_ws(m);
        } else {
          key = make_null(km, {});
        }
        Node* value = c() == ':' ? flow_pair_value(m, ']') : make_null(key->mark_, {});
        item = single_pair(key, value);
      } else {
        item = parse_flow_node(m);
        bool crossed = skip_flow_ws(m);
        if (c() == ':' && (json_like(item) || flow_value_end(pos_ + 1))) {
          // [a: b] is a list holding a one-pair mapping; its key must be on one line.
          if (crossed || item->mark_.line != line_)
            fail(mark(), "the key of a pair in a flow sequence must be on one line with its ':'",
                 "put the ':' right after the key, or use the explicit form [? key : value]");
          item = single_pair(item, flow_pair_value(m, ']'));
        }
      }
      seq->items_.push_back(item);
      seq->weight_ += item->weight_;
      skip_flow_ws(m);
      if (c() == ',') {
        ++pos_;
        continue;
      }
      if (c() == ']') continue;
      if (eof())
        fail(m, "unterminated flow sequence",
             "add the closing ']' for the '[' at line " + std::to_string(m.line));
      fail(mark(),
           "expected ',' or ']' in the flow sequence opened at line " + std::to_string(m.line),
           mark().line != m.line
               ? "close the '[' at line " + std::to_string(m.line) + ", column " +
                     std::to_string(m.column) + " with ']'"
               : "separate items with commas; quote items that contain ':' or '#'");
    }
    return finish(seq, props);
  }

  Node* parse_flow_mapping(const Props& props, Mark m) {
    Node* map = new_node(NodeKind::Mapping, m);
    std::unordered_map<std::string_view, size_t> index;
    ++pos_;
    for (;;) {
      skip_flow_ws(m);
      if (eof())
        fail(m, "unterminated flow mapping",
             "add the closing '}' for the '{' at line " + std::to_string(m.line));
      if (c() == '}') {
        ++pos_;
        break;
      }
      if (c() == ',') fail(mark(), "empty entry in a flow mapping", "remove the extra ','");
      Node* key;
      bool colon_any = false;  // ':' may follow without a space
      if (c() == '?' && flow_value_end(pos_ + 1)) {
        Mark km = mark();
        ++pos_;
        skip_flow_ws(m);
        key = (c() == ',' || c() == '}' || (c() == ':' && flow_value_end(pos_ + 1)))
                  ? make_null(km, {})
                  : parse_flow_node(m);
        colon_any = json_like(key);
      } else if (c() == ':' && flow_value_end(pos_ + 1)) {
        key = make_null(mark(), {});
      } else {
        key = parse_flow_node(m);
        colon_any = json_like(key);
      }
      skip_flow_ws(m);
      Node* value;
      if (c() == ':' && (colon_any || flow_value_end(pos_ + 1))) {
        value = flow_pair_value(m, '}');
        skip_flow_ws(m);
      } else {
        value = make_null(key->mark_, {});
      }
      add_pair(map, key, value, index);
      if (c() == ',') {
        ++pos_;
        continue;
      }
      if (c() == '}') continue;
      if (eof())
        fail(m, "unterminated flow mapping",
             "add the closing '}' for the '{' at line " + std::to_string(m.line));
      fail(
          mark(),
          "expected ',' or '}' in the flow mapping opened at line " + std::to_string(m.line),
          mark().line != m.line
              ? "close the '{' at line " + std::to_string(m.line) + ", column " +
                    std::to_string(m.column) + " with '}'"
              : "separate entries with commas: {a: 1, b: 2}; quote values that contain ':' or '#'");
    }
    expand_merges(map);
    return finish(map, props);
  }
};

Stream load(std::string_view text, const LoadOptions& options) {
  Stream out;
  Parser p(text, options, out);
  p.run();
  return out;
}

std::string quote_if_needed(std::string_view s) {
  bool need = s.empty();
  if (!need) {
    static const char* specials[] = {
        "null", "Null", "NULL", "~",  "true", "True", "TRUE", "false", "False", "FALSE", "yes",
        "Yes",  "YES",  "no",   "No", "NO",   "on",   "On",   "ON",    "off",   "Off",   "OFF"};
    for (const char* sp : specials)
      if (s == sp) need = true;
    char f = s.front();
    if (std::string_view("-?:,[]{}#&*!|>'\"%@`").find(f) != std::string_view::npos) need = true;
    if (s.front() == ' ' || s.back() == ' ') need = true;
    if (s.find(": ") != std::string_view::npos || s.find(" #") != std::string_view::npos)
      need = true;
    if (s.back() == ':') need = true;
    if (util::parse_double(s)) need = true;
    for (char c : s)
      if (static_cast<unsigned char>(c) < 0x20) need = true;
  }
  if (!need) return std::string(s);
  return util::yaml_double_quoted(s);
}

}  // namespace pai::yaml
