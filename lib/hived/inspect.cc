#include "hived/inspect.h"

#include <algorithm>
#include <stdexcept>

namespace pai::hived {

namespace {

using J = nlohmann::json;

struct Bad : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string one_line(std::string s, size_t max = 300) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  size_t b = s.find_first_not_of(' ');
  s = b == std::string::npos ? std::string() : s.substr(b);
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

std::string kind_of(const J& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Bad(path + ": " + what);
}

const J& need(const J& o, const char* key, const std::string& path) {
  auto it = o.find(key);
  if (it == o.end()) fail(path, std::string("missing \"") + key + "\"");
  return *it;
}

std::string str(const J& v, const std::string& path) {
  if (!v.is_string()) fail(path, "expected a string, got " + kind_of(v));
  return v.get<std::string>();
}

std::string opt_str(const J& o, const char* key, const std::string& path) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return {};
  return str(*it, path + "." + key);
}

int32_t int32(const J& v, const std::string& path) {
  if (!v.is_number_integer()) fail(path, "expected an integer, got " + kind_of(v));
  int64_t x = v.get<int64_t>();
  if (x < INT32_MIN || x > INT32_MAX) fail(path, "out of range: " + std::to_string(x));
  return static_cast<int32_t>(x);
}

void cell_common(const J& o, CellStatus& c, const std::string& path) {
  if (!o.is_object()) fail(path, "expected a cell object, got " + kind_of(o));
  c.leaf_cell_type = opt_str(o, "leafCellType", path);
  c.cell_type = str(need(o, "cellType", path), path + ".cellType");
  if (auto it = o.find("isNodeLevel"); it != o.end() && !it->is_null()) {
    if (!it->is_boolean()) fail(path + ".isNodeLevel", "expected a boolean, got " + kind_of(*it));
    c.is_node_level = it->get<bool>();
  }
  c.cell_address = str(need(o, "cellAddress", path), path + ".cellAddress");
  c.cell_state = str(need(o, "cellState", path), path + ".cellState");
  if (c.cell_state != "Free" && c.cell_state != "Used" && c.cell_state != "Reserving" &&
      c.cell_state != "Reserved")
    fail(path + ".cellState",
         "\"" + one_line(c.cell_state, 40) + "\" is not Free, Used, Reserving or Reserved");
  c.cell_healthiness = str(need(o, "cellHealthiness", path), path + ".cellHealthiness");
  if (c.cell_healthiness != "Healthy" && c.cell_healthiness != "Bad")
    fail(path + ".cellHealthiness",
         "\"" + one_line(c.cell_healthiness, 40) + "\" is not Healthy or Bad");
  c.cell_priority = int32(need(o, "cellPriority", path), path + ".cellPriority");
  if (c.cell_priority < -2 || c.cell_priority > 1000)
    fail(path + ".cellPriority", std::to_string(c.cell_priority) + " is not in -2..1000");
}

const J* opt_array(const J& o, const char* key, const std::string& path) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return nullptr;
  if (!it->is_array()) fail(path + "." + key, "expected an array, got " + kind_of(*it));
  return &*it;
}

VirtualCellStatus virtual_cell(const J& o, const std::string& path, int depth);

PhysicalCellStatus physical_cell(const J& o, const std::string& path, int depth) {
  if (depth > 64) fail(path, "cells nested deeper than 64 levels");
  PhysicalCellStatus c;
  cell_common(o, c, path);
  if (const J* kids = opt_array(o, "cellChildren", path)) {
    c.children.reserve(kids->size());
    for (size_t i = 0; i < kids->size(); ++i)
      c.children.push_back(
          physical_cell((*kids)[i], path + ".cellChildren[" + std::to_string(i) + "]", depth + 1));
  }
  c.vc = opt_str(o, "vc", path);
  if (auto it = o.find("virtualCell"); it != o.end() && !it->is_null())
    c.virtual_cell =
        std::make_shared<VirtualCellStatus>(virtual_cell(*it, path + ".virtualCell", depth + 1));
  return c;
}

