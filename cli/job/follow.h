#pragma once
// Waiting for a job and the follow and watch loops of the job commands: polling
// until a job ends, Ctrl-C, and the durations and times they print.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "app.h"
#include "cluster/connection.h"
#include "flags.h"

namespace paictl::jobcli {

using Json = nlohmann::ordered_json;

// "1h 2m", "35s": a duration in milliseconds for tables.
std::string format_duration_ms(double ms);
// Local time "2024-05-01 12:03:04" of epoch milliseconds; "-" when null.
std::string format_time_ms(const Json& v);

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
