#include "job/validate.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "job/render.h"
#include "job/rules.h"
#include "job/template.h"
#include "util/strings.h"
#include "yaml/yaml11.h"

namespace pai::job {

namespace {

using yaml::Mark;
using yaml::Node;

bool valid_name(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-'))
      return false;
  return true;
}

bool valid_identifier(std::string_view s) {  // ^[a-zA-Z_][a-zA-Z0-9_]*$
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool valid_hived_role_key(std::string_view s) {  // ^[A-Za-z0-9._~]+$
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '_' || c == '~'))
      return false;
  return true;
}

std::string suggest_identifier(std::string_view s) {
  std::string out;
  for (char c : s) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (c >= '0' && c <= '9');
    out += ok ? c : '_';
  }
  if (!out.empty() && out[0] >= '0' && out[0] <= '9') out = "_" + out;
  return out;
}

std::string suggest_name(std::string_view s) {
  std::string out;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    out += ok ? c : '_';
  }
  if (out.size() > 255) out.resize(255);
  return out;
}

// What a node is, for messages. Secret values are never quoted.
std::string describe(const Node* n, bool secret = false) {
  if (!n) return "nothing";
  JsScalar s = js_scalar(n);
  if (!s.error.empty()) return "a value with an unsupported tag";
  if (secret) return std::string(js_type_name(s.type));
  auto shown = [](std::string t) {
    if (t.size() > 40) t = t.substr(0, 37) + "...";
    for (char& c : t)
      if (c == '\n') c = ' ';
    return t;
  };
  switch (s.type) {
    case JsType::Null:
      return n->kind() == yaml::NodeKind::Null || n->scalar().empty() ? "an empty value" : "null";
    case JsType::Boolean:
      return "the boolean " + n->scalar();
    case JsType::Number:
      return "the number " + n->scalar();
    case JsType::String:
      return "the string \"" + shown(s.text) + "\"";
    case JsType::Date:
      return "the date " + n->scalar();
    default:
      return std::string(js_type_name(s.type));
  }
}

// The integers of the job protocol end up in 32-bit fields (FrameworkController's
// task counts and retry counts, HiveD's GPU numbers, Kubernetes' container
// ports). Infinity, NaN and anything wider are out of range.
bool in_int32(double v) {
  return std::isfinite(v) && v >= -2147483648.0 && v <= 2147483647.0;
}

struct Expect {
  bool string = false, number = false, integer = false, boolean = false, null = false,
       array = false, object = false;
  std::string text() const {
    std::vector<std::string> parts;
    if (string) parts.push_back("a string");
    if (integer) parts.push_back("an integer");
    if (number) parts.push_back("a number");
    if (boolean) parts.push_back("true or false");
    if (array) parts.push_back("a list");
    if (object) parts.push_back("a mapping");
    if (null) parts.push_back("null");
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i)
      out += (i == 0 ? "" : i + 1 == parts.size() ? " or " : ", ") + parts[i];
    return out;
  }
};

Expect E_STRING{.string = true};
Expect E_INT{.integer = true};
Expect E_INT_OR_NULL{.integer = true, .null = true};
Expect E_ARRAY{.array = true};
Expect E_OBJECT{.object = true};
Expect E_STRING_OR_NUMBER{.string = true, .number = true};
Expect E_STRING_OR_NULL{.string = true, .null = true};

class Validator {
 public:
  Validator(const JobFile& f, diag::List& out, const ValidateOptions& opt)
      : f_(f), out_(out), opt_(opt) {}

  void run();

 private:
  const JobFile& f_;
  diag::List& out_;
  const ValidateOptions& opt_;

  // Prerequisites by type then name, and deployments by name (first definition).
  std::map<std::string, std::map<std::string, const Node*>> prereqs_;
  std::set<std::string> all_prereq_names_;
  std::map<std::string, const Node*> deployments_;
  std::set<std::string> task_roles_;

  // A cluster file given as a job (`job validate layout.yaml`): one finding that
  // says what the file is, instead of a missing key for each of the job's.
  bool is_cluster_file(const Node* root) {
    for (const char* k : {"protocolVersion", "taskRoles", "type", "prerequisites"})
      if (root->get(k)) return false;
    struct Kind {
      const char* file;
      std::vector<const char*> keys;
    };
    static const std::vector<Kind> kKinds = {
        {"layout.yaml", {"machine-sku", "machine-list"}},
        {"hivedscheduler.yaml, a HiveD config", {"physicalCluster", "virtualClusters"}},
        {"services-configuration.yaml", {"cluster", "rest-server", "hivedscheduler"}}};
    for (const auto& kind : kKinds) {
      std::vector<std::string> found;
      for (const char* k : kind.keys)
        if (root->get(k)) found.push_back(k);
      if (found.empty()) continue;
      std::string keys;
      for (const auto& k : found) keys += (keys.empty() ? "" : ", ") + k;
      report("J009", root->mark(),
             "this is a cluster file (" + std::string(kind.file) + ": " + keys + "), not a job",
             "check a cluster directory with paictl check config DIR; a job holds "
             "protocolVersion, name, type and taskRoles (see examples/jobs/)");
      return true;
    }
    return false;
  }

  void report(std::string_view code, Mark m, std::string message, std::string hint = {}) {
    const diag::Rule* r = find_rule(code);
    out_.add(std::string(code), r ? r->severity : diag::Severity::Error, f_.path, m.line, m.column,
             std::move(message), std::move(hint));
  }
  void report(std::string_view code, const Node* n, std::string message, std::string hint = {}) {
    report(code, n ? n->mark() : Mark{1, 1}, std::move(message), std::move(hint));
  }

  Mark key_mark(const Node* map, std::string_view key) const {
    if (map && map->is_mapping())
      if (const yaml::Pair* p = map->find(key)) return p->key->mark();
    return map ? map->mark() : Mark{1, 1};
  }

