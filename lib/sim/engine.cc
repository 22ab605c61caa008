#include "sim/engine.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <queue>
#include <random>
#include <set>
#include <span>
#include <tuple>
#include <unordered_map>

#include "config/hived_model.h"
#include "scheduler/policy.h"
#include "sim/generate.h"
#include "sim/text_input.h"
#include "util/strings.h"

namespace pai::sim {

using scheduler::GroupRequest;
using scheduler::Outcome;
using scheduler::ScheduleResult;

void sort_values(std::vector<double>& v) {
  const size_t n = v.size();
  if (n < 2048) {
    std::sort(v.begin(), v.end());
    return;
  }
  // Each double as a key whose unsigned order is the numeric order: negative
  // values with every bit flipped, the others with the sign bit set. (-0 comes
  // before +0; std::sort leaves equal values in any order, and the two are equal.)
  std::vector<uint64_t> keys(n), spare(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t u = std::bit_cast<uint64_t>(v[i]);
    keys[i] = (u >> 63) ? ~u : (u | (uint64_t{1} << 63));
  }
  // Least significant digit first, 11 bits a pass; a pass where every key has
  // the same digit is skipped.
  constexpr int kBits = 11;
  constexpr size_t kBuckets = size_t{1} << kBits;
  std::vector<size_t> count(kBuckets);
  for (int shift = 0; shift < 64; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (uint64_t k : keys) ++count[(k >> shift) & (kBuckets - 1)];
    if (count[(keys[0] >> shift) & (kBuckets - 1)] == n) continue;
    size_t at = 0;
    for (size_t& c : count) {
      const size_t here = c;
      c = at;
      at += here;
    }
    for (uint64_t k : keys) spare[count[(k >> shift) & (kBuckets - 1)]++] = k;
    keys.swap(spare);
  }
  for (size_t i = 0; i < n; ++i) {
    const uint64_t k = keys[i];
    v[i] = std::bit_cast<double>((k >> 63) ? (k & ~(uint64_t{1} << 63)) : ~k);
  }
}

Summary summarize(std::vector<double> v) {
  sort_values(v);
  return summarize_sorted(v);
}

std::vector<double> merge_sorted(std::vector<std::vector<double>> runs) {
  // Pairwise, as a merge sort's last passes: log2(runs) passes over the values.
  std::erase_if(runs, [](const std::vector<double>& r) { return r.empty(); });
  if (runs.empty()) return {};
  while (runs.size() > 1) {
    std::vector<std::vector<double>> next;
    next.reserve((runs.size() + 1) / 2);
    for (size_t i = 0; i + 1 < runs.size(); i += 2) {
      std::vector<double> m(runs[i].size() + runs[i + 1].size());
      std::merge(runs[i].begin(), runs[i].end(), runs[i + 1].begin(), runs[i + 1].end(), m.begin());
      std::vector<double>().swap(runs[i]);
      std::vector<double>().swap(runs[i + 1]);
      next.push_back(std::move(m));
    }
    if (runs.size() % 2) next.push_back(std::move(runs.back()));
    runs = std::move(next);
  }
  return std::move(runs[0]);
}

Summary summarize_sorted(const std::vector<double>& v) {
  Summary s;
  s.n = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  auto rank = [&](double q) {
    size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, k == 0 ? 0 : k - 1)];
  };
  s.p50 = rank(0.50);
  s.p95 = rank(0.95);
  s.p99 = rank(0.99);
  s.max = v.back();
  return s;
}

// ---------------------------------------------------------------------------
// Faults
// ---------------------------------------------------------------------------

util::Result<FaultSpec> parse_random_faults(const std::string& spec) {
  FaultSpec out;
  std::string_view s = spec;
  if (s.rfind("random", 0) != 0) {
    return util::Error{"a fault model is random:mtbf=DURATION,mttr=DURATION[,seed=N]", {}};
  }
  s.remove_prefix(6);
  if (!s.empty() && s[0] == ':') s.remove_prefix(1);
  out.random = true;
  out.mtbf = 30 * 86400;
  out.mttr = 4 * 3600;
  out.source = spec;
  for (std::string_view kv : util::split(s, ',')) {
    kv = util::trim(kv);
    if (kv.empty()) continue;
    auto eq = kv.find('=');
    if (eq == std::string_view::npos) {
      return util::Error{"\"" + std::string(kv) + "\" in the fault model is not key=value", {}};
    }
    std::string key(util::trim(kv.substr(0, eq)));
    std::string_view value = util::trim(kv.substr(eq + 1));
    if (key == "seed") {
      auto v = util::parse_int(value);
      if (!v || *v < 0) {
        return util::Error{"seed must be a whole number", {}};
      }
      out.seed = static_cast<uint64_t>(*v);
    } else if (key == "mtbf" || key == "mttr") {
      auto d = parse_duration(value);
      if (!d || *d <= 0) {
        return util::Error{
            key + " \"" + std::string(value) + "\" is not a positive duration (e.g. 30d, 4h, 90m)",
            {}};
      }
      (key == "mtbf" ? out.mtbf : out.mttr) = *d;
    } else {
      return util::Error{"unknown key \"" + key + "\" in the fault model (known: mtbf, mttr, seed)",
                         {}};
    }
  }
  return out;
}

namespace {
bool read_faults(ByteSource& src, const scheduler::ClusterShape& cluster, const Trace& trace,
                 FaultSpec& out, TraceError& e) {
  const std::string& path = src.name();
  e.file = path;
  CsvReader csv(src);
  std::vector<std::string> f;
  bool first = true;
  out.source = path;
  while (csv.next(f)) {
    if (first && !f.empty() && util::trim(f[0]) == "time") {
      first = false;
      continue;
    }
    first = false;
    if (f.size() != 3) {
      e.line = csv.line();
      e.column = 1;
      e.message =
          "a fault record has " + std::to_string(f.size()) + " fields, expected time,node,event";
      e.hint = "e.g. 3600,worker-7,down";
      return false;
    }
    FaultEvent ev;
    std::string_view t = util::trim(f[0]);
    if (auto ts = parse_timestamp(t)) {
      if (!trace.has_dates) {
        e.line = csv.line();
        e.column = csv.column(0);
        e.message = "the fault time is a date but the trace has no dates";
        e.hint = "give seconds since the first submission";
        return false;
      }
      ev.time = *ts - trace.origin;
    } else if (auto d = parse_duration(t)) {
      ev.time = *d;
    } else {
      e.line = csv.line();
      e.column = csv.column(0);
      e.message = "fault time \"" + std::string(t) + "\" is neither seconds nor a date";
      return false;
    }
    ev.node = cluster.find_node(util::trim(f[1]));
    if (ev.node < 0) {
      std::vector<std::string> names;
      for (size_t i = 0; i < cluster.nodes.size() && i < 100000; ++i)
        names.push_back(cluster.nodes[i].name);
      std::string guess = util::did_you_mean(util::trim(f[1]), names);
      e.line = csv.line();
      e.column = csv.column(1);
      e.message = "node \"" + std::string(util::trim(f[1])) + "\" is not in the cluster";
      e.hint = guess.empty() ? "nodes are the node-level cellAddress values of the HiveD config"
                             : "did you mean \"" + guess + "\"?";
      return false;
    }
    std::string ev_name = util::to_lower(util::trim(f[2]));
    if (ev_name == "down" || ev_name == "fail" || ev_name == "bad") {
      ev.up = false;
    } else if (ev_name == "up" || ev_name == "recover" || ev_name == "healthy") {
      ev.up = true;
    } else {
      e.line = csv.line();
      e.column = csv.column(2);
      e.message = "fault event \"" + std::string(util::trim(f[2])) + "\" is neither down nor up";
      return false;
    }
    out.events.push_back(ev);
  }
  if (!csv.error().empty()) {
    e.line = csv.error_position().line;
    e.column = csv.error_position().column;
    e.message = csv.error();
    return false;
  }
  std::stable_sort(out.events.begin(), out.events.end(),
                   [](const FaultEvent& a, const FaultEvent& b) { return a.time < b.time; });
  return true;
}
}  // namespace