VirtualCellStatus virtual_cell(const J& o, const std::string& path, int depth) {
  if (depth > 64) fail(path, "cells nested deeper than 64 levels");
  VirtualCellStatus c;
  cell_common(o, c, path);
  if (const J* kids = opt_array(o, "cellChildren", path)) {
    c.children.reserve(kids->size());
    for (size_t i = 0; i < kids->size(); ++i)
      c.children.push_back(
          virtual_cell((*kids)[i], path + ".cellChildren[" + std::to_string(i) + "]", depth + 1));
  }
  if (auto it = o.find("physicalCell"); it != o.end() && !it->is_null())
    c.physical_cell =
        std::make_shared<PhysicalCellStatus>(physical_cell(*it, path + ".physicalCell", depth + 1));
  return c;
}

PhysicalClusterStatus physical_list(const J& v, const std::string& path) {
  if (!v.is_array()) fail(path, "expected an array of cells, got " + kind_of(v));
  PhysicalClusterStatus out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out.push_back(physical_cell(v[i], path + "[" + std::to_string(i) + "]", 0));
  return out;
}

VirtualClusterStatus virtual_list(const J& v, const std::string& path) {
  if (!v.is_array()) fail(path, "expected an array of cells, got " + kind_of(v));
  VirtualClusterStatus out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out.push_back(virtual_cell(v[i], path + "[" + std::to_string(i) + "]", 0));
  return out;
}

std::map<std::string, VirtualClusterStatus> vc_map(const J& v, const std::string& path) {
  if (!v.is_object()) fail(path, "expected an object of virtual clusters, got " + kind_of(v));
  std::map<std::string, VirtualClusterStatus> out;
  for (auto it = v.begin(); it != v.end(); ++it)
    out[it.key()] = virtual_list(it.value(), path.empty() ? it.key() : path + "." + it.key());
  return out;
}

std::vector<std::string> str_list(const J& o, const char* key, const std::string& path) {
  std::vector<std::string> out;
  if (const J* a = opt_array(o, key, path))
    for (size_t i = 0; i < a->size(); ++i)
      out.push_back(str((*a)[i], path + "." + key + "[" + std::to_string(i) + "]"));
  return out;
}

AffinityGroup group(const J& o, const std::string& path) {
  if (!o.is_object()) fail(path, "expected an affinity group object, got " + kind_of(o));
  AffinityGroup g;
  const J& meta = need(o, "metadata", path);
  if (!meta.is_object()) fail(path + ".metadata", "expected an object, got " + kind_of(meta));
  g.name = str(need(meta, "name", path + ".metadata"), path + ".metadata.name");
  std::string sp = path + ".status";
  const J& st = need(o, "status", path);
  if (!st.is_object()) fail(sp, "expected an object, got " + kind_of(st));
  g.vc = str(need(st, "vc", sp), sp + ".vc");
  g.priority = int32(need(st, "priority", sp), sp + ".priority");
  if (g.priority < -1 || g.priority > 1000)
    fail(sp + ".priority", std::to_string(g.priority) + " is not in -1..1000");
  g.state = str(need(st, "state", sp), sp + ".state");
  if (g.state != "Allocated" && g.state != "Preempting" && g.state != "BeingPreempted")
    fail(sp + ".state",
         "\"" + one_line(g.state, 40) + "\" is not Allocated, Preempting or BeingPreempted");
  if (auto it = st.find("physicalPlacement"); it != st.end() && !it->is_null()) {
    if (!it->is_object())
      fail(sp + ".physicalPlacement", "expected an object, got " + kind_of(*it));
    for (auto n = it->begin(); n != it->end(); ++n) {
      std::string np = sp + ".physicalPlacement." + n.key();
      if (!n.value().is_array()) fail(np, "expected an array, got " + kind_of(n.value()));
      auto& leaves = g.physical_placement[n.key()];
      for (size_t i = 0; i < n.value().size(); ++i)
        leaves.push_back(int32(n.value()[i], np + "[" + std::to_string(i) + "]"));
    }
  }
  if (auto it = st.find("virtualPlacement"); it != st.end() && !it->is_null()) {
    if (!it->is_object()) fail(sp + ".virtualPlacement", "expected an object, got " + kind_of(*it));
    for (auto n = it->begin(); n != it->end(); ++n) {
      std::string np = sp + ".virtualPlacement." + n.key();
      if (!n.value().is_array()) fail(np, "expected an array, got " + kind_of(n.value()));
      auto& leaves = g.virtual_placement[n.key()];
      for (size_t i = 0; i < n.value().size(); ++i)
        leaves.push_back(str(n.value()[i], np + "[" + std::to_string(i) + "]"));
    }
  }
  g.allocated_pods = str_list(st, "allocatedPods", sp);
  g.preempting_pods = str_list(st, "preemptingPods", sp);
  if (auto it = st.find("lazyPreemptionStatus"); it != st.end() && !it->is_null()) {
    std::string lp = sp + ".lazyPreemptionStatus";
    if (!it->is_object()) fail(lp, "expected an object, got " + kind_of(*it));
    LazyPreemptionStatus l;
    l.preemptor = opt_str(*it, "preemptor", lp);
    l.preemption_time = opt_str(*it, "preemptionTime", lp);
    g.lazy_preemption_status = l;
  }
  return g;
}