  // Reports J011 unless `n` has one of the expected types (as js-yaml reads it).
  bool check_type(const Node* n, std::string_view what, const Expect& e, bool secret = false) {
    if (!n) return false;
    JsScalar s = js_scalar(n);
    if (!s.error.empty()) return false;  // J006 already
    bool ok = false;
    switch (s.type) {
      case JsType::String:
        ok = e.string;
        break;
      case JsType::Number:
        ok = e.number || (e.integer && js_is_integer(n));
        if (ok && e.integer && !e.number && !in_int32(s.number)) {
          std::string read_as = js_number_to_string(s.number);
          report("J018", n,
                 std::string(what) +
                     " must be a whole number from -2147483648 to 2147483647, found " +
                     (secret ? std::string("a number out of that range")
                             : n->scalar() + (read_as != n->scalar() ? " (read as " + read_as + ")"
                                                                     : std::string())),
                 "the server's schema lets any integer through, but Kubernetes, "
                 "FrameworkController and HiveD hold these numbers in 32 bits: the job would "
                 "fail or run with a wrong value");
          return false;
        }
        break;
      case JsType::Boolean:
        ok = e.boolean;
        break;
      case JsType::Null:
        ok = e.null;
        break;
      case JsType::Array:
        ok = e.array;
        break;
      case JsType::Object:
        ok = e.object;
        break;
      default:
        ok = false;
    }
    if (ok) return true;
    std::string hint;
    if (s.type == JsType::String && (e.integer || e.number) && util::parse_double(s.text) &&
        !secret)
      hint = "remove the quotes around " + s.text;
    else if (s.type == JsType::Number && e.integer && !e.number && !secret)
      hint = "use a whole number";
    else if (s.type == JsType::Date && e.string && !secret)
      hint = "the server's YAML loader reads " + n->scalar() + " as a date; quote it: \"" +
             n->scalar() + "\"";
    else if ((s.type == JsType::Number || s.type == JsType::Boolean) && e.string && !secret)
      hint = "quote it: \"" + n->scalar() + "\"";
    else if (s.type == JsType::Null && (e.object || e.array))
      hint = "add its entries, indented below it, or remove the key";
    else if (s.type == JsType::Object && e.string && n->pairs().size() == 1 &&
             n->pairs()[0].key->style() == yaml::ScalarStyle::Plain &&
             n->pairs()[0].key->scalar().find(' ') != std::string::npos)
      hint =
          "an unquoted ': ' (colon and space) turns the line into a mapping; put the whole line in "
          "quotes";
    else if (s.type == JsType::Object && e.array)
      hint = "write each entry as a list item starting with '- '";
    else if (s.type == JsType::Array && e.object)
      hint = "remove the '- ' in front of the keys";
    else if ((s.type == JsType::String || s.type == JsType::Number) && e.array && !secret)
      hint = "write it as a list: [" + n->scalar() + "]";
    report("J011", n, std::string(what) + " must be " + e.text() + ", found " + describe(n, secret),
           hint);
    return false;
  }

  std::optional<std::string> string_of(const Node* n, std::string_view what, bool secret = false) {
    if (!check_type(n, what, E_STRING, secret)) return std::nullopt;
    return js_scalar(n).text;
  }

  std::optional<double> integer_of(const Node* n, std::string_view what) {
    if (!check_type(n, what, E_INT)) return std::nullopt;
    return js_number(n);
  }

  void string_list(const Node* n, std::string_view what, bool non_empty) {
    if (!check_type(n, what, E_ARRAY)) return;
    if (non_empty && n->items().empty())
      report("J017", n, std::string(what) + " is an empty list; it needs at least one entry",
             "add an entry, or remove the key");
    for (size_t i = 0; i < n->items().size(); ++i)
      check_type(n->items()[i], std::string(what) + "[" + std::to_string(i) + "]", E_STRING);
  }

  void unknown_keys(const Node* map, const std::vector<std::string>& allowed,
                    std::string_view where,
                    const std::function<bool(const yaml::Pair&)>& special = {}) {
    for (const auto& p : map->pairs()) {
      const std::string& k = p.key->scalar();
      if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
      if (special && special(p)) continue;
      std::string guess = util::did_you_mean(k, allowed);
      report("J012", p.key,
             "unknown key \"" + k + "\" in " + std::string(where) + "; the server rejects the job",
             guess.empty() ? "allowed keys: " + util::join(allowed, ", ")
                           : "did you mean \"" + guess + "\"?");
    }
  }

  void check_required(const Node* map, const std::vector<std::string>& keys, std::string_view where,
                      Mark at, const std::set<std::string>& skip = {}) {
    for (const auto& k : keys) {
      if (map->get(k) || skip.count(k)) continue;
      report("J010", at, std::string(where) + " is missing the required key \"" + k + "\"",
             "add " + k + ": <value>");
    }
  }

  void check_protocol_version(const Node* n, std::string_view where) {
    JsScalar s = js_scalar(n);
    bool ok =
        (s.type == JsType::Number && s.number == 2) || (s.type == JsType::String && s.text == "2");
    if (!ok && s.error.empty())
      report("J013", n, std::string(where) + " must be 2, found " + describe(n),
             "write protocolVersion: 2");
  }

  void check_name(const Node* n, std::string_view what) {
    auto s = string_of(n, what);
    if (!s) return;
    if (!valid_name(*s)) {
      std::string fixed = suggest_name(*s);
      report("J014", n,
             std::string(what) + " \"" + *s + "\" may contain only letters, digits, '_' and '-'" +
                 (s->empty() ? " and must not be empty" : ""),
             fixed.empty() ? "give it a name such as my_job" : "for example \"" + fixed + "\"");
    } else if (utf16_length(*s) > 255) {
      report(
          "J014", n,
          std::string(what) + " is " + std::to_string(s->size()) + " characters long; at most 255",
          "shorten it");
    }
  }

  void check_base_fields(const Node* map, std::string_view where) {
    if (const Node* v = map->get("protocolVersion"))
      check_protocol_version(v, std::string(where) + ".protocolVersion");
    if (const Node* v = map->get("version"))
      check_type(v, std::string(where) + ".version", E_STRING_OR_NUMBER);
    if (const Node* v = map->get("contributor"))
      check_type(v, std::string(where) + ".contributor", E_STRING);
    if (const Node* v = map->get("description"))
      check_type(v, std::string(where) + ".description", E_STRING);
  }

  void check_tags(const Node* n) {
    if (!n) return;
    std::string tag = normalized_tag(n);
    if (n->is_scalar() || n->kind() == yaml::NodeKind::Null) {
      JsScalar s = js_scalar(n);
      if (!s.error.empty())
        report("J006", n, "the server's YAML loader (js-yaml) refuses this value: " + s.error,
               "remove the tag, or quote the value to make it a string");
      return;
    }
    if (!tag.empty()) {
      bool ok = n->is_mapping()
                    ? (tag == "tag:yaml.org,2002:map" || tag == "tag:yaml.org,2002:set")
                    : (tag == "tag:yaml.org,2002:seq" || tag == "tag:yaml.org,2002:omap" ||
                       tag == "tag:yaml.org,2002:pairs");
      if (!ok)
        report("J006", n, "the server's YAML loader (js-yaml) refuses the tag " + n->tag(),
               "remove the tag");
    }
    if (n->is_mapping()) {
      for (const auto& p : n->pairs()) {
        check_tags(p.key);
        check_tags(p.value);
      }
    } else {
      for (const Node* i : n->items()) check_tags(i);
    }
  }

  void check_prerequisites(const Node* list);
  void check_prerequisite(const Node* item, size_t index);
  void check_task_roles(const Node* roles);
  void check_task_role(const yaml::Pair& p);
  void check_resources(const Node* res, const std::string& where, Mark at);
  void check_deployments(const Node* list);
  void check_defaults(const Node* defaults);
  void check_extras(const Node* extras);
  void check_hived(const Node* hived);
  void check_semantics();
  void check_templates();
  void check_yaml11();
};

