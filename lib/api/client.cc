#include "api/client.h"
#include "util/json.h"

#include <algorithm>

namespace pai::api {

namespace {

std::string one_line(std::string s, size_t max = 300) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ') {
      if (!space && !out.empty()) out += ' ';
      space = true;
    } else {
      out += c;
      space = false;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > max) out = out.substr(0, max - 3) + "...";
  return out;
}

// Text of an HTML page without tags, e.g. nginx's "502 Bad Gateway".
std::string strip_html(const std::string& body) {
  std::string out;
  bool in_tag = false;
  for (char c : body) {
    if (c == '<')
      in_tag = true;
    else if (c == '>') {
      in_tag = false;
      out += ' ';
    } else if (!in_tag)
      out += c;
  }
  return out;
}

std::string quote_param(const Json& v) {
  if (v.is_string()) return "\"" + v.get<std::string>() + "\"";
  return v.dump();
}

// One AJV error ({keyword, dataPath, params, message}) as "where: what".
std::string ajv_line(const Json& e) {
  std::string path = e.value("dataPath", std::string());
  if (path.empty()) path = e.value("instancePath", std::string());
  if (path.empty()) path = "(top level)";
  if (!path.empty() && path[0] == '.') path = path.substr(1);
  std::string line = path + ": " + e.value("message", std::string("invalid"));
  if (e.contains("params") && e["params"].is_object() && !e["params"].empty()) {
    std::string params;
    for (auto it = e["params"].begin(); it != e["params"].end(); ++it) {
      if (!params.empty()) params += ", ";
      params += it.key() + " " + quote_param(it.value());
    }
    line += " (" + params + ")";
  }
  return one_line(line, 400);
}

std::string hint_for(long status, const std::string& code, const std::string& message) {
  if (code == "UnauthorizedUserError")
    return "the token was refused (expired or revoked): log in again with "
           "'paictl cluster add NAME --uri URI --user USER --password-stdin --force'";
  if (code == "ForbiddenUserError")
    return message.find(" in ") != std::string::npos
               ? "you may not use that virtual cluster; 'paictl cluster status' lists the ones you "
                 "can use"
               : "only the job's owner or an administrator may do this";
  if (code == "ConflictJobError")
    return "job names are unique per user, finished jobs included: pick another name with --name";
  if (code == "NoJobError") return "check the name with 'paictl job list'";
  if (code == "NoVirtualClusterError") return "'paictl cluster status' lists the virtual clusters";
  if (code == "NoStorageError")
    return "check extras.storages against the storages you may use on this cluster";
  if (code == "NoApiError")
    return "this address does not serve OpenPAI's REST API v2: check --uri (the cluster's web "
           "address) and the "
           "server's version";
  if (code == "InvalidProtocolError")
    return "'paictl job validate FILE' reports every problem with its line";
  if (code == "IncorrectPasswordError" || code == "NoUserError")
    return "check the user name and password";
  if (status == 429)
    return "the server limits requests (by default 60 job submissions per hour and 60 job lists "
           "per minute per user)";
  if (status == 502 || status == 503 || status == 504)
    return "the cluster's REST server is down or overloaded";
  if (status == 413) return "the request body is too large for the server (100 KiB for jobs)";
  return {};
}

double num(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return 0;
  const Json& v = j[key];
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    try {
      return std::stod(v.get<std::string>());
    } catch (...) {
      return 0;
    }
  }
  return 0;
}

Resources resources_of(const Json& j) {
  Resources r;
  if (!j.is_object()) return r;
  r.cpu = j.contains("cpu") ? num(j, "cpu") : num(j, "vCores");
  r.memory_mb = num(j, "memory");
  r.gpu = j.contains("gpu") ? num(j, "gpu") : num(j, "GPUs");
  return r;
}

std::string path_segment(const std::string& s) {
  return http::url_encode(s);
}

std::string base_host(const std::string& url) {
  size_t scheme = url.find("://");
  size_t end = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  return url.substr(0, end);
}

}  // namespace

std::string Error::summary() const {
  if (kind == Kind::Transport) return message;
  std::string s = status ? std::to_string(status) : std::string();
  if (!code.empty()) s += (s.empty() ? "" : " ") + code;
  if (!message.empty()) s += (s.empty() ? "" : ": ") + message;
  return s;
}

