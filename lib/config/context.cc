#include "config/context.h"

#include "util/strings.h"
#include "yaml/yaml11.h"

namespace pai::config {

Mark Context::key_at(const Node* map, std::string_view key) const {
  if (map && map->is_mapping())
    if (const yaml::Pair* p = map->find(key)) return at(p->key);
  return at(map);
}

void Context::report(std::string code, diag::Severity sev, Mark m, std::string message,
                     std::string hint) {
  out_.add(std::move(code), sev, file_, m.line, m.column, std::move(message), std::move(hint));
}

bool Context::is_mapping(const Node* n, std::string_view what) {
  if (n && n->is_mapping()) return true;
  if (n && n->kind() == yaml::NodeKind::Null) {
    error("F005", at(n), std::string(what) + " is empty; expected a mapping",
          "add its keys, indented below it");
    return false;
  }
  error("F005", at(n),
        std::string(what) + " must be a mapping (key: value), found " +
            (n ? n->describe() : "nothing"),
        n && n->is_sequence() ? "remove the '- ' in front of the keys"
                              : "write its keys indented below it");
  return false;
}

bool Context::is_sequence(const Node* n, std::string_view what) {
  if (n && n->is_sequence()) return true;
  error("F005", at(n),
        std::string(what) + " must be a list, found " + (n ? n->describe() : "nothing"),
        n && n->is_mapping() ? "write each entry as '- key: value'"
                             : "write each item on its own line as '- item'");
  return false;
}

std::optional<std::string> Context::string_value(const Node* n, std::string_view what,
                                                 bool strict) {
  if (!n || !n->is_scalar() || n->is_null()) {
    error("F005", at(n),
          std::string(what) + " must be a string, found " + (n ? n->describe() : "nothing"),
          "write a single value here");
    return std::nullopt;
  }
  if (strict && !n->is_quoted() && n->style() == yaml::ScalarStyle::Plain) {
    if (is_yaml11_bool(n) || n->as_int() || n->as_float()) {
      error("F005", at(n),
            std::string(what) + " must be a string, found " + n->describe() +
                " (YAML reads it as a " + (is_yaml11_bool(n) ? "boolean" : "number") + ")",
            "quote it: \"" + n->scalar() + "\"");
      return std::nullopt;
    }
  }
  return n->scalar();
}

std::optional<int64_t> Context::int_value(const Node* n, std::string_view what) {
  if (n && n->is_scalar()) {
    if (auto v = n->as_int()) return v;
    if (n->is_quoted() && util::parse_int(n->scalar())) {
      error("F005", at(n),
            std::string(what) + " must be an integer, found the string \"" + n->scalar() + "\"",
            "remove the quotes");
      return std::nullopt;
    }
  }
  error("F005", at(n),
        std::string(what) + " must be an integer, found " + (n ? n->describe() : "nothing"),
        "write a whole number without quotes");
  return std::nullopt;
}

std::optional<double> Context::number_value(const Node* n, std::string_view what) {
  if (n && n->is_scalar())
    if (auto v = n->as_float()) return v;
  error("F005", at(n),
        std::string(what) + " must be a number, found " + (n ? n->describe() : "nothing"),
        n && n->is_quoted() ? "remove the quotes" : "write a number without quotes");
  return std::nullopt;
}

std::optional<bool> Context::bool_value(const Node* n, std::string_view what) {
  if (n && n->is_scalar())
    if (auto v = n->as_bool()) return v;
  error("F005", at(n),
        std::string(what) + " must be true or false, found " + (n ? n->describe() : "nothing"),
        n && n->is_quoted()
            ? "remove the quotes: a quoted \"false\" is a non-empty string, which counts as true"
            : "write true or false");
  return std::nullopt;
}

const Node* Context::required(const Node* map, std::string_view key, std::string_view where) {
  if (!map || !map->is_mapping()) return nullptr;
  if (const Node* v = map->get(key)) return v;
  error("F007", at(map),
        std::string(where) + " is missing the required key \"" + std::string(key) + "\"",
        "add " + std::string(key) + ": <value>");
  return nullptr;
}

void Context::unknown_keys(const Node* map, const std::vector<std::string>& known,
                           std::string_view where) {
  if (!map || !map->is_mapping()) return;
  for (const auto& p : map->pairs()) {
    const std::string& k = p.key->scalar();
    bool found = false;
    for (const auto& kk : known)
      if (kk == k) {
        found = true;
        break;
      }
    if (found) continue;
    std::string guess = util::did_you_mean(k, known);
    warning("F006", at(p.key),
            "unknown key \"" + k + "\" in " + std::string(where) + "; it is ignored",
            guess.empty() ? "check the spelling against the documented keys"
                          : "did you mean \"" + guess + "\"?");
  }
}

const Node* single_document(const yaml::Stream& stream, Context& ctx, std::string_view kind) {
  for (const auto& w : stream.warnings) ctx.error("F002", ctx.map(w.mark), w.message, w.hint);
  if (stream.error) {
    ctx.error("F001", ctx.map(stream.error->mark), "YAML syntax error: " + stream.error->message,
              stream.error->hint);
    return nullptr;
  }
  // OpenPAI reads its files with PyYAML and HiveD its config with Go's yaml.v2,
  // both YAML 1.1: say where they see something else than paictl does.
  const bool hived = kind.find("hived") != std::string_view::npos;
  for (const auto& d : yaml::loader_differences(
           stream, hived ? yaml::Loader::GoYamlV2 : yaml::Loader::PyYaml,
           hived ? "HiveD (Go's yaml.v2), in a number or boolean field," : "OpenPAI (PyYAML)"))
    ctx.warning("F011", ctx.at(d.node), d.message, d.hint);
  if (stream.documents.empty() || stream.documents[0]->kind() == yaml::NodeKind::Null) {
    ctx.error(
        "F003", ctx.map(Mark{1, 1}), std::string(kind) + " is empty",
        "a " + std::string(kind) + " holds a mapping; see docs/check-config.md for an example");
    return nullptr;
  }
  if (stream.documents.size() > 1) {
    ctx.error("F004", ctx.at(stream.documents[1]),
              std::string(kind) + " holds " + std::to_string(stream.documents.size()) +
                  " YAML documents; only one is read",
              "remove the '---' separator, or split the documents into separate files");
  }
  return stream.documents[0];
}

bool is_yaml11_bool(const Node* n) {
  if (!n || !n->is_scalar() || n->style() != yaml::ScalarStyle::Plain) return false;
  static const char* words[] = {"yes",   "Yes",   "YES",   "no", "No", "NO", "true", "True", "TRUE",
                                "false", "False", "FALSE", "on", "On", "ON", "off",  "Off",  "OFF"};
  for (const char* w : words)
    if (n->scalar() == w) return true;
  return false;
}

}  // namespace pai::config
