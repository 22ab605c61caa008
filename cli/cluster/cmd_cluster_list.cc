// paictl cluster list

#include <cstdio>
#include <future>

#include "api/client.h"
#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "exit_codes.h"
#include "flags.h"
#include "http/client.h"
#include "job/follow.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/printable.h"

namespace paictl {

namespace {

struct ListOptions {
  std::string output = "table";
  bool no_probe = false;
  double timeout = 5;
};

std::string auth_text(const pai::cluster::Cluster& c) {
  if (c.auth == pai::cluster::AuthMethod::TokenFile) return "token file";
  return c.login == "password" ? "password sign-in" : "token";
}

int run(const ListOptions& o, const Globals& g) {
  auto reg = jobcli::load_registry();
  if (!reg) return kExitUsage;
  const auto& clusters = reg->clusters();
  if (o.output == "name") {  // the registry's names; nothing is probed
    for (const auto& c : clusters) std::printf("%s\n", pai::util::printable(c.name).c_str());
    return kExitOk;
  }
  // Probe every cluster at once: GET /api/v2/info needs no token.
  std::vector<std::future<pai::api::Result<pai::api::ClusterInfo>>> probes;
  if (!o.no_probe) {
    for (const auto& c : clusters) {
      probes.push_back(std::async(std::launch::async, [&c, &o, &g]() {
        if (std::string tls = pai::cluster::tls_problem(c); !tls.empty()) {
          pai::api::Error refused;
          refused.kind = pai::api::Error::Kind::Transport;
          refused.message = tls;
          return pai::api::Result<pai::api::ClusterInfo>(std::move(refused));
        }
        pai::http::Options hopt;
        hopt.timeout_s = o.timeout;
        hopt.connect_timeout_s = o.timeout;
        hopt.retry.max_attempts = 1;
        hopt.tls.ca_file = c.ca_file;
        hopt.tls.insecure = c.insecure;
        if (g.verbose) {
          std::string n = c.name;
          hopt.log = [n](const std::string& l) {
            std::fprintf(stderr, "paictl: %s: %s\n", n.c_str(), l.c_str());
          };
        }
        pai::http::CurlClient http(hopt);
        pai::api::Client api(http, c.rest_server);
        return api.info();
      }));
    }
  }
  jobcli::Json list = jobcli::Json::array();
  Table t({{"CURRENT"},
           {"NAME"},
           {"URI"},
           {"USER"},
           {"VERSION"},
           {"AUTH"},
           {"REACHABLE"},
           {"REST SERVER", true},
           {"CA FILE", true},
           {"SOURCE", true}});
  for (size_t i = 0; i < clusters.size(); ++i) {
    const auto& c = clusters[i];
    std::string reachable = "not probed", version = c.version, error;
    if (!o.no_probe) {
      auto r = probes[i].get();
      if (r.ok()) {
        reachable = "yes";
        version = r->version;
      } else {
        reachable = "no";
        error = r.error().summary();
      }
    }
    bool current = c.name == reg->current();
    jobcli::Json j = {
        {"name", c.name},
        {"uri", c.uri},
        {"restServer", c.rest_server},
        {"user", c.user},
        {"version", version},
        {"auth", auth_text(c)},
        {"current", current},
        {"reachable", o.no_probe ? jobcli::Json(nullptr) : jobcli::Json(reachable == "yes")}};
    if (!error.empty()) j["error"] = error;
    if (!c.ca_file.empty()) j["caFile"] = c.ca_file;
    if (c.insecure) j["insecure"] = true;
    j["source"] = c.source;
    list.push_back(j);
    t.add({current ? "*" : "", c.name, c.uri, c.user, version, auth_text(c),
           reachable == "no" ? "no: " + error : reachable, c.rest_server,
           c.ca_file.empty() ? (c.insecure ? "insecure" : "-") : c.ca_file, c.source});
  }
  if (!is_structured(o.output)) {
    if (clusters.empty()) {
      std::fprintf(
          stderr,
          "No cluster is registered. Add one with 'paictl cluster add NAME --uri URL ...'.\n");
      return kExitOk;
    }
    print_table(t, o.output == "wide");
  } else {
    print_document(list_document("clusterList", list), o.output);
  }
  return kExitOk;
}

void add_cluster_list(Flags& parent, Globals& g) {
  auto o = std::make_shared<ListOptions>();
  Flags* cmd = &parent;
  add_output_option(*cmd, o->output, g, /*wide=*/true, {"cluster name"});
  cmd->add_flag("--no-probe", o->no_probe, "Do not contact the clusters");
  cmd->add_option("--request-timeout", o->timeout, "Seconds to wait for each cluster")
      ->capture_default_str();
  cmd->footer(
      "Tokens are never shown. The clusters are probed at once (GET /api/v2/info, no "
      "sign-in).\n\n");
  define_command(*cmd, g, o, {.run = [](const auto& o, Globals& g) { return run(o, g); }});
}

}  // namespace

void build_cluster_list(Flags& cmd, Globals& g) {
  add_cluster_list(cmd, g);
}

}  // namespace paictl