// Parses the text and runs `f` on it; syntax errors give line:column.
template <class T, class F>
Parsed<T> parse_with(std::string_view text, F f) {
  Parsed<T> out;
  J j;
  try {
    j = J::parse(text.begin(), text.end());
  } catch (const J::parse_error& e) {
    size_t byte = e.byte > 0 ? e.byte - 1 : 0;
    size_t line = 1, col = 1;
    for (size_t i = 0; i < byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    out.error = "not JSON (line " + std::to_string(line) + ", column " + std::to_string(col) + ")";
    return out;
  } catch (const std::exception& e) {
    out.error = std::string("not JSON: ") + e.what();
    return out;
  }
  try {
    out.value = f(j);
  } catch (const Bad& e) {
    out.error = e.what();
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

void write_common(Json& j, const CellStatus& c) {
  if (!c.leaf_cell_type.empty()) j["leafCellType"] = c.leaf_cell_type;
  j["cellType"] = c.cell_type;
  if (c.is_node_level) j["isNodeLevel"] = true;
  j["cellAddress"] = c.cell_address;
  j["cellState"] = c.cell_state;
  j["cellHealthiness"] = c.cell_healthiness;
  j["cellPriority"] = c.cell_priority;
}

}  // namespace

Parsed<ClusterStatus> parse_cluster_status(std::string_view text) {
  return parse_with<ClusterStatus>(text, [](const J& j) {
    if (!j.is_object()) fail("(top level)", "expected an object, got " + kind_of(j));
    ClusterStatus s;
    s.physical_cluster =
        physical_list(need(j, "physicalCluster", "(top level)"), "physicalCluster");
    s.virtual_clusters = vc_map(need(j, "virtualClusters", "(top level)"), "virtualClusters");
    return s;
  });
}

Parsed<PhysicalClusterStatus> parse_physical_cluster(std::string_view text) {
  return parse_with<PhysicalClusterStatus>(text, [](const J& j) { return physical_list(j, ""); });
}

Parsed<std::map<std::string, VirtualClusterStatus>> parse_virtual_clusters(std::string_view text) {
  return parse_with<std::map<std::string, VirtualClusterStatus>>(
      text, [](const J& j) { return vc_map(j, ""); });
}

Parsed<VirtualClusterStatus> parse_virtual_cluster(std::string_view text) {
  return parse_with<VirtualClusterStatus>(text, [](const J& j) { return virtual_list(j, ""); });
}

Parsed<std::vector<AffinityGroup>> parse_affinity_groups(std::string_view text) {
  return parse_with<std::vector<AffinityGroup>>(text, [](const J& j) {
    if (!j.is_object()) fail("(top level)", "expected an object, got " + kind_of(j));
    std::vector<AffinityGroup> out;
    auto it = j.find("items");
    // Go writes a nil slice as null.
    if (it == j.end() || it->is_null()) return out;
    if (!it->is_array()) fail("items", "expected an array, got " + kind_of(*it));
    out.reserve(it->size());
    for (size_t i = 0; i < it->size(); ++i)
      out.push_back(group((*it)[i], "items[" + std::to_string(i) + "]"));
    return out;
  });
}

Parsed<Snapshot> parse_snapshot(std::string_view text) {
  return parse_with<Snapshot>(text, [](const J& j) {
    if (!j.is_object()) fail("(top level)", "expected an object, got " + kind_of(j));
    Snapshot s;
    const J& cs = need(j, "clusterStatus", "(top level)");
    if (!cs.is_object()) fail("clusterStatus", "expected an object, got " + kind_of(cs));
    s.status.physical_cluster = physical_list(need(cs, "physicalCluster", "clusterStatus"),
                                              "clusterStatus.physicalCluster");
    s.status.virtual_clusters =
        vc_map(need(cs, "virtualClusters", "clusterStatus"), "clusterStatus.virtualClusters");
    const J& ag = need(j, "affinityGroups", "(top level)");
    if (!ag.is_object()) fail("affinityGroups", "expected an object, got " + kind_of(ag));
    auto it = ag.find("items");
    if (it != ag.end() && !it->is_null()) {
      if (!it->is_array()) fail("affinityGroups.items", "expected an array, got " + kind_of(*it));
      for (size_t i = 0; i < it->size(); ++i)
        s.groups.push_back(group((*it)[i], "affinityGroups.items[" + std::to_string(i) + "]"));
    }
    return s;
  });
}

Parsed<AffinityGroup> parse_affinity_group(std::string_view text) {
  return parse_with<AffinityGroup>(text, [](const J& j) { return group(j, "(top level)"); });
}

Json to_json(const PhysicalCellStatus& c) {
  Json j = Json::object();
  write_common(j, c);
  if (!c.children.empty()) {
    Json kids = Json::array();
    for (const auto& k : c.children) kids.push_back(to_json(k));
    j["cellChildren"] = std::move(kids);
  }
  if (!c.vc.empty()) j["vc"] = c.vc;
  if (c.virtual_cell) j["virtualCell"] = to_json(*c.virtual_cell);
  return j;
}

Json to_json(const VirtualCellStatus& c) {
  Json j = Json::object();
  write_common(j, c);
  if (!c.children.empty()) {
    Json kids = Json::array();
    for (const auto& k : c.children) kids.push_back(to_json(k));
    j["cellChildren"] = std::move(kids);
  }
  if (c.physical_cell) j["physicalCell"] = to_json(*c.physical_cell);
  return j;
}

Json to_json(const PhysicalClusterStatus& s) {
  Json a = Json::array();
  for (const auto& c : s) a.push_back(to_json(c));
  return a;
}

Json to_json(const std::map<std::string, VirtualClusterStatus>& s) {
  Json o = Json::object();
  for (const auto& [vc, cells] : s) {
    Json a = Json::array();
    for (const auto& c : cells) a.push_back(to_json(c));
    o[vc] = std::move(a);
  }
  return o;
}

Json to_json(const ClusterStatus& s) {
  Json j = Json::object();
  j["physicalCluster"] = to_json(s.physical_cluster);
  j["virtualClusters"] = to_json(s.virtual_clusters);
  return j;
}

Json to_json(const AffinityGroup& g) {
  Json st = Json::object();
  st["vc"] = g.vc;
  st["priority"] = g.priority;
  st["state"] = g.state;
  if (!g.physical_placement.empty()) {
    Json p = Json::object();
    for (const auto& [n, l] : g.physical_placement) p[n] = l;
    st["physicalPlacement"] = std::move(p);
  }
  if (!g.virtual_placement.empty()) {
    Json p = Json::object();
    for (const auto& [n, l] : g.virtual_placement) p[n] = l;
    st["virtualPlacement"] = std::move(p);
  }
  if (!g.allocated_pods.empty()) st["allocatedPods"] = g.allocated_pods;
  if (!g.preempting_pods.empty()) st["preemptingPods"] = g.preempting_pods;
  if (g.lazy_preemption_status)
    st["lazyPreemptionStatus"] = {{"preemptor", g.lazy_preemption_status->preemptor},
                                  {"preemptionTime", g.lazy_preemption_status->preemption_time}};
  Json j = Json::object();
  j["metadata"] = {{"name", g.name}};
  j["status"] = std::move(st);
  return j;
}

Json to_json(const std::vector<AffinityGroup>& groups) {
  Json items = Json::array();
  for (const auto& g : groups) items.push_back(to_json(g));
  // HiveD's AffinityGroupList with no groups has a nil slice: "items": null.
  Json j = Json::object();
  j["items"] = groups.empty() ? Json(nullptr) : std::move(items);
  return j;
}

// --- client ----------------------------------------------------------------------------

std::string Error::summary() const {
  if (kind == Kind::Transport) return message;
  if (kind == Kind::Decode) return "unexpected answer: " + message;
  return std::to_string(status) + " " + std::string(http::reason_phrase(status)) + ": " + message;
}

Error error_from_response(const http::Response& r) {
  Error e;
  e.kind = Error::Kind::Http;
  e.status = r.status;
  J j = J::parse(r.body, nullptr, false);
  if (!j.is_discarded() && j.is_string()) {
    e.message = one_line(j.get<std::string>());
  } else {
    std::string text;
    bool in_tag = false;
    for (char c : r.body) {
      if (c == '<')
        in_tag = true;
      else if (c == '>') {
        in_tag = false;
        text += ' ';
      } else if (!in_tag)
        text += c;
    }
    e.message = one_line(text);
    if (e.message.empty()) e.message = "(no message)";
  }
  return e;
}

Client::Client(http::Client& http, std::string base, std::string token, std::string token_host)
    : http_(http),
      base_(std::move(base)),
      token_(std::move(token)),
      token_host_(std::move(token_host)) {
  while (!base_.empty() && base_.back() == '/') base_.pop_back();
}

Result<std::string> Client::get(const std::string& path) {
  http::Request r;
  r.method = "GET";
  r.url = base_ + path;
  r.headers.push_back({"Accept", "application/json"});
  if (!token_.empty() && !token_host_.empty() && http::host_of(r.url) == token_host_)
    r.headers.push_back({"Authorization", "Bearer " + token_});
  http::Result res = http_.send(r);
  Result<std::string> out;
  if (!res.ok()) {
    Error e;
    e.kind = Error::Kind::Transport;
    e.transport = res.error;
    e.message = res.message.empty() ? std::string(http::to_string(res.error)) : res.message;
    out.error = e;
    return out;
  }
  if (res.response.status < 200 || res.response.status >= 300) {
    out.error = error_from_response(res.response);
    return out;
  }
  out.value = std::move(res.response.body);
  return out;
}

namespace {
template <class T, class P>
Result<T> decoded(Result<std::string> raw, P parse) {
  Result<T> out;
  if (!raw.ok()) {
    out.error = raw.error;
    return out;
  }
  auto p = parse(*raw);
  if (!p.ok()) {
    Error e;
    e.kind = Error::Kind::Decode;
    e.status = 200;
    e.message = p.error;
    out.error = e;
    return out;
  }
  out.value = std::move(p.value);
  return out;
}
}  // namespace

Result<ClusterStatus> Client::cluster_status() {
  return decoded<ClusterStatus>(get("/v1/inspect/clusterstatus"), parse_cluster_status);
}
Result<PhysicalClusterStatus> Client::physical_cluster() {
  return decoded<PhysicalClusterStatus>(get("/v1/inspect/clusterstatus/physicalcluster"),
                                        parse_physical_cluster);
}
Result<std::map<std::string, VirtualClusterStatus>> Client::virtual_clusters() {
  return decoded<std::map<std::string, VirtualClusterStatus>>(
      get("/v1/inspect/clusterstatus/virtualclusters/"), parse_virtual_clusters);
}
Result<VirtualClusterStatus> Client::virtual_cluster(const std::string& vc) {
  return decoded<VirtualClusterStatus>(
      get("/v1/inspect/clusterstatus/virtualclusters/" + http::url_encode(vc)),
      parse_virtual_cluster);
}
Result<std::vector<AffinityGroup>> Client::affinity_groups() {
  return decoded<std::vector<AffinityGroup>>(get("/v1/inspect/affinitygroups/"),
                                             parse_affinity_groups);
}
Result<AffinityGroup> Client::affinity_group(const std::string& name) {
  return decoded<AffinityGroup>(get("/v1/inspect/affinitygroups/" + http::url_encode(name)),
                                parse_affinity_group);
}

std::string base_behind_pylon(const std::string& cluster_uri, int port) {
  std::string uri = http::strip_userinfo(cluster_uri);
  while (!uri.empty() && uri.back() == '/') uri.pop_back();
  size_t scheme = uri.find("://");
  size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  size_t end = uri.find('/', start);
  std::string authority =
      uri.substr(start, end == std::string::npos ? std::string::npos : end - start);
  std::string host = authority;
  if (!host.empty() && host[0] == '[') {
    host = host.substr(0, host.find(']') + 1);
  } else if (size_t colon = host.rfind(':'); colon != std::string::npos) {
    host = host.substr(0, colon);
  }
  std::string root = uri.substr(0, end == std::string::npos ? uri.size() : end);
  return root + "/a/" + host + ":" + std::to_string(port);
}

}  // namespace pai::hived