void Validator::check_yaml11() {
  // The server's js-yaml 3 follows YAML 1.1 for numbers and dates: say where it
  // reads a plain value unlike YAML 1.2.
  auto js_reading = [](std::string_view t) -> std::optional<yaml::ScalarReading> {
    JsScalar s = js_resolve_plain(t);
    yaml::ScalarReading r;
    using T = yaml::ScalarReading::Type;
    switch (s.type) {
      case JsType::Null:
        r.type = T::Null;
        break;
      case JsType::Boolean:
        r.type = T::Bool;
        r.boolean = s.boolean;
        break;
      case JsType::Number:
        r.type = std::isfinite(s.number) && std::floor(s.number) == s.number ? T::Int : T::Float;
        r.number = s.number;
        break;
      case JsType::Date:
        r.type = T::Timestamp;
        break;
      case JsType::String:
        r.type = T::String;
        break;
      default:
        return std::nullopt;
    }
    return r;
  };
  for (const auto& d :
       yaml::loader_differences(f_.stream, js_reading, "js-yaml (the OpenPAI rest-server)")) {
    // A finding at the same value (J011 wrong type, J018 out of range, J054 changes
    // when rendered...) already says what the server makes of it.
    bool told = false;
    for (const auto& item : out_.items())
      told |= item.file == f_.path && item.line == d.node->mark().line &&
              item.column == d.node->mark().column;
    if (!told) report("J008", d.node, d.message, d.hint);
  }
}

void Validator::run() {
  if (!f_.read_error.empty()) {
    bool too_large = f_.read_error.find("larger than") != std::string::npos;
    report("J005", Mark{}, "cannot read " + f_.path + ": " + f_.read_error,
           too_large ? "a job file is at most 16 MiB (the server takes 100 KiB): is the right "
                       "input given?"
                     : "check the path and its permissions");
    return;
  }
  const yaml::Stream& st = f_.stream;
  for (const auto& w : st.warnings) {
    if (w.code == "duplicate-key")
      report("J002", w.mark,
             w.message +
                 "; the server's YAML loader refuses the whole file (\"duplicated mapping key\")",
             w.hint.empty() ? "keep one of the two" : w.hint);
  }
  if (st.error) {
    report("J001", st.error->mark, "YAML syntax error: " + st.error->message, st.error->hint);
    return;
  }
  if (f_.text.size() > kMaxBodyBytes)
    report("J007", Mark{1, 1},
           "the file is " + std::to_string(f_.text.size()) +
               " bytes; the rest-server refuses request bodies above " +
               std::to_string(kMaxBodyBytes) + " bytes (413)",
           "move long scripts into a script prerequisite or the image");
  if (st.documents.empty() ||
      (st.documents[0]->kind() == yaml::NodeKind::Null && st.documents.size() == 1)) {
    report(
        "J004", Mark{1, 1}, "the job file is empty",
        "a job holds protocolVersion, name, type, prerequisites and taskRoles; see examples/jobs/");
    return;
  }
  if (st.documents.size() > 1) {
    report("J003", st.documents[1]->mark(),
           "the file holds " + std::to_string(st.documents.size()) +
               " YAML documents; the server loads exactly one and refuses the file",
           "remove the '---' separator, or split the jobs into separate files");
  }
  const Node* root = st.documents[0];
  check_tags(root);
  if (!root->is_mapping()) {
    report("J011", root,
           "a job must be a mapping of keys (protocolVersion, name, type, taskRoles...), found " +
               describe(root),
           "start from an example in examples/jobs/");
    return;
  }

  if (is_cluster_file(root)) return;

  static const std::vector<std::string> kTop = {
      "protocolVersion", "name",          "type",       "version", "contributor",
      "description",     "prerequisites", "parameters", "secrets", "jobRetryCount",
      "taskRoles",       "deployments",   "defaults",   "extras"};
  unknown_keys(root, kTop, "the job");
  std::set<std::string> skip;
  if (opt_.overrides.name) skip.insert("name");
  check_required(root, {"protocolVersion", "name", "type", "taskRoles"}, "the job", root->mark(),
                 skip);

  if (const Node* v = root->get("protocolVersion")) check_protocol_version(v, "protocolVersion");
  if (const Node* v = root->get("name"); v && !opt_.overrides.name) check_name(v, "name");
  if (const Node* v = root->get("type")) {
    if (auto s = string_of(v, "type"); s && *s != "job")
      report("J015", v, "type must be \"job\", found \"" + *s + "\"", "write type: job");
  }
  if (const Node* v = root->get("version")) check_type(v, "version", E_STRING_OR_NUMBER);
  if (const Node* v = root->get("contributor")) check_type(v, "contributor", E_STRING);
  if (const Node* v = root->get("description")) check_type(v, "description", E_STRING);
  if (const Node* v = root->get("parameters")) check_type(v, "parameters", E_OBJECT);
  if (const Node* v = root->get("secrets")) check_type(v, "secrets", E_OBJECT, /*secret=*/true);
  if (const Node* v = root->get("jobRetryCount")) {
    if (auto n = integer_of(v, "jobRetryCount"); n && *n < 0)
      report("J018", v, "jobRetryCount must be 0 or more, found " + v->scalar(),
             "0 means no retry; the server's schema refuses negative values");
  }
  if (const Node* v = root->get("prerequisites")) check_prerequisites(v);
  if (const Node* v = root->get("taskRoles")) check_task_roles(v);
  if (const Node* v = root->get("deployments")) check_deployments(v);
  if (const Node* v = root->get("defaults"))
    check_defaults(v);
  else if (!opt_.overrides.virtual_cluster)
    report("J065", Mark{1, 1},
           "defaults.virtualCluster is not set; the job goes to the virtual cluster \"default\"",
           "add defaults: {virtualCluster: <vc>} or pass --vc");
  if (const Node* v = root->get("extras")) check_extras(v);
  check_semantics();
  check_templates();
  check_yaml11();
  if (opt_.overrides.export_params) {
    std::vector<std::pair<std::string, std::string>> skipped;
    export_lines(f_, opt_.overrides, &skipped);
    const Node* params = root->get("parameters");
    for (const auto& [name, why] : skipped)
      report("J067", key_mark(params, name),
             "--export-params skips parameter \"" + name + "\": " + why,
             "use <% $parameters." + name + " %> in the commands instead");
  }
}

void Validator::check_prerequisites(const Node* list) {
  if (!check_type(list, "prerequisites", E_ARRAY)) return;
  if (list->items().empty())
    report("J017", list,
           "prerequisites is an empty list; the server's schema needs at least one entry",
           "list the docker image the task roles use, or remove the key");
  for (size_t i = 0; i < list->items().size(); ++i) check_prerequisite(list->items()[i], i);
}

