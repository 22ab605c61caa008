// paictl hived status | groups | why: a running HiveD scheduler seen through
// its inspect API (lib/hived), explained with lib/scheduler.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <future>
#include <map>
#include <set>

#include <CLI/CLI.hpp>

#include "app.h"
#include "cluster/registry.h"
#include "command.h"
#include "config/cluster_files.h"
#include "diag/report.h"
#include "exit_codes.h"
#include "hived/cmd_hived_common.h"
#include "hived/fit.h"
#include "hived/inspect.h"
#include "hived/live.h"
#include "http/client.h"
#include "job/cmd_job_common.h"
#include "job/hived_request.h"
#include "job/job_file.h"
#include "output/output.h"
#include "output/printer.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"
#include "util/fs.h"
#include "util/printable.h"

namespace paictl {

namespace hivedcli {

void add_hived_flags(CLI::App* cmd, HivedOptions& o, Globals& g, bool wide) {
  cmd->add_option("--hived", o.hived,
                  "HiveD's web server (default: the cluster's, from cluster add --hived, else "
                  "behind its pylon, /a/<host>:30096)")
      ->type_name("URL");
  cmd->add_option("--ca-file", o.ca_file,
                  "PEM file with the CA of --hived's certificate (default: the cluster's, with "
                  "--cluster, else the system's)")
      ->type_name("FILE");
  cmd->add_flag("--insecure", o.insecure,
                "Do not verify --hived's TLS certificate (not recommended)");
  jobcli::add_remote_flags(cmd, o.remote);
  add_output_option(*cmd, o.output, g, wide);
}

void validate_hived_flags(const HivedOptions& o, Usage& u) {
  if (!o.hived.empty())
    u.error_if(o.hived.rfind("http://", 0) != 0 && o.hived.rfind("https://", 0) != 0,
               "--hived " + o.hived + " is not an http:// or https:// URL",
               "HiveD's web server listens on :30096, e.g. --hived http://10.0.0.1:30096");
  u.error_if(o.hived.empty() && (!o.ca_file.empty() || o.insecure),
             "--ca-file and --insecure are for --hived URL",
             "HiveD behind a registered cluster uses the cluster's TLS settings (cluster add "
             "--ca-file)");
  if (!o.ca_file.empty())
    u.error_if(!pai::util::is_regular_file(o.ca_file),
               "cannot read the CA file " + o.ca_file + ": no such file");
}

// --hived URL (with the TLS settings and token of --cluster when given and on
// the same host), else HiveD behind the registered cluster's pylon.
std::optional<HivedConnection> connect_hived(const HivedOptions& o, const Globals& g) {
  std::optional<jobcli::Connection> conn;
  std::string token;
  if (o.hived.empty() || !o.remote.cluster.empty()) {
    auto reg = jobcli::load_registry();
    if (!reg) return std::nullopt;
    conn = jobcli::connect(*reg, o.remote, g);
    if (!conn) return std::nullopt;
    token = pai::cluster::read_token(*conn->cluster).value_or(std::string());
  }
  pai::http::Options hopt;
  hopt.timeout_s = o.remote.timeout;
  hopt.connect_timeout_s = std::min(10.0, o.remote.timeout);
  hopt.max_response_bytes = 1u << 30;
  if (conn) {
    hopt.tls.ca_file = conn->cluster->ca_file;
    hopt.tls.insecure = conn->cluster->insecure;
  }
  if (!o.ca_file.empty()) hopt.tls.ca_file = o.ca_file;
  if (o.insecure) hopt.tls.insecure = true;
  if (g.verbose)
    hopt.log = [](const std::string& line) {
      std::fprintf(stderr, "paictl: hived: %s\n", line.c_str());
    };
  HivedConnection h;
  h.http = std::make_shared<pai::http::CurlClient>(hopt);
  std::string base = !o.hived.empty() ? o.hived
                     : !conn->cluster->hived.empty()
                         ? conn->cluster->hived
                         : pai::hived::base_behind_pylon(conn->cluster->uri);
  std::string token_host = conn ? pai::http::host_of(conn->cluster->uri) : "";
  h.client = std::make_shared<pai::hived::Client>(*h.http, base, token, token_host);
  h.where = conn ? conn->cluster->name : pai::http::redact_url(base);
  h.rest = std::move(conn);
  return h;
}

int report(const HivedConnection& h, const std::string& doing, const pai::hived::Error& e) {
  print_error("HiveD at " + h.where + ": " + doing + ": " + e.summary());
  if (e.kind == pai::hived::Error::Kind::Transport)
    std::fprintf(stderr, "  hint: check --hived URL (HiveD listens on :30096) or --cluster\n");
  return kExitRemote;
}

// Both reads at once: the cluster status and the affinity groups; then both
// answers parsed at once. The time the answers arrived is kept for -v.
std::optional<pai::hived::LiveState> read_live(const HivedConnection& h, int& rc) {
  auto t0 = std::chrono::steady_clock::now();
  auto st =
      std::async(std::launch::async, [&] { return h.client->get("/v1/inspect/clusterstatus"); });
  auto gr =
      std::async(std::launch::async, [&] { return h.client->get("/v1/inspect/affinitygroups/"); });
  auto s = st.get();
  auto g = gr.get();
  answers_arrived(t0, (s.ok() ? s->size() : 0) + (g.ok() ? g->size() : 0));
  if (!s.ok()) {
    rc = report(h, "reading the cluster status", *s.error);
    return std::nullopt;
  }
  if (!g.ok()) {
    rc = report(h, "reading the affinity groups", *g.error);
    return std::nullopt;
  }
  auto ps = std::async(std::launch::async, [&] { return pai::hived::parse_cluster_status(*s); });
  auto pg = pai::hived::parse_affinity_groups(*g);
  auto pst = ps.get();
  auto decode_error = [&](const std::string& what, const std::string& err) {
    pai::hived::Error e;
    e.kind = pai::hived::Error::Kind::Decode;
    e.status = 200;
    e.message = err;
    rc = report(h, what, e);
  };
  if (!pst.ok()) {
    decode_error("reading the cluster status", pst.error);
    return std::nullopt;
  }
  if (!pg.ok()) {
    decode_error("reading the affinity groups", pg.error);
    return std::nullopt;
  }
  auto live = pai::hived::index_live(std::move(*pst.value), std::move(*pg.value));
  for (const auto& w : live.warnings) print_warning(w);
  return live;
}

namespace {
std::chrono::steady_clock::time_point g_arrived{};
double g_arrived_cpu_ms = 0;

// The CPU time of the process (every thread), which other load on a shared
// machine disturbs less than the wall clock.
double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}
}  // namespace

void answers_arrived(std::chrono::steady_clock::time_point sent, size_t bytes) {
  g_arrived = std::chrono::steady_clock::now();
  g_arrived_cpu_ms = process_cpu_ms();
  g_http_ms = std::chrono::duration<double, std::milli>(g_arrived - sent).count();
  g_bytes = bytes;
}

void print_timing(const Globals& g) {
  if (!g.verbose || g_arrived == std::chrono::steady_clock::time_point{}) return;
  double after =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g_arrived)
          .count();
  std::fprintf(stderr,
               "paictl: hived: answers (%zu bytes) in %.1f ms; %.1f ms after they arrived (%.1f "
               "ms of CPU)\n",
               g_bytes, g_http_ms, after, process_cpu_ms() - g_arrived_cpu_ms);
}

