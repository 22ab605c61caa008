#pragma once
// What `hived diff` and `hived apply` share: the two configs and the running
// groups a diff is made from, and its renderings.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "hived/cmd_hived_common.h"
#include "hived/diff.h"

namespace paictl::hivedcli {

struct DiffOptions {
  HivedOptions h;
  std::string old_path, new_path;
  bool live = false;
  std::string snapshot;
  bool detailed_exitcode = false;
  bool forecast = false;        // --forecast: the next hours under OLD and NEW (needs --live)
  std::string horizon = "24h";  // --horizon of the forecast
};

// --live with --snapshot, a --snapshot that is not a file, a --hived that is not
// an http(s) URL, an unknown -o.
void validate_hived_diff(const DiffOptions& o, Usage& u);

using pai::hived::DiffInput;

// Loads and checks NEW, then OLD (errors: rc 1), and the running groups from
// the live HiveD (`live`), a snapshot file, or none.
std::optional<DiffInput> load_diff_input(const std::string& old_path, const std::string& new_path,
                                         bool live, const std::string& snapshot,
                                         const HivedOptions& h, const Globals& g, int& rc);

// paictl.hivedDiff/v1
Json diff_document(const DiffInput& in, const pai::hived::ConfigDiff& d);
std::string diff_text(const DiffInput& in, const pai::hived::ConfigDiff& d, bool wide);

}  // namespace paictl::hivedcli