bool read_fault_file(const std::string& path, const scheduler::ClusterShape& cluster,
                     const Trace& trace, FaultSpec& out, TraceError& e) {
  ByteSource src(path);
  if (!src.error().empty()) {
    e.file = path;
    e.message = "cannot read " + path + ": " + src.error();
    return false;
  }
  return read_faults(src, cluster, trace, out, e);
}

bool read_fault_text(std::string_view text, const std::string& name,
                     const scheduler::ClusterShape& cluster, const Trace& trace, FaultSpec& out,
                     TraceError& e) {
  ByteSource src(text, name);
  return read_faults(src, cluster, trace, out, e);
}

// ---------------------------------------------------------------------------
// Simulator setup
// ---------------------------------------------------------------------------

Simulator::Simulator(const config::HivedModel& model, const Trace& trace, SimOptions options)
    : model_(model), trace_(trace), opt_(std::move(options)) {
  shape_ = scheduler::describe_cluster(model);
}

Simulator::~Simulator() = default;

util::Result<void> Simulator::prepare() {
  // GPU leaf types: skuTypes with gpu > 0, or types that skuTypes do not describe.
  gpu_type_.assign(shape_.leaf_types.size(), 1);
  for (size_t t = 0; t < shape_.leaf_types.size(); ++t)
    for (const auto& s : model_.sku_types)
      if (s.name == shape_.leaf_types[t].name) gpu_type_[t] = s.gpu > 0;
  // Leaf types named by the trace.
  type_map_.assign(trace_.leaf_type_names.size(), -2);
  for (size_t i = 0; i < trace_.leaf_type_names.size(); ++i) {
    int32_t t = shape_.find_leaf_type(trace_.leaf_type_names[i]);
    // Alibaba names GPU models (V100, MISC, ...) that a cluster config may not use:
    // such jobs may run on any GPU type. A native trace names HiveD leaf types exactly.
    type_map_[i] = t >= 0 ? t : (trace_.format == "alibaba" ? -1 : -2);
  }
  // VCs.
  mapping_.to_cluster.assign(trace_.vc_names.size(), -1);
  mapping_.notes.clear();
  const std::string& spec = opt_.vc_map;
  if (spec != "auto" && spec != "strict") {
    for (std::string_view pair : util::split(spec, ',')) {
      pair = util::trim(pair);
      if (pair.empty()) continue;
      auto eq = pair.find('=');
      if (eq == std::string_view::npos) {
        return util::Error{"--vc-map: \"" + std::string(pair) + "\" is not TRACE_VC=CLUSTER_VC",
                           {}};
      }
      std::string from(util::trim(pair.substr(0, eq))), to(util::trim(pair.substr(eq + 1)));
      int32_t cvc = shape_.find_vc(to);
      if (cvc < 0) {
        std::vector<std::string> names;
        for (const auto& v : shape_.vcs) names.push_back(v.name);
        std::string guess = util::did_you_mean(to, names);
        return util::Error{"--vc-map: the cluster has no virtual cluster \"" + to + "\"" +
                               (guess.empty() ? "" : " (did you mean \"" + guess + "\"?)"),
                           "the cluster's virtual clusters: " + util::join(names, ", ")};
      }
      bool found = false;
      for (size_t i = 0; i < trace_.vc_names.size(); ++i)
        if (trace_.vc_names[i] == from) {
          mapping_.to_cluster[i] = cvc;
          found = true;
        }
      if (!found)
        mapping_.notes.push_back("--vc-map names " + from + ", which no job of the trace uses");
    }
  }
  for (size_t i = 0; i < trace_.vc_names.size(); ++i)
    if (mapping_.to_cluster[i] < 0) mapping_.to_cluster[i] = shape_.find_vc(trace_.vc_names[i]);
  if (spec == "auto") {
    // Trace VCs the cluster does not know go to cluster VCs, largest demand first,
    // each to the VC with the least assigned demand per guaranteed GPU.
    std::vector<double> demand(trace_.vc_names.size(), 0);
    for (const auto& j : trace_.jobs)
      demand[static_cast<size_t>(j.vc)] += static_cast<double>(trace_.gpus(j)) * j.duration;
    std::vector<size_t> order;
    for (size_t i = 0; i < trace_.vc_names.size(); ++i)
      if (mapping_.to_cluster[i] < 0) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return demand[a] != demand[b] ? demand[a] > demand[b]
                                    : trace_.vc_names[a] < trace_.vc_names[b];
    });
    std::vector<double> capacity(shape_.vcs.size(), 0), assigned(shape_.vcs.size(), 0);
    for (size_t v = 0; v < shape_.vcs.size(); ++v)
      for (size_t t = 0; t < shape_.leaf_types.size(); ++t)
        if (gpu_type_[t]) capacity[v] += static_cast<double>(shape_.vcs[v].guaranteed[t]);
    for (size_t v = 0; v < shape_.vcs.size(); ++v)
      for (size_t i = 0; i < trace_.vc_names.size(); ++i)
        if (mapping_.to_cluster[i] == static_cast<int32_t>(v)) assigned[v] += demand[i];
    for (size_t i : order) {
      int32_t best = -1;
      double best_ratio = 0;
      for (size_t v = 0; v < shape_.vcs.size(); ++v) {
        if (capacity[v] <= 0) continue;
        double ratio = (assigned[v] + demand[i]) / capacity[v];
        if (best < 0 || ratio < best_ratio) {
          best = static_cast<int32_t>(v);
          best_ratio = ratio;
        }
      }
      if (best < 0) break;
      mapping_.to_cluster[i] = best;
      assigned[static_cast<size_t>(best)] += demand[i];
      mapping_.notes.push_back(trace_.vc_names[i] + " -> " +
                               shape_.vcs[static_cast<size_t>(best)].name);
    }
  }
  // Faults.
  faults_ = opt_.faults.events;
  if (opt_.faults.random) {
    double span = trace_.jobs.empty() ? 0 : trace_.jobs.back().submit;
    double horizon = std::max(2 * span, span + 7 * 86400.0);
    SplitMix64 rng(opt_.faults.seed);
    for (size_t n = 0; n < shape_.nodes.size(); ++n) {
      double t = rng.exponential(opt_.faults.mtbf);
      while (t < horizon) {
        faults_.push_back({t, static_cast<int32_t>(n), false});
        double repair = rng.exponential(opt_.faults.mttr);
        faults_.push_back({t + repair, static_cast<int32_t>(n), true});
        t += repair + rng.exponential(opt_.faults.mtbf);
      }
    }
    std::stable_sort(faults_.begin(), faults_.end(), [](const FaultEvent& a, const FaultEvent& b) {
      return std::tie(a.time, a.node, a.up) < std::tie(b.time, b.node, b.up);
    });
  }
  return {};
}

// ---------------------------------------------------------------------------
// One run
// ---------------------------------------------------------------------------

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr size_t kMaxBins = 4096;

enum class Phase : uint8_t { Pending, Queued, Running, Done };

// One per job, so kept small (32 bytes): a running job on one node keeps its
// node here; one on several nodes keeps them in Run::multi_nodes_. With
// backfill, the epoch at which a job last failed is in Run::failed_epoch_.
struct Live {
  double start = 0;
  double anomaly_since = -1;
  uint32_t run = 0;
  int32_t node = -1;      // the node it runs on; -1 when none or several
  int32_t group_id = -1;  // the policy's id of its group while it runs
  int16_t type = -1;
  Phase phase = Phase::Pending;
  bool anomaly_counted : 1 = false;
  bool charged : 1 = false;     // counted in vc_used_
  bool multi_node : 1 = false;  // its nodes are in multi_nodes_
};
static_assert(sizeof(Live) <= 32, "one Live per job: keep it small");

struct QueueKey {
  int32_t neg_priority;
  double submit;
  uint32_t job;
  bool operator<(const QueueKey& o) const {
    return std::tie(neg_priority, submit, job) < std::tie(o.neg_priority, o.submit, o.job);
  }
};
using QueueHead = std::pair<QueueKey, size_t>;  // a queue's first job, and the queue

