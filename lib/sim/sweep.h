#pragma once
// Parameter sweeps: a grid of simulations described by one YAML file.
//
// A sweep spec names cluster configs, traces (files, or generated ones seeded
// by the sweep), policies, trace transforms (arrival-rate scaling and time
// windows), seeds, Kubernetes' suggested node sets (simulate's
// --suggested-fraction and --suggested-seed) and the simulate options every
// point shares. Each point of the grid (config x trace x window x load x seed x
// suggested fraction x suggested seed x policy) is one simulation of one
// policy, keyed by a hash of everything that decides its result: the bytes of
// its config and trace files, its transform, seeds, suggested sets, policy,
// options and paictl's version. Points are independent, so they can run anywhere (a process pool,
// the tasks of an OpenPAI job) and a finished point never has to run again.
//
// Running a point prints nothing; its result is a JSON value, and
// `encode_result`/`decode_results` carry results through text streams such as
// job logs.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "diag/diagnostic.h"
#include "sim/generate.h"
#include "util/result.h"

namespace pai::sim {

struct SweepConfig {
  std::string name;  // as shown in tables
  std::string path;  // resolved against the spec's directory
};

struct SweepTrace {
  std::string name;
  std::vector<std::string> paths;  // one, or two for alibaba; empty when generated
  std::string format;              // "" = detect
  bool generated = false;
  GenerateOptions generate;  // its seed comes from the point
};

struct SweepWindow {
  std::string name;  // "all", "0s-7d"
  double from = 0;   // seconds since the trace's first submission
  double to = -1;    // -1 = to the end
};

// The options of `paictl simulate` every point shares.
struct SweepSimOptions {
  bool overflow = false;
  bool preempt_one_node = false;
  int32_t backfill = 0;
  std::string tie_order = "hived";
  std::string vc_map = "auto";
  std::string faults;  // "" or "random:..." (the point's seed replaces the seed)
  int32_t priority = 100;
  int64_t limit = 0;
};

struct SweepSpec {
  std::string file;  // the spec as named
  std::vector<SweepConfig> configs;
  std::vector<SweepTrace> traces;
  std::vector<std::string> policies;
  std::vector<double> loads;
  std::vector<SweepWindow> windows;
  std::vector<uint64_t> seeds;
  // --suggested-fraction F of each point (1: every node suggested) and the
  // --suggested-seed of its sets; the seed matters only when F is below 1.
  std::vector<double> suggested_fractions;
  std::vector<uint64_t> suggested_seeds;
  SweepSimOptions options;
  // Seeds change a result only for generated traces and random faults.
  bool seeded_trace(size_t trace) const;
  bool seeded_suggestion(size_t fraction) const { return suggested_fractions[fraction] < 1; }
};

// Reads and checks a spec; every problem goes to `diags` with file:line:col.
// False when there are errors.
bool load_sweep_spec(const std::string& path, SweepSpec& out, diag::List& diags);
// The same over text in memory (tests, fuzzing); relative paths resolve against `base_dir`.
bool parse_sweep_spec(std::string_view text, const std::string& name, const std::string& base_dir,
                      SweepSpec& out, diag::List& diags);

struct SweepPoint {
  size_t index = 0;  // in grid order
  size_t config = 0, trace = 0, window = 0, load = 0, seed = 0, policy = 0;
  size_t suggested = 0, suggested_seed = 0;  // indexes into suggested_fractions, suggested_seeds
  std::string key;                           // 16 hex digits
};

// The grid in order: config, trace, window, load, seed, suggested fraction,
// suggested seed, policy (the last varies fastest). Seeds repeat a point only
// when they can change it: a file trace without random faults gets the first
// seed only, a suggested fraction of 1 the first suggested seed only.
std::vector<SweepPoint> sweep_points(const SweepSpec& spec);

// Computes the key of each point (reads every config and trace file once). An
// error when a file cannot be read.
util::Result<void> key_sweep_points(const SweepSpec& spec, const std::string& version,
                                    std::vector<SweepPoint>& points);

// The point's coordinates: {"config","trace","window","load","seed",
// "suggested_fraction","suggested_seed","policy"} (seeds null where they do not apply).
nlohmann::json point_axes(const SweepSpec& spec, const SweepPoint& p);

// Runs one point in this process. The result: {"trace":{...},"cluster":{...},
// "result":{the policy entry of `simulate -o json`}}. An error when the point
// cannot run (a config with errors, a malformed trace, bad options).
util::Result<nlohmann::json> run_sweep_point(const SweepSpec& spec, const SweepPoint& p);

// Keeps the jobs submitted in [from, to) (seconds since the first submission)
// and makes the first of them time 0; then divides submission times by `load`
// (load 2 = arrivals twice as dense).
void transform_trace(Trace& trace, double from, double to, double load);

// A result as delimited lines, safe in job logs (one JSON line between markers,
// its length in the end marker so a cut line is noticed).
std::string encode_result(const std::string& key, const nlohmann::json& result);
// Every complete result found in `text` (later ones win); lines around them are ignored.
std::map<std::string, nlohmann::json> decode_results(std::string_view text);

// 64-bit FNV-1a, for keys.
uint64_t fnv1a(std::string_view bytes, uint64_t h = 0xcbf29ce484222325ull);

}  // namespace pai::sim
