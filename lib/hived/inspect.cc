#include "hived/inspect.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "util/json_pull.h"

namespace pai::hived {

namespace {

using J = nlohmann::json;
using util::JsonPull;
using Kind = util::JsonPull::Kind;

std::string one_line(std::string s, size_t max = 300) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  size_t b = s.find_first_not_of(' ');
  s = b == std::string::npos ? std::string() : s.substr(b);
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

// Where a value is, as a chain of frames on the stack; its text
// ("physicalCluster[0].cellChildren[1].cellPriority") is only made for an error.
struct Path {
  const Path* parent = nullptr;
  std::string_view key;  // ".key" (or the first segment)
  int64_t index = -1;    // "[index]"
  Path child(std::string_view k) const { return Path{this, k, -1}; }
  Path at(size_t i) const { return Path{this, {}, static_cast<int64_t>(i)}; }
  std::string text() const {
    std::string s = parent ? parent->text() : std::string();
    if (!key.empty()) s += (s.empty() ? "" : ".") + std::string(key);
    if (index >= 0) s += "[" + std::to_string(index) + "]";
    return s;
  }
};

// The reader and the first error in HiveD's terms ("path: what").
struct Reader {
  JsonPull r;
  std::string error;  // set once: a shape error, or the reader's syntax error
  explicit Reader(std::string_view text) : r(text) {}
  bool bad(const Path& p, const std::string& what) {
    if (error.empty() && r.ok()) {
      std::string where = p.text();
      error = (where.empty() ? std::string("(top level)") : where) + ": " + what;
      r.fail("shape");  // stops every later read
    }
    return false;
  }
  bool bad_kind(const Path& p, const char* expected) {
    Kind k = r.peek();
    if (k == Kind::Bad || k == Kind::End) {
      // Not a shape error: the text is not JSON there.
      r.fail(k == Kind::End ? "unexpected end of the text" : "not a JSON value");
      return false;
    }
    return bad(p, std::string("expected ") + expected + ", got " + JsonPull::kind_name(k));
  }
  // True when the value is null (consumed).
  bool null() { return r.peek() == Kind::Null && r.read_null(); }