struct Queue {
  std::set<QueueKey> jobs;
  uint32_t blocked_job = UINT32_MAX;
  uint64_t blocked_epoch = 0;
};

struct Finish {
  double time;
  uint64_t seq;
  uint32_t job;
  uint32_t run;
  bool operator>(const Finish& o) const { return std::tie(time, seq) > std::tie(o.time, o.seq); }
};

// The earliest finish first, as std::priority_queue with std::greater, in a
// heap of four children per entry: half the levels of a binary heap, so a pop
// of a long queue (every running job has an entry) touches fewer cache lines.
// (time, seq) is a total order, so the events come out in the same order.
class FinishQueue {
 public:
  bool empty() const { return heap_.empty(); }
  const Finish& top() const { return heap_.front(); }
  void push(const Finish& f) {
    size_t i = heap_.size();
    heap_.push_back(f);
    while (i > 0) {
      const size_t parent = (i - 1) / 4;
      if (!(heap_[parent] > f)) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = f;
  }
  void pop() {
    const Finish last = heap_.back();
    heap_.pop_back();
    const size_t n = heap_.size();
    if (n == 0) return;
    size_t i = 0;
    for (;;) {
      const size_t first = 4 * i + 1;
      if (first >= n) break;
      size_t best = first;
      const size_t end = std::min(first + 4, n);
      for (size_t c = first + 1; c < end; ++c)
        if (heap_[best] > heap_[c]) best = c;
      if (!(last > heap_[best])) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = last;
  }

 private:
  std::vector<Finish> heap_;
};

class Run {
 public:
  Run(const config::HivedModel& model, const Trace& trace, const SimOptions& opt,
      const scheduler::ClusterShape& shape, const VcMapping& mapping,
      const std::vector<int32_t>& type_map, const std::vector<uint8_t>& gpu_type,
      const std::vector<FaultEvent>& faults)
      : model_(model),
        trace_(trace),
        opt_(opt),
        shape_(shape),
        mapping_(mapping),
        type_map_(type_map),
        gpu_type_(gpu_type),
        faults_(faults) {}

  bool execute(const std::string& policy, PolicyRun& out, std::string& error);

 private:
  int32_t cluster_vc(uint32_t j) const {
    return mapping_.to_cluster[static_cast<size_t>(trace_.jobs[j].vc)];
  }
  Queue& queue_of(uint32_t j) {
    return queues_[static_cast<size_t>(cluster_vc(j)) * 2 + (trace_.jobs[j].priority < 0 ? 1 : 0)];
  }
  void request(uint32_t j, bool opportunistic, GroupRequest& r) const;
  // Decides for job j into `out` (whose buffers the policy may reuse).
  // group_id: GroupRequest::group_id (kNewGroup: the policy holds no group of j).
  void schedule(scheduler::Policy& p, uint32_t j, bool count, bool opportunistic,
                ScheduleResult& out, int32_t group_id = scheduler::kNewGroup);
  const std::string& group_name(uint32_t j);
  // The job of a victim or a downgraded group: its tag, or, in a run seeded with
  // running groups (restored without tags), its name "j<index>".
  uint32_t job_of(const scheduler::Victim& v) const {
    if (seeded_.empty() || v.group.size() < 2 || v.group[0] != 'j')
      return static_cast<uint32_t>(v.tag);
    uint32_t j = 0;
    auto [end, ec] = std::from_chars(v.group.data() + 1, v.group.data() + v.group.size(), j);
    return ec == std::errc() && end == v.group.data() + v.group.size()
               ? j
               : static_cast<uint32_t>(v.tag);
  }
  int16_t reason_id(const std::string& r);
  bool probe(uint32_t j, std::string& reason);
  std::pair<bool, int16_t> probe_empty(uint32_t j);
  void integrate(double t);
  double idle_waiting_gpus() const;
  void enqueue(uint32_t j);
  void dequeue(uint32_t j);
  void start(uint32_t j, const ScheduleResult& r, bool opportunistic = false);
  void stop(uint32_t j);  // bookkeeping shared by finish and kill
  int32_t gpus_of(uint32_t j) const { return static_cast<int32_t>(trace_.gpus(trace_.jobs[j])); }
  // The nodes a running job holds, in the order of its pods.
  std::span<const int32_t> nodes_of(uint32_t j) const {
    const Live& l = live_[j];
    if (l.multi_node) return multi_nodes_.at(j);
    return {&l.node, l.node >= 0 ? size_t{1} : size_t{0}};
  }
  void kill(uint32_t j, bool failure);
  void arrive(uint32_t j);
  enum class Attempt { Started, Waiting, Rejected };
  Attempt attempt(uint32_t j);
  void schedule_pass();
  void fault(const FaultEvent& f);
  bool within_guarantee(uint32_t j) const;
  void finalize(PolicyRun& out);
  // SimOptions::initial: bad nodes marked, running groups restored and running.
  bool seed(const std::string& policy, std::string& error);

  const config::HivedModel& model_;
  const Trace& trace_;
  const SimOptions& opt_;
  const scheduler::ClusterShape& shape_;
  const VcMapping& mapping_;
  const std::vector<int32_t>& type_map_;
  const std::vector<uint8_t>& gpu_type_;
  const std::vector<FaultEvent>& faults_;

  std::unique_ptr<scheduler::Policy> policy_, probe_;
  PolicyRun* out_ = nullptr;
  std::vector<Live> live_;
  std::vector<uint64_t> failed_epoch_;  // backfill only: by job, the epoch of its last failure
  std::vector<Queue> queues_;
  FinishQueue finishes_;
  uint64_t seq_ = 0;
  std::vector<std::vector<uint32_t>> node_jobs_;
  std::unordered_map<uint32_t, std::vector<int32_t>> multi_nodes_;  // running jobs on several nodes
  std::vector<int32_t> nodes_scratch_;
  std::vector<uint8_t> node_up_;
  std::vector<std::vector<std::pair<int32_t, int32_t>>>
      node_type_leaves_;  // node -> (type, leaves)
  std::vector<int32_t> chain_type_;
  std::unordered_map<std::string, int32_t> chain_index_;
  std::vector<int64_t> healthy_by_type_, used_by_type_,
      waiting_by_type_;           // waiting: [type + 1], [0] = any
  std::vector<int64_t> vc_used_;  // vc * types + type: guaranteed, non-pinned
  std::unordered_map<std::string, std::pair<bool, int16_t>> probe_cache_;
  std::unordered_map<uint64_t, std::pair<bool, int16_t>> probe_packed_;  // one-member shapes
  GroupRequest req_;                  // the request being decided (buffers reused)
  std::mt19937_64 suggested_rng_;     // SimOptions::suggested_fraction
  ScheduleResult res_[2];             // attempt()'s results (buffers reused)
  std::string name_;                  // group_name()'s buffer
  std::string probe_key_;             // probe()'s buffer
  std::vector<QueueHead> heads_;      // schedule_pass()'s heap
  std::vector<uint8_t> seeded_;       // by job: running from the initial state (never arrives)
  std::vector<int64_t> vc_run_gpus_;  // by cluster VC: GPUs its running jobs hold
  std::vector<double> vc_integral_;   // by cluster VC: their integral over time
  std::vector<int64_t> vc_queued_;    // by cluster VC: its queued jobs (SimOptions::vc_series)
  bool filter_gpu_types_ = false;
  int64_t gpus_total_ = 0;
  int64_t used_ = 0;
  int64_t queued_ = 0;
  int64_t running_ = 0;
  double now_ = 0;
  double last_ = 0;
  double used_integral_ = 0, idle_integral_ = 0;
  double bin_ = 60;
  std::vector<double> bin_used_, bin_queue_, bin_idle_;
  // SimOptions::vc_series: bin * VCs + VC, the integrals of vc_run_gpus_ and vc_queued_.
  std::vector<double> vc_bin_used_, vc_bin_queue_;
  std::vector<std::vector<double>> vc_preempted_at_;
};

// The request of job j, written over r (its strings and members keep their buffers).
void Run::request(uint32_t j, bool opportunistic, GroupRequest& r) const {
  const TraceJob& tj = trace_.jobs[j];
  int32_t cvc = cluster_vc(j);
  r.virtual_cluster = cvc >= 0 ? shape_.vcs[static_cast<size_t>(cvc)].name
                               : trace_.vc_names[static_cast<size_t>(tj.vc)];
  r.vc_index = cvc;
  r.priority = opportunistic ? scheduler::kOpportunisticPriority : tj.priority;
  r.pinned_cell_id.clear();
  if (tj.pinned >= 0) r.pinned_cell_id = trace_.pinned_names[static_cast<size_t>(tj.pinned)];
  r.leaf_cell_type.clear();
  if (tj.leaf_type >= 0) {
    int32_t t = type_map_[static_cast<size_t>(tj.leaf_type)];
    if (t >= 0) r.leaf_cell_type = shape_.leaf_types[static_cast<size_t>(t)].name;
    if (t == -2) r.leaf_cell_type = trace_.leaf_type_names[static_cast<size_t>(tj.leaf_type)];
  }
  r.affinity_group = "j";
  char digits[16];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, j);
  r.affinity_group.append(digits, end);
  r.members.clear();
  r.members.push_back({tj.pods, tj.gpus});
  if (tj.more >= 0)
    for (const auto& m : trace_.extra_members[static_cast<size_t>(tj.more)])
      r.members.push_back({m.pods, m.gpus});
  r.lazy_preemption_enable = (tj.flags & TraceJob::kLazy) != 0;
  r.tag = j;
}

// The affinity group name of job j ("j<index>"), in a buffer reused by the next call.
const std::string& Run::group_name(uint32_t j) {
  name_.assign(1, 'j');
  char digits[16];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, j);
  name_.append(digits, end);
  return name_;
}