void Validator::check_prerequisite(const Node* item, size_t index) {
  std::string where = "prerequisites[" + std::to_string(index) + "]";
  if (!check_type(item, where, E_OBJECT)) return;
  const Node* type_node = item->get("type");
  const Node* name_node = item->get("name");
  std::string type;
  if (!type_node) {
    report("J010", item, where + " is missing the required key \"type\"",
           "add type: dockerimage (or script, output, data)");
  } else if (auto t = string_of(type_node, where + ".type")) {
    type = *t;
    static const std::vector<std::string> kTypes = {"script", "output", "data", "dockerimage"};
    if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end()) {
      std::string guess = util::did_you_mean(type, kTypes);
      if (guess.empty() && (type == "docker" || type == "image" || type == "dockerImage"))
        guess = "dockerimage";
      report("J020", type_node,
             where + " has type \"" + type +
                 "\"; the server knows script, output, data and dockerimage",
             guess.empty() ? "use one of: script, output, data, dockerimage"
                           : "did you mean \"" + guess + "\"?");
      type.clear();
    }
  }
  if (!name_node)
    report("J010", item, where + " is missing the required key \"name\"",
           "add name: <name used by taskRoles>");
  else
    check_name(name_node, where + ".name");
  check_base_fields(item, where);

  if (type == "script" || type == "output" || type == "data") {
    if (const Node* v = item->get("plugin")) check_type(v, where + ".plugin", E_STRING);
    if (const Node* v = item->get("require")) string_list(v, where + ".require", false);
    if (const Node* v = item->get("uri")) {
      if (type == "data") {
        if (check_type(v, where + ".uri", E_ARRAY)) string_list(v, where + ".uri", false);
      } else {
        check_type(v, where + ".uri", E_STRING);
      }
    }
  } else if (type == "dockerimage") {
    const Node* uri = item->get("uri");
    if (!uri)
      report("J010", item, where + " (a dockerimage) is missing the required key \"uri\"",
             "add uri: <image>, e.g. uri: ubuntu:22.04");
    else
      check_type(uri, where + ".uri", E_STRING);
    unknown_keys(
        item,
        {"protocolVersion", "name", "version", "contributor", "description", "type", "auth", "uri"},
        where + " (a dockerimage prerequisite)");
    if (const Node* auth = item->get("auth")) {
      if (check_type(auth, where + ".auth", E_OBJECT)) {
        for (const char* k : {"username", "password", "registryuri"})
          if (const Node* v = auth->get(k))
            check_type(v, where + ".auth." + k, E_STRING, std::string(k) == "password");
        if (const Node* pw = auth->get("password")) {
          JsScalar s = js_scalar(pw);
          if (s.type == JsType::String && !s.text.empty() && s.text.find("<%") == std::string::npos)
            report("J064", pw,
                   where +
                       ".auth.password is written in the job file; anyone who can read the job's "
                       "config sees it",
                   "move it under secrets: and write password: <% $secrets.<name> %>; the server "
                   "masks secrets");
        }
      }
    }
  }
  if (!type.empty() && name_node) {
    JsScalar n = js_scalar(name_node);
    if (n.type == JsType::String) {
      auto& by_name = prereqs_[type];
      if (by_name.count(n.text)) {
        report("J030", name_node,
               "a second " + type + " prerequisite is named \"" + n.text +
                   "\"; the server refuses duplicates",
               "rename one of them (line " + std::to_string(by_name[n.text]->mark().line) + ")");
      } else {
        by_name[n.text] = item;
      }
      all_prereq_names_.insert(n.text);
    }
  }
}

void Validator::check_task_roles(const Node* roles) {
  if (!roles->is_mapping()) {
    report("J011", roles,
           "taskRoles must be a mapping of task role names to their settings, found " +
               describe(roles),
           roles->is_sequence() ? "remove the '- ' in front of the task role names" : "");
    return;
  }
  if (roles->pairs().empty()) {
    report("J017", roles, "taskRoles is empty; a job needs at least one task role",
           "add a task role, e.g. worker:");
    return;
  }
  for (const auto& p : roles->pairs()) {
    const std::string& name = p.key->scalar();
    task_roles_.insert(name);
    if (!valid_identifier(name)) {
      report("J016", p.key,
             "task role name \"" + name +
                 "\" must start with a letter or '_' and hold only letters, digits and '_'",
             "for example \"" + suggest_identifier(name) + "\"");
      continue;  // the server's schema ignores its settings; so do we
    }
    check_task_role(p);
  }
}

void Validator::check_task_role(const yaml::Pair& p) {
  const std::string where = "taskRoles." + p.key->scalar();
  const Node* role = p.value;
  if (!check_type(role, where, E_OBJECT)) return;
  static const std::vector<std::string> kKeys = {
      "protocolVersion",     "instances", "completion", "taskRetryCount", "prerequisites",
      "dockerImage",         "data",      "output",     "script",         "extraContainerOptions",
      "resourcePerInstance", "commands"};
  unknown_keys(role, kKeys, where);
  check_required(role, {"dockerImage", "resourcePerInstance", "commands"}, where, p.key->mark());
  if (const Node* v = role->get("protocolVersion"))
    check_protocol_version(v, where + ".protocolVersion");
  double instances = 1;
  if (const Node* v = role->get("instances")) {
    if (auto n = integer_of(v, where + ".instances")) {
      instances = *n;
      if (*n < 1)
        report("J018", v, where + ".instances must be at least 1, found " + v->scalar(),
               "remove the task role instead of giving it no instances");
    }
  }
  if (const Node* c = role->get("completion");
      c && check_type(c, where + ".completion", E_OBJECT)) {
    unknown_keys(c, {"minFailedInstances", "minSucceededInstances"}, where + ".completion");
    for (const char* k : {"minSucceededInstances", "minFailedInstances"}) {
      const Node* v = c->get(k);
      if (!v || !check_type(v, where + ".completion." + k, E_INT_OR_NULL)) continue;
      auto n = js_number(v);
      if (n && *n > instances)
        report("J062", v,
               where + ".completion." + k + " is " + v->scalar() + " but the task role has " +
                   js_number_to_string(instances) + " instance" + (instances == 1 ? "" : "s") +
                   (std::string(k) == "minSucceededInstances" ? "; the task role can never succeed"
                                                              : "; failures never fail the job"),
               "use a value up to instances, or -1 to disable the rule");
    }
  }
  if (const Node* v = role->get("taskRetryCount")) {
    if (integer_of(v, where + ".taskRetryCount")) {
      const Node* extras = f_.get("extras");
      const Node* gang = extras && extras->is_mapping() ? extras->get("gangAllocation") : nullptr;
      JsScalar g = js_scalar(gang);
      bool gang_off = g.type == JsType::Boolean && !g.boolean;
      auto n = js_number(v);
      if (!gang_off && n && *n != 0)
        report("J060", v,
               where +
                   ".taskRetryCount has no effect: with gang allocation (the default) the whole "
                   "job is retried",
               "set extras.gangAllocation: false to retry tasks one by one, or use jobRetryCount");
    }
  }
  if (const Node* v = role->get("prerequisites")) string_list(v, where + ".prerequisites", false);
  for (const char* k : {"dockerImage", "data", "output", "script"})
    if (const Node* v = role->get(k)) check_type(v, where + "." + k, E_STRING);
  if (const Node* x = role->get("extraContainerOptions");
      x && check_type(x, where + ".extraContainerOptions", E_OBJECT)) {
    for (const auto& kv : x->pairs()) {
      const std::string& k = kv.key->scalar();
      if (k == "shmMB") {
        check_type(kv.value, where + ".extraContainerOptions.shmMB", E_INT);
      } else if (k == "infiniband") {
        check_type(kv.value, where + ".extraContainerOptions.infiniband", Expect{.boolean = true});
      } else if (k == "additionalProperties") {
        report("J012", kv.key,
               "\"additionalProperties\" in " + where +
                   ".extraContainerOptions is refused by the server's schema",
               "remove it");
      } else {
        std::string guess = util::did_you_mean(k, {"shmMB", "infiniband"});
        report("J063", kv.key,
               "the server passes " + where + ".extraContainerOptions." + k +
                   " through but never uses it",
               guess.empty()
                   ? "the options are shmMB (shared memory in MiB) and infiniband (true/false)"
                   : "did you mean \"" + guess + "\"?");
      }
    }
  }
  if (const Node* res = role->get("resourcePerInstance"))
    check_resources(res, where + ".resourcePerInstance",
                    role->find("resourcePerInstance")->key->mark());
  if (const Node* cmds = role->get("commands")) string_list(cmds, where + ".commands", true);
}