Error error_from_transport(const http::Result& r) {
  Error e;
  e.kind = Error::Kind::Transport;
  e.transport = r.error;
  e.message = r.message;
  if (r.attempts > 1) e.message += " (after " + std::to_string(r.attempts) + " attempts)";
  switch (r.error) {
    case http::ErrorKind::Resolve:
      e.hint = "check the host name in the cluster's URI";
      break;
    case http::ErrorKind::Connect:
      e.hint = "is the cluster up, and is the URI's port right?";
      break;
    case http::ErrorKind::Timeout:
      e.hint = "the cluster did not answer in time; raise --timeout or retry later";
      break;
    default:
      break;
  }
  return e;
}

Error error_from_response(const http::Response& r) {
  Error e;
  e.kind = Error::Kind::Http;
  e.status = r.status;
  Json j = util::parse_json_or_discarded(r.body);
  if (!j.is_discarded() && j.is_object() && (j.contains("code") || j.contains("message"))) {
    if (j.contains("code") && j["code"].is_string()) e.code = j["code"].get<std::string>();
    std::string message;
    if (j.contains("message"))
      message = j["message"].is_string() ? j["message"].get<std::string>() : j["message"].dump();
    Json list = util::parse_json_or_discarded(message);
    if (!list.is_discarded() && list.is_array()) {
      for (const auto& item : list)
        e.details.push_back(item.is_object() ? ajv_line(item) : one_line(item.dump()));
      e.message = "the server's schema refused the job (" + std::to_string(e.details.size()) +
                  " error" + (e.details.size() == 1 ? "" : "s") + ")";
    } else {
      e.message = one_line(message);
    }
  } else {
    std::string text =
        r.header("content-type").find("html") != std::string::npos ? strip_html(r.body) : r.body;
    text = one_line(text, 200);
    if (text.empty()) text = std::string(http::reason_phrase(r.status));
    e.message = text;
  }
  e.hint = hint_for(e.status, e.code, e.message);
  std::string ra = r.header("retry-after");
  if (r.status == 429 && !ra.empty()) e.hint += "; it asks to wait " + ra + " s";
  return e;
}

std::string job_id(const std::string& user, const std::string& name) {
  return user + "~" + name;
}

Resources VirtualCluster::free() const {
  Resources f;
  f.cpu = std::max(0.0, total.cpu - used.cpu);
  f.memory_mb = std::max(0.0, total.memory_mb - used.memory_mb);
  f.gpu = std::max(0.0, total.gpu - used.gpu);
  return f;
}

Client::Client(http::Client& http, std::string rest_base, std::string token)
    : http_(http), base_(std::move(rest_base)), token_(std::move(token)) {
  while (!base_.empty() && base_.back() == '/') base_.pop_back();
}

http::Result Client::call(const std::string& method, const std::string& path,
                          const std::string& body, const std::string& content_type, bool auth,
                          std::optional<bool> idempotent) {
  http::Request r;
  r.method = method;
  r.url = base_ + path;
  r.body = body;
  r.idempotent = idempotent;
  r.headers.push_back({"Accept", "application/json"});
  if (!content_type.empty()) r.headers.push_back({"Content-Type", content_type});
  if (auth && !token_.empty()) r.headers.push_back({"Authorization", "Bearer " + token_});
  return http_.send(r);
}

template <class T>
Result<T> Client::fail(const http::Result& r) {
  return r.ok() ? error_from_response(r.response) : error_from_transport(r);
}

Result<Json> Client::json_call(const std::string& method, const std::string& path,
                               const std::string& body, const std::string& content_type,
                               bool auth) {
  http::Result r = call(method, path, body, content_type, auth);
  if (!r.ok() || r.response.status < 200 || r.response.status >= 300) return fail<Json>(r);
  Json j = util::parse_json_or_discarded(r.response.body);
  if (j.is_discarded()) {
    Error e;
    e.kind = Error::Kind::Decode;
    e.status = r.response.status;
    e.message = util::json_too_deep(r.response.body)
                    ? "the answer to " + method + " " + path + " nests deeper than " +
                          std::to_string(util::kJsonMaxDepth) + " levels, which no API answer does"
                    : "the answer to " + method + " " + path +
                          " is not JSON: " + one_line(r.response.body, 120);
    e.hint = "is the URI the cluster's web address (the REST API is under /rest-server)?";
    return e;
  }
  return j;
}