// A job without a leaf cell type may run on any GPU type; when the cluster also
// has leaf types that are not GPUs (CPU cells), the types are tried one by one,
// in order, as HiveD tries any type.
void Run::schedule(scheduler::Policy& p, uint32_t j, bool count, bool opportunistic,
                   ScheduleResult& out, int32_t group_id) {
  GroupRequest& r = req_;
  request(j, opportunistic, r);
  r.group_id = group_id;
  // Only the probe of the empty cluster reports why a job waits.
  r.want_reason = &p != policy_.get();
  r.suggested_nodes.reset();
  r.ignore_suggested_nodes = true;
  if (opt_.suggested_fraction < 1 && &p == policy_.get()) {
    // The nodes Kubernetes' own filters let through for this attempt.
    r.suggested_nodes.emplace();
    std::uniform_real_distribution<double> u(0, 1);
    for (size_t n = 0; n < shape_.nodes.size(); ++n)
      if (u(suggested_rng_) < opt_.suggested_fraction)
        r.suggested_nodes->push_back(static_cast<int32_t>(n));
    r.ignore_suggested_nodes = false;
  }
  if (!filter_gpu_types_ || !r.leaf_cell_type.empty() || !r.pinned_cell_id.empty()) {
    if (count) out_->decisions++;
    p.schedule_into(r, true, out);
    return;
  }
  const int32_t cvc = cluster_vc(j);
  ScheduleResult last;
  last.outcome = Outcome::Rejected;
  last.reason = "VC " + r.virtual_cluster + " has no GPU cells";
  bool waiting = false;
  for (size_t t = 0; t < shape_.leaf_types.size(); ++t) {
    if (!gpu_type_[t]) continue;
    if (r.priority >= 0 && cvc >= 0 && shape_.vcs[static_cast<size_t>(cvc)].guaranteed[t] == 0)
      continue;
    r.leaf_cell_type = shape_.leaf_types[t].name;
    if (count) out_->decisions++;
    ScheduleResult res = p.schedule(r, true);
    if (res.outcome == Outcome::Bound || res.outcome == Outcome::Preempting) {
      out = std::move(res);
      return;
    }
    if (res.outcome == Outcome::Waiting) {
      waiting = true;
      last = std::move(res);
    } else if (!waiting) {
      last = std::move(res);
    }
  }
  out = std::move(last);
}

int16_t Run::reason_id(const std::string& r) {
  for (size_t i = 0; i < out_->reasons.size(); ++i)
    if (out_->reasons[i] == r) return static_cast<int16_t>(i);
  if (out_->reasons.size() >= 30000) return static_cast<int16_t>(out_->reasons.size() - 1);
  out_->reasons.push_back(r);
  return static_cast<int16_t>(out_->reasons.size() - 1);
}

// Whether job j fits the empty copy of the policy, and if not why (an id in
// the run's reasons); probe() asks once per job shape.
std::pair<bool, int16_t> Run::probe_empty(uint32_t j) {
  const TraceJob& tj = trace_.jobs[j];
  ScheduleResult r;
  schedule(*probe_, j, false, false, r);
  bool ok = r.outcome == Outcome::Bound || r.outcome == Outcome::Preempting;
  int32_t held = r.group_id;
  if (!ok && r.outcome == Outcome::Waiting && opt_.overflow && tj.priority >= 0 && tj.pinned < 0) {
    // Too big for its VC, but it could run as opportunistic work.
    ScheduleResult o;
    schedule(*probe_, j, false, true, o);
    ok = o.outcome == Outcome::Bound;
    held = o.group_id;
  }
  if (ok) probe_->release_group(held, group_name(j));
  int16_t id = -1;
  if (!ok)
    id = reason_id(r.outcome == Outcome::Rejected
                       ? r.reason
                       : "does not fit even in an empty cluster: " + r.reason);
  return {ok, id};
}

// Can the job ever run? Asked of an empty copy of the policy, once per job shape.
bool Run::probe(uint32_t j, std::string& reason) {
  const TraceJob& tj = trace_.jobs[j];
  // A one-member job's shape in 64 bits, when its fields fit: vc (16 bits),
  // leaf type + 1 (16), pinned + 1 (12), opportunistic (1), pods (9), GPUs (10).
  const bool packs = tj.more < 0 && tj.vc >= 0 && tj.vc < (1 << 16) && tj.leaf_type >= -1 &&
                     tj.pinned >= -1 && tj.pinned < (1 << 12) - 1 && tj.pods >= 0 &&
                     tj.pods < (1 << 9) && tj.gpus >= 0 && tj.gpus < (1 << 10);
  if (packs) {
    const uint64_t packed =
        static_cast<uint64_t>(tj.vc) | static_cast<uint64_t>(tj.leaf_type + 1) << 16 |
        static_cast<uint64_t>(tj.pinned + 1) << 32 |
        static_cast<uint64_t>(tj.priority < 0 ? 1 : 0) << 44 |
        static_cast<uint64_t>(tj.pods) << 45 | static_cast<uint64_t>(tj.gpus) << 54;
    auto it = probe_packed_.find(packed);
    if (it == probe_packed_.end()) it = probe_packed_.emplace(packed, probe_empty(j)).first;
    if (!it->second.first) reason = out_->reasons[static_cast<size_t>(it->second.second)];
    return it->second.first;
  }
  // Other shapes as text, built in a reused buffer: vc|leaf type|pinned|g or o|PODSxGPUS+...
  std::string& key = probe_key_;
  key.clear();
  auto num = [&](int64_t v, char after) {
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    key.append(buf, res.ptr);
    if (after) key += after;
  };
  num(tj.vc, '|');
  num(tj.leaf_type, '|');
  num(tj.pinned, '|');
  key += tj.priority >= 0 ? "g|" : "o|";
  num(tj.pods, 'x');
  num(tj.gpus, 0);
  if (tj.more >= 0)
    for (const auto& m : trace_.extra_members[static_cast<size_t>(tj.more)]) {
      key += '+';
      num(m.pods, 'x');
      num(m.gpus, 0);
    }
  auto it = probe_cache_.find(key);
  if (it == probe_cache_.end()) it = probe_cache_.emplace(key, probe_empty(j)).first;
  if (!it->second.first) reason = out_->reasons[static_cast<size_t>(it->second.second)];
  return it->second.first;
}