void Validator::check_resources(const Node* res, const std::string& where, Mark at) {
  if (!check_type(res, where, E_OBJECT)) return;
  const Node* memory = res->get("memory");
  unknown_keys(res, {"cpu", "memoryMB", "gpu", "ports"}, where, [&](const yaml::Pair& kv) {
    if (kv.key->scalar() != "memory") return false;
    std::string hint = "write memoryMB: <MiB>";
    JsScalar s = js_scalar(kv.value);
    if (s.type == JsType::Number && js_is_integer(kv.value)) {
      hint = "write memoryMB: " + js_number_to_string(s.number);
    } else if (s.type == JsType::String) {
      if (auto bytes = util::parse_quantity(s.text)) {
        double mb = *bytes / (1024.0 * 1024.0);
        if (mb >= 1 && std::fabs(mb - std::round(mb)) < 1e-9)
          hint = "write memoryMB: " + js_number_to_string(std::round(mb)) + " (" + s.text + ")";
      }
    }
    report(
        "J021", kv.key,
        where +
            " uses \"memory\"; the server requires memoryMB (an integer in MiB) and refuses memory",
        hint);
    return true;
  });
  std::set<std::string> skip;
  if (memory && !res->get("memoryMB")) skip.insert("memoryMB");  // J021 says it
  check_required(res, {"cpu", "memoryMB", "gpu"}, where, at, skip);
  for (const char* k : {"cpu", "memoryMB", "gpu"}) {
    const Node* v = res->get(k);
    if (!v) continue;
    if (auto n = integer_of(v, where + "." + k); n && *n < 0)
      report("J018", v,
             where + "." + k + " is negative (" + v->scalar() +
                 "); Kubernetes refuses negative requests",
             "use 0 or more");
  }
  if (const Node* ports = res->get("ports")) {
    if (!ports->is_mapping()) {
      // The schema has no type for ports: only mappings are checked by it.
      if (ports->is_sequence() || (ports->is_scalar() && !ports->is_null()))
        report(
            "J011", ports,
            where + ".ports must be a mapping of port labels to counts, found " + describe(ports),
            "for example ports: {http: 1}");
      return;
    }
    if (ports->pairs().empty())
      report("J017", ports, where + ".ports is empty; the server's schema needs at least one label",
             "remove ports, or add a label such as http: 1");
    for (const auto& kv : ports->pairs()) {
      const std::string& label = kv.key->scalar();
      if (!valid_identifier(label)) {
        report("J019", kv.key,
               "port label \"" + label +
                   "\" must start with a letter or '_' and hold only letters, digits and '_'",
               "for example \"" + suggest_identifier(label) + "\"");
        continue;
      }
      check_type(kv.value, where + ".ports." + label, E_INT);
    }
  }
}

void Validator::check_deployments(const Node* list) {
  if (!check_type(list, "deployments", E_ARRAY)) return;
  if (list->items().empty())
    report("J017", list,
           "deployments is an empty list; the server's schema needs at least one entry",
           "remove the key, or add a deployment");
  for (size_t i = 0; i < list->items().size(); ++i) {
    const Node* d = list->items()[i];
    std::string where = "deployments[" + std::to_string(i) + "]";
    if (!check_type(d, where, E_OBJECT)) continue;
    check_required(d, {"name", "taskRoles"}, where, d->mark());
    if (const Node* v = d->get("protocolVersion"))
      check_protocol_version(v, where + ".protocolVersion");
    if (const Node* n = d->get("name")) {
      check_name(n, where + ".name");
      JsScalar s = js_scalar(n);
      if (s.type == JsType::String) {
        if (deployments_.count(s.text))
          report("J031", n,
                 "a second deployment is named \"" + s.text + "\"; the server refuses duplicates",
                 "rename one of them (line " + std::to_string(deployments_[s.text]->mark().line) +
                     ")");
        else
          deployments_[s.text] = d;
      }
    }
    const Node* roles = d->get("taskRoles");
    if (!roles) continue;
    if (!roles->is_mapping()) {
      if (!roles->is_null())
        report("J011", roles,
               where + ".taskRoles must be a mapping of task role names, found " + describe(roles));
      continue;
    }
    if (roles->pairs().empty())
      report("J017", roles,
             where + ".taskRoles is empty; the server's schema needs at least one task role");
    for (const auto& kv : roles->pairs()) {
      const std::string& tr = kv.key->scalar();
      std::string w = where + ".taskRoles." + tr;
      if (!valid_identifier(tr)) {
        report("J016", kv.key,
               "task role name \"" + tr +
                   "\" must start with a letter or '_' and hold only letters, digits and '_'",
               "for example \"" + suggest_identifier(tr) + "\"");
        continue;
      }
      if (!check_type(kv.value, w, E_OBJECT)) continue;
      unknown_keys(kv.value, {"preCommands", "postCommands"}, w);
      for (const char* k : {"preCommands", "postCommands"})
        if (const Node* v = kv.value->get(k)) string_list(v, w + "." + k, true);
    }
  }
}

