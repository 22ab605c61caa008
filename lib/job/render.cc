#include "job/render.h"

#include "util/strings.h"

namespace pai::job {

namespace {

std::string str_of(const yaml::Node* n) {
  if (!n) return {};
  JsScalar s = js_scalar(n);
  return s.type == JsType::String ? s.text : std::string();
}

bool is_shell_identifier(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// A canonical array index as JavaScript property names go ("0", "12"; not "01").
std::optional<size_t> array_index(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  if (s.size() > 1 && s[0] == '0') return std::nullopt;
  size_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<size_t>(c - '0');
  }
  return v;
}

// The UTF-8 text of the UTF-16 code unit at `index`, as "abc"[i] would give
// (half of a surrogate pair comes out as U+FFFD).
std::optional<std::string> utf16_char_at(std::string_view s, size_t index) {
  size_t unit = 0;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    size_t units = len == 4 ? 2 : 1;
    if (index < unit + units) {
      if (units == 2) return std::string("\xEF\xBF\xBD");
      return std::string(s.substr(i, len));
    }
    unit += units;
    i += len;
  }
  return std::nullopt;
}

}  // namespace

size_t utf16_length(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    n += len == 4 ? 2 : 1;
    i += len;
  }
  return n;
}

JsScalar override_value(const ParamOverride& p) {
  const std::string& v = p.value;
  if (v.size() >= 2 &&
      ((v.front() == '"' && v.back() == '"') || (v.front() == '\'' && v.back() == '\''))) {
    JsScalar s;
    s.type = JsType::String;
    std::string inner = v.substr(1, v.size() - 2);
    if (v.front() == '\'') {
      for (size_t i = 0; i < inner.size(); ++i) {
        s.text += inner[i];
        if (inner[i] == '\'' && i + 1 < inner.size() && inner[i + 1] == '\'') ++i;
      }
    } else {
      for (size_t i = 0; i < inner.size(); ++i) {
        if (inner[i] == '\\' && i + 1 < inner.size() &&
            (inner[i + 1] == '"' || inner[i + 1] == '\\'))
          ++i;
        s.text += inner[i];
      }
    }
    return s;
  }
  return js_resolve_plain(v);
}

const yaml::Node* find_prerequisite(const JobFile& f, std::string_view type,
                                    std::string_view name) {
  const yaml::Node* list = f.get("prerequisites");
  if (!list || !list->is_sequence()) return nullptr;
  for (const yaml::Node* item : list->items()) {
    if (!item || !item->is_mapping()) continue;
    if (str_of(item->get("type")) == type && str_of(item->get("name")) == name) return item;
  }
  return nullptr;
}

Scope::Scope(const JobFile& f, const Overrides& o, const yaml::Node* task_role, bool with_secrets)
    : f_(f), o_(o), with_secrets_(with_secrets) {
  params_ = f.get("parameters");
  secrets_ = f.get("secrets");
  if (task_role && task_role->is_mapping()) {
    auto pick = [&](const char* field, const char* type) -> const yaml::Node* {
      const yaml::Node* ref = task_role->get(field);
      if (!ref) return nullptr;
      JsScalar s = js_scalar(ref);
      // The server indexes prerequisites by String(value).
      return find_prerequisite(f, type, s.type == JsType::String ? s.text : js_to_string(s));
    };
    script_ = pick("script", "script");
    output_ = pick("output", "output");
    data_ = pick("data", "data");
  }
}