double Run::idle_waiting_gpus() const {
  double idle = 0;
  const bool any = waiting_by_type_[0] > 0;
  for (size_t t = 0; t < shape_.leaf_types.size(); ++t) {
    if (!gpu_type_[t]) continue;
    if (any || waiting_by_type_[t + 1] > 0)
      idle += static_cast<double>(std::max<int64_t>(0, healthy_by_type_[t] - used_by_type_[t]));
  }
  return idle;
}

void Run::integrate(double t) {
  if (t <= last_) return;
  const double used = static_cast<double>(used_), queued = static_cast<double>(queued_);
  const double idle = idle_waiting_gpus();
  used_integral_ += used * (t - last_);
  idle_integral_ += idle * (t - last_);
  for (size_t v = 0; v < vc_run_gpus_.size(); ++v)
    vc_integral_[v] += static_cast<double>(vc_run_gpus_[v]) * (t - last_);
  double a = last_;
  while (a < t) {
    size_t b = static_cast<size_t>(a / bin_);
    if (b >= kMaxBins) {
      // Too many bins: halve the resolution.
      for (size_t k = 0; k < kMaxBins / 2; ++k) {
        bin_used_[k] = bin_used_[2 * k] + bin_used_[2 * k + 1];
        bin_queue_[k] = bin_queue_[2 * k] + bin_queue_[2 * k + 1];
        bin_idle_[k] = bin_idle_[2 * k] + bin_idle_[2 * k + 1];
      }
      bin_used_.resize(kMaxBins / 2);
      bin_queue_.resize(kMaxBins / 2);
      bin_idle_.resize(kMaxBins / 2);
      if (opt_.vc_series) {
        const size_t nv = vc_queued_.size();
        for (size_t k = 0; k < kMaxBins / 2; ++k)
          for (size_t v = 0; v < nv; ++v) {
            vc_bin_used_[k * nv + v] =
                vc_bin_used_[2 * k * nv + v] + vc_bin_used_[(2 * k + 1) * nv + v];
            vc_bin_queue_[k * nv + v] =
                vc_bin_queue_[2 * k * nv + v] + vc_bin_queue_[(2 * k + 1) * nv + v];
          }
        vc_bin_used_.resize(kMaxBins / 2 * nv);
        vc_bin_queue_.resize(kMaxBins / 2 * nv);
      }
      bin_ *= 2;
      continue;
    }
    if (b >= bin_used_.size()) {
      bin_used_.resize(b + 1, 0);
      bin_queue_.resize(b + 1, 0);
      bin_idle_.resize(b + 1, 0);
      if (opt_.vc_series) {
        vc_bin_used_.resize((b + 1) * vc_queued_.size(), 0);
        vc_bin_queue_.resize((b + 1) * vc_queued_.size(), 0);
      }
    }
    double end = std::min(t, static_cast<double>(b + 1) * bin_);
    if (end <= a) end = std::nextafter(a, kInf);
    double dt = end - a;
    bin_used_[b] += used * dt;
    bin_queue_[b] += queued * dt;
    bin_idle_[b] += idle * dt;
    if (opt_.vc_series) {
      const size_t nv = vc_queued_.size();
      double* u = vc_bin_used_.data() + b * nv;
      double* q = vc_bin_queue_.data() + b * nv;
      for (size_t v = 0; v < nv; ++v) {
        u[v] += static_cast<double>(vc_run_gpus_[v]) * dt;
        q[v] += static_cast<double>(vc_queued_[v]) * dt;
      }
    }
    a = end;
  }
  last_ = t;
}

void Run::enqueue(uint32_t j) {
  const TraceJob& tj = trace_.jobs[j];
  queue_of(j).jobs.insert({-tj.priority, tj.submit, j});
  live_[j].phase = Phase::Queued;
  queued_++;
  if (opt_.vc_series) vc_queued_[static_cast<size_t>(cluster_vc(j))]++;
  waiting_by_type_[static_cast<size_t>(live_[j].type + 1)]++;
}

void Run::dequeue(uint32_t j) {
  const TraceJob& tj = trace_.jobs[j];
  queue_of(j).jobs.erase({-tj.priority, tj.submit, j});
  queued_--;
  if (opt_.vc_series) vc_queued_[static_cast<size_t>(cluster_vc(j))]--;
  waiting_by_type_[static_cast<size_t>(live_[j].type + 1)]--;
}

void Run::start(uint32_t j, const ScheduleResult& r, bool opportunistic) {
  Live& l = live_[j];
  const TraceJob& tj = trace_.jobs[j];
  JobOutcome& o = out_->jobs[j];
  dequeue(j);
  l.group_id = r.group_id;
  l.phase = Phase::Running;
  l.run++;
  l.start = now_;
  if (o.first_start < 0) o.first_start = now_;
  if (l.anomaly_since >= 0) {
    o.anomaly_wait += static_cast<float>(now_ - l.anomaly_since);
    l.anomaly_since = -1;
  }
  const int32_t gpus = gpus_of(j);
  auto it = chain_index_.find(r.cell_chain);
  int32_t type = it == chain_index_.end() ? -1 : chain_type_[static_cast<size_t>(it->second)];
  o.leaf_type = static_cast<int16_t>(type);
  std::vector<int32_t>& nodes = nodes_scratch_;
  nodes.clear();
  for (const auto& pod : r.pods)
    if (pod.node >= 0 && std::find(nodes.begin(), nodes.end(), pod.node) == nodes.end())
      nodes.push_back(pod.node);
  l.multi_node = nodes.size() > 1;
  l.node = nodes.size() == 1 ? nodes[0] : -1;
  if (l.multi_node) multi_nodes_[j] = nodes;
  for (int32_t n : nodes) node_jobs_[static_cast<size_t>(n)].push_back(j);
  used_ += gpus;
  if (type >= 0) used_by_type_[static_cast<size_t>(type)] += gpus;
  if (const int32_t v = cluster_vc(j); v >= 0) vc_run_gpus_[static_cast<size_t>(v)] += gpus;
  if (opportunistic) o.overflow++;
  l.charged = !opportunistic && tj.priority >= 0 && tj.pinned < 0 && type >= 0;
  if (l.charged)
    vc_used_[static_cast<size_t>(cluster_vc(j)) * shape_.leaf_types.size() +
             static_cast<size_t>(type)] += gpus;
  running_++;
  finishes_.push({now_ + tj.duration, seq_++, j, l.run});
}

void Run::stop(uint32_t j) {
  Live& l = live_[j];
  const int32_t gpus = gpus_of(j);
  policy_->release_group(l.group_id, group_name(j));
  l.group_id = -1;
  for (int32_t n : nodes_of(j)) {
    auto& v = node_jobs_[static_cast<size_t>(n)];
    auto it = std::find(v.begin(), v.end(), j);
    if (it != v.end()) {
      *it = v.back();
      v.pop_back();
    }
  }
  if (l.multi_node) multi_nodes_.erase(j);
  l.multi_node = false;
  l.node = -1;
  used_ -= gpus;
  if (const int32_t v = cluster_vc(j); v >= 0) vc_run_gpus_[static_cast<size_t>(v)] -= gpus;
  int32_t type = out_->jobs[j].leaf_type;
  if (type >= 0) used_by_type_[static_cast<size_t>(type)] -= gpus;
  if (l.charged)
    vc_used_[static_cast<size_t>(cluster_vc(j)) * shape_.leaf_types.size() +
             static_cast<size_t>(type)] -= gpus;
  l.charged = false;
  l.run++;  // stale finish events are ignored
  running_--;
}

void Run::kill(uint32_t j, bool failure) {
  Live& l = live_[j];
  if (l.phase != Phase::Running) {
    policy_->release(group_name(j));
    return;
  }
  JobOutcome& o = out_->jobs[j];
  o.lost_gpu_seconds += static_cast<float>(static_cast<double>(gpus_of(j)) * (now_ - l.start));
  if (failure) {
    o.failures++;
  } else {
    o.preemptions++;
    if (opt_.vc_series && cluster_vc(j) >= 0)
      vc_preempted_at_[static_cast<size_t>(cluster_vc(j))].push_back(now_);
  }
  stop(j);
  if (cluster_vc(j) < 0) {
    // A running group of an initial state whose VC the config does not have:
    // once gone it cannot come back.
    l.phase = Phase::Done;
    o.state = JobState::Unschedulable;
    o.reason = reason_id("VC " + trace_.vc_names[static_cast<size_t>(trace_.jobs[j].vc)] +
                         " is not in the cluster");
    return;
  }
  enqueue(j);
}