Result<ClusterInfo> Client::info() {
  Result<Json> j = json_call("GET", "/api/v2/info", {}, {}, false);
  if (!j.ok()) return j.error();
  const Json& v = *j;
  if (!v.is_object() || !v.contains("version")) {
    Error e;
    e.kind = Error::Kind::Decode;
    e.message = "the answer to GET /api/v2/info has no version: not an OpenPAI REST server";
    return e;
  }
  ClusterInfo c;
  c.name = v.value("name", std::string());
  c.version = v["version"].is_string() ? v["version"].get<std::string>() : v["version"].dump();
  c.launcher_type = v.value("launcherType", std::string());
  c.authn_method = v.value("authnMethod", std::string());
  return c;
}

Result<std::string> Client::authn_method() {
  Result<Json> j = json_call("GET", "/api/v2/authn/info", {}, {}, false);
  if (!j.ok()) return j.error();
  return j->value("authn_type", std::string());
}

Result<LoginResult> Client::login(const std::string& user, const std::string& password,
                                  int expiration_s) {
  std::string body = http::form_encode(
      {{"username", user}, {"password", password}, {"expiration", std::to_string(expiration_s)}});
  // Logging in twice is harmless: it only issues another token.
  http::Result r = call("POST", "/api/v2/authn/basic/login", body,
                        "application/x-www-form-urlencoded", false, true);
  if (!r.ok() || r.response.status != 200) return fail<LoginResult>(r);
  Json j = util::parse_json_or_discarded(r.response.body);
  if (j.is_discarded() || !j.is_object() || !j.contains("token") || !j["token"].is_string()) {
    Error e;
    e.kind = Error::Kind::Decode;
    e.status = r.response.status;
    e.message = "the login answer has no token";
    return e;
  }
  LoginResult l;
  l.token = j["token"].get<std::string>();
  l.user = j.value("user", user);
  l.admin = j.value("admin", false);
  return l;
}

Result<UserInfo> Client::user(const std::string& name) {
  Result<Json> j = json_call("GET", "/api/v2/users/" + path_segment(name));
  if (!j.ok()) return j.error();
  UserInfo u;
  u.raw = *j;
  u.username = j->value("username", name);
  u.admin = j->contains("admin") && (*j)["admin"].is_boolean() ? (*j)["admin"].get<bool>() : false;
  if (j->contains("virtualCluster") && (*j)["virtualCluster"].is_array())
    for (const auto& v : (*j)["virtualCluster"])
      if (v.is_string()) u.virtual_clusters.push_back(v.get<std::string>());
  return u;
}

Result<std::vector<VirtualCluster>> Client::virtual_clusters() {
  Result<Json> j = json_call("GET", "/api/v2/virtual-clusters");
  if (!j.ok()) return j.error();
  std::vector<VirtualCluster> vcs;
  if (j->is_object()) {
    for (auto it = j->begin(); it != j->end(); ++it) {
      VirtualCluster vc;
      vc.name = it.key();
      const Json& v = it.value();
      vc.raw = v;
      vc.capacity = num(v, "capacity");
      vc.used_capacity = num(v, "usedCapacity");
      vc.max_capacity = num(v, "maxCapacity");
      vc.dedicated = v.is_object() && v.contains("dedicated") && v["dedicated"].is_boolean() &&
                     v["dedicated"].get<bool>();
      if (v.is_object()) {
        if (v.contains("resourcesUsed")) vc.used = resources_of(v["resourcesUsed"]);
        if (v.contains("resourcesGuaranteed"))
          vc.guaranteed = resources_of(v["resourcesGuaranteed"]);
        if (v.contains("resourcesTotal")) vc.total = resources_of(v["resourcesTotal"]);
      }
      vcs.push_back(std::move(vc));
    }
  }
  return vcs;
}

Result<std::vector<SkuType>> Client::sku_types(const std::string& vc) {
  std::string path = "/api/v2/cluster/sku-types";
  if (!vc.empty()) path += "?vc=" + http::url_encode(vc);
  Result<Json> j = json_call("GET", path);
  if (!j.ok()) return j.error();
  std::vector<SkuType> skus;
  if (j->is_object())
    for (auto it = j->begin(); it != j->end(); ++it) {
      SkuType s;
      s.name = it.key();
      s.cpu = num(it.value(), "cpu");
      s.memory_mb = num(it.value(), "memory");
      s.gpu = num(it.value(), "gpu");
      skus.push_back(s);
    }
  return skus;
}