std::string leaves_text(const std::vector<int32_t>& v) {
  std::vector<int32_t> s = v;
  std::sort(s.begin(), s.end());
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t j = i;
    while (j + 1 < s.size() && s[j + 1] == s[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(s[i]);
    if (j > i) out += "-" + std::to_string(s[j]);
    i = j + 1;
  }
  return out;
}

std::string placement_text(const pai::hived::AffinityGroup& g) {
  std::string out;
  for (const auto& [node, leaves] : g.physical_placement) {
    if (!out.empty()) out += " ";
    out += node + "[" + leaves_text(leaves) + "]";
  }
  return out;
}

int64_t gpus_of(const pai::hived::AffinityGroup& g) {
  int64_t n = 0;
  for (const auto& [node, leaves] : g.physical_placement) n += static_cast<int64_t>(leaves.size());
  return n;
}

Json group_json(const pai::hived::AffinityGroup& g) {
  Json j = {{"name", g.name},
            {"vc", g.vc},
            {"priority", g.priority},
            {"state", g.state},
            {"gpus", gpus_of(g)}};
  Json p = Json::object();
  for (const auto& [n, l] : g.physical_placement) p[n] = l;
  j["physicalPlacement"] = p;
  if (g.lazy_preemption_status)
    j["lazyPreemption"] = {{"preemptor", g.lazy_preemption_status->preemptor},
                           {"time", g.lazy_preemption_status->preemption_time}};
  else
    j["lazyPreemption"] = nullptr;
  return j;
}

std::shared_ptr<pai::config::HivedModel> load_model(const std::string& path, const Globals& g) {
  pai::config::CheckOutcome out = pai::config::check_paths({path});
  if (out.diagnostics.has_errors() || out.input_error) {
    pai::diag::TextOptions topt;
    topt.color = use_color(g.no_color, 2);
    std::vector<pai::diag::Diagnostic> errors;
    for (const auto& d : out.diagnostics.items())
      if (d.severity == pai::diag::Severity::Error) errors.push_back(d);
    std::string text = pai::diag::write_text(errors, out.files.size(), topt);
    std::fwrite(text.data(), 1, text.size(), stderr);
    print_error("the HiveD config " + path + " has errors (paictl check config " + path + ")");
    return nullptr;
  }
  for (const auto& c : out.clusters)
    if (c.model) return c.model;
  print_error("no HiveD config in " + path);
  return nullptr;
}

}  // namespace hivedcli