void Run::arrive(uint32_t j) {
  const TraceJob& tj = trace_.jobs[j];
  JobOutcome& o = out_->jobs[j];
  Live& l = live_[j];
  if (tj.leaf_type >= 0) {
    int32_t t = type_map_[static_cast<size_t>(tj.leaf_type)];
    l.type = static_cast<int16_t>(t >= 0 ? t : -1);
  }
  std::string reason;
  if (cluster_vc(j) < 0) {
    reason = "VC " + trace_.vc_names[static_cast<size_t>(tj.vc)] +
             " is not in the cluster (see --vc-map)";
  } else {
    probe(j, reason);
  }
  if (!reason.empty()) {
    o.state = JobState::Unschedulable;
    o.reason = reason_id(reason);
    l.phase = Phase::Done;
    return;
  }
  enqueue(j);
}

bool Run::within_guarantee(uint32_t j) const {
  const TraceJob& tj = trace_.jobs[j];
  if (tj.priority < 0 || tj.pinned >= 0) return false;
  const int32_t cvc = cluster_vc(j);
  const auto& vc = shape_.vcs[static_cast<size_t>(cvc)];
  const int64_t gpus = trace_.gpus(tj);
  for (size_t t = 0; t < shape_.leaf_types.size(); ++t) {
    if (!gpu_type_[t] || (live_[j].type >= 0 && static_cast<size_t>(live_[j].type) != t)) continue;
    if (vc.guaranteed[t] == 0) continue;
    if (vc_used_[static_cast<size_t>(cvc) * shape_.leaf_types.size() + t] + gpus <=
        vc.guaranteed[t])
      return true;
  }
  return false;
}

Run::Attempt Run::attempt(uint32_t j) {
  ScheduleResult& r = res_[0];
  schedule(*policy_, j, true, false, r);
  for (const auto& d : r.downgraded) {
    uint32_t v = job_of(d);
    if (v < out_->jobs.size()) out_->jobs[v].lazy++;
  }
  if (r.outcome == Outcome::Preempting && opt_.preempt_one_node) {
    // One node's victims per reply; the group keeps its reservation meanwhile,
    // so each new reply names the victims that are left. Victims that hold
    // cells but run no pod (reservations of other preempting groups) have no
    // node: they are released with the first reply.
    for (size_t step = 0; r.outcome == Outcome::Preempting && step <= r.victims.size(); ++step) {
      int32_t node = -1;
      for (const auto& v : r.victims) {
        uint32_t vj = job_of(v);
        if (vj < live_.size() && live_[vj].phase == Phase::Running)
          for (int32_t n : nodes_of(vj))
            if (node < 0 || n < node) node = n;
      }
      bool progress = false;
      for (const auto& v : r.victims) {
        uint32_t vj = job_of(v);
        const bool running = vj < live_.size() && live_[vj].phase == Phase::Running;
        if (running) {
          auto held = nodes_of(vj);
          if (std::find(held.begin(), held.end(), node) == held.end()) continue;
        }
        if (running)
          kill(vj, false);
        else
          policy_->release_group(v.group_id, v.group);
        progress = true;
      }
      if (!progress) break;
      ScheduleResult& next = res_[1];
      schedule(*policy_, j, true, false, next, r.group_id);
      for (const auto& d : next.downgraded) {
        uint32_t v = job_of(d);
        if (v < out_->jobs.size()) out_->jobs[v].lazy++;
      }
      std::swap(r, next);
    }
    if (r.outcome == Outcome::Bound) {
      start(j, r);
      return Attempt::Started;
    }
    if (r.outcome == Outcome::Preempting) {
      policy_->release_group(r.group_id, group_name(j));  // never leave a reservation behind
      r.outcome = Outcome::Waiting;
    }
  }
  if (r.outcome == Outcome::Preempting) {
    for (const auto& v : r.victims) {
      uint32_t vj = job_of(v);
      if (vj < live_.size() && live_[vj].phase == Phase::Running)
        kill(vj, false);
      else
        policy_->release_group(v.group_id, v.group);
    }
    ScheduleResult& again = res_[1];
    schedule(*policy_, j, true, false, again, r.group_id);
    if (again.outcome == Outcome::Bound) {
      start(j, again);
      return Attempt::Started;
    }
    // Never leave a reservation behind (only a preempting result holds one).
    if (again.outcome == Outcome::Preempting) policy_->release_group(again.group_id, group_name(j));
    std::swap(r, again);
  }
  if (r.outcome == Outcome::Bound) {
    start(j, r);
    return Attempt::Started;
  }
  if (r.outcome == Outcome::Rejected) {
    dequeue(j);
    JobOutcome& o = out_->jobs[j];
    o.state = JobState::Unschedulable;
    o.reason = reason_id(r.reason);
    live_[j].phase = Phase::Done;
    return Attempt::Rejected;
  }
  const TraceJob& tj = trace_.jobs[j];
  const bool in_guarantee = within_guarantee(j);
  if (opt_.overflow && tj.priority >= 0 && tj.pinned < 0) {
    ScheduleResult& o = res_[1];
    schedule(*policy_, j, true, true, o);
    if (o.outcome == Outcome::Bound) {
      start(j, o, true);
      return Attempt::Started;
    }
    if (o.outcome == Outcome::Preempting) policy_->release_group(o.group_id, group_name(j));
  }
  // Waiting. A sharing anomaly: the VC had room within its guarantee.
  if (in_guarantee) {
    Live& l = live_[j];
    if (l.anomaly_since < 0) l.anomaly_since = now_;
    l.anomaly_counted = true;
  }
  return Attempt::Waiting;
}

void Run::schedule_pass() {
  for (int round = 0; round < 1000; ++round) {
    const uint64_t epoch_before = policy_->release_epoch();
    // A min-heap of the queues' heads, in a buffer kept from pass to pass
    // (std::priority_queue's operations, without its allocation per round).
    std::vector<QueueHead>& heads = heads_;
    heads.clear();
    auto push = [&](size_t q) {
      if (queues_[q].jobs.empty()) return;
      heads.push_back({*queues_[q].jobs.begin(), q});
      std::push_heap(heads.begin(), heads.end(), std::greater<QueueHead>());
    };
    for (size_t q = 0; q < queues_.size(); ++q) push(q);
    while (!heads.empty()) {
      std::pop_heap(heads.begin(), heads.end(), std::greater<QueueHead>());
      auto [key, q] = heads.back();
      heads.pop_back();
      Queue& queue = queues_[q];
      if (queue.jobs.empty() || queue.jobs.begin()->job != key.job) {
        push(q);
        continue;
      }
      const uint64_t epoch = policy_->release_epoch();
      if (queue.blocked_job != key.job || queue.blocked_epoch != epoch) {
        Attempt a = attempt(key.job);
        if (a != Attempt::Waiting) {
          push(q);
          continue;
        }
        queue.blocked_job = key.job;
        queue.blocked_epoch = policy_->release_epoch();
        if (opt_.backfill) failed_epoch_[key.job] = queue.blocked_epoch;
      }
      if (!opt_.backfill) continue;
      // Backfill: try the jobs behind the blocked head (no reservation for the head);
      // jobs that failed since the last release are not tried again.
      int32_t tried = 0;
      auto it = std::next(queue.jobs.begin());
      while (it != queue.jobs.end() && tried < opt_.backfill_depth) {
        uint32_t b = it->job;
        ++it;
        ++tried;
        const uint64_t e = policy_->release_epoch();
        if (failed_epoch_[b] == e) continue;
        if (attempt(b) == Attempt::Waiting) failed_epoch_[b] = policy_->release_epoch();
      }
    }
    if (policy_->release_epoch() == epoch_before)
      return;  // nothing was freed: no one else can start now
  }
}