Result<std::vector<Storage>> Client::storages() {
  Result<Json> j = json_call("GET", "/api/v2/storages");
  if (!j.ok()) return j.error();
  std::vector<Storage> list;
  if (j->is_object() && j->contains("storages") && (*j)["storages"].is_array())
    for (const auto& s : (*j)["storages"]) {
      if (!s.is_object()) continue;
      Storage st;
      st.name = s.value("name", std::string());
      st.share = s.contains("share") && s["share"].is_boolean() && s["share"].get<bool>();
      st.is_default =
          s.contains("default") && s["default"].is_boolean() && s["default"].get<bool>();
      list.push_back(st);
    }
  return list;
}

Result<std::string> Client::submit_job(const std::string& yaml) {
  http::Result r = call("POST", "/api/v2/jobs", yaml, "text/yaml");
  if (!r.ok() || (r.response.status != 201 && r.response.status != 202 && r.response.status != 200))
    return fail<std::string>(r);
  Json j = util::parse_json_or_discarded(r.response.body);
  return !j.is_discarded() && j.is_object() ? j.value("message", std::string("submitted"))
                                            : "submitted";
}

Result<Json> Client::list_jobs(const JobFilter& f) {
  Result<JobPage> p = list_jobs_page(f);
  if (!p.ok()) return p.error();
  return std::move(p->items);  // a copy would double the work of reading a long list
}

Result<JobPage> Client::list_jobs_page(const JobFilter& f) {
  std::vector<std::pair<std::string, std::string>> q;
  if (!f.username.empty()) q.push_back({"username", f.username});
  if (!f.vc.empty()) q.push_back({"vc", f.vc});
  if (!f.state.empty()) q.push_back({"state", f.state});
  if (!f.keyword.empty()) q.push_back({"keyword", f.keyword});
  if (!f.tags_contain.empty()) q.push_back({"tagsContain", f.tags_contain});
  if (!f.tags_not_contain.empty()) q.push_back({"tagsNotContain", f.tags_not_contain});
  if (!f.order.empty()) q.push_back({"order", f.order});
  if (f.offset > 0) q.push_back({"offset", std::to_string(f.offset)});
  if (f.limit > 0) q.push_back({"limit", std::to_string(f.limit)});
  if (f.with_total_count) q.push_back({"withTotalCount", "true"});
  std::string path = "/api/v2/jobs";
  if (!q.empty()) path += "?" + http::form_encode(q);
  Result<Json> j = json_call("GET", path);
  if (!j.ok()) return j.error();
  JobPage page;
  // withTotalCount answers {totalCount, data}; the plain answer is the list.
  if (j->is_object() && j->contains("data")) {
    page.items = std::move((*j)["data"]);
    if (j->contains("totalCount") && (*j)["totalCount"].is_number())
      page.total = (*j)["totalCount"].get<long>();
  } else if (j->is_array()) {
    page.items = std::move(*j);
  }
  if (!page.items.is_array()) page.items = Json::array();
  return page;
}

Result<Json> Client::job_attempts(const std::string& user, const std::string& name) {
  return json_call("GET", "/api/v2/jobs/" + path_segment(job_id(user, name)) + "/job-attempts");
}

Result<Json> Client::get_job(const std::string& user, const std::string& name) {
  return json_call("GET", "/api/v2/jobs/" + path_segment(job_id(user, name)));
}

Result<bool> Client::job_exists(const std::string& user, const std::string& name) {
  http::Result r = call("GET", "/api/v2/jobs/" + path_segment(job_id(user, name)));
  if (r.ok() && r.response.status == 200) return true;
  if (r.ok() && r.response.status == 404) {
    Error e = error_from_response(r.response);
    if (e.code == "NoJobError") return false;
  }
  return fail<bool>(r);
}

Result<std::string> Client::job_config(const std::string& user, const std::string& name) {
  http::Result r = call("GET", "/api/v2/jobs/" + path_segment(job_id(user, name)) + "/config");
  if (!r.ok() || r.response.status != 200) return fail<std::string>(r);
  return r.response.body;
}

Result<Json> Client::job_events(const std::string& user, const std::string& name,
                                const std::string& type) {
  return json_call("GET", "/api/v2/jobs/" + path_segment(job_id(user, name)) + "/events" +
                              (type.empty() ? std::string() : "?type=" + type));
}

