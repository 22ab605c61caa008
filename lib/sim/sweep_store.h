#pragma once
// A sweep's results on disk, and where each point stands while it runs.
//
// Every result is stored as it arrives, atomically, in OUT/points/KEY.json
// ({"key","point","result","seconds"}); a point whose key is stored there is
// not run again, so an interrupted sweep goes on where it stopped and a
// changed spec runs only the points it changed. The sweep's document
// (sweep.json, the report's data) lists every point with its status: "stored"
// (from an earlier run), "ran", "failed" (with why) or "pending".

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sweep.h"
#include "util/result.h"

namespace pai::sim {

class SweepStore {
 public:
  // Makes OUT/points and reads what it holds for `points` (keyed).
  static util::Result<SweepStore> open(const SweepSpec& spec, std::vector<SweepPoint> points,
                                       std::string out_dir);

  const std::string& dir() const { return dir_; }  // OUT/points
  const std::vector<SweepPoint>& points() const { return points_; }
  // The points without a stored result, in grid order.
  const std::vector<size_t>& pending() const { return pending_; }
  size_t stored() const { return stored_; }

  // What accept() did with a result.
  struct Accepted {
    bool ok = false;      // stored; else the point failed
    std::string error;    // why it failed
    nlohmann::json axes;  // the point's coordinates (point_axes)
  };
  // Records the result of point `index`: an error result ({"error": why}) fails
  // the point; any other is stored and the point has "ran".
  Accepted accept(size_t index, const nlohmann::json& result, double seconds);
  // The points still pending fail with `why` (a result never came back).
  void fail_pending(const std::string& why);

  size_t ran() const;
  size_t failed() const;
  // {"paictl": version, "spec", "out", "points", "ran", "stored", "failed", "items"}: each
  // item the point's axes, "key", "status", and "error" or "result".
  nlohmann::json document(const std::string& version, const std::string& spec_name) const;

 private:
  const SweepSpec* spec_ = nullptr;
  std::vector<SweepPoint> points_;
  std::string out_, dir_;
  std::vector<nlohmann::json> results_;
  std::vector<std::string> status_, errors_;
  std::vector<size_t> pending_;
  size_t stored_ = 0;
};

}  // namespace pai::sim