namespace {

using namespace hivedcli;

// --- status ---------------------------------------------------------------------------

int run_status(const HivedOptions& o, const Globals& g) {
  auto h = connect_hived(o, g);
  if (!h) return kExitUsage;
  int rc = kExitOk;
  auto live = read_live(*h, rc);
  if (!live) return rc;
  if (!o.vc.empty() && !live->status.virtual_clusters.count(o.vc)) {
    print_error("HiveD at " + h->where + " has no VC " + o.vc);
    return kExitUsage;
  }
  pai::hived::Summary s = pai::hived::summarize(*live);
  if (is_structured(o.output)) {
    Json levels = Json::array();
    for (const auto& l : s.levels)
      levels.push_back({{"chain", l.chain},
                        {"level", l.level},
                        {"cellType", l.cell_type},
                        {"total", l.total},
                        {"used", l.used},
                        {"free", l.free},
                        {"reserved", l.reserved},
                        {"bad", l.bad},
                        {"doomed", l.doomed}});
    Json vcs = Json::array();
    for (const auto& v : s.vcs)
      if (o.vc.empty() || v.vc == o.vc)
        vcs.push_back({{"vc", v.vc},
                       {"sku", v.sku},
                       {"guaranteed", v.guaranteed},
                       {"used", v.used},
                       {"bad", v.bad},
                       {"opportunistic", v.opportunistic}});
    Json nodes = Json::array();
    for (const auto& n : s.nodes) {
      Json uses = Json::array();
      for (const auto& u : n.uses)
        uses.push_back(
            {{"group", u.group}, {"vc", u.vc}, {"priority", u.priority}, {"leafCells", u.indices}});
      nodes.push_back({{"name", n.name},
                       {"healthy", n.healthy},
                       {"sku", n.leaf_type},
                       {"leafCells", n.leaves},
                       {"used", n.used},
                       {"opportunistic", n.opportunistic},
                       {"bad", n.bad},
                       {"groups", n.groups},
                       {"usedBy", std::move(uses)}});
    }
    print_document(document("hivedStatus", {{"hived", h->client->base()},
                                            {"groups", s.groups},
                                            {"preempting", s.preempting},
                                            {"lazilyPreempted", s.lazily_preempted},
                                            {"cells", levels},
                                            {"virtualClusters", vcs},
                                            {"nodes", nodes}}),
                   o.output);
    return kExitOk;
  }
  bool wide = o.output == "wide";
  Table cells({{"CHAIN"},
               {"LEVEL", false, true},
               {"CELL TYPE"},
               {"TOTAL", false, true},
               {"USED", false, true},
               {"FREE", false, true},
               {"RESERVED", false, true},
               {"BAD", false, true},
               {"DOOMED", false, true}});
  for (const auto& l : s.levels)
    cells.add({l.chain, std::to_string(l.level), l.cell_type, std::to_string(l.total),
               std::to_string(l.used), std::to_string(l.free), std::to_string(l.reserved),
               std::to_string(l.bad), std::to_string(l.doomed)});
  Table vcs({{"VC"},
             {"SKU"},
             {"GUARANTEED", false, true},
             {"USED", false, true},
             {"FREE", false, true},
             {"BAD", false, true},
             {"OPPORTUNISTIC", false, true}});
  for (const auto& v : s.vcs)
    if (o.vc.empty() || v.vc == o.vc)
      vcs.add({v.vc, v.sku.empty() ? "-" : v.sku, std::to_string(v.guaranteed),
               std::to_string(v.used),
               std::to_string(std::max<int64_t>(0, v.guaranteed - v.used - v.bad)),
               std::to_string(v.bad), std::to_string(v.opportunistic)});
  Table nodes({{"NODE"},
               {"SKU"},
               {"HEALTH"},
               {"GPUS", false, true},
               {"USED", false, true},
               {"OPP", false, true},
               {"USED BY (LEAF CELLS)"}});
  int64_t bad_nodes = 0;
  for (const auto& n : s.nodes) {
    if (!n.healthy) ++bad_nodes;
    // Without -o wide only the nodes worth a look: bad ones and those in use.
    if (!wide && n.healthy && n.used == 0) continue;
    std::string used_by;
    for (const auto& u : n.uses)
      used_by += (used_by.empty() ? "" : " ") + u.group + "[" + leaves_text(u.indices) + "]";
    nodes.add({n.name, n.leaf_type, n.healthy ? "Healthy" : "Bad", std::to_string(n.leaves),
               std::to_string(n.used), std::to_string(n.opportunistic),
               used_by.empty() ? "-" : used_by});
  }
  std::string out =
      render_table(cells, wide) + "\n" + render_table(vcs, wide) + "\n" + render_table(nodes, wide);
  out += "\n" + std::to_string(s.nodes.size()) + " nodes (" + std::to_string(bad_nodes) +
         " bad), " + std::to_string(s.groups) + " affinity groups (" +
         std::to_string(s.preempting) + " preempting, " + std::to_string(s.lazily_preempted) +
         " lazily preempted)" + (wide ? "" : "; idle healthy nodes are listed with -o wide") + "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

// --- groups ---------------------------------------------------------------------------

// HiveD's answer for one VC: "VC x not found" (400) is bad usage, with HiveD's words.
bool known_vc(const HivedConnection& h, const std::string& vc,
              const pai::hived::Result<pai::hived::VirtualClusterStatus>& r, int& rc) {
  if (r.ok()) return true;
  const auto& e = *r.error;
  if (e.kind == pai::hived::Error::Kind::Http && e.status == 400) {
    print_error("HiveD at " + h.where + " has no VC " + vc + ": " + e.summary());
    rc = kExitUsage;
  } else {
    rc = report(h, "reading VC " + vc, e);
  }
  return false;
}

int run_groups(const HivedOptions& o, const Globals& g) {
  auto h = connect_hived(o, g);
  if (!h) return kExitUsage;
  // With --vc, the VC is looked up at the same time (GET .../virtualclusters/VC).
  std::future<pai::hived::Result<pai::hived::VirtualClusterStatus>> vc;
  if (!o.vc.empty())
    vc = std::async(std::launch::async, [&] { return h->client->virtual_cluster(o.vc); });
  auto r = h->client->affinity_groups();
  if (vc.valid()) {
    int rc = kExitOk;
    if (!known_vc(*h, o.vc, vc.get(), rc)) return rc;
  }
  if (!r.ok()) return report(*h, "reading the affinity groups", *r.error);
  std::vector<pai::hived::AffinityGroup> groups;
  for (const auto& gr : *r)
    if (o.vc.empty() || gr.vc == o.vc) groups.push_back(gr);
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
    return a.vc != b.vc               ? a.vc < b.vc
           : a.priority != b.priority ? a.priority > b.priority
                                      : a.name < b.name;
  });
  if (is_structured(o.output)) {
    Json items = Json::array();
    for (const auto& gr : groups) items.push_back(group_json(gr));
    print_document(list_document("hivedGroup", items), o.output);
    return kExitOk;
  }
  Table t({{"GROUP"},
           {"VC"},
           {"PRIORITY", false, true},
           {"STATE"},
           {"GPUS", false, true},
           {"NODES"},
           {"LAZY PREEMPTED BY", true}});
  for (const auto& gr : groups) {
    std::string state = gr.state;
    if (gr.lazy_preemption_status) state += " (lazily preempted)";
    t.add({gr.name, gr.vc, std::to_string(gr.priority), state, std::to_string(gpus_of(gr)),
           placement_text(gr),
           gr.lazy_preemption_status ? gr.lazy_preemption_status->preemptor : "-"});
  }
  if (groups.empty()) {
    if (!g.quiet)
      std::fprintf(stderr, "no affinity group is allocated or preempting%s\n",
                   o.vc.empty() ? "" : (" in VC " + o.vc).c_str());
    return kExitOk;
  }
  print_table(t, o.output == "wide");
  return kExitOk;
}