void Run::fault(const FaultEvent& f) {
  const size_t n = static_cast<size_t>(f.node);
  if (f.up == static_cast<bool>(node_up_[n])) return;
  node_up_[n] = f.up ? 1 : 0;
  for (const auto& [type, leaves] : node_type_leaves_[n])
    healthy_by_type_[static_cast<size_t>(type)] += f.up ? leaves : -leaves;
  policy_->set_node_health(f.node, f.up);
  if (f.up) return;
  out_->node_failures++;
  std::vector<uint32_t> victims = node_jobs_[n];
  std::sort(victims.begin(), victims.end());
  for (uint32_t j : victims) kill(j, true);
}

bool Run::execute(const std::string& policy, PolicyRun& out, std::string& error) {
  out = PolicyRun();
  out.policy = policy;
  out_ = &out;
  auto make = opt_.make_policy ? opt_.make_policy : scheduler::make_policy;
  auto made = make(policy, model_);
  if (!made.ok()) {
    error = made.error().message;
    return false;
  }
  policy_ = std::move(*made);
  auto probe = make(policy, model_);
  if (!probe.ok()) {
    error = probe.error().message;
    return false;
  }
  probe_ = std::move(*probe);
  suggested_rng_.seed(opt_.suggested_seed);
  const size_t njobs = trace_.jobs.size(), ntypes = shape_.leaf_types.size();
  out.jobs.assign(njobs, JobOutcome());
  live_.assign(njobs, Live());
  if (opt_.backfill) failed_epoch_.assign(njobs, 0);
  queues_.assign(shape_.vcs.size() * 2, Queue());
  node_jobs_.assign(shape_.nodes.size(), {});
  node_up_.assign(shape_.nodes.size(), 1);
  healthy_by_type_.assign(ntypes, 0);
  used_by_type_.assign(ntypes, 0);
  waiting_by_type_.assign(ntypes + 1, 0);
  vc_used_.assign(shape_.vcs.size() * ntypes, 0);
  vc_run_gpus_.assign(shape_.vcs.size(), 0);
  vc_integral_.assign(shape_.vcs.size(), 0);
  vc_queued_.assign(shape_.vcs.size(), 0);
  vc_preempted_at_.assign(opt_.vc_series ? shape_.vcs.size() : 0, {});
  seeded_.assign(opt_.initial ? njobs : 0, 0);
  chain_type_.clear();
  for (size_t c = 0; c < shape_.chains.size(); ++c) {
    chain_type_.push_back(shape_.chains[c].leaf_type);
    chain_index_[shape_.chains[c].name] = static_cast<int32_t>(c);
  }
  node_type_leaves_.assign(shape_.nodes.size(), {});
  for (size_t n = 0; n < shape_.nodes.size(); ++n)
    for (int32_t cell : shape_.nodes[n].leaf_cells) {
      int32_t type =
          chain_type_[static_cast<size_t>(model_.cells[static_cast<size_t>(cell)].chain)];
      auto& v = node_type_leaves_[n];
      auto it = std::find_if(v.begin(), v.end(), [&](const auto& e) { return e.first == type; });
      if (it == v.end())
        v.push_back({type, 1});
      else
        it->second++;
    }
  for (size_t t = 0; t < ntypes; ++t) {
    healthy_by_type_[t] = shape_.leaf_types[t].leaf_cells;
    if (gpu_type_[t])
      gpus_total_ += shape_.leaf_types[t].leaf_cells;
    else
      filter_gpu_types_ = true;
  }
  out.gpus = gpus_total_;
  const double span = opt_.horizon > 0 ? opt_.horizon : njobs ? trace_.jobs.back().submit : 0;
  bin_ = opt_.bin_seconds > 0 ? opt_.bin_seconds
                              : std::max(60.0, std::ceil(span / 400.0 / 60.0) * 60.0);
  if (opt_.initial && !seed(policy, error)) return false;

  size_t next_job = 0, next_fault = 0;
  const size_t progress_step = std::max<size_t>(1, (njobs + 255) / 256);
  size_t next_progress = progress_step;
  for (;;) {
    const double t_arrival = next_job < njobs ? trace_.jobs[next_job].submit : kInf;
    const double t_finish = finishes_.empty() ? kInf : finishes_.top().time;
    const double t_fault = next_fault < faults_.size() ? faults_[next_fault].time : kInf;
    if (t_arrival == kInf && t_finish == kInf && (queued_ == 0 || t_fault == kInf)) break;
    const double t = std::min({t_arrival, t_finish, t_fault});
    if (opt_.horizon > 0 && t > opt_.horizon) break;
    integrate(t);
    now_ = t;
    while (!finishes_.empty() && finishes_.top().time == t) {
      Finish f = finishes_.top();
      finishes_.pop();
      Live& l = live_[f.job];
      if (l.phase != Phase::Running || l.run != f.run) continue;
      JobOutcome& o = out.jobs[f.job];
      stop(f.job);
      l.phase = Phase::Done;
      o.state = JobState::Finished;
      o.finish = t;
    }
    while (next_fault < faults_.size() && faults_[next_fault].time == t)
      fault(faults_[next_fault++]);
    for (; next_job < njobs && trace_.jobs[next_job].submit == t; ++next_job)
      if (seeded_.empty() || !seeded_[next_job]) arrive(static_cast<uint32_t>(next_job));
    schedule_pass();
    if (opt_.on_progress && next_job >= next_progress) {
      opt_.on_progress(next_job, njobs);
      next_progress = next_job + progress_step;
    }
  }
  if (opt_.on_progress) opt_.on_progress(njobs, njobs);
  if (opt_.horizon > 0) {
    integrate(opt_.horizon);
    now_ = opt_.horizon;
  }
  out.end = now_;
  // The policies and the run's indexes are not needed for the summary: freed
  // first, so that they and the summary's buffers are not held at once.
  policy_.reset();
  probe_.reset();
  node_jobs_ = {};
  multi_nodes_ = {};
  queues_ = {};
  finishes_ = {};
  probe_cache_ = {};
  probe_packed_ = {};
  finalize(out);
  return true;
}