void Validator::check_defaults(const Node* defaults) {
  if (!check_type(defaults, "defaults", E_OBJECT)) return;
  if (const Node* v = defaults->get("deployment")) check_type(v, "defaults.deployment", E_STRING);
  const Node* vc = defaults->get("virtualCluster");
  if (vc)
    check_type(vc, "defaults.virtualCluster", E_STRING);
  else if (!opt_.overrides.virtual_cluster)
    report("J065", defaults,
           "defaults.virtualCluster is not set; the job goes to the virtual cluster \"default\"",
           "add virtualCluster: <vc> under defaults, or pass --vc");
}

void Validator::check_extras(const Node* extras) {
  if (!check_type(extras, "extras", E_OBJECT)) return;
  if (const Node* h = extras->get("hivedScheduler")) check_hived(h);
  if (const yaml::Pair* lower = extras->find("hivedscheduler")) {
    report("J044", lower->key,
           "extras.hivedscheduler is ignored: the server reads extras.hivedScheduler (capital S)",
           extras->get("hivedScheduler") ? "merge it into extras.hivedScheduler"
                                         : "rename it to hivedScheduler");
  }
  if (const Node* s = extras->get("storages")) {
    if (!s->is_sequence()) {
      report("J066", s, "extras.storages must be a list of {name, mountPath}, found " + describe(s),
             "for example storages: [{name: team-nfs, mountPath: /mnt/data}], or [] for your "
             "default storages");
    } else {
      for (size_t i = 0; i < s->items().size(); ++i) {
        const Node* item = s->items()[i];
        std::string where = "extras.storages[" + std::to_string(i) + "]";
        if (!item || !item->is_mapping()) {
          report("J066", item,
                 where + " must be a mapping with name and mountPath, found " + describe(item),
                 item && item->is_scalar() ? "write - name: " + item->scalar() : "");
          continue;
        }
        if (const Node* n = item->get("name")) check_type(n, where + ".name", E_STRING);
        if (const Node* m = item->get("mountPath")) check_type(m, where + ".mountPath", E_STRING);
      }
    }
  }
}

void Validator::check_hived(const Node* hived) {
  const std::string where = "extras.hivedScheduler";
  if (!check_type(hived, where, E_OBJECT)) return;
  if (const Node* pc = hived->get("jobPriorityClass")) {
    JsScalar s = js_scalar(pc);
    bool ok =
        s.type == JsType::String && (s.text == "prod" || s.text == "test" || s.text == "oppo");
    if (!ok && s.error.empty()) {
      std::string hint = "use prod, test (the default) or oppo";
      if (s.type == JsType::String && s.text == "crit")
        hint = "crit is in the protocol spec but the rest-server's schema refuses it; use prod";
      else if (s.type == JsType::String) {
        std::string g = util::did_you_mean(s.text, {"prod", "test", "oppo"});
        if (!g.empty()) hint = "did you mean \"" + g + "\"?";
      }
      report("J040", pc,
             where + ".jobPriorityClass must be prod, test or oppo, found " + describe(pc), hint);
    }
  }
  const Node* roles = hived->get("taskRoles");
  if (!roles) return;
  if (!roles->is_mapping()) {
    if (!roles->is_null())
      report("J011", roles,
             where + ".taskRoles must be a mapping of task role names, found " + describe(roles));
    return;
  }
  if (roles->pairs().empty())
    report("J017", roles,
           where + ".taskRoles is empty; the server's schema needs at least one task role",
           "remove the key, or add a task role");
  struct Group {
    std::string sku, pinned;
    Mark at;
  };
  std::map<std::string, Group> groups;
  for (const auto& kv : roles->pairs()) {
    const std::string& tr = kv.key->scalar();
    std::string w = where + ".taskRoles." + tr;
    if (!valid_hived_role_key(tr)) {
      report("J012", kv.key,
             "\"" + tr + "\" in " + where + ".taskRoles is not a task role name the schema accepts",
             "task role names hold only letters, digits and '_'");
      continue;
    }
    if (!check_type(kv.value, w, E_OBJECT)) continue;
    std::optional<std::string> sku, pinned, group;
    if (const Node* v = kv.value->get("skuType");
        v && check_type(v, w + ".skuType", E_STRING_OR_NULL))
      if (js_type(v) == JsType::String) sku = js_scalar(v).text;
    if (const Node* v = kv.value->get("pinnedCellId");
        v && check_type(v, w + ".pinnedCellId", E_STRING_OR_NULL))
      if (js_type(v) == JsType::String) pinned = js_scalar(v).text;
    if (const Node* v = kv.value->get("affinityGroupName");
        v && check_type(v, w + ".affinityGroupName", E_STRING_OR_NULL))
      if (js_type(v) == JsType::String) group = js_scalar(v).text;
    for (const char* k : {"skuNum", "skuNumber"}) {
      if (const yaml::Pair* sp = kv.value->find(k))
        report(
            "J045", sp->key,
            w + "." + k + " is ignored: the server computes the SKU count from resourcePerInstance",
            "set resourcePerInstance to the total of the SKUs you want (e.g. 2 SKUs of 1 GPU: gpu: "
            "2)");
    }
    if (!task_roles_.count(tr)) {
      std::vector<std::string> known(task_roles_.begin(), task_roles_.end());
      std::string g = util::did_you_mean(tr, known);
      report("J042", kv.key,
             where + ".taskRoles." + tr + " names a task role the job does not have",
             g.empty() ? "task roles: " + util::join(known, ", ") : "did you mean \"" + g + "\"?");
      continue;
    }
    if (sku && pinned)
      report("J041", kv.value->find("pinnedCellId")->key,
             w + " sets both skuType and pinnedCellId; the server allows only one",
             "keep skuType to run on any cell of that SKU, or pinnedCellId for a reserved cell");
    if (group) {
      auto it = groups.find(*group);
      std::string s = sku.value_or(""), p = pinned.value_or("");
      if (it == groups.end()) {
        groups[*group] = {s, p, kv.key->mark()};
      } else if (it->second.sku != s || it->second.pinned != p) {
        report("J043", kv.value->find("affinityGroupName")->value,
               "affinity group \"" + *group + "\" mixes skuType/pinnedCellId values (see line " +
                   std::to_string(it->second.at.line) + "); the server refuses it",
               "give every task role of the group the same skuType or pinnedCellId");
      }
    }
  }
}

