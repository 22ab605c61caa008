#include "job/emit.h"

#include <cstdio>

#include "job/render.h"
#include "util/yaml_emit.h"

namespace pai::job {

namespace {

using yaml::Node;

constexpr const char* kMask = "\"******\"";

// A scalar node as written, keeping its type for js-yaml.
std::string scalar_text(const Node* n, int indent, bool is_key) {
  std::string tag = n->tag();
  std::string prefix = tag.empty() ? std::string() : tag + " ";
  if (n->kind() == yaml::NodeKind::Null) return tag.empty() ? "null" : prefix + "\"\"";
  const std::string& t = n->scalar();
  if (n->style() == yaml::ScalarStyle::Plain && t.find('\n') == std::string::npos && !t.empty())
    return prefix + t;
  if (!is_key && util::yaml_literal_is_exact(t))
    return prefix + util::yaml_literal_block(t, indent);
  return prefix + util::yaml_double_quoted(t);
}

class Emitter {
 public:
  Emitter(const JobFile& f, const Overrides& o, bool mask) : f_(f), o_(o), mask_(mask) {
    if (o.export_params) exports_ = export_lines(f, o);
  }

  std::string run() {
    const Node* root = f_.root;
    std::string out;
    bool has_name = false, has_defaults = false, has_params = false;
    for (const auto& p : root->pairs()) {
      const std::string& k = p.key->scalar();
      has_name |= k == "name";
      has_defaults |= k == "defaults";
      has_params |= k == "parameters";
      out += key_text(p.key) + ":";
      if (k == "name" && o_.name) {
        out += " " + js_yaml_string(*o_.name) + "\n";
      } else if (k == "secrets" && mask_) {
        out += std::string(" ") + kMask + "\n";
      } else if (k == "defaults" && o_.virtual_cluster && p.value && p.value->is_mapping()) {
        out += "\n";
        bool seen = false;
        for (const auto& d : p.value->pairs()) {
          out += "  " + key_text(d.key) + ":";
          if (d.key->scalar() == "virtualCluster") {
            seen = true;
            out += " " + js_yaml_string(*o_.virtual_cluster) + "\n";
          } else {
            value(d.value, 2, out);
          }
        }
        if (!seen) out += "  virtualCluster: " + js_yaml_string(*o_.virtual_cluster) + "\n";
      } else if (k == "defaults" && o_.virtual_cluster) {
        out += "\n  virtualCluster: " + js_yaml_string(*o_.virtual_cluster) + "\n";
      } else if (k == "parameters" && !o_.params.empty() &&
                 (!p.value || p.value->is_mapping() || p.value->is_null())) {
        out += "\n";
        std::vector<std::string> written;
        if (p.value && p.value->is_mapping())
          for (const auto& q : p.value->pairs()) {
            written.push_back(q.key->scalar());
            out += "  " + key_text(q.key) + ":";
            if (const ParamOverride* ov = o_.param(q.key->scalar()))
              out += " " + override_text(*ov) + "\n";
            else
              value(q.value, 2, out);
          }
        append_new_params(written, out);
      } else if (k == "taskRoles" && p.value && p.value->is_mapping() && !exports_.empty()) {
        out += "\n";
        for (const auto& r : p.value->pairs()) {
          out += "  " + key_text(r.key) + ":";
          if (!r.value || !r.value->is_mapping()) {
            value(r.value, 2, out);
            continue;
          }
          out += "\n";
          for (const auto& q : r.value->pairs()) {
            out += "    " + key_text(q.key) + ":";
            if (q.key->scalar() == "commands" && q.value && q.value->is_sequence()) {
              out += "\n";
              for (const auto& e : exports_) out += "      - " + js_yaml_string(e) + "\n";
              for (const Node* c : q.value->items()) {
                out += "      -";
                value(c, 6, out, true);
              }
            } else {
              value(q.value, 4, out);
            }
          }
        }
      } else if (k == "prerequisites" && mask_) {
        masked_prerequisites(p.value, out);
      } else {
        value(p.value, 0, out);
      }
    }
    if (o_.name && !has_name) out = "name: " + js_yaml_string(*o_.name) + "\n" + out;
    if (o_.virtual_cluster && !has_defaults)
      out += "defaults:\n  virtualCluster: " + js_yaml_string(*o_.virtual_cluster) + "\n";
    if (!o_.params.empty() && !has_params) {
      out += "parameters:\n";
      append_new_params({}, out);
    }
    return out;
  }