// --- why ------------------------------------------------------------------------------

struct WhyOptions {
  HivedOptions h;
  std::string group;
  std::string config;
  std::string vc;
  int32_t priority = 0;
  int32_t pods = 1;
  int32_t gpus = 0;
  std::string leaf_type;
  std::string pinned;
};

// "running": where and at which priority.
int explain_running(const WhyOptions& o, const pai::hived::AffinityGroup& gr) {
  std::string text;
  bool lazy = gr.lazy_preemption_status.has_value();
  text += gr.name + " is " + gr.state + " in VC " + gr.vc + " at priority " +
          std::to_string(gr.priority) +
          (gr.priority < 0 ? " (opportunistic)"
           : lazy          ? ""
                           : " (guaranteed)") +
          ", on " + std::to_string(gpus_of(gr)) + " GPUs: " + placement_text(gr) + "\n";
  if (!gr.virtual_placement.empty()) {
    std::string cells;
    for (const auto& [pre, leaves] : gr.virtual_placement)
      cells +=
          (cells.empty() ? "" : ", ") + pre + " (" + std::to_string(leaves.size()) + " leaf cells)";
    text += "  its guarantee: virtual cells " + cells + "\n";
  }
  if (lazy)
    text += "  lazily preempted by " +
            (gr.lazy_preemption_status->preemptor.empty() ? std::string("?")
                                                          : gr.lazy_preemption_status->preemptor) +
            (gr.lazy_preemption_status->preemption_time.empty()
                 ? std::string()
                 : " at " + gr.lazy_preemption_status->preemption_time) +
            ": it runs on at opportunistic priority, outside " + gr.vc +
            "'s guarantee, and any guaranteed group may preempt it\n";
  if (gr.state == "Preempting")
    text += "  it waits for the groups on its cells to be deleted (preemption in progress)\n";
  if (gr.state == "BeingPreempted")
    text += "  a higher-priority group is taking its cells: it is about to be deleted\n";
  if (o.h.output == "wide") {
    // The leaf cells behind each virtual cell, and the pods HiveD has bound.
    for (const auto& [pre, leaves] : gr.virtual_placement) {
      std::string list;
      for (const auto& l : leaves) list += (list.empty() ? "" : " ") + l;
      text += "  virtual cell " + pre + ": " + list + "\n";
    }
    auto pods = [&](const char* what, const std::vector<std::string>& v) {
      if (v.empty()) return;
      std::string list;
      for (const auto& p : v) list += (list.empty() ? "" : ", ") + p;
      text += std::string("  ") + what + " (" + std::to_string(v.size()) + "): " + list + "\n";
    };
    pods("allocated pods", gr.allocated_pods);
    pods("preempting pods", gr.preempting_pods);
  }
  if (is_structured(o.h.output)) {
    Json j = group_json(gr);
    j["running"] = true;
    j["explanation"] = text;
    print_document(document("hivedWhy", j), o.h.output);
  } else {
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return kExitOk;
}

// "2 pod(s) of 8 GPUs" / "1 pod(s) of 8 GPUs and 2 pod(s) of 4 GPUs"
std::string members_text(const pai::scheduler::GroupRequest& req) {
  std::string s;
  for (size_t i = 0; i < req.members.size(); ++i)
    s += std::string(i == 0                        ? ""
                     : i + 1 == req.members.size() ? " and "
                                                   : ", ") +
         std::to_string(req.members[i].pod_number) + " pod(s) of " +
         std::to_string(req.members[i].leaf_cell_number) + " GPUs";
  return s;
}

Json request_json(const pai::scheduler::GroupRequest& req, const std::string& source) {
  Json members = Json::array();
  for (const auto& m : req.members)
    members.push_back({{"podNumber", m.pod_number}, {"leafCellNumber", m.leaf_cell_number}});
  return {{"source", source},
          {"virtualCluster", req.virtual_cluster},
          {"priority", req.priority},
          {"leafCellType", req.leaf_cell_type.empty() ? Json(nullptr) : Json(req.leaf_cell_type)},
          {"pinnedCellId", req.pinned_cell_id.empty() ? Json(nullptr) : Json(req.pinned_cell_id)},
          {"members", members}};
}

// "V100-NODE cells" / "cells (3 V100-NODE, 1 K80-NODE)"
std::string cells_text(const std::map<std::string, int64_t>& per_type) {
  if (per_type.size() == 1) return per_type.begin()->first + " cells";
  std::string s;
  for (const auto& [type, n] : per_type)
    s += (s.empty() ? "" : ", ") + std::to_string(n) + " " + type;
  return per_type.empty() ? "cells" : "cells (" + s + ")";
}

// A waiting group's request run through the HiveD algorithm on the live state
// (the running groups restored on `model`, bad nodes marked). Prints the text, or
// returns the document when `structured`.
std::optional<Json> judge_waiting(const std::string& name, const pai::scheduler::GroupRequest& req,
                                  const std::string& source, const pai::config::HivedModel& model,
                                  const pai::hived::LiveState& live, bool structured, bool wide,
                                  std::string& error) {
  auto made = pai::scheduler::make_hived_policy(model);
  if (!made.ok()) {
    error = made.error().message;
    return std::nullopt;
  }
  auto policy = std::move(*made);
  for (const auto& n : pai::hived::bad_nodes(live))
    if (int32_t i = policy->cluster().find_node(n); i >= 0) policy->set_node_health(i, false);
  auto restored =
      pai::scheduler::restore_hived_groups(*policy, pai::hived::live_groups(live, &model));
  auto before = pai::scheduler::snapshot_hived(*policy);
  auto res = policy->schedule(req, false);
  // HiveD's preempting phase follows its filtering phase: a placement that
  // needs victims is reported with them.
  std::vector<std::string> victims;
  if (res.outcome == pai::scheduler::Outcome::Waiting &&
      res.reason == "the placement needs preemption") {
    auto pre = policy->schedule(req, true);
    if (pre.outcome == pai::scheduler::Outcome::Preempting) {
      for (const auto& v : pre.victims) victims.push_back(v.group);
      res = pre;
    }
  }

  // The cells behind the answer: the VC's guaranteed cells of the chains the
  // request may use, and who holds them; bad physical cells of those chains.
  const auto& shape = policy->cluster();
  int32_t vc = shape.find_vc(req.virtual_cluster);
  std::set<int32_t> chains;
  for (size_t lt = 0; lt < shape.leaf_types.size(); ++lt)
    if (req.leaf_cell_type.empty() || shape.leaf_types[lt].name == req.leaf_cell_type)
      for (int32_t c : shape.leaf_types[lt].chains) chains.insert(c);
  std::map<std::string, int32_t> holders;  // group -> priority
  int64_t vc_cells = 0, vc_busy = 0;
  std::map<std::string, int64_t> per_type;  // the VC's cells per cell type
  std::set<int32_t> vc_chains;              // the chains of those cells
  if (vc >= 0 && before) {
    for (int32_t root : before->vc_roots[static_cast<size_t>(vc)]) {
      const auto& v = before->vcells[static_cast<size_t>(root)];
      if (!chains.count(v.chain) || !v.pinned_id.empty()) continue;
      vc_chains.insert(v.chain);
      ++vc_cells;
      ++per_type[shape.chains[static_cast<size_t>(v.chain)]
                     .level_type[static_cast<size_t>(v.level)]];
      if (v.used_leaves > 0) ++vc_busy;
      std::vector<int32_t> stack{root};
      while (!stack.empty()) {
        int32_t c = stack.back();
        stack.pop_back();
        const auto& vv = before->vcells[static_cast<size_t>(c)];
        if (vv.children.empty()) {
          if (vv.pcell >= 0 && vv.used_leaves > 0) {
            int32_t grp = before->cells[static_cast<size_t>(vv.pcell)].group;
            if (grp >= 0) {
              const auto& gs = before->groups[static_cast<size_t>(grp)];
              holders[gs.name] = gs.priority;
            }
          }
          continue;
        }
        for (int32_t k : vv.children) stack.push_back(k);
      }
    }
  }
  std::vector<std::string> bad_candidates;
  for (const auto& n : pai::hived::bad_nodes(live)) {
    int32_t i = shape.find_node(n);
    if (i < 0) continue;
    bool in_chain = false;
    for (int32_t c : model.nodes[static_cast<size_t>(i)].chains) in_chain |= chains.count(c) > 0;
    if (in_chain) bad_candidates.push_back(n);
  }
  // The cell each pod needs: the smallest cell of the chain with enough leaf
  // cells (a pod stays inside one node's cells).
  struct CellNeed {
    int32_t gpus;
    std::string chain, type;
    int64_t leaves;
  };
  std::vector<CellNeed> needs;
  for (const auto& m : req.members)
    for (int32_t c : vc_chains.empty() ? chains : vc_chains) {
      const auto& ch = shape.chains[static_cast<size_t>(c)];
      CellNeed n{m.leaf_cell_number, ch.name, "", 0};
      for (int32_t l = 1; l <= std::min(ch.node_level, ch.top_level); ++l)
        if (ch.level_leaves[static_cast<size_t>(l)] >= m.leaf_cell_number) {
          n.type = ch.level_type[static_cast<size_t>(l)];
          n.leaves = ch.level_leaves[static_cast<size_t>(l)];
          break;
        }
      needs.push_back(n);
    }
  std::string need_text;
  for (const auto& n : needs)
    need_text += std::string(need_text.empty() ? "" : "; ") + "a pod of " + std::to_string(n.gpus) +
                 " GPUs " +
                 (n.type.empty() ? "is larger than a node of chain " + n.chain
                  : n.leaves == n.gpus
                      ? "takes a whole " + n.type + " cell of chain " + n.chain
                      : "takes " + std::to_string(n.gpus) + " of the " + std::to_string(n.leaves) +
                            " leaf cells of one " + n.type + " cell of chain " + n.chain);
  std::string text;
  std::string verdict;
  if (res.outcome == pai::scheduler::Outcome::Bound) {
    verdict = "fits";
    text = name + " would be placed now (on the live state): ";
    for (const auto& p : res.pods)
      text += shape.nodes[static_cast<size_t>(p.node)].name + "[" +
              leaves_text(p.physical_leaf_cell_indices) + "] ";
    text +=
        "\n  if it still waits, HiveD has not seen it yet or Kubernetes refuses the node "
        "(see the pod's events)\n";
  } else if (res.outcome == pai::scheduler::Outcome::Preempting) {
    verdict = "preempts";
    std::string list;
    for (const auto& v : victims) list += (list.empty() ? "" : ", ") + v;
    text = name + " can be placed by preempting lower-priority groups: " + list +
           "\n  HiveD does so in the scheduler's preemption phase; it waits until they are "
           "deleted\n";
  } else {
    verdict = res.outcome == pai::scheduler::Outcome::Rejected ? "rejected" : "waits";
    text =
        name + " " + (verdict == "rejected" ? "is rejected" : "waits") + ": " + res.reason + "\n";
    if (vc >= 0) {
      std::string held;
      for (const auto& [grp, prio] : holders)
        held += (held.empty() ? "" : ", ") + grp + " (" + std::to_string(prio) + ")";
      text += "  VC " + req.virtual_cluster + " needs " + members_text(req) + " at priority " +
              std::to_string(req.priority) +
              (need_text.empty() ? std::string() : " (" + need_text + ")") + "; of its " +
              std::to_string(vc_cells) + " guaranteed " + cells_text(per_type) + ", " +
              std::to_string(vc_busy) + (vc_busy == 1 ? " is" : " are") +
              " bound to running groups" + (held.empty() ? std::string() : ": " + held) + "\n";
    }
    if (!bad_candidates.empty()) {
      std::string list;
      for (const auto& n : bad_candidates) list += (list.empty() ? "" : ", ") + n;
      text += "  " + std::to_string(bad_candidates.size()) +
              " physical node(s) of those chains are bad: " + list + "\n";
    }
  }
  if (wide) {
    // What was judged, and where it came from.
    text += "  request: " + members_text(req) + " in VC " + req.virtual_cluster + " at priority " +
            std::to_string(req.priority) +
            (req.leaf_cell_type.empty() ? std::string() : ", leaf type " + req.leaf_cell_type) +
            (req.pinned_cell_id.empty() ? std::string() : ", pinned cell " + req.pinned_cell_id) +
            ", from " + source + "\n";
    text += "  judged on " + std::to_string(restored ? restored->size() : 0) +
            " running groups rebuilt from their placements and " +
            std::to_string(pai::hived::bad_nodes(live).size()) + " bad node(s)\n";
  }
  if (structured) {
    Json cells_per_pod = Json::array();
    for (const auto& n : needs)
      cells_per_pod.push_back({{"leafCellNumber", n.gpus},
                               {"chain", n.chain},
                               {"cellType", n.type},
                               {"cellLeafCells", n.leaves}});
    Json held = Json::array();
    for (const auto& [grp, prio] : holders) held.push_back({{"group", grp}, {"priority", prio}});
    Json doc = {{"name", name},
                {"running", false},
                {"verdict", verdict},
                {"reason", res.reason},
                {"vcGuaranteedCells", vc_cells},
                {"vcBoundCells", vc_busy},
                {"cellsPerPod", cells_per_pod},
                {"heldBy", held},
                {"badNodes", bad_candidates},
                {"victims", victims},
                {"explanation", text},
                {"request", request_json(req, source)}};
    return doc;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  (void)restored;
  return Json();
}

// Whether a group name names an OpenPAI job: "alice~train", "alice~train/default",
// or, with a registered cluster, "train" for one of your own jobs.
bool names_job(const std::string& group, bool have_cluster) {
  if (group.find('~') != std::string::npos) return true;
  return have_cluster && group.find('/') == std::string::npos;
}

// The requests of a job from its config on the registered cluster, as the
// rest-server would make them. nullopt after printing why (rc set).
std::optional<std::vector<pai::scheduler::GroupRequest>> job_requests(
    const jobcli::Connection& c, const std::string& job_id, const pai::hived::LiveState& live,
    std::string& source, int& rc) {
  auto parsed = jobcli::parse_job_id(job_id, c);
  if (!parsed) {
    rc = kExitUsage;
    return std::nullopt;
  }
  const auto& [user, name] = *parsed;
  std::string full = pai::api::job_id(user, name);
  auto job = c.api->get_job(user, name);
  if (!job.ok()) {
    if (job.error().status == 404) {
      print_error("HiveD has no group of job " + full + ", and " + c.cluster->name +
                  " has no such job");
      rc = kExitUsage;
    } else {
      rc = jobcli::report_api_error(c.cluster->name, "reading job " + full, job.error());
    }
    return std::nullopt;
  }
  std::string state;
  if (job->contains("jobStatus") && (*job)["jobStatus"].is_object())
    state = (*job)["jobStatus"].value("state", std::string());
  if (state == "SUCCEEDED" || state == "FAILED" || state == "STOPPED") {
    std::printf("%s has finished (%s) on %s: HiveD holds nothing for it\n", full.c_str(),
                pai::util::printable(state).c_str(), c.cluster->name.c_str());
    rc = kExitOk;
    return std::nullopt;
  }
  auto text = c.api->job_config(user, name);
  if (!text.ok()) {
    rc = jobcli::report_api_error(c.cluster->name, "reading the config of " + full, text.error());
    return std::nullopt;
  }
  auto file = pai::job::JobFile::parse(*text, full + "'s config on " + c.cluster->name);
  pai::job::JobRequest jr = pai::job::request_of(file);
  if (jr.name.empty()) jr.name = name;
  // An opportunistic job is measured in every SKU type, a guaranteed one in its VC's.
  bool oppo = jr.priority_class == "oppo";
  auto skus = c.api->sku_types(oppo ? std::string() : jr.virtual_cluster);
  if (!skus.ok()) {
    rc = jobcli::report_api_error(c.cluster->name, "reading the SKU types", skus.error());
    return std::nullopt;
  }
  std::set<std::string> leaf_types;
  for (const auto& l : live.leaves) leaf_types.insert(l.leaf_type);
  auto reqs = pai::job::hived_requests(jr, user, *skus, leaf_types);
  if (!reqs.ok()) {
    print_error(full + " cannot be asked of HiveD: " + reqs.error().message);
    rc = kExitUsage;
    return std::nullopt;
  }
  source = "the config of job " + full + " on " + c.cluster->name + " (" +
           (state.empty() ? std::string("state unknown") : pai::util::printable(state)) + ")" +
           (reqs->per_pod ? "; not gang-scheduled: one pod of each task role is judged" : "");
  return reqs->groups;
}

int run_why(const WhyOptions& o, const Globals& g) {
  auto h = connect_hived(o.h, g);
  if (!h) return kExitUsage;
  auto one = h->client->affinity_group(o.group);
  if (one.ok()) return explain_running(o, *one);
  const auto& e = *one.error;
  bool unknown = e.kind == pai::hived::Error::Kind::Http && e.status == 400 &&
                 e.message.find("does not exist") != std::string::npos;
  if (!unknown) return report(*h, "reading affinity group " + o.group, e);
  bool by_flags = !o.vc.empty() || o.gpus > 0;
  if (by_flags && (o.vc.empty() || o.gpus <= 0)) {
    print_error("a waiting group's request needs both --vc and --gpus");
    return kExitUsage;
  }
  const bool job = names_job(o.group, h->rest.has_value());
  if (!by_flags && !(job && h->rest)) {
    print_error("HiveD has no affinity group " + o.group +
                " (it is neither allocated nor preempting: it waits, or it does not exist)");
    std::fprintf(stderr,
                 "  hint: name an OpenPAI job as USER~JOB with --cluster, or give the group's "
                 "request: --vc VC --priority P --pods N --gpus G [--leaf-type SKU] [--config "
                 "DIR]\n");
    return kExitUsage;
  }
  int rc = kExitOk;
  auto live = read_live(*h, rc);
  if (!live) return rc;

  // A job's groups are USER~JOB/<group>: explain the ones HiveD holds.
  std::string job_id;
  if (job) {
    job_id = pai::job::job_of_group(o.group);
    if (h->rest) {
      auto p = jobcli::parse_job_id(job_id, *h->rest);
      if (!p) return kExitUsage;
      job_id = pai::api::job_id(p->first, p->second);
    }
  }
  if (job && o.group.find('/') == std::string::npos) {
    std::vector<const pai::hived::AffinityGroup*> held;
    for (const auto& gr : live->groups)
      if (pai::job::job_of_group(gr.name) == job_id) held.push_back(&gr);
    if (held.size() == 1) return explain_running(o, *held.front());
    if (held.size() > 1) {
      if (is_structured(o.h.output)) {
        std::string names;
        for (const auto* gr : held) names += (names.empty() ? "" : ", ") + gr->name;
        print_error("job " + o.group + " has " + std::to_string(held.size()) +
                    " affinity groups in HiveD: " + names);
        std::fprintf(stderr, "  hint: ask for one of them: paictl hived why %s\n",
                     held.front()->name.c_str());
        return kExitUsage;
      }
      for (const auto* gr : held) explain_running(o, *gr);
      return kExitOk;
    }
  }

  std::vector<pai::scheduler::GroupRequest> reqs;
  std::string source;
  if (by_flags) {
    pai::scheduler::GroupRequest req;
    req.affinity_group = o.group;
    req.virtual_cluster = o.vc;
    req.priority = o.priority;
    req.leaf_cell_type = o.leaf_type;
    req.pinned_cell_id = o.pinned;
    req.members.push_back({o.pods, o.gpus});
    reqs.push_back(std::move(req));
    source = "the command line";
  } else {
    auto r = job_requests(*h->rest, job_id, *live, source, rc);
    if (!r) return rc;
    for (auto& req : *r)
      if (o.group.find('/') == std::string::npos || req.affinity_group == o.group)
        reqs.push_back(std::move(req));
    if (reqs.empty()) {
      print_error("job " + job_id + " has no affinity group " + o.group);
      return kExitUsage;
    }
  }

  // The config HiveD runs: --config, else the one its cluster status implies
  // (which does not show which virtual cells are pinned).
  std::shared_ptr<pai::config::HivedModel> model;
  std::string err;
  if (!o.config.empty()) {
    model = load_model(o.config, g);
    if (!model) return kExitUsage;
  } else {
    model = pai::hived::model_of(live->status, err);
    if (!model) {
      print_error("HiveD at " + h->where + ": " + err);
      std::fprintf(stderr, "  hint: give the config HiveD runs with --config DIR\n");
      return kExitRemote;
    }
  }
  const bool structured = is_structured(o.h.output);
  if (structured && reqs.size() > 1) {
    std::string names;
    for (const auto& r : reqs) names += (names.empty() ? "" : ", ") + r.affinity_group;
    print_error("job " + o.group + " asks HiveD for " + std::to_string(reqs.size()) +
                " affinity groups: " + names);
    std::fprintf(stderr, "  hint: ask for one of them: paictl hived why %s\n",
                 reqs.front().affinity_group.c_str());
    return kExitUsage;
  }
  for (const auto& req : reqs) {
    std::string name = by_flags ? o.group : req.affinity_group;
    if (!structured && !by_flags)
      std::printf("%s: the request from %s\n", name.c_str(), source.c_str());
    auto doc =
        judge_waiting(name, req, source, *model, *live, structured, o.h.output == "wide", err);
    if (!doc) {
      print_error("the HiveD config " + (o.config.empty() ? h->where : o.config) +
                  " cannot be scheduled on: " + err);
      return kExitUsage;
    }
    if (structured) print_document(document("hivedWhy", *doc), o.h.output);
  }
  return kExitOk;
}

}  // namespace

void build_hived_status(CLI::App& cmd, Globals& g) {
  auto o = std::make_shared<HivedOptions>();
  add_hived_flags(&cmd, *o, g);
  cmd.add_option("--vc", o->vc, "Only this virtual cluster in the VC table")->type_name("VC");
  cmd.footer(
      "Cells per chain and level (doomed: bad cells bound to a VC so that it sees the failure),\n"
      "each VC's guaranteed leaf cells per SKU and how many are used or bad, and its\n"
      "opportunistic use; the nodes in use or bad, each with who uses which of its leaf\n"
      "cells (-o wide: every node).\n\n"
      "EXIT STATUS:\n  0 ok, 2 bad usage, 3 HiveD could not be read\n");
  define_command(cmd, g, o,
                 {.validate = validate_hived_flags, .run = [](const HivedOptions& o, Globals& g) {
                    int rc = run_status(o, g);
                    print_timing(g);
                    return rc;
                  }});
}

void build_hived_groups(CLI::App& cmd, Globals& g) {
  auto o = std::make_shared<HivedOptions>();
  add_hived_flags(&cmd, *o, g);
  cmd.add_option("--vc", o->vc, "Only the groups of this virtual cluster")->type_name("VC");
  cmd.footer("EXIT STATUS:\n  0 ok, 2 bad usage, 3 HiveD could not be read\n");
  define_command(cmd, g, o,
                 {.validate = validate_hived_flags,
                  .run = [](const auto& o, Globals& g) { return run_groups(o, g); }});
}

void build_hived_why(CLI::App& cmd, Globals& g) {
  auto o = std::make_shared<WhyOptions>();
  cmd.add_option("GROUP", o->group, "The affinity group (OpenPAI names it after the job)")
      ->required();
  add_hived_flags(&cmd, o->h, g);
  cmd.add_option("--config", o->config,
                 "The HiveD config HiveD runs (cluster directory or file), for a waiting group")
      ->type_name("PATH");
  cmd.add_option("--vc", o->vc, "A waiting group's virtual cluster")->type_name("VC");
  cmd.add_option("--priority", o->priority, "A waiting group's priority (-1 opportunistic)")
      ->check(CLI::Range(-1, 1000));
  cmd.add_option("--pods", o->pods, "A waiting group's pods")->check(CLI::Range(1, 100000));
  cmd.add_option("--gpus", o->gpus, "GPUs (leaf cells) per pod")->check(CLI::Range(1, 100000));
  cmd.add_option("--leaf-type", o->leaf_type, "The SKU (leafCellType) it asks for")
      ->type_name("SKU");
  cmd.add_option("--pinned", o->pinned, "The pinnedCellId it asks for")->type_name("ID");
  cmd.footer(
      "A running group: where it is, at which priority, and whether it was lazily preempted.\n"
      "An OpenPAI job (USER~JOB, or JOB for one of yours) is found by its groups, which are\n"
      "named USER~JOB/<group> (USER~JOB/default for a gang).\n"
      "A waiting group is not in HiveD's inspect API: its request is run through paictl's HiveD\n"
      "algorithm on the live state (the running groups rebuilt from their placements, bad nodes\n"
      "marked), and the reason is given in cells. The request of a waiting job comes from its\n"
      "config on the registered cluster, as OpenPAI's rest-server asks HiveD for it; another\n"
      "group's from --vc, --gpus and the other request flags. The config is --config, else the\n"
      "one HiveD's cluster status implies (it tells an idle pinned cell, which HiveD keeps\n"
      "bound, but not one in use: give --config when the VC has pinned cells).\n"
      "-o wide also gives a running group's leaf cells per virtual cell and its pods, and a\n"
      "waiting group's request and what it was judged on.\n\n"
      "EXIT STATUS:\n  0 explained, 2 bad usage or unknown group without a request, 3 HiveD "
      "could not be read\n");
  define_command(cmd, g, o,
                 {.validate = [](const WhyOptions& o, Usage& u) { validate_hived_flags(o.h, u); },
                  .run = [](const auto& o, Globals& g) { return run_why(o, g); }});
}

}  // namespace paictl