void Validator::check_semantics() {
  const Node* roles = f_.get("taskRoles");
  if (!roles || !roles->is_mapping()) return;
  for (const auto& p : roles->pairs()) {
    const std::string& tr = p.key->scalar();
    if (!valid_identifier(tr) || !p.value || !p.value->is_mapping()) continue;
    std::string where = "taskRoles." + tr;
    if (const Node* list = p.value->get("prerequisites"); list && list->is_sequence()) {
      for (const Node* item : list->items()) {
        JsScalar s = js_scalar(item);
        if (s.type != JsType::String) continue;
        if (!all_prereq_names_.count(s.text)) {
          std::vector<std::string> known(all_prereq_names_.begin(), all_prereq_names_.end());
          std::string g = util::did_you_mean(s.text, known);
          report("J032", item,
                 where + ".prerequisites names \"" + s.text +
                     "\", which is not defined in prerequisites",
                 g.empty() ? "define it in prerequisites, or remove it here"
                           : "did you mean \"" + g + "\"?");
        }
      }
    }
    static const std::pair<const char*, const char*> kRefs[] = {{"dockerImage", "dockerimage"},
                                                                {"data", "data"},
                                                                {"output", "output"},
                                                                {"script", "script"}};
    for (const auto& [field, type] : kRefs) {
      const Node* ref = p.value->get(field);
      if (!ref) continue;
      JsScalar s = js_scalar(ref);
      if (s.type != JsType::String) continue;
      if (prereqs_[type].count(s.text)) continue;
      std::string other;
      for (const auto& [t, names] : prereqs_)
        if (names.count(s.text)) other = t;
      std::vector<std::string> known;
      for (const auto& [n, _] : prereqs_[type]) known.push_back(n);
      std::string hint;
      if (!other.empty())
        hint = "\"" + s.text + "\" is a " + other + " prerequisite; " + field +
               " needs one of type " + type;
      else if (std::string g = util::did_you_mean(s.text, known); !g.empty())
        hint = "did you mean \"" + g + "\"?";
      else if (known.empty())
        hint = "add a prerequisite with type: " + std::string(type) + " and name: " + s.text;
      else
        hint = std::string(type) + " prerequisites: " + util::join(known, ", ");
      report("J033", ref,
             where + "." + field + " names \"" + s.text + "\", but no " + type +
                 " prerequisite has that name",
             hint);
    }
  }
  const Node* defaults = f_.get("defaults");
  if (defaults && defaults->is_mapping()) {
    const Node* d = defaults->get("deployment");
    JsScalar s = js_scalar(d);
    if (d && s.type == JsType::String && !deployments_.count(s.text)) {
      std::vector<std::string> known;
      for (const auto& [n, _] : deployments_) known.push_back(n);
      std::string g = util::did_you_mean(s.text, known);
      report("J034", d, "defaults.deployment names \"" + s.text + "\", which is not in deployments",
             g.empty()
                 ? (known.empty() ? "add a deployment with that name, or remove defaults.deployment"
                                  : "deployments: " + util::join(known, ", "))
                 : "did you mean \"" + g + "\"?");
    }
  }
  for (const auto& [name, d] : deployments_) {
    const Node* dr = d->get("taskRoles");
    if (!dr || !dr->is_mapping()) continue;
    for (const auto& kv : dr->pairs()) {
      if (task_roles_.count(kv.key->scalar())) continue;
      std::vector<std::string> known(task_roles_.begin(), task_roles_.end());
      std::string g = util::did_you_mean(kv.key->scalar(), known);
      report("J061", kv.key,
             "deployment \"" + name + "\" has commands for task role \"" + kv.key->scalar() +
                 "\", which the job does not have; they never run",
             g.empty() ? "task roles: " + util::join(known, ", ") : "did you mean \"" + g + "\"?");
    }
  }
}

// Maps an offset in the joined command text of a task role back to the file.
struct Segment {
  const Node* node;
  size_t begin;  // offset of the trimmed line in the joined text
  size_t lead;   // bytes trimmed at the start of the node's text
  size_t size;
};