Result<std::string> Client::set_execution_type(const std::string& user, const std::string& name,
                                               const std::string& value) {
  Json body = {{"value", value}};
  http::Result r =
      call("PUT", "/api/v2/jobs/" + path_segment(job_id(user, name)) + "/executionType",
           body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
  if (!r.ok() || r.response.status < 200 || r.response.status >= 300) return fail<std::string>(r);
  Json j = util::parse_json_or_discarded(r.response.body);
  return !j.is_discarded() && j.is_object() ? j.value("message", std::string()) : std::string();
}

Result<std::string> Client::add_tag(const std::string& user, const std::string& name,
                                    const std::string& tag) {
  Json body = {{"value", tag}};
  http::Result r =
      call("PUT", "/api/v2/jobs/" + path_segment(job_id(user, name)) + "/tag",
           body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
  if (!r.ok() || r.response.status < 200 || r.response.status >= 300) return fail<std::string>(r);
  Json j = util::parse_json_or_discarded(r.response.body);
  return !j.is_discarded() && j.is_object() ? j.value("message", std::string()) : std::string();
}

Result<std::string> Client::remove_tag(const std::string& user, const std::string& name,
                                       const std::string& tag) {
  Json body = {{"value", tag}};
  http::Result r =
      call("DELETE", "/api/v2/jobs/" + path_segment(job_id(user, name)) + "/tag",
           body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
  if (!r.ok() || r.response.status < 200 || r.response.status >= 300) return fail<std::string>(r);
  Json j = util::parse_json_or_discarded(r.response.body);
  return !j.is_discarded() && j.is_object() ? j.value("message", std::string()) : std::string();
}

Result<Json> Client::task_log_locations(const std::string& user, const std::string& name,
                                        int job_attempt, const std::string& task_role,
                                        int task_index, int task_attempt, bool tail) {
  std::string path = "/api/v2/jobs/" + path_segment(job_id(user, name)) + "/attempts/" +
                     std::to_string(job_attempt) + "/taskRoles/" + path_segment(task_role) +
                     "/taskIndex/" + std::to_string(task_index) + "/attempts/" +
                     std::to_string(task_attempt) + "/logs";
  // The controller reads "tail-mode" (the swagger's "tailMode" is ignored).
  if (tail) path += "?tail-mode=true";
  return json_call("GET", path);
}

Result<Json> Client::task_attempts(const std::string& user, const std::string& name,
                                   int job_attempt, const std::string& task_role, int task_index) {
  return json_call("GET", "/api/v2/jobs/" + path_segment(job_id(user, name)) + "/attempts/" +
                              std::to_string(job_attempt) + "/taskRoles/" +
                              path_segment(task_role) + "/taskIndex/" + std::to_string(task_index) +
                              "/attempts");
}

Result<std::string> Client::fetch_log(const std::string& url) {
  http::Request r;
  r.method = "GET";
  r.url = url;
  if (!url.empty() && url[0] == '/') r.url = base_host(base_) + url;
  if (base_host(r.url) == base_host(base_) && !token_.empty())
    r.headers.push_back({"Authorization", "Bearer " + token_});
  http::Result res = http_.send(r);
  if (!res.ok() || res.response.status != 200) return fail<std::string>(res);
  return res.response.body;
}

Result<LogChunk> Client::fetch_log_from(const std::string& url, uint64_t offset) {
  http::Request r;
  r.method = "GET";
  r.url = url;
  if (!url.empty() && url[0] == '/') r.url = base_host(base_) + url;
  if (base_host(r.url) == base_host(base_) && !token_.empty())
    r.headers.push_back({"Authorization", "Bearer " + token_});
  if (offset > 0) r.headers.push_back({"Range", "bytes=" + std::to_string(offset) + "-"});
  http::Result res = http_.send(r);
  LogChunk c;
  c.next_offset = offset;
  if (res.ok() && res.response.status == 416) return c;  // nothing new yet
  if (!res.ok() || (res.response.status != 200 && res.response.status != 206))
    return fail<LogChunk>(res);
  if (res.response.status == 206) {
    c.data = res.response.body;
    c.next_offset = offset + c.data.size();
  } else {
    // The whole log: skip what was read before (a log that shrank starts over).
    c.whole = true;
    const std::string& b = res.response.body;
    c.data = b.size() >= offset ? b.substr(offset) : b;
    c.next_offset = b.size();
  }
  return c;
}

}  // namespace pai::api