 private:
  const JobFile& f_;
  const Overrides& o_;
  bool mask_;
  std::vector<std::string> exports_;

  std::string key_text(const Node* k) { return scalar_text(k, 0, true); }

  std::string override_text(const ParamOverride& p) {
    JsScalar v = override_value(p);
    if (v.type == JsType::String) return js_yaml_string(v.text);
    return p.value.empty() ? "null" : p.value;
  }

  void append_new_params(const std::vector<std::string>& written, std::string& out) {
    std::vector<std::string> done = written;
    for (const auto& p : o_.params) {
      bool seen = false;
      for (const auto& w : done) seen |= w == p.name;
      if (seen) continue;
      done.push_back(p.name);
      out += "  " + js_yaml_string(p.name) + ": " + override_text(*o_.param(p.name)) + "\n";
    }
  }

  void masked_prerequisites(const Node* list, std::string& out) {
    if (!list || !list->is_sequence() || list->items().empty()) {
      value(list, 0, out);
      return;
    }
    out += "\n";
    for (const Node* item : list->items()) {
      if (!item || !item->is_mapping() || !item->get("auth") || item->pairs().empty()) {
        out += "  -";
        value(item, 2, out, true);
        continue;
      }
      bool first = true;
      for (const auto& p : item->pairs()) {
        out += first ? "  - " : "    ";
        first = false;
        out += key_text(p.key) + ":";
        if (p.key->scalar() == "auth" && p.value && p.value->is_mapping()) {
          out += "\n";
          for (const auto& a : p.value->pairs()) {
            out += "      " + key_text(a.key) + ":";
            if (a.key->scalar() == "password")
              out += std::string(" ") + kMask + "\n";
            else
              value(a.value, 6, out);
          }
        } else {
          value(p.value, 4, out);
        }
      }
    }
  }

  // Writes a value after "key:" or "-" at nesting `indent` (the column of the key).
  void value(const Node* n, int indent, std::string& out, bool in_item = false) {
    if (!n || n->kind() == yaml::NodeKind::Null) {
      out += " " + (n ? scalar_text(n, indent + 2, false) : std::string("null")) + "\n";
      return;
    }
    std::string pad(static_cast<size_t>(indent + 2), ' ');
    std::string tag = n->tag();
    if (n->is_scalar()) {
      out += " " + scalar_text(n, indent + 2, false) + "\n";
      return;
    }
    if (n->is_mapping()) {
      if (n->pairs().empty()) {
        out += " " + (tag.empty() ? std::string() : tag + " ") + "{}\n";
        return;
      }
      if (in_item && tag.empty()) {
        // "- key: value" with the first key on the dash's line.
        bool first = true;
        for (const auto& p : n->pairs()) {
          out += first ? " " : pad;
          first = false;
          out += key_text(p.key) + ":";
          value(p.value, indent + 2, out);
        }
        return;
      }
      out += (tag.empty() ? std::string() : " " + tag) + "\n";
      for (const auto& p : n->pairs()) {
        out += pad + key_text(p.key) + ":";
        value(p.value, indent + 2, out);
      }
      return;
    }
    if (n->items().empty()) {
      out += " " + (tag.empty() ? std::string() : tag + " ") + "[]\n";
      return;
    }
    out += (tag.empty() ? std::string() : " " + tag) + "\n";
    for (const Node* item : n->items()) {
      out += pad + "-";
      value(item, indent + 2, out, true);
    }
  }
};

}  // namespace

std::string js_yaml_string(std::string_view s) {
  // Plain only when both our conservative rules and js-yaml's typing agree it is a string.
  if (util::yaml_scalar(s) == s && js_resolve_plain(s).type == JsType::String)
    return std::string(s);
  return util::yaml_double_quoted(s);
}

std::string emit_job(const JobFile& f, const Overrides& o, bool mask_secrets) {
  if (!f.root) return f.text;
  Emitter e(f, o, mask_secrets);
  return e.run();
}

std::string submission_body(const JobFile& f, const Overrides& o) {
  if (o.empty()) return f.text;
  return emit_job(f, o, false);
}

}  // namespace pai::job
