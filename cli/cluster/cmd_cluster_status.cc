// paictl cluster status [NAME... | --all]

#include <cmath>
#include <cstdio>
#include <future>

#include "api/client.h"
#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "job/follow.h"
#include "output/output.h"
#include "output/printer.h"

namespace paictl {

namespace {

struct StatusOptions {
  std::vector<std::string> names;
  bool all = false;
  std::string output = "table";
  jobcli::RemoteOptions remote;
};

struct ClusterStatus {
  std::string name;
  std::string uri;
  std::string user;
  std::optional<pai::api::Error> error;
  std::string version;
  std::vector<pai::api::VirtualCluster> vcs;
  std::vector<pai::api::SkuType> skus;
  std::optional<pai::api::UserInfo> user_info;
  // The user lookup failed (401, 500...): capacity is still shown, ACCESS is
  // unknown, and the command fails.
  std::optional<pai::api::Error> user_error;
};

// The three questions go to a cluster at once; clusters are asked at once too.
ClusterStatus fetch(const jobcli::Connection& c) {
  ClusterStatus s;
  s.name = c.cluster->name;
  s.uri = c.cluster->uri;
  s.user = c.cluster->user;
  auto vcs = std::async(std::launch::async, [&] { return c.api->virtual_clusters(); });
  auto skus = std::async(std::launch::async, [&] { return c.api->sku_types(); });
  auto user = std::async(std::launch::async, [&] { return c.api->user(c.cluster->user); });
  auto v = vcs.get();
  auto k = skus.get();
  auto u = user.get();
  if (!v.ok()) {
    s.error = v.error();
    return s;
  }
  s.vcs = *v;
  if (k.ok()) s.skus = *k;
  if (u.ok())
    s.user_info = *u;
  else
    s.user_error = u.error();
  s.version = c.cluster->version;
  return s;
}

std::string n0(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, std::fabs(v - std::round(v)) < 1e-9 ? "%.0f" : "%.1f", v);
  return buf;
}

jobcli::Json res_json(const pai::api::Resources& r) {
  return {{"gpu", r.gpu}, {"cpu", r.cpu}, {"memoryMB", r.memory_mb}};
}

bool may_use(const ClusterStatus& s, const std::string& vc) {
  if (!s.user_info) return false;
  if (s.user_info->admin) return true;
  for (const auto& v : s.user_info->virtual_clusters)
    if (v == vc) return true;
  return false;
}

int run(const StatusOptions& o, const Globals& g) {
  auto reg = jobcli::load_registry();
  if (!reg) return kExitUsage;
  std::vector<std::string> names = o.names;
  if (o.all) {
    if (!names.empty()) {
      print_error("give cluster names or --all, not both");
      return kExitUsage;
    }
    for (const auto& c : reg->clusters()) names.push_back(c.name);
    if (names.empty()) {
      print_error("no cluster is registered");
      return kExitUsage;
    }
  } else if (names.empty()) {
    names.push_back(o.remote.cluster.empty() ? reg->current() : o.remote.cluster);
    if (names[0].empty()) {
      print_error("no current cluster: name one, pass --all, or run 'paictl cluster use NAME'");
      return kExitUsage;
    }
  }
  std::vector<jobcli::Connection> conns;
  for (const auto& n : names) {
    auto c = jobcli::connect_named(*reg, n, o.remote, g);
    if (!c) return kExitUsage;
    conns.push_back(*c);
  }
  std::vector<std::future<ClusterStatus>> futures;
  for (const auto& c : conns)
    futures.push_back(std::async(std::launch::async, [c] { return fetch(c); }));
  std::vector<ClusterStatus> all;
  for (auto& f : futures) all.push_back(f.get());

  int rc = kExitOk;
  for (const auto& s : all)
    if (s.error) {
      jobcli::report_api_error(s.name, "reading its virtual clusters", *s.error);
      rc = kExitRemote;
    } else if (s.user_error) {
      jobcli::report_api_error(s.name, "reading user " + s.user + " (ACCESS is unknown)",
                               *s.user_error);
      rc = kExitRemote;
    }

  if (is_structured(o.output)) {
    jobcli::Json list = jobcli::Json::array();
    for (const auto& s : all) {
      jobcli::Json j = {{"name", s.name}, {"uri", s.uri}, {"user", s.user}};
      if (s.error) {
        j["error"] = s.error->summary();
        list.push_back(j);
        continue;
      }
      if (s.user_error) j["error"] = "reading user " + s.user + ": " + s.user_error->summary();
      jobcli::Json vcs = jobcli::Json::array();
      for (const auto& v : s.vcs)
        vcs.push_back(
            {{"name", v.name},
             {"mayUse", s.user_info ? jobcli::Json(may_use(s, v.name)) : jobcli::Json(nullptr)},
             {"guaranteed", res_json(v.guaranteed)},
             {"used", res_json(v.used)},
             {"total", res_json(v.total)},
             {"free", res_json(v.free())},
             {"capacity", v.capacity},
             {"usedCapacity", v.used_capacity},
             {"maxCapacity", v.max_capacity}});
      j["virtualClusters"] = vcs;
      jobcli::Json skus = jobcli::Json::array();
      for (const auto& k : s.skus)
        skus.push_back(
            {{"name", k.name}, {"gpu", k.gpu}, {"cpu", k.cpu}, {"memoryMB", k.memory_mb}});
      j["skuTypes"] = skus;
      list.push_back(j);
    }
    // Whole GPUs, CPUs and MBs are integers (document() does that).
    print_document(list_document("clusterStatus", list), o.output);
    return rc;
  }

  Table t({{"CLUSTER"},
           {"VC"},
           {"ACCESS"},
           {"GPU free/used/guar"},
           {"CPU free/used/guar"},
           {"MEM GiB free/used/guar"},
           {"CAPACITY %", true, true},
           {"USED %", true, true},
           {"MAX %", true, true}});
  Table k({{"CLUSTER"},
           {"SKU TYPE"},
           {"GPU", false, true},
           {"CPU", false, true},
           {"MEM GiB", false, true}});
  for (const auto& s : all) {
    if (s.error) {
      t.add({s.name, "-", "-", "unreachable", "", ""});
      continue;
    }
    for (const auto& v : s.vcs) {
      pai::api::Resources f = v.free();
      t.add({s.name, v.name,
             !s.user_info         ? "?"
             : may_use(s, v.name) ? "yes"
                                  : "no",
             n0(f.gpu) + "/" + n0(v.used.gpu) + "/" + n0(v.guaranteed.gpu),
             n0(f.cpu) + "/" + n0(v.used.cpu) + "/" + n0(v.guaranteed.cpu),
             n0(f.memory_mb / 1024) + "/" + n0(v.used.memory_mb / 1024) + "/" +
                 n0(v.guaranteed.memory_mb / 1024),
             n0(v.capacity), n0(v.used_capacity), n0(v.max_capacity)});
    }
    for (const auto& sk : s.skus)
      k.add({s.name, sk.name, n0(sk.gpu), n0(sk.cpu), n0(sk.memory_mb / 1024)});
  }
  const bool wide = o.output == "wide";
  std::string out = render_table(t, wide);
  if (!k.rows.empty()) out += "\n" + render_table(k, wide);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return rc;
}

void add_cluster_status(Flags& parent, Globals& g) {
  auto o = std::make_shared<StatusOptions>();
  Flags* cmd = &parent;
  cmd->add_option("NAME", o->names, "Registered clusters (default: the current one)");
  cmd->add_flag("--all", o->all, "Every registered cluster, asked at the same time");
  add_output_option(*cmd, o->output, g, /*wide=*/true);
  jobcli::add_remote_flags(cmd, o->remote);
  cmd->footer(
      "Free is the VC's total minus what is used (the VC may lend or borrow). ACCESS says whether "
      "your user\n"
      "may submit to it.\n\n"
      "EXIT STATUS:\n"
      "  0 ok, 2 bad usage, 3 a cluster or your user on it could not be read (what could be\n"
      "  read is still shown)\n\n");
  define_command(*cmd, g, o, {.run = [](const auto& o, Globals& g) { return run(o, g); }});
}

}  // namespace

void build_cluster_status(Flags& cmd, Globals& g) {
  add_cluster_status(cmd, g);
}

}  // namespace paictl
