// The connection of a command to a registered cluster: the registry, --cluster,
// the credentials, and how remote errors are reported.

#include "cluster/connection.h"

#include <algorithm>
#include <cstdio>

#include "api/client.h"
#include "cluster/registry.h"
#include "diag/report.h"
#include "exit_codes.h"
#include "hived/inspect.h"
#include "http/client.h"
#include "job/submit.h"
#include "output/output.h"
#include "util/printable.h"
#include "util/strings.h"

namespace paictl::jobcli {

void add_remote_flags(Flags* cmd, RemoteOptions& o, bool allow_auto) {
  cmd->add_option(
         "--cluster", o.cluster,
         allow_auto
             ? "Registered cluster to use, or 'auto' to pick one (default: the current cluster)"
             : "Registered cluster to use (default: the current cluster)")
      ->type_name("NAME");
  cmd->add_option("--request-timeout", o.timeout, "Seconds to wait for each request")
      ->capture_default_str();
}

std::unique_ptr<pai::cluster::Registry> load_registry() {
  pai::diag::List diags;
  auto reg = std::make_unique<pai::cluster::Registry>(
      pai::cluster::Registry::load(pai::cluster::Registry::default_paths(), diags));
  if (!diags.empty()) {
    pai::diag::TextOptions topt;
    topt.color = use_color(false, 2);
    topt.show_summary = false;
    std::string text = pai::diag::write_text(diags.items(), 1, topt);
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
  if (diags.has_errors()) {
    print_error("the cluster registry cannot be read; fix or move the file above");
    return nullptr;
  }
  return reg;
}

std::optional<Connection> connect_named(const pai::cluster::Registry& reg, const std::string& name,
                                        const RemoteOptions& o, const Globals& g) {
  const pai::cluster::Cluster* c = reg.find(name);
  if (!c) {
    std::vector<std::string> names;
    for (const auto& cl : reg.clusters()) names.push_back(cl.name);
    std::string guess = pai::util::did_you_mean(name, names);
    print_error("no cluster named \"" + name + "\" is registered" +
                (guess.empty() ? std::string() : " (did you mean \"" + guess + "\"?)"));
    std::fprintf(stderr, "%s\n",
                 names.empty() ? "Register one with 'paictl cluster add NAME --uri URL ...'."
                               : ("Registered: " + pai::util::join(names, ", ")).c_str());
    return std::nullopt;
  }
  if (std::string tls = pai::cluster::tls_problem(*c); !tls.empty()) {
    print_error("cluster " + c->name + ": " + tls);
    return std::nullopt;
  }
  auto token = pai::cluster::read_token(*c);
  if (!token.ok()) {
    print_error("cluster " + c->name + ": " + token.error().message);
    return std::nullopt;
  }
  pai::http::Options hopt;
  hopt.timeout_s = o.timeout;
  hopt.connect_timeout_s = std::min(10.0, o.timeout);
  hopt.tls.ca_file = c->ca_file;
  hopt.tls.insecure = c->insecure;
  if (g.verbose) {
    std::string prefix = c->name;
    hopt.log = [prefix](const std::string& line) {
      std::fprintf(stderr, "paictl: %s: %s\n", prefix.c_str(), line.c_str());
    };
  }
  Connection conn;
  conn.cluster = std::make_shared<pai::cluster::Cluster>(*c);
  conn.http = std::make_shared<pai::http::CurlClient>(hopt);
  conn.api = std::make_shared<pai::api::Client>(
      *conn.http, c->rest_server.empty() ? c->uri : c->rest_server, *token);
  return conn;
}

std::optional<Connection> connect(const pai::cluster::Registry& reg, const RemoteOptions& o,
                                  const Globals& g) {
  std::string name = o.cluster;
  if (name.empty()) name = reg.current();
  if (name.empty()) {
    if (reg.clusters().empty())
      print_error(
          "no cluster is registered; add one with 'paictl cluster add NAME --uri URL --user USER "
          "--password-stdin'");
    else
      print_error("no current cluster: pass --cluster NAME or run 'paictl cluster use NAME'");
    return std::nullopt;
  }
  return connect_named(reg, name, o, g);
}

int report_api_error(const std::string& cluster, const std::string& doing,
                     const pai::api::Error& e) {
  print_error(cluster + ": " + doing + ": " + e.summary());
  for (const auto& d : e.details) std::fprintf(stderr, "  - %s\n", pai::util::printable(d).c_str());
  if (!e.hint.empty()) std::fprintf(stderr, "  hint: %s\n", pai::util::printable(e.hint).c_str());
  if (e.kind == pai::api::Error::Kind::Http &&
      (e.status == 400 || e.status == 409 || e.status == 404 || e.status == 403 || e.status == 413))
    return kExitUsage;
  return kExitRemote;
}

pai::job::HivedEndpoint hived_endpoint(const Connection& c, double timeout_s) {
  pai::http::Options hopt;
  hopt.timeout_s = timeout_s;
  hopt.connect_timeout_s = std::min(5.0, timeout_s);
  hopt.retry.max_attempts = 1;
  hopt.tls.ca_file = c.cluster->ca_file;
  hopt.tls.insecure = c.cluster->insecure;
  return pai::job::HivedEndpoint{
      std::make_shared<pai::http::CurlClient>(hopt),
      !c.cluster->hived.empty() ? c.cluster->hived : pai::hived::base_behind_pylon(c.cluster->uri),
      pai::cluster::read_token(*c.cluster).value_or(std::string()),
      pai::http::host_of(c.cluster->uri)};
}

}  // namespace paictl::jobcli
