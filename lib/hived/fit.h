#pragma once
// Does a gang fit a live HiveD now, and if not, when would it start?
//
// The HiveD config comes from the inspect API itself (config_of): the cell
// types from the physical tree (each type's child type and count, its node
// level), the physical cells with their addresses, and each VC's virtual cells
// counted per cell type. The inspect API does not show which of a VC's
// virtual cells are pinned: one bound to a healthy physical cell that nothing
// uses is (HiveD binds other cells only while they are used, or to bad cells),
// and becomes a pinned cell of an id of paictl's own ("pinned:<vc>/<index>");
// a pinned cell in use is counted as an ordinary cell of its type. So a
// request with a pinnedCellId is not judged here.
//
// fit() rebuilds the live state on that config as HiveD does at restart (bad
// nodes marked, the running groups restored from their placements,
// scheduler::restore_hived_groups) and runs the request through the HiveD
// algorithm, with preemption as HiveD's preempting phase does it. When it does
// not fit now, the running groups with a known expected end are released in
// the order of their ends and the request is tried after each: the first end
// after which it fits is its estimated start. The start is unknown when it
// still does not fit once every group with a known end has ended (it waits
// for a group whose end is not known, or for cells that no group frees).
// Pure: the caller gives the clock and the expected ends.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/hived.h"
#include "hived/live.h"
#include "hived/reasons.h"
#include "scheduler/policy.h"
#include "util/result.h"

namespace pai::config {
struct HivedModel;
}

namespace pai::hived {

// The HiveD config the live cluster status implies (see above).
config::HivedConfig config_of(const ClusterStatus& status);
// The same, checked and built into the model lib/scheduler runs on; an error
// when the status does not make a complete config.
util::Result<std::shared_ptr<config::HivedModel>> model_of(const ClusterStatus& status);

struct FitVerdict {
  enum class Kind { Fits, Preempts, Waits, Rejected };
  Kind kind = Kind::Waits;
  std::string reason;                // the algorithm's reason, or where it would be placed
  std::vector<std::string> victims;  // Preempts: the lower-priority groups it preempts
  // Estimated start, seconds since the epoch: now when it fits or preempts.
  std::optional<double> start_s;
  // The group whose end the estimate waits for (the last one released).
  std::string after_group;
  int32_t released = 0;  // running groups released before it fits
  // How the estimate was made, or why it is unknown (one line).
  std::string estimate;
  // Its reason codes, ranked (empty when it fits), and when it would run.
  std::vector<Reason> reasons;
  WouldFit would_fit;
};
std::string_view to_string(FitVerdict::Kind k);  // "fits", "preempts", "waits", "rejected"

// `expected_end`: group name -> when it is expected to end (epoch seconds);
// groups not in it never end for the estimate. An error when the live state
// gives no usable config.
util::Result<FitVerdict> fit(const LiveState& live, const scheduler::GroupRequest& request,
                             const std::map<std::string, double>& expected_end, double now_s);

}  // namespace pai::hived