Mark mark_at(const std::vector<Segment>& segs, size_t offset) {
  for (const auto& s : segs) {
    if (offset < s.begin || offset > s.begin + s.size) continue;
    const std::string& text = s.node->scalar();
    size_t inner = s.lead + (offset - s.begin);
    uint32_t line = 1, col = 1;
    for (size_t i = 0; i < inner && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return s.node->inner_mark(line, col);
  }
  return segs.empty() ? Mark{} : segs.front().node->mark();
}

void Validator::check_templates() {
  const Node* roles = f_.get("taskRoles");
  if (!roles || !roles->is_mapping()) return;
  const Overrides& ov = opt_.overrides;
  const Node* params = f_.get("parameters");
  std::vector<std::string> param_names;
  if (params && params->is_mapping())
    for (const auto& p : params->pairs()) param_names.push_back(p.key->scalar());
  for (const auto& p : ov.params) param_names.push_back(p.name);
  std::set<const Node*> warned_values;
  std::set<std::string> warned_secrets;

  // The default deployment, whose commands the server adds.
  const Node* deployment = nullptr;
  if (const Node* defaults = f_.get("defaults"); defaults && defaults->is_mapping()) {
    JsScalar d = js_scalar(defaults->get("deployment"));
    if (d.type == JsType::String && deployments_.count(d.text)) deployment = deployments_[d.text];
  }

  for (const auto& p : roles->pairs()) {
    const std::string& tr = p.key->scalar();
    const Node* role = p.value;
    if (!valid_identifier(tr) || !role || !role->is_mapping()) continue;
    std::vector<const Node*> lines;
    auto add = [&](const Node* list) {
      if (list && list->is_sequence())
        for (const Node* c : list->items())
          if (js_type(c) == JsType::String) lines.push_back(c);
    };
    const Node* dep_role = nullptr;
    if (deployment)
      if (const Node* dr = deployment->get("taskRoles"); dr && dr->is_mapping())
        dep_role = dr->get(tr);
    if (dep_role && dep_role->is_mapping()) add(dep_role->get("preCommands"));
    add(role->get("commands"));
    if (dep_role && dep_role->is_mapping()) add(dep_role->get("postCommands"));
    if (lines.empty()) continue;

    std::string joined;
    std::vector<Segment> segs;
    for (const Node* n : lines) {
      const std::string& text = n->scalar();
      std::string t = js_trim(text);
      size_t lead = t.empty() ? 0 : text.find(t);
      if (!joined.empty() || !segs.empty()) joined += '\n';
      segs.push_back({n, joined.size(), lead == std::string::npos ? 0 : lead, t.size()});
      joined += t;
    }
    ParsedTemplate t = parse_template(joined);
    if (t.error) {
      report("J052", mark_at(segs, t.error->offset),
             "taskRoles." + tr + " commands: " + t.error->message +
                 "; the server fails to render the job",
             "close every <% with %>, and balance section tags <%# x %> ... <%/ x %>");
      continue;
    }
    Scope scope(f_, ov, role);
    for (const TemplateTag& tag : t.tags) {
      Mark at = mark_at(segs, tag.begin);
      if (tag.dropped) {
        if (tag.type == '=') continue;  // delimiter changes are parsed, not output
        if (tag.type == 0)              // a variable inside a section
          report("J053", at,
                 "<% " + tag.name +
                     " %> is inside a section; the server drops the section and its content",
                 "remove the section tags");
        else if (tag.type != '/')
          report("J053", at,
                 std::string("the tag <%") + tag.type + " " + tag.name +
                     " %> is not a variable; the server removes it" +
                     (tag.type == '#' || tag.type == '^' ? " and everything up to its closing tag"
                                                         : ""),
                 tag.type == '&' ? "write <% " + tag.name + " %>" : "remove it");
        continue;
      }
      std::string name = lookup_name(tag.name);
      Scope::Resolution r = scope.resolve(name);
      if (r.secret) {
        if (warned_secrets.insert(tr + "|" + name).second)
          report("J051", at,
                 "taskRoles." + tr + " commands reference " + name +
                     "; the server leaves it to the runtime, which writes the value into the "
                     "command in the container",
                 "the value shows in process listings and in logs if echoed; prefer a file or a "
                 "registry credential");
        continue;
      }
      if (!r.found) {
        std::string hint;
        if (r.root == "$parameters") {
          std::string key = name.size() > 12 ? name.substr(12) : "";
          key = key.substr(0, key.find('.'));
          std::string g = util::did_you_mean(key, param_names);
          hint = !g.empty() ? "did you mean $parameters." + g + "?"
                 : param_names.empty()
                     ? "add a parameters: section, or pass --param " + key + "=VALUE"
                     : "define " + key + " under parameters:, or pass --param " + key + "=VALUE";
        } else if (r.root == "$script" || r.root == "$output" || r.root == "$data") {
          std::string field = r.root.substr(1);
          const Node* ref = role->get(field);
          hint = ref ? "check the keys of the " + field + " prerequisite \"" + js_scalar(ref).text +
                           "\""
                     : "taskRoles." + tr + " has no " + field + ": prerequisite; add " + field +
                           ": <name>";
        } else {
          hint =
              "the server knows $parameters, $script, $output and $data here (and $secrets for the "
              "runtime)";
        }
        report("J050", at,
               "<% " + tag.name + " %> in taskRoles." + tr +
                   " commands does not resolve; the command keeps it as is",
               hint);
        continue;
      }
      if (r.node && !warned_values.count(r.node) && r.node->is_scalar() &&
          r.node->style() == yaml::ScalarStyle::Plain && normalized_tag(r.node).empty()) {
        JsScalar v = js_scalar(r.node);
        if ((v.type == JsType::Number || v.type == JsType::Date) && r.text != r.node->scalar()) {
          warned_values.insert(r.node);
          report("J054", r.node,
                 "the server reads " + r.node->scalar() + " as a " +
                     (v.type == JsType::Date ? "date" : "number") + ", so <% " + tag.name +
                     " %> renders as \"" + r.text + "\"",
                 "quote the value to keep it as written: \"" + r.node->scalar() + "\"");
        }
      }
    }
  }

  // Registry credentials are rendered with $secrets.
  const Node* prereqs = f_.get("prerequisites");
  if (!prereqs || !prereqs->is_sequence()) return;
  Scope auth_scope(f_, ov, nullptr, /*with_secrets=*/true);
  for (const Node* item : prereqs->items()) {
    if (!item || !item->is_mapping()) continue;
    const Node* auth = item->get("auth");
    if (!auth || !auth->is_mapping()) continue;
    for (const auto& kv : auth->pairs()) {
      if (js_type(kv.value) != JsType::String) continue;
      const std::string& text = kv.value->scalar();
      if (text.find("<%") == std::string::npos) continue;
      ParsedTemplate t = parse_template(text);
      if (t.error) {
        report("J052", kv.value,
               "auth." + kv.key->scalar() + ": " + t.error->message +
                   "; the server fails to render the job",
               "close every <% with %>");
        continue;
      }
      for (const TemplateTag& tag : t.tags) {
        if (tag.dropped) continue;
        Scope::Resolution r = auth_scope.resolve(lookup_name(tag.name));
        if (!r.found)
          report("J050", kv.value,
                 "<% " + tag.name + " %> in auth." + kv.key->scalar() +
                     " does not resolve; the registry gets the text as is and the image pull fails",
                 r.root == "$secrets" ? "define it under secrets:"
                                      : "registry credentials can use only $secrets");
      }
    }
  }
}

}  // namespace

void validate(const JobFile& f, diag::List& out, const ValidateOptions& opt) {
  Validator v(f, out, opt);
  v.run();
}

std::set<uint32_t> secret_lines(const JobFile& f) {
  std::set<uint32_t> lines;
  const Node* root = f.root;
  if (!root) return lines;
  uint32_t total = 1;
  for (char c : f.text)
    if (c == '\n') ++total;
  // The lines from a key to the line before the next key of the same mapping
  // (in source order), or to `end` for the last key.
  auto span = [&](const Node* map, const yaml::Pair* pair, uint32_t end) {
    uint32_t from = pair->key->mark().line;
    uint32_t to = end;
    for (const auto& p : map->pairs())
      if (p.key->mark().line > from && p.key->mark().line - 1 < to) to = p.key->mark().line - 1;
    for (uint32_t l = from; l <= to && l != 0; ++l) lines.insert(l);
    return to;
  };
  if (const yaml::Pair* s = root->find("secrets")) span(root, s, total);
  const Node* prereqs = root->get("prerequisites");
  if (prereqs && prereqs->is_sequence()) {
    const auto& items = prereqs->items();
    for (size_t i = 0; i < items.size(); ++i) {
      const Node* item = items[i];
      if (!item || !item->is_mapping()) continue;
      uint32_t end = i + 1 < items.size() && items[i + 1] ? items[i + 1]->mark().line - 1 : total;
      if (const yaml::Pair* prq = root->find("prerequisites"))
        for (const auto& p : root->pairs())
          if (p.key->mark().line > prq->key->mark().line && p.key->mark().line - 1 < end)
            end = p.key->mark().line - 1;
      const yaml::Pair* auth = item->find("auth");
      if (!auth || !auth->value || !auth->value->is_mapping()) continue;
      uint32_t auth_end = end;
      for (const auto& p : item->pairs())
        if (p.key->mark().line > auth->key->mark().line && p.key->mark().line - 1 < auth_end)
          auth_end = p.key->mark().line - 1;
      if (const yaml::Pair* pw = auth->value->find("password")) span(auth->value, pw, auth_end);
    }
  }
  return lines;
}

CheckOutcome check_files(const std::vector<std::string>& paths, const ValidateOptions& opt) {
  CheckOutcome out;
  for (const auto& path : paths) {
    JobFile f = JobFile::load(path);
    out.files.push_back(path);
    if (!f.read_error.empty()) out.input_error = true;
    validate(f, out.diagnostics, opt);
    out.hidden_lines[path] = secret_lines(f);
    out.sources[path] = std::move(f.text);
  }
  out.diagnostics.sort(out.files);
  return out;
}

}  // namespace pai::job
