#pragma once
// What the `job`, `check job` and `cluster` commands share: report flags,
// --param/--name/--vc parsing, table/json/yaml printing, and the way a command
// finds its cluster (registry, --cluster, credentials) and reports remote errors.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app.h"
#include "flags.h"
#include "job/history.h"
#include "job/job_file.h"

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

namespace paictl::jobcli {

// --- check job / job validate ------------------------------------------------------

struct CheckOptions {
  std::vector<std::string> files;
  std::string output = "text";
  std::string junit;
  std::string sarif;
  bool fail_on_warn = false;
  std::vector<std::string> params;
  std::string name;
  std::string vc;
};

void add_check_flags(Flags* cmd, CheckOptions& o, Globals& g);
int run_check(const CheckOptions& o, const Globals& g, const char* suite);

// --param/--name/--vc into overrides; prints the error and returns nullopt on bad input.
std::optional<pai::job::Overrides> make_overrides(const std::vector<std::string>& params,
                                                  const std::string& name, const std::string& vc);

// --- output ---------------------------------------------------------------------------

using Json = nlohmann::ordered_json;

// "1h 2m", "35s": a duration in milliseconds for tables.
std::string format_duration_ms(double ms);
// Local time "2024-05-01 12:03:04" of epoch milliseconds; "-" when null.
std::string format_time_ms(const Json& v);

// --- clusters ------------------------------------------------------------------------

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

// Prints an API error ("paictl: error: <cluster>: ...", one line per detail) and
// returns the exit code for it (3 for remote failures, 2 for refused input).
int report_api_error(const std::string& cluster, const std::string& doing,
                     const pai::api::Error& e);

// "user~name" or "name" (the cluster's user) -> {user, name}; prints and nullopt if malformed.
std::optional<std::pair<std::string, std::string>> parse_job_id(const std::string& id,
                                                                const Connection& c);

// One job on one cluster, as named on the command line.
struct JobTarget {
  Connection conn;
  std::string user;
  std::string name;
  std::string id;  // user~name
};
// Loads the registry, connects (--cluster or the current cluster) and parses the
// job's id; prints why not and returns nullopt (exit code 2).
std::optional<JobTarget> open_job(const std::string& job, const RemoteOptions& o, const Globals& g);

// --- waiting for a job -----------------------------------------------------------------

struct WaitOptions {
  double interval = 10;  // seconds between polls
  double timeout = 0;    // 0: no limit
  std::string output = "table";
};
void add_wait_flags(Flags* cmd, WaitOptions& o, const char* prefix = "");

// Polls the job until it ends. Returns 0 when it SUCCEEDED, 1 when it FAILED or
// was STOPPED, 3 when the cluster fails, kExitWaitTimeout on --timeout.
int wait_for_job(const Connection& c, const std::string& user, const std::string& name,
                 const WaitOptions& o, const Globals& g);

// The attempt answers (GET .../taskIndex/I/attempts) of the tasks that were
// retried, or of every task with `all`, keyed "ROLE/INDEX"; at most 50 requests.
pai::job::TaskAttempts fetch_task_attempts(const Connection& conn, const std::string& user,
                                           const std::string& name, const nlohmann::json& detail,
                                           bool all);

// --- follow and watch loops ---------------------------------------------------------

// Ctrl-C for the follow and watch loops: the first SIGINT only sets a flag that
// the loop checks, so it ends cleanly (whole lines printed, the cursor back); a
// second SIGINT ends the process at once.
void catch_interrupt();
bool interrupted();
// Sleeps `seconds` in short steps; false when Ctrl-C came meanwhile.
bool pause_for(double seconds);
// "2h", "30m", "45s", "3d", "90" (seconds) -> milliseconds; nullopt if malformed.
std::optional<double> parse_duration_ms(const std::string& s);
// The current time as epoch milliseconds.
double now_ms();
// Whether a job state is final.
bool is_final_state(const std::string& state);

}  // namespace paictl::jobcli