  bool str(const Path& p, std::string& out) {
    if (r.peek() != Kind::String) return bad_kind(p, "a string");
    return r.read_string(out);
  }
  bool opt_str(const Path& p, std::string& out) {
    if (null()) {
      out.clear();
      return true;
    }
    return str(p, out);
  }
  bool int32(const Path& p, int32_t& out) {
    if (r.peek() != Kind::Number) return bad_kind(p, "an integer");
    std::string_view t;
    bool integer = false;
    if (!r.read_number(t, integer)) return false;
    if (!integer) return bad(p, "expected an integer, got a number");
    int64_t x = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
    if (ec != std::errc() || end != t.data() + t.size() || x < INT32_MIN || x > INT32_MAX)
      return bad(p, "out of range: " + std::string(t.substr(0, 40)));
    out = static_cast<int32_t>(x);
    return true;
  }
  bool boolean(const Path& p, bool& out) {
    if (null()) return true;
    if (r.peek() != Kind::Bool) return bad_kind(p, "a boolean");
    return r.read_bool(out);
  }
  // Opens an object (false with an error when it is something else).
  bool object(const Path& p, const char* what = "an object") {
    if (r.peek() != Kind::Object) return bad_kind(p, what);
    return r.begin_object();
  }
  // Opens an array; `present` is false for null (consumed).
  bool opt_array(const Path& p, bool& present) {
    present = false;
    if (null()) return true;
    if (r.peek() != Kind::Array) return bad_kind(p, "an array");
    present = true;
    return r.begin_array();
  }
  bool str_list(const Path& p, std::vector<std::string>& out) {
    out.clear();
    bool present;
    if (!opt_array(p, present)) return false;
    if (!present) return true;
    for (size_t i = 0; r.next_element(); ++i) {
      out.emplace_back();
      if (!str(p.at(i), out.back())) return false;
    }
    return r.ok();
  }
};

enum : unsigned {
  kCellType = 1,
  kCellAddress = 2,
  kCellState = 4,
  kCellHealthiness = 8,
  kCellPriority = 16
};

// The fields every cell has; false when `key` is not one of them (`handled`).
bool cell_field(Reader& rd, std::string_view key, const Path& p, CellStatus& c, unsigned& seen,
                bool& handled) {
  handled = true;
  Path kp = p.child(key);
  if (key == "cellType") {
    seen |= kCellType;
    return rd.str(kp, c.cell_type);
  }
  if (key == "cellAddress") {
    seen |= kCellAddress;
    return rd.str(kp, c.cell_address);
  }
  if (key == "cellState") {
    seen |= kCellState;
    return rd.str(kp, c.cell_state);
  }
  if (key == "cellHealthiness") {
    seen |= kCellHealthiness;
    return rd.str(kp, c.cell_healthiness);
  }
  if (key == "cellPriority") {
    seen |= kCellPriority;
    return rd.int32(kp, c.cell_priority);
  }
  if (key == "leafCellType") return rd.opt_str(kp, c.leaf_cell_type);
  if (key == "isNodeLevel") return rd.boolean(kp, c.is_node_level);
  handled = false;
  return true;
}

bool cell_check(Reader& rd, const Path& p, const CellStatus& c, unsigned seen) {
  static const std::pair<unsigned, const char*> required[] = {{kCellType, "cellType"},
                                                              {kCellAddress, "cellAddress"},
                                                              {kCellState, "cellState"},
                                                              {kCellHealthiness, "cellHealthiness"},
                                                              {kCellPriority, "cellPriority"}};
  for (const auto& [bit, name] : required)
    if (!(seen & bit)) return rd.bad(p, std::string("missing \"") + name + "\"");
  if (c.cell_state != "Free" && c.cell_state != "Used" && c.cell_state != "Reserving" &&
      c.cell_state != "Reserved")
    return rd.bad(p.child("cellState"), "\"" + one_line(c.cell_state, 40) +
                                            "\" is not Free, Used, Reserving or Reserved");
  if (c.cell_healthiness != "Healthy" && c.cell_healthiness != "Bad")
    return rd.bad(p.child("cellHealthiness"),
                  "\"" + one_line(c.cell_healthiness, 40) + "\" is not Healthy or Bad");
  if (c.cell_priority < -2 || c.cell_priority > 1000)
    return rd.bad(p.child("cellPriority"), std::to_string(c.cell_priority) + " is not in -2..1000");
  return true;
}

template <class Cell>
bool cell(Reader& rd, const Path& p, int depth, Cell& c);

// The keys only one side has: a physical cell's VC and its virtual cell, a
// virtual cell's physical cell (each shallow: its own children are not sent).
template <class Other>
bool linked_cell(Reader& rd, const Path& kp, int depth, std::shared_ptr<Other>& out) {
  out.reset();
  if (rd.null()) return true;
  auto v = std::make_shared<Other>();
  if (!cell(rd, kp, depth + 1, *v)) return false;
  out = std::move(v);
  return true;
}

bool side_field(Reader& rd, std::string_view key, const Path& kp, int depth, PhysicalCellStatus& c,
                bool& handled) {
  handled = true;
  if (key == "vc") return rd.opt_str(kp, c.vc);
  if (key == "virtualCell") return linked_cell(rd, kp, depth, c.virtual_cell);
  handled = false;
  return true;
}

bool side_field(Reader& rd, std::string_view key, const Path& kp, int depth, VirtualCellStatus& c,
                bool& handled) {
  handled = key == "physicalCell";
  return !handled || linked_cell(rd, kp, depth, c.physical_cell);
}

// One cell and its children, physical or virtual.
template <class Cell>
bool cell(Reader& rd, const Path& p, int depth, Cell& c) {
  if (depth > 64) return rd.bad(p, "cells nested deeper than 64 levels");
  if (!rd.object(p, "a cell object")) return false;
  unsigned seen = 0;
  std::string scratch;
  std::string_view key;
  while (rd.r.next_key(key, scratch)) {
    bool handled;
    if (!cell_field(rd, key, p, c, seen, handled)) return false;
    if (handled) continue;
    Path kp = p.child(key);
    if (key == "cellChildren") {
      c.children.clear();
      bool present;
      if (!rd.opt_array(kp, present)) return false;
      if (present)
        for (size_t i = 0; rd.r.next_element(); ++i) {
          c.children.emplace_back();
          if (!cell(rd, kp.at(i), depth + 1, c.children.back())) return false;
        }
      continue;
    }
    if (!side_field(rd, key, kp, depth, c, handled)) return false;
    if (!handled && !rd.r.skip()) return false;
  }
  return rd.r.ok() && cell_check(rd, p, c, seen);
}

template <class Cell, class F>
bool cell_list(Reader& rd, const Path& p, std::vector<Cell>& out, F one) {
  if (rd.r.peek() != Kind::Array) return rd.bad_kind(p, "an array of cells");
  if (!rd.r.begin_array()) return false;
  for (size_t i = 0; rd.r.next_element(); ++i) {
    out.emplace_back();
    if (!one(rd, p.at(i), 0, out.back())) return false;
  }
  return rd.r.ok();
}

bool physical_list(Reader& rd, const Path& p, PhysicalClusterStatus& out) {
  return cell_list(rd, p, out, cell<PhysicalCellStatus>);
}

bool vc_map(Reader& rd, const Path& p, std::map<std::string, VirtualClusterStatus>& out) {
  if (!rd.object(p, "an object of virtual clusters")) return false;
  std::string scratch;
  std::string_view key;
  while (rd.r.next_key(key, scratch)) {
    std::string name(key);
    VirtualClusterStatus list;
    if (!cell_list(rd, p.child(name), list, cell<VirtualCellStatus>)) return false;
    out[name] = std::move(list);
  }
  return rd.r.ok();
}

// {"node": [leaf, ...], ...} of physical leaf indices or virtual cell addresses.
template <class T, class ReadOne>
bool placement(Reader& rd, const Path& p, std::map<std::string, std::vector<T>>& out,
               ReadOne read_one) {
  if (rd.null()) return true;
  if (!rd.object(p)) return false;
  std::string scratch;
  std::string_view key;
  while (rd.r.next_key(key, scratch)) {
    std::string node(key);
    Path np = p.child(node);
    if (rd.r.peek() != Kind::Array) return rd.bad_kind(np, "an array");
    rd.r.begin_array();
    auto& leaves = out[node];
    leaves.clear();
    for (size_t i = 0; rd.r.next_element(); ++i) {
      leaves.emplace_back();
      if (!read_one(np.at(i), leaves.back())) return false;
    }
    if (!rd.r.ok()) return false;
  }
  return rd.r.ok();
}

bool group(Reader& rd, const Path& p, AffinityGroup& g) {
  if (!rd.object(p, "an affinity group object")) return false;
  bool have_meta = false, have_status = false;
  bool have_name = false, have_vc = false, have_priority = false, have_state = false;
  std::string scratch, scratch2;
  std::string_view key, k2;
  const Path mp = p.child("metadata"), sp = p.child("status");
  while (rd.r.next_key(key, scratch)) {
    if (key == "metadata") {
      have_meta = true;
      if (!rd.object(mp)) return false;
      while (rd.r.next_key(k2, scratch2)) {
        if (k2 == "name") {
          have_name = true;
          if (!rd.str(mp.child("name"), g.name)) return false;
        } else if (!rd.r.skip()) {
          return false;
        }
      }
      if (!rd.r.ok()) return false;
      if (!have_name) return rd.bad(mp, "missing \"name\"");
    } else if (key == "status") {
      have_status = true;
      if (!rd.object(sp)) return false;
      while (rd.r.next_key(k2, scratch2)) {
        Path kp = sp.child(k2);
        bool ok = true;
        if (k2 == "vc") {
          have_vc = true;
          ok = rd.str(kp, g.vc);
        } else if (k2 == "priority") {
          have_priority = true;
          ok = rd.int32(kp, g.priority);
        } else if (k2 == "state") {
          have_state = true;
          ok = rd.str(kp, g.state);
        } else if (k2 == "physicalPlacement") {
          g.physical_placement.clear();
          ok = placement(rd, sp.child("physicalPlacement"), g.physical_placement,
                         [&](const Path& ep, int32_t& v) { return rd.int32(ep, v); });
        } else if (k2 == "virtualPlacement") {
          g.virtual_placement.clear();
          ok = placement(rd, sp.child("virtualPlacement"), g.virtual_placement,
                         [&](const Path& ep, std::string& v) { return rd.str(ep, v); });
        } else if (k2 == "allocatedPods") {
          ok = rd.str_list(sp.child("allocatedPods"), g.allocated_pods);
        } else if (k2 == "preemptingPods") {
          ok = rd.str_list(sp.child("preemptingPods"), g.preempting_pods);
        } else if (k2 == "lazyPreemptionStatus") {
          g.lazy_preemption_status.reset();
          if (rd.null()) continue;
          Path lp = sp.child("lazyPreemptionStatus");
          if (!rd.object(lp)) return false;
          LazyPreemptionStatus l;
          std::string scratch3;
          std::string_view k3;
          while (rd.r.next_key(k3, scratch3)) {
            if (k3 == "preemptor")
              ok = rd.opt_str(lp.child("preemptor"), l.preemptor);
            else if (k3 == "preemptionTime")
              ok = rd.opt_str(lp.child("preemptionTime"), l.preemption_time);
            else
              ok = rd.r.skip();
            if (!ok) return false;
          }
          if (!rd.r.ok()) return false;
          g.lazy_preemption_status = l;
        } else {
          ok = rd.r.skip();
        }
        if (!ok) return false;
      }
      if (!rd.r.ok()) return false;
      if (!have_vc) return rd.bad(sp, "missing \"vc\"");
      if (!have_priority) return rd.bad(sp, "missing \"priority\"");
      if (!have_state) return rd.bad(sp, "missing \"state\"");
    } else if (!rd.r.skip()) {
      return false;
    }
  }
  if (!rd.r.ok()) return false;
  if (!have_meta) return rd.bad(p, "missing \"metadata\"");
  if (!have_status) return rd.bad(p, "missing \"status\"");
  if (g.priority < -1 || g.priority > 1000)
    return rd.bad(sp.child("priority"), std::to_string(g.priority) + " is not in -1..1000");
  if (g.state != "Allocated" && g.state != "Preempting" && g.state != "BeingPreempted")
    return rd.bad(sp.child("state"), "\"" + one_line(g.state, 40) +
                                         "\" is not Allocated, Preempting or BeingPreempted");
  return true;
}

// {"items": [group...]} (Go writes a nil slice as null).
bool group_list(Reader& rd, const Path& p, std::vector<AffinityGroup>& out) {
  if (!rd.object(p)) return false;
  std::string scratch;
  std::string_view key;
  const Path ip = p.child("items");
  while (rd.r.next_key(key, scratch)) {
    if (key != "items") {
      if (!rd.r.skip()) return false;
      continue;
    }
    out.clear();
    bool present;
    if (!rd.opt_array(ip, present)) return false;
    if (!present) continue;
    for (size_t i = 0; rd.r.next_element(); ++i) {
      out.emplace_back();
      if (!group(rd, ip.at(i), out.back())) return false;
    }
  }
  return rd.r.ok();
}

bool cluster_status(Reader& rd, const Path& p, ClusterStatus& s) {
  if (!rd.object(p)) return false;
  bool have_physical = false, have_virtual = false;
  std::string scratch;
  std::string_view key;
  while (rd.r.next_key(key, scratch)) {
    if (key == "physicalCluster") {
      have_physical = true;
      s.physical_cluster.clear();
      if (!physical_list(rd, p.child("physicalCluster"), s.physical_cluster)) return false;
    } else if (key == "virtualClusters") {
      have_virtual = true;
      s.virtual_clusters.clear();
      if (!vc_map(rd, p.child("virtualClusters"), s.virtual_clusters)) return false;
    } else if (!rd.r.skip()) {
      return false;
    }
  }
  if (!rd.r.ok()) return false;
  if (!have_physical) return rd.bad(p, "missing \"physicalCluster\"");
  if (!have_virtual) return rd.bad(p, "missing \"virtualClusters\"");
  return true;
}

// Reads the text with `f`; syntax errors give line:column.
template <class T, class F>
Parsed<T> parse_with(std::string_view text, F f) {
  Reader rd(text);
  T value{};
  const Path top;
  bool ok = f(rd, top, value) && rd.r.expect_end();
  if (ok) return value;
  if (!rd.error.empty()) return util::Error{rd.error, ""};
  auto [line, col] = rd.r.line_column(rd.r.error_offset());
  return util::Error{"not JSON (line " + std::to_string(line) + ", column " + std::to_string(col) +
                         "): " + rd.r.error(),
                     ""};
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
  return parse_with<ClusterStatus>(text, cluster_status);
}

Parsed<PhysicalClusterStatus> parse_physical_cluster(std::string_view text) {
  return parse_with<PhysicalClusterStatus>(text, physical_list);
}

Parsed<std::map<std::string, VirtualClusterStatus>> parse_virtual_clusters(std::string_view text) {
  return parse_with<std::map<std::string, VirtualClusterStatus>>(text, vc_map);
}

Parsed<VirtualClusterStatus> parse_virtual_cluster(std::string_view text) {
  return parse_with<VirtualClusterStatus>(text,
                                          [](Reader& rd, const Path& p, VirtualClusterStatus& out) {
                                            return cell_list(rd, p, out, cell<VirtualCellStatus>);
                                          });
}

Parsed<std::vector<AffinityGroup>> parse_affinity_groups(std::string_view text) {
  return parse_with<std::vector<AffinityGroup>>(text, group_list);
}

Parsed<Snapshot> parse_snapshot(std::string_view text) {
  return parse_with<Snapshot>(text, [](Reader& rd, const Path& p, Snapshot& s) {
    if (!rd.object(p)) return false;
    bool have_status = false, have_groups = false;
    std::string scratch;
    std::string_view key;
    while (rd.r.next_key(key, scratch)) {
      if (key == "clusterStatus") {
        have_status = true;
        s.status = {};
        if (!cluster_status(rd, p.child("clusterStatus"), s.status)) return false;
      } else if (key == "affinityGroups") {
        have_groups = true;
        if (!group_list(rd, p.child("affinityGroups"), s.groups)) return false;
      } else if (!rd.r.skip()) {
        return false;
      }
    }
    if (!rd.r.ok()) return false;
    if (!have_status) return rd.bad(p, "missing \"clusterStatus\"");
    if (!have_groups) return rd.bad(p, "missing \"affinityGroups\"");
    return true;
  });
}

Parsed<AffinityGroup> parse_affinity_group(std::string_view text) {
  return parse_with<AffinityGroup>(text, group);
}

namespace {

void write_side(Json& j, const PhysicalCellStatus& c) {
  if (!c.vc.empty()) j["vc"] = c.vc;
  if (c.virtual_cell) j["virtualCell"] = to_json(*c.virtual_cell);
}

void write_side(Json& j, const VirtualCellStatus& c) {
  if (c.physical_cell) j["physicalCell"] = to_json(*c.physical_cell);
}

template <class Cell>
Json cell_json(const Cell& c) {
  Json j = Json::object();
  write_common(j, c);
  if (!c.children.empty()) {
    Json kids = Json::array();
    for (const auto& k : c.children) kids.push_back(cell_json(k));
    j["cellChildren"] = std::move(kids);
  }
  write_side(j, c);
  return j;
}

}  // namespace

Json to_json(const PhysicalCellStatus& c) {
  return cell_json(c);
}

Json to_json(const VirtualCellStatus& c) {
  return cell_json(c);
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
    // One space between the page's words (tags and line breaks are spaces).
    std::string words;
    for (char c : one_line(text))
      if (c != ' ' || (!words.empty() && words.back() != ' ')) words += c;
    e.message = words;
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
  if (!res.ok()) {
    Error e;
    e.kind = Error::Kind::Transport;
    e.transport = res.error;
    e.message = res.message.empty() ? std::string(http::to_string(res.error)) : res.message;
    return e;
  }
  if (res.response.status < 200 || res.response.status >= 300)
    return error_from_response(res.response);
  return std::move(res.response.body);
}

namespace {
template <class T, class P>
Result<T> decoded(Result<std::string> raw, P parse) {
  if (!raw.ok()) return std::move(raw).error();
  auto p = parse(*raw);
  if (!p.ok()) {
    Error e;
    e.kind = Error::Kind::Decode;
    e.status = 200;
    e.message = p.error().message;
    return e;
  }
  return std::move(p).value();
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

std::string last_segment(const std::string& address) {
  size_t slash = address.rfind('/');
  return slash == std::string::npos ? address : address.substr(slash + 1);
}

bool is_opportunistic_entry(const CellStatus& c) {
  return c.cell_priority == -1 && c.cell_address.size() > 4 &&
         c.cell_address.compare(c.cell_address.size() - 4, 4, "-opp") == 0;
}

}  // namespace pai::hived
