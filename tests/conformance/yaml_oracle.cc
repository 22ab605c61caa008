#include "yaml_oracle.h"

#include <libfyaml.h>

#include <cstdio>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

namespace pai::yaml::oracle {
namespace {

// Comparison budget: aliases may expand a small input into a huge text.
constexpr size_t kMaxCanonical = 4u << 20;

void escape_into(std::string& out, std::string_view s) {
  for (unsigned char ch : s) {
    switch (ch) {
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
      case '\b':
        out += "\\b";
        break;
      default:
        if (ch < 0x20 || ch == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", ch);
          out += buf;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
}

// A content tree both readers are reduced to.
struct ONode {
  char kind = 'S';  // S scalar, Q sequence, M mapping
  char style = ':';
  std::string tag;
  std::string text;
  std::vector<ONode*> kids;  // sequence items, or key, value, key, value...
};

struct Printer {
  std::string out;
  bool too_large = false;
  void node(const ONode* n, int depth) {
    if (too_large) return;
    if (out.size() > kMaxCanonical || depth > 10000) {
      too_large = true;
      return;
    }
    if (n->kind == 'S') {
      out += "=VAL ";
      if (!n->tag.empty()) out += "<" + n->tag + "> ";
      out += n->style;
      escape_into(out, n->text);
      out += '\n';
      return;
    }
    out += n->kind == 'Q' ? "+SEQ" : "+MAP";
    if (!n->tag.empty()) out += " <" + n->tag + ">";
    out += '\n';
    for (const ONode* k : n->kids) node(k, depth + 1);
    out += n->kind == 'Q' ? "-SEQ\n" : "-MAP\n";
  }
};

bool is_dedupable_key(const ONode* k) {
  if (k->kind != 'S') return false;
  if (k->style == ':' && k->text.empty()) return false;  // an empty key: lib/yaml's Null
  return !(k->style == ':' && k->text == "<<");
}

std::string token_text(struct fy_token* t) {
  if (!t) return {};
  size_t len = 0;
  const char* p = fy_token_get_text(t, &len);
  return p ? std::string(p, len) : std::string();
}

}  // namespace

Reading read_fyaml(std::string_view text) {
  Reading r;
  // libfyaml's messages are kept (first line only), never printed.
  struct fy_diag_cfg dcfg;
  fy_diag_cfg_default(&dcfg);
  dcfg.fp = nullptr;
  dcfg.colorize = false;
  dcfg.show_source = false;
  dcfg.user = &r.error;
  dcfg.output_fn = [](struct fy_diag*, void* user, const char* buf, size_t len) {
    auto* e = static_cast<std::string*>(user);
    if (e->empty())
      e->assign(buf, std::string_view(buf, len).find('\n') == std::string_view::npos
                         ? len
                         : std::string_view(buf, len).find('\n'));
  };
  struct fy_diag* diag = fy_diag_create(&dcfg);
  struct fy_parse_cfg cfg = {};
  cfg.flags = static_cast<enum fy_parse_cfg_flags>(FYPCF_QUIET | FYPCF_DISABLE_DEPTH_LIMIT);
  cfg.diag = diag;
  struct fy_parser* fyp = fy_parser_create(&cfg);
  if (diag) fy_diag_destroy(diag);  // the parser holds its own reference
  if (!fyp) {
    r.error = "libfyaml: cannot create a parser";
    return r;
  }
  std::string copy(text);
  if (fy_parser_set_string(fyp, copy.data(), copy.size()) != 0) {
    fy_parser_destroy(fyp);
    r.error = "libfyaml: cannot set the input";
    return r;
  }
  std::deque<ONode> arena;
  std::vector<ONode*> docs;
  struct Open {
    ONode* node;
    std::string anchor;
    ONode* pending_key = nullptr;
  };
  std::vector<Open> stack;
  std::unordered_map<std::string, ONode*> anchors;
  ONode* root = nullptr;
  bool failed = false;

  auto add = [&](ONode* n) {
    if (stack.empty()) {
      root = n;
      return;
    }
    Open& top = stack.back();
    if (top.node->kind == 'Q') {
      top.node->kids.push_back(n);
      return;
    }
    if (!top.pending_key) {
      top.pending_key = n;
      return;
    }
    ONode* key = top.pending_key;
    top.pending_key = nullptr;
    auto& kids = top.node->kids;
    if (is_dedupable_key(key))
      for (size_t i = 0; i < kids.size(); i += 2)
        if (is_dedupable_key(kids[i]) && kids[i]->text == key->text) {
          kids[i + 1] = n;
          return;
        }
    kids.push_back(key);
    kids.push_back(n);
  };

  for (;;) {
    struct fy_event* ev = fy_parser_parse(fyp);
    if (!ev) break;
    switch (ev->type) {
      case FYET_DOCUMENT_START:
        root = nullptr;
        anchors.clear();
        break;
      case FYET_DOCUMENT_END:
        if (root) docs.push_back(root);
        break;
      case FYET_SCALAR: {
        ONode& n = arena.emplace_back();
        n.kind = 'S';
        switch (fy_token_scalar_style(ev->scalar.value)) {
          case FYSS_SINGLE_QUOTED:
            n.style = '\'';
            break;
          case FYSS_DOUBLE_QUOTED:
            n.style = '"';
            break;
          case FYSS_LITERAL:
            n.style = '|';
            break;
          case FYSS_FOLDED:
            n.style = '>';
            break;
          default:
            n.style = ':';
        }
        n.text = token_text(ev->scalar.value);
        n.tag = token_text(ev->scalar.tag);
        if (ev->scalar.anchor) anchors[token_text(ev->scalar.anchor)] = &n;
        add(&n);
        break;
      }
      case FYET_SEQUENCE_START:
      case FYET_MAPPING_START: {
        ONode& n = arena.emplace_back();
        bool seq = ev->type == FYET_SEQUENCE_START;
        n.kind = seq ? 'Q' : 'M';
        n.tag = token_text(seq ? ev->sequence_start.tag : ev->mapping_start.tag);
        add(&n);
        stack.push_back(
            {&n, token_text(seq ? ev->sequence_start.anchor : ev->mapping_start.anchor)});
        break;
      }
      case FYET_SEQUENCE_END:
      case FYET_MAPPING_END:
        if (!stack.empty()) {
          if (!stack.back().anchor.empty()) anchors[stack.back().anchor] = stack.back().node;
          stack.pop_back();
        }
        break;
      case FYET_ALIAS: {
        auto it = anchors.find(token_text(ev->alias.anchor));
        if (it == anchors.end()) {
          failed = true;
          r.error = "alias to an unknown or unfinished anchor";
        } else {
          add(it->second);
        }
        break;
      }
      default:
        break;
    }
    fy_parser_event_free(fyp, ev);
    if (failed) break;
  }
  if (fy_parser_get_stream_error(fyp)) {
    failed = true;
    if (r.error.empty()) r.error = "libfyaml reports an error";
  }
  fy_parser_destroy(fyp);
  if (failed) return r;
  Printer p;
  for (const ONode* d : docs) {
    p.out += "+DOC\n";
    p.node(d, 0);
    p.out += "-DOC\n";
  }
  r.ok = !p.too_large;
  r.too_large = p.too_large;
  r.canonical = std::move(p.out);
  return r;
}

namespace {
struct PaiPrinter {
  std::string out;
  bool too_large = false;
  void node(const Node* n, int depth) {
    if (too_large) return;
    if (out.size() > kMaxCanonical || depth > 10000) {
      too_large = true;
      return;
    }
    std::string tag = n->resolved_tag();
    if (n->kind() == NodeKind::Null || n->kind() == NodeKind::Scalar) {
      out += "=VAL ";
      if (!tag.empty()) out += "<" + tag + "> ";
      char style = ':';
      if (n->kind() == NodeKind::Scalar) switch (n->style()) {
          case ScalarStyle::Plain:
            break;
          case ScalarStyle::SingleQuoted:
            style = '\'';
            break;
          case ScalarStyle::DoubleQuoted:
            style = '"';
            break;
          case ScalarStyle::Literal:
            style = '|';
            break;
          case ScalarStyle::Folded:
            style = '>';
            break;
        }
      out += style;
      escape_into(out, n->scalar());
      out += '\n';
      return;
    }
    bool seq = n->kind() == NodeKind::Sequence;
    out += seq ? "+SEQ" : "+MAP";
    if (!tag.empty()) out += " <" + tag + ">";
    out += '\n';
    if (seq)
      for (const Node* k : n->items()) node(k, depth + 1);
    else
      for (const Pair& p : n->pairs()) {
        node(p.key, depth + 1);
        node(p.value, depth + 1);
      }
    out += seq ? "-SEQ\n" : "-MAP\n";
  }
};
}  // namespace

Reading read_pai(std::string_view text) {
  Reading r;
  LoadOptions opt;
  opt.merge_keys = false;
  opt.max_nodes = 2'000'000;
  Stream s = load(text, opt);
  if (s.error) {
    r.error = std::to_string(s.error->mark.line) + ":" + std::to_string(s.error->mark.column) +
              ": " + s.error->message;
    r.too_large = s.error->kind == ErrorKind::Limit;
    return r;
  }
  PaiPrinter p;
  for (const Node* d : s.documents) {
    p.out += "+DOC\n";
    p.node(d, 0);
    p.out += "-DOC\n";
  }
  r.ok = !p.too_large;
  r.too_large = p.too_large;
  r.canonical = std::move(p.out);
  return r;
}

std::optional<std::string> spell_out_empty_entries(std::string_view text) {
  std::string out;
  bool changed = false;
  size_t i = 0;
  while (i < text.size()) {
    size_t e = text.find('\n', i);
    if (e == std::string_view::npos) e = text.size();
    std::string_view line = text.substr(i, e - i);
    size_t p = 0;
    while (p < line.size() && line[p] == ' ') ++p;
    size_t q = p + 1;
    while (q < line.size() && (line[q] == ' ' || line[q] == '\t')) ++q;
    if (p < line.size() && line[p] == '-' &&
        (q == line.size() || line[q] == '#' || line[q] == '\r')) {
      out.append(line.substr(0, p + 1));
      out += " ~ ";
      out.append(line.substr(p + 1));
      changed = true;
    } else {
      out.append(line);
    }
    if (e < text.size()) out += '\n';
    i = e + 1;
  }
  if (!changed) return std::nullopt;
  return out;
}

namespace {

// The lines of `text` (without their LF), and whether it ends with one.
std::vector<std::string_view> oracle_lines(std::string_view text, bool& final_lf) {
  std::vector<std::string_view> out;
  size_t i = 0;
  final_lf = !text.empty() && text.back() == '\n';
  while (i < text.size()) {
    size_t e = text.find('\n', i);
    if (e == std::string_view::npos) e = text.size();
    out.push_back(text.substr(i, e - i));
    i = e + 1;
  }
  return out;
}

std::string oracle_join(const std::vector<std::string>& lines, bool final_lf) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    out += lines[i];
    if (i + 1 < lines.size() || final_lf) out += '\n';
  }
  return out;
}

// "--- |", "|+", "--- !!str &a >-  # c": a line that starts a root block scalar
// without an indentation indicator.
bool oracle_root_block_header(std::string_view l) {
  size_t p = 0;
  if (l.substr(0, 3) == "---" && (l.size() == 3 || l[3] == ' ' || l[3] == '\t')) p = 3;
  for (;;) {
    while (p < l.size() && (l[p] == ' ' || l[p] == '\t')) ++p;
    if (p < l.size() && (l[p] == '!' || l[p] == '&')) {  // a tag or an anchor
      while (p < l.size() && l[p] != ' ' && l[p] != '\t') ++p;
      continue;
    }
    break;
  }
  if (p >= l.size() || (l[p] != '|' && l[p] != '>')) return false;
  ++p;
  if (p < l.size() && (l[p] == '+' || l[p] == '-')) ++p;
  while (p < l.size() && (l[p] == ' ' || l[p] == '\t')) ++p;
  return p == l.size() || l[p] == '#' || l[p] == '\r';
}

// Whether `l` holds nothing but tags, anchors and a comment ("--- !!str &a").
bool oracle_only_properties(std::string_view l) {
  size_t p = 0;
  for (;;) {
    while (p < l.size() && (l[p] == ' ' || l[p] == '\t' || l[p] == '\r')) ++p;
    if (p >= l.size() || l[p] == '#') return true;
    if (l[p] != '!' && l[p] != '&') return false;
    while (p < l.size() && l[p] != ' ' && l[p] != '\t') ++p;
  }
}

bool oracle_doc_marker(std::string_view l) {
  return (l.substr(0, 3) == "---" || l.substr(0, 3) == "...") &&
         (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
}

}  // namespace

std::optional<std::string> empty_tab_lines(std::string_view text) {
  bool final_lf = false;
  std::vector<std::string> out;
  bool changed = false;
  for (std::string_view l : oracle_lines(text, final_lf)) {
    if (!l.empty() && l.find_first_not_of('\t') == std::string_view::npos) {
      out.emplace_back();
      changed = true;
    } else {
      out.emplace_back(l);
    }
  }
  if (!changed) return std::nullopt;
  return oracle_join(out, final_lf);
}

std::optional<std::string> indent_root_block_scalars(std::string_view text) {
  bool final_lf = false;
  std::vector<std::string> out;
  bool changed = false, in_scalar = false, at_doc_start = true;
  for (std::string_view l : oracle_lines(text, final_lf)) {
    if (in_scalar && !oracle_doc_marker(l)) {
      out.push_back(l.empty() ? std::string() : " " + std::string(l));
      changed = true;
      continue;
    }
    in_scalar = false;
    bool blank = l.find_first_not_of(" \t\r") == std::string_view::npos;
    bool comment = !blank && l[l.find_first_not_of(" \t")] == '#';
    if (oracle_doc_marker(l)) at_doc_start = l[0] == '-' || l[0] == '.';
    if ((at_doc_start || oracle_doc_marker(l)) && oracle_root_block_header(l)) in_scalar = true;
    if (!blank && !comment && !(l.size() >= 1 && l[0] == '%') && !oracle_doc_marker(l))
      at_doc_start = false;
    else if (oracle_doc_marker(l) && !oracle_only_properties(l.substr(3)))
      at_doc_start = false;  // "--- x": the root started on the marker's line
    out.emplace_back(l);
  }
  if (!changed) return std::nullopt;
  return oracle_join(out, final_lf);
}

bool printable_utf8(std::string_view t) {
  for (size_t i = 0; i < t.size(); ++i) {
    unsigned char b = static_cast<unsigned char>(t[i]);
    if (b == '\r' && (i + 1 == t.size() || t[i + 1] != '\n')) return false;  // see yaml_oracle.h
    if ((b < 0x20 && b != '\t' && b != '\n' && b != '\r') || b == 0x7f) return false;
    if (b < 0x80) continue;
    size_t n = b >= 0xC2 && b <= 0xDF   ? 2
               : b >= 0xE0 && b <= 0xEF ? 3
               : b >= 0xF0 && b <= 0xF4 ? 4
                                        : 0;
    if (n == 0 || i + n > t.size()) return false;
    uint32_t cp = b & (n == 2 ? 0x1Fu : n == 3 ? 0x0Fu : 0x07u);
    for (size_t k = 1; k < n; ++k) {
      unsigned char c = static_cast<unsigned char>(t[i + k]);
      if ((c & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3Fu);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return false;
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF) return false;
    if (cp >= 0x80 && cp <= 0x9F && cp != 0x85) return false;
    i += n - 1;
  }
  return true;
}

std::optional<std::string> compare(std::string_view text, bool refusals) {
  Reading ours = read_pai(text);
  if (!printable_utf8(text)) {
    // Not YAML text at all: libfyaml 0.7.12 checks UTF-8 only in some places, so
    // it is no oracle here; lib/yaml must refuse it.
    if (ours.ok) return std::string("lib/yaml reads input that is not printable UTF-8");
    return std::nullopt;
  }
  Reading theirs = read_fyaml(text);
  if (theirs.too_large || ours.too_large) return std::nullopt;
  if (!theirs.ok && !ours.ok) return std::nullopt;
  if (theirs.ok && ours.ok && theirs.canonical == ours.canonical) return std::nullopt;
  // libfyaml reads one byte past an empty block scalar at the end of the input (the
  // NUL that ends the string); the input has no NUL (printable_utf8).
  if (theirs.ok && theirs.canonical.find("\\x00") != std::string::npos) return std::nullopt;
  // libfyaml's known leniency: it reads past a malformed directive (`%YAML` without
  // a version, `%TAG` without a prefix) as if it were not there.
  if (theirs.ok && !ours.ok && ours.error.find("directive") != std::string::npos)
    return std::nullopt;
  if (!theirs.ok && ours.ok)
    if (auto spelled = spell_out_empty_entries(text)) {
      // libfyaml's known defect: both must agree once the empty entries say "~".
      Reading t2 = read_fyaml(*spelled), o2 = read_pai(*spelled);
      if (t2.ok && o2.ok && t2.canonical == o2.canonical) return std::nullopt;
    }
  if (!theirs.ok && ours.ok) {
    // Where YAML 1.2 reads what both references refuse (see yaml_oracle.h): lib/yaml's
    // reading must equal libfyaml's of the text rewritten into what they accept.
    std::string rewritten(text);
    bool any = false;
    if (auto t = empty_tab_lines(rewritten)) rewritten = *t, any = true;
    if (auto t = indent_root_block_scalars(rewritten)) rewritten = *t, any = true;
    if (any) {
      Reading t2 = read_fyaml(rewritten);
      if (t2.ok && t2.canonical == ours.canonical) return std::nullopt;
    }
  }
  if (!ours.ok) {
    if (!refusals) return std::nullopt;
    return "lib/yaml rejects what libfyaml reads: " + ours.error;
  }
  if (!theirs.ok) return "lib/yaml reads what libfyaml rejects (" + theirs.error + ")";
  return "different content\n--- libfyaml\n" + theirs.canonical + "--- lib/yaml\n" + ours.canonical;
}

}  // namespace pai::yaml::oracle
