#pragma once
// The connection of a command to a registered cluster: --cluster and
// --request-timeout, the registry, the credentials, and how the errors of the
// cluster's REST API are reported.

#include <memory>
#include <optional>
#include <string>

#include "app.h"
#include "flags.h"

namespace pai::api {
struct Error;
class Client;
}  // namespace pai::api
namespace pai::cluster {
struct Cluster;
class Registry;
}  // namespace pai::cluster
namespace pai::http {
class Client;
}
namespace pai::job {
struct HivedEndpoint;
}

namespace paictl::jobcli {

// Options every command that talks to a cluster takes.
struct RemoteOptions {
  std::string cluster;  // --cluster NAME ("" = the current one)
  double timeout = 30;  // --timeout seconds for each request
};
void add_remote_flags(Flags* cmd, RemoteOptions& o, bool allow_auto = false);

// An open connection to one registered cluster.
struct Connection {
  std::shared_ptr<pai::cluster::Cluster> cluster;
  std::shared_ptr<pai::http::Client> http;
  std::shared_ptr<pai::api::Client> api;
};

// Loads the registry (printing problems). nullptr on failure (exit code 2).
std::unique_ptr<pai::cluster::Registry> load_registry();

// Opens the cluster named by --cluster, else the current one. Prints why not and
// returns nullopt when there is none (exit code 2) or its token cannot be read.
std::optional<Connection> connect(const pai::cluster::Registry& reg, const RemoteOptions& o,
                                  const Globals& g);
std::optional<Connection> connect_named(const pai::cluster::Registry& reg, const std::string& name,
                                        const RemoteOptions& o, const Globals& g);

// The cluster's HiveD inspect API (its registered hived URL, else behind the
// pylon), asked with one attempt and `timeout_s` a request (a cluster without
// HiveD answers at once).
pai::job::HivedEndpoint hived_endpoint(const Connection& c, double timeout_s);

// Prints an API error ("paictl: error: <cluster>: ...", one line per detail) and
// returns the exit code for it (3 for remote failures, 2 for refused input).
int report_api_error(const std::string& cluster, const std::string& doing,
                     const pai::api::Error& e);

}  // namespace paictl::jobcli