Scope::Resolution Scope::resolve(const std::string& name) const {
  Resolution r;
  if (name == ".") {
    // mustache's context cache maps "." to the whole view: an object.
    r.found = true;
    r.text = "[object Object]";
    return r;
  }
  std::vector<std::string> segs;
  if (name.find('.') != std::string::npos && name.find('.') > 0) {
    for (auto s : util::split(name, '.')) segs.emplace_back(s);
  } else {
    segs.push_back(name);
  }
  r.root = segs[0];
  r.secret = segs[0] == "$secrets";

  // The current value: a node from the file, an override, or a string's length.
  const yaml::Node* node = nullptr;
  const ParamOverride* ov = nullptr;
  std::optional<std::string> text_value;  // a computed value (a length, a character)
  bool is_number_value = false;
  if (segs[0] == "$parameters") {
    node = params_;
  } else if (segs[0] == "$script") {
    node = script_;
  } else if (segs[0] == "$output") {
    node = output_;
  } else if (segs[0] == "$data") {
    node = data_;
  } else if (segs[0] == "$secrets" && with_secrets_) {
    node = secrets_;
  } else {
    return r;
  }
  bool root_is_params = segs[0] == "$parameters";
  bool alive = node != nullptr || (root_is_params && !o_.params.empty());
  for (size_t i = 1; i < segs.size() && alive; ++i) {
    const std::string& seg = segs[i];
    if (i == 1 && root_is_params) {
      if (const ParamOverride* p = o_.param(seg)) {
        ov = p;
        node = nullptr;
        continue;
      }
      if (!node) {
        alive = false;
        break;
      }
    }
    if (ov || text_value) {
      // A string value: only length and character indexes exist.
      std::string s = ov ? js_to_string(override_value(*ov)) : *text_value;
      JsType t =
          ov ? override_value(*ov).type : (is_number_value ? JsType::Number : JsType::String);
      ov = nullptr;
      text_value.reset();
      is_number_value = false;
      if (t != JsType::String) {
        alive = false;
        break;
      }
      if (seg == "length") {
        text_value = std::to_string(utf16_length(s));
        is_number_value = true;
      } else if (auto idx = array_index(seg)) {
        text_value = utf16_char_at(s, *idx);
        if (!text_value) alive = false;
      } else {
        alive = false;
      }
      continue;
    }
    if (!node) {
      alive = false;
      break;
    }
    if (node->is_mapping()) {
      node = node->get(seg);
      if (!node) alive = false;
    } else if (node->is_sequence()) {
      if (seg == "length") {
        text_value = std::to_string(node->items().size());
        is_number_value = true;
        node = nullptr;
      } else if (auto idx = array_index(seg); idx && *idx < node->items().size()) {
        node = node->items()[*idx];
      } else {
        alive = false;
      }
    } else {
      JsScalar s = js_scalar(node);
      node = nullptr;
      if (s.type == JsType::String && seg == "length") {
        text_value = std::to_string(utf16_length(s.text));
        is_number_value = true;
      } else if (auto idx = array_index(seg); s.type == JsType::String && idx) {
        text_value = utf16_char_at(s.text, *idx);
        if (!text_value) alive = false;
      } else {
        alive = false;
      }
    }
  }
  if (!alive) return r;
  if (text_value) {
    r.found = true;
    r.text = *text_value;
    return r;
  }
  if (ov) {
    JsScalar v = override_value(*ov);
    if (v.type == JsType::Null) return r;
    r.found = true;
    r.override = ov;
    r.text = js_to_string(v);
    return r;
  }
  if (!node) {
    if (segs.size() == 1 && root_is_params && !o_.params.empty()) {
      r.found = true;
      r.text = "[object Object]";
    }
    return r;
  }
  JsType t = js_type(node);
  if (t == JsType::Null || t == JsType::Undefined) return r;
  r.found = true;
  r.node = node;
  r.text = js_to_string(node);
  return r;
}

std::vector<std::string> export_lines(const JobFile& f, const Overrides& o,
                                      std::vector<std::pair<std::string, std::string>>* skipped) {
  std::vector<std::string> lines;
  std::vector<std::string> names;
  const yaml::Node* params = f.get("parameters");
  if (params && params->is_mapping())
    for (const auto& p : params->pairs()) names.push_back(p.key->scalar());
  for (const auto& p : o.params) {
    bool seen = false;
    for (const auto& n : names) seen |= n == p.name;
    if (!seen) names.push_back(p.name);
  }
  for (const auto& n : names) {
    if (!is_shell_identifier(n)) {
      if (skipped)
        skipped->push_back({n, "the name is not a shell variable name ([A-Za-z_][A-Za-z0-9_]*)"});
      continue;
    }
    std::string value;
    if (const ParamOverride* p = o.param(n)) {
      JsScalar v = override_value(*p);
      if (v.type == JsType::Null) {
        if (skipped) skipped->push_back({n, "the value is null"});
        continue;
      }
      value = js_to_string(v);
    } else {
      const yaml::Node* v = params->get(n);
      JsType t = js_type(v);
      if (t == JsType::Array || t == JsType::Object) {
        if (skipped)
          skipped->push_back({n, std::string("the value is ") + std::string(js_type_name(t))});
        continue;
      }
      if (t == JsType::Null || t == JsType::Undefined) {
        if (skipped) skipped->push_back({n, "the value is null"});
        continue;
      }
      value = js_to_string(v);
    }
    lines.push_back("export " + n + "=" + util::shell_quote(value));
  }
  return lines;
}