bool Run::seed(const std::string& policy, std::string& error) {
  const InitialState& init = *opt_.initial;
  for (int32_t n : init.bad_nodes) {
    if (n < 0 || static_cast<size_t>(n) >= shape_.nodes.size() || !node_up_[static_cast<size_t>(n)])
      continue;
    node_up_[static_cast<size_t>(n)] = 0;
    for (const auto& [type, leaves] : node_type_leaves_[static_cast<size_t>(n)])
      healthy_by_type_[static_cast<size_t>(type)] -= leaves;
    policy_->set_node_health(n, false);
  }
  std::vector<scheduler::LiveGroup> groups;
  groups.reserve(init.running.size());
  for (const auto& r : init.running) {
    if (r.job >= trace_.jobs.size() || trace_.jobs[r.job].submit != 0) {
      error = "a running group of the initial state is not a job submitted at time 0";
      return false;
    }
    groups.push_back(r.group);
    groups.back().name = group_name(r.job);
  }
  auto restored = scheduler::restore_hived_groups(*policy_, groups);
  if (!restored) {
    error = "a run from a live state replays HiveD only (policy hived), not " + policy;
    return false;
  }
  for (size_t i = 0; i < init.running.size(); ++i) {
    const uint32_t j = init.running[i].job;
    const scheduler::RestoredGroup& rg = (*restored)[i];
    const TraceJob& tj = trace_.jobs[j];
    JobOutcome& o = out_->jobs[j];
    Live& l = live_[j];
    seeded_[j] = 1;
    if (rg.outcome == scheduler::RestoreOutcome::Ignored) {
      o.state = JobState::Unschedulable;
      o.reason = reason_id("HiveD does not see the running group: " + rg.reason);
      l.phase = Phase::Done;
      continue;
    }
    std::vector<int32_t>& nodes = nodes_scratch_;
    nodes.clear();
    for (const auto& pod : groups[i].pods) {
      int32_t n = shape_.find_node(pod.node);
      if (n >= 0 && std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
    }
    int32_t type = -1;
    if (auto it = chain_index_.find(groups[i].chain); it != chain_index_.end())
      type = chain_type_[static_cast<size_t>(it->second)];
    else if (!nodes.empty() && !node_type_leaves_[static_cast<size_t>(nodes[0])].empty())
      type = node_type_leaves_[static_cast<size_t>(nodes[0])][0].first;
    l.type = static_cast<int16_t>(type);
    l.group_id = -1;
    l.phase = Phase::Running;
    l.run = 1;
    l.start = 0;
    o.first_start = 0;
    o.leaf_type = static_cast<int16_t>(type);
    l.multi_node = nodes.size() > 1;
    l.node = nodes.size() == 1 ? nodes[0] : -1;
    if (l.multi_node) multi_nodes_[j] = nodes;
    for (int32_t n : nodes) node_jobs_[static_cast<size_t>(n)].push_back(j);
    const int32_t gpus = gpus_of(j);
    used_ += gpus;
    if (type >= 0) used_by_type_[static_cast<size_t>(type)] += gpus;
    if (const int32_t v = cluster_vc(j); v >= 0) vc_run_gpus_[static_cast<size_t>(v)] += gpus;
    l.charged = rg.outcome == scheduler::RestoreOutcome::Kept && tj.priority >= 0 &&
                tj.pinned < 0 && type >= 0;
    if (l.charged)
      vc_used_[static_cast<size_t>(cluster_vc(j)) * shape_.leaf_types.size() +
               static_cast<size_t>(type)] += gpus;
    running_++;
    finishes_.push({tj.duration, seq_++, j, l.run});
  }
  out_->restored = std::move(*restored);
  return true;
}

void Run::finalize(PolicyRun& out) {
  const size_t njobs = trace_.jobs.size();
  for (size_t j = 0; j < njobs; ++j)
    if (live_[j].phase == Phase::Running) out.jobs[j].state = JobState::Running;
  for (size_t j = 0; j < njobs; ++j)
    if (live_[j].phase == Phase::Queued) {
      out.jobs[j].state = JobState::NeverStarted;
      if (live_[j].anomaly_since >= 0)
        out.jobs[j].anomaly_wait += static_cast<float>(now_ - live_[j].anomaly_since);
    }
  out.vcs.assign(shape_.vcs.size(), GroupMetrics());
  double last_finish = 0;
  for (size_t j = 0; j < njobs; ++j) {
    const TraceJob& tj = trace_.jobs[j];
    const JobOutcome& o = out.jobs[j];
    int32_t cvc = mapping_.to_cluster[static_cast<size_t>(tj.vc)];
    GroupMetrics& g = cvc >= 0 ? out.vcs[static_cast<size_t>(cvc)] : out.unmapped;
    for (GroupMetrics* m : {&g, &out.overall}) {
      m->jobs++;
      m->preemptions += o.preemptions;
      m->failure_restarts += o.failures;
      m->lazy_preemptions += o.lazy;
      m->overflow_starts += o.overflow;
      m->lost_gpu_seconds += o.lost_gpu_seconds;
      if (live_[j].anomaly_counted) {
        m->anomaly_jobs++;
        m->anomaly_wait_seconds += o.anomaly_wait;
      }
      switch (o.state) {
        case JobState::Finished:
          m->finished++;
          m->gpu_seconds += tj.duration * static_cast<double>(trace_.gpus(tj));
          break;
        case JobState::Unschedulable:
          m->unschedulable++;
          break;
        case JobState::NeverStarted:
          m->never_started++;
          break;
        case JobState::Running:
          m->running++;
          break;
      }
    }
    if (o.state == JobState::Unschedulable)
      out.unschedulable_by_reason[out.reasons[static_cast<size_t>(o.reason)]]++;
    if (o.state == JobState::Finished) last_finish = std::max(last_finish, o.finish);
  }
  // The live states are not read past here: given back before the delays'
  // buffers are built, so that the two are not held at once (the end of a
  // long run was its memory peak).
  std::vector<Live>().swap(live_);
  std::vector<uint64_t>().swap(failed_epoch_);
  // Queue delays, then job completion times: per VC, then overall, one
  // metric's values in memory at a time.
  for (int metric = 0; metric < 2; ++metric) {
    auto value = [&](size_t j, double& x) {
      const JobOutcome& o = out.jobs[j];
      if (metric == 0 ? o.first_start < 0 : o.state != JobState::Finished) return false;
      x = (metric == 0 ? o.first_start : o.finish) - trace_.jobs[j].submit;
      return true;
    };
    auto slot_of = [&](size_t j) {
      int32_t cvc = mapping_.to_cluster[static_cast<size_t>(trace_.jobs[j].vc)];
      return cvc >= 0 ? static_cast<size_t>(cvc) : shape_.vcs.size();
    };
    // Each VC's values sorted once; the overall order is their merge (the
    // same order as sorting all of them, so the same sums and ranks).
    std::vector<std::vector<double>> per(shape_.vcs.size() + 1);
    double x = 0;
    for (size_t j = 0; j < njobs; ++j)
      if (value(j, x)) per[slot_of(j)].push_back(x);
    for (size_t v = 0; v <= shape_.vcs.size(); ++v) {
      GroupMetrics& g = v < shape_.vcs.size() ? out.vcs[v] : out.unmapped;
      sort_values(per[v]);
      (metric == 0 ? g.queue_delay : g.jct) = summarize_sorted(per[v]);
    }
    (metric == 0 ? out.overall.queue_delay : out.overall.jct) =
        summarize_sorted(merge_sorted(std::move(per)));
  }
  for (size_t v = 0; v < vc_integral_.size(); ++v) {
    out.vcs[v].used_gpu_seconds = vc_integral_[v];
    out.overall.used_gpu_seconds += vc_integral_[v];
  }
  out.makespan = last_finish;
  const double horizon = std::max(out.end, 1e-9);
  out.gpu_utilization =
      gpus_total_ > 0 ? used_integral_ / (static_cast<double>(gpus_total_) * horizon) : 0;
  out.fragmentation =
      gpus_total_ > 0 ? idle_integral_ / (static_cast<double>(gpus_total_) * horizon) : 0;
  out.bin_seconds = bin_;
  const size_t nb = bin_used_.size();
  for (size_t b = 0; b < nb; ++b) {
    double width = std::min(bin_, out.end - static_cast<double>(b) * bin_);
    if (width <= 0) width = bin_;
    out.used_gpus.push_back(bin_used_[b] / width);
    out.queued_jobs.push_back(bin_queue_[b] / width);
    out.idle_waiting_gpus.push_back(bin_idle_[b] / width);
  }
  if (opt_.vc_series) {
    const size_t nv = shape_.vcs.size();
    out.vc_used_gpus.assign(nv, {});
    out.vc_queued_jobs.assign(nv, {});
    for (size_t v = 0; v < nv; ++v) {
      out.vc_used_gpus[v].reserve(nb);
      out.vc_queued_jobs[v].reserve(nb);
    }
    for (size_t b = 0; b < nb; ++b) {
      double width = std::min(bin_, out.end - static_cast<double>(b) * bin_);
      if (width <= 0) width = bin_;
      for (size_t v = 0; v < nv; ++v) {
        const size_t k = b * nv + v;
        out.vc_used_gpus[v].push_back(k < vc_bin_used_.size() ? vc_bin_used_[k] / width : 0);
        out.vc_queued_jobs[v].push_back(k < vc_bin_queue_.size() ? vc_bin_queue_[k] / width : 0);
      }
    }
    out.vc_preempted_at = std::move(vc_preempted_at_);
  }
}

}  // namespace

util::Result<void> Simulator::run(const std::string& policy, PolicyRun& out) {
  Run r(model_, trace_, opt_, shape_, mapping_, type_map_, gpu_type_, faults_);
  std::string error;
  if (!r.execute(policy, out, error)) return util::Error{error, {}};
  return {};
}

}  // namespace pai::sim
