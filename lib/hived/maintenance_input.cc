// Reading the maintenance planner's input: HiveD's live state and the running
// jobs' expected ends.

#include "hived/maintenance.h"
#include "http/client.h"
#include "job/cell_verdict.h"

namespace pai::hived {

util::Result<MaintenanceInput> read_maintenance_input(Client* hived, api::Client* rest,
                                                      std::optional<double> duration_s) {
  MaintenanceInput in;
  if (hived) {
    auto live = read_live(*hived);
    if (!live) {
      const Error& e = live.error();
      return util::Error{"HiveD at " + http::redact_url(hived->base()) + ": " +
                             (e.doing.empty() ? "" : e.doing + ": ") + e.summary(),
                         "check the HiveD URL, or plan without HiveD (plain order)",
                         util::Error::Kind::Remote};
    }
    in.live = std::move(*live);
  }
  // Keyed by job (USER~JOB); plan_maintenance finds a group's end through its job.
  if (rest) in.expected_ends = job::expected_ends(*rest, duration_s);
  return in;
}

}  // namespace pai::hived