RenderResult render(const JobFile& f, const Overrides& o) {
  RenderResult out;
  out.name = o.name ? *o.name : str_of(f.get("name"));
  JobRequest req = request_of(f, o);
  out.virtual_cluster = req.virtual_cluster;

  const yaml::Node* deployment = nullptr;
  const yaml::Node* defaults = f.get("defaults");
  if (defaults && defaults->is_mapping()) {
    if (const yaml::Node* d = defaults->get("deployment")) {
      std::string want = str_of(d);
      const yaml::Node* deps = f.get("deployments");
      if (deps && deps->is_sequence())
        for (const yaml::Node* item : deps->items())
          if (item && item->is_mapping() && str_of(item->get("name")) == want) deployment = item;
      if (deployment) out.deployment = want;
    }
  }

  std::vector<std::string> exports;
  if (o.export_params) exports = export_lines(f, o);

  const yaml::Node* roles = f.get("taskRoles");
  if (!roles || !roles->is_mapping()) return out;
  for (const auto& pair : roles->pairs()) {
    RenderedTaskRole tr;
    tr.name = pair.key->scalar();
    const yaml::Node* role = pair.value;
    for (const auto& r : req.task_roles)
      if (r.name == tr.name) {
        tr.instances = r.instances;
        tr.cpu = r.cpu;
        tr.gpu = r.gpu;
        tr.memory_mb = r.memory_mb;
      }
    if (!role || !role->is_mapping()) {
      out.task_roles.push_back(std::move(tr));
      continue;
    }
    tr.docker_image = str_of(role->get("dockerImage"));
    if (const yaml::Node* img = find_prerequisite(f, "dockerimage", tr.docker_image)) {
      tr.docker_image_uri = str_of(img->get("uri"));
      const yaml::Node* auth = img->get("auth");
      if (auth && auth->is_mapping()) {
        RenderedAuth a;
        a.prerequisite = tr.docker_image;
        std::string user = str_of(auth->get("username"));
        a.username = user.find("<%") != std::string::npos ? "******" : user;
        a.has_password = auth->get("password") != nullptr;
        a.registry_uri = str_of(auth->get("registryuri"));
        tr.auth = a;
      }
    }

    std::vector<const yaml::Node*> lines;
    auto add_list = [&](const yaml::Node* list) {
      if (list && list->is_sequence())
        for (const yaml::Node* c : list->items()) lines.push_back(c);
    };
    const yaml::Node* dep_role = nullptr;
    if (deployment) {
      const yaml::Node* dep_roles = deployment->get("taskRoles");
      if (dep_roles && dep_roles->is_mapping()) dep_role = dep_roles->get(tr.name);
      if (dep_role && !dep_role->is_mapping()) dep_role = nullptr;
    }
    if (dep_role) add_list(dep_role->get("preCommands"));
    size_t pre = lines.size();
    add_list(role->get("commands"));
    if (dep_role) add_list(dep_role->get("postCommands"));

    for (size_t i = 0; i < lines.size(); ++i) {
      if (i == pre)
        for (const auto& e : exports) tr.commands.push_back(e);
      tr.commands.push_back(js_trim(js_to_string(lines[i])));
    }
    if (lines.size() == pre)
      for (const auto& e : exports) tr.commands.push_back(e);

    std::string joined = util::join(tr.commands, "\n");
    ParsedTemplate t = parse_template(joined);
    if (t.error) {
      tr.error = t.error->message;
      tr.script = joined;
      out.task_roles.push_back(std::move(tr));
      continue;
    }
    Scope scope(f, o, role);
    tr.script = render_template(t, [&](const std::string& name) -> std::optional<std::string> {
      Scope::Resolution r = scope.resolve(name);
      if (r.found) return r.text;
      if (r.secret)
        tr.secrets.push_back(name);
      else
        tr.unresolved.push_back(name);
      return std::nullopt;
    });
    out.task_roles.push_back(std::move(tr));
  }
  return out;
}

}  // namespace pai::job
