#pragma once
// What the `paictl hived` commands share: reaching HiveD (--hived or the
// cluster's pylon), reading the live state, loading a checked HiveD config,
// and the small text helpers of their tables.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app.h"
#include "cluster/connection.h"
#include "command.h"
#include "flags.h"

namespace pai::config {
struct HivedModel;
}
namespace pai::hived {
class Client;
struct Error;
struct LiveState;
struct AffinityGroup;
struct ConfigLoadError;
}  // namespace pai::hived
namespace pai::http {
class Client;
}

namespace paictl::hivedcli {

using Json = nlohmann::ordered_json;

struct HivedOptions {
  std::string hived;      // --hived URL
  std::string ca_file;    // --ca-file: the CA of --hived (else the cluster's, else the system's)
  bool insecure = false;  // --insecure: no TLS verification of --hived
  jobcli::RemoteOptions remote;
  std::string output = "table";
  std::string vc;
};

// names: what -o name prints a line of, for the commands that list named things.
void add_hived_flags(Flags* cmd, HivedOptions& o, Globals& g, bool wide = true,
                     const char* names = nullptr);
// The usage errors of those flags: a --hived that is not an http(s) URL,
// --ca-file or --insecure without --hived, a --ca-file that is not a file.
void validate_hived_flags(const HivedOptions& o, Usage& u);

struct HivedConnection {
  std::string where;  // for messages
  // The registered cluster's REST API, when --cluster (or the current cluster)
  // was used to reach HiveD.
  std::optional<jobcli::Connection> rest;
  std::shared_ptr<pai::http::Client> http;
  std::shared_ptr<pai::hived::Client> client;
};

// --hived URL (with the TLS settings and token of --cluster when given and on
// the same host), else HiveD behind the registered cluster's pylon.
std::optional<HivedConnection> connect_hived(const HivedOptions& o, const Globals& g);
// Prints a HiveD error; returns kExitRemote.
int report(const HivedConnection& h, const std::string& doing, const pai::hived::Error& e);
// The cluster status and the affinity groups, read at once.
std::optional<pai::hived::LiveState> read_live(const HivedConnection& h, int& rc);
// -v: how long the answers took and how long the command ran after they
// arrived (parsing, computing, printing), on stderr.
inline double g_http_ms = 0;
inline size_t g_bytes = 0;
void answers_arrived(std::chrono::steady_clock::time_point sent, size_t bytes);
void print_timing(const Globals& g);

// The HiveD model of PATH (a cluster directory or a file), checked as `check
// config` checks it; errors are printed and give nullptr.
std::shared_ptr<pai::config::HivedModel> load_model(const std::string& path, const Globals& g);
// What load_model prints when a path gives no model.
void print_config_errors(const pai::hived::ConfigLoadError& e, const Globals& g);

}  // namespace paictl::hivedcli
