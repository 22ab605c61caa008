#pragma once
// Job traces: the public GPU-cluster formats and paictl's native CSV, read
// into one compact model (about 64 bytes a job, so a million jobs fit).
//
//  philly   msr-fiddle/philly-traces cluster_job_log (a JSON array of jobs)
//  helios   S-Lab-System-Group/HeliosData cluster_log.csv
//  alibaba  alibaba/clusterdata cluster-trace-gpu-v2020 pai_job_table.csv +
//           pai_task_table.csv (two files, or the directory holding them)
//  csv      paictl's native format (docs/simulate.md)
//
// Records a simulation cannot use (no GPUs, no end time, ...) are left out
// and counted by reason, with the first few examples; malformed input is an
// error with file, line and column.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "util/result.h"

namespace pai::sim {

struct TraceMember {
  int32_t pods = 0;
  int32_t gpus = 0;  // per pod
};

// 48 bytes: a million jobs are 48 MB. The narrow fields hold what a trace
// can give them: Trace::intern_leaf_type and intern_pinned refuse names past
// their limits, and priorities are -1..1000.
struct TraceJob {
  double submit = 0;         // seconds since the trace's first submission
  double duration = 0;       // run time in seconds
  uint32_t id = 0;           // index into Trace::id_offsets
  int32_t vc = -1;           // index into Trace::vc_names
  int16_t leaf_type = -1;    // index into Trace::leaf_type_names; -1 = any type
  int16_t priority = 0;      // -1 (opportunistic) .. 1000
  int32_t pinned : 24 = -1;  // index into Trace::pinned_names
  uint32_t flags : 8 = 0;
  int32_t pods = 0;   // first member
  int32_t gpus = 0;   // first member, per pod
  int32_t more = -1;  // index into Trace::extra_members, -1 when one member
  uint32_t line = 0;  // where the job starts in its file
  static constexpr uint8_t kLazy = 1;
  static constexpr uint8_t kPrioritySet = 2;
  // The most distinct names a trace may use for leaf cell types and pinned cells.
  static constexpr int32_t kMaxLeafTypes = 32767;
  static constexpr int32_t kMaxPinned = (1 << 23) - 1;
};

struct TraceIssue {
  std::string file;
  uint32_t line = 0;
  uint32_t column = 0;
  std::string message;
  std::string reason;  // the key of Trace::skipped the record counts under
};

struct Trace {
  std::string format;
  std::vector<std::string> files;
  std::vector<TraceJob> jobs;  // by submission time, then file order
  std::vector<std::string> vc_names, leaf_type_names, pinned_names;
  std::vector<std::vector<TraceMember>> extra_members;
  double origin = 0;  // absolute time (epoch seconds) of submit 0, when the format has dates
  bool has_dates = false;
  int64_t records = 0;                     // records read, used or not
  std::map<std::string, int64_t> skipped;  // reason -> records left out
  std::map<std::string, int64_t> notes;    // reason -> records changed (e.g. rounded GPUs)
  std::vector<TraceIssue> examples;        // first few skipped records, per reason
  int read_parts = 1;  // the parts the file was read in, each on a thread (1: all on one)

  std::string_view id(const TraceJob& j) const;
  std::vector<TraceMember> members(const TraceJob& j) const;
  int64_t gpus(const TraceJob& j) const;  // all pods
  // Builders, used by the readers and the generator.
  int32_t intern_vc(std::string_view name);
  // -1 for a new name past TraceJob::kMaxLeafTypes or kMaxPinned names.
  int32_t intern_leaf_type(std::string_view name);
  int32_t intern_pinned(std::string_view name);
  void add(TraceJob j, std::string_view id, const std::vector<TraceMember>& members);
  void skip(const std::string& reason, const std::string& file, uint32_t line, uint32_t column,
            const std::string& detail = {});
  void note(const std::string& reason) { notes[reason]++; }
  // Sorts by submission and moves time 0 to the first submission.
  void finish();
  // Gives back the job ids (about 15 bytes a job) when nothing will ask for
  // them: a simulation does not read them, only the per-job report does.
  // id() returns "" afterwards.
  void release_ids();

  std::string id_pool;
  std::vector<uint32_t> id_offsets;  // id i = id_pool[id_offsets[i], id_offsets[i+1])
  // A name table's index (names to their ids).
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using NameIndex = std::unordered_map<std::string, int32_t, NameHash, std::equal_to<>>;

 private:
  NameIndex vc_index_, type_index_, pinned_index_;
};

struct TraceError {
  std::string file;
  uint32_t line = 0;
  uint32_t column = 0;
  std::string message;
  std::string hint;
};

struct TraceOptions {
  std::string format;              // "" = detect
  int32_t default_priority = 100;  // -1 (opportunistic) or 0..1000: TraceJob keeps 16 bits
  int64_t limit = 0;               // keep at most this many jobs (0 = all), in submission order
  // A FIFO or pipe that delivers nothing for this long is an error, not a hang.
  int first_byte_timeout_ms = 30'000;
  // A native or Helios CSV trace of at least `parallel_min_bytes` is read on
  // `read_threads` threads (0: one per hardware thread; at most
  // kMaxTraceReadThreads), with the same result as on one.
  int read_threads = 0;
  uint64_t parallel_min_bytes = kParallelTraceReadMinBytes;
  static constexpr uint64_t kParallelTraceReadMinBytes = 1u << 20;
};
constexpr size_t kMaxTraceReadThreads = 8;

// Reads a trace: one file, or for alibaba two files or a directory. Returns
// false and fills `error` on malformed input or a file that cannot be read.
bool read_trace(const std::vector<std::string>& paths, const TraceOptions& opt, Trace& out,
                TraceError& error);

// The format of `paths` from names and content, or why it cannot be told.
util::Result<std::string> detect_trace_format(const std::vector<std::string>& paths);

// Readers over an in-memory text (tests and fuzzing).
bool read_philly(std::string_view text, const std::string& name, const TraceOptions& opt,
                 Trace& out, TraceError& e);
bool read_helios(std::string_view text, const std::string& name, const TraceOptions& opt,
                 Trace& out, TraceError& e);
bool read_native_csv(std::string_view text, const std::string& name, const TraceOptions& opt,
                     Trace& out, TraceError& e);
bool read_alibaba(std::string_view jobs, std::string_view tasks, const TraceOptions& opt,
                  Trace& out, TraceError& e);

// Writes the native CSV format (the generator's output, and a conversion target).
std::string write_native_csv(const Trace& t);
// Writes Philly's cluster_job_log JSON, one attempt per job that starts at submission.
std::string write_philly_json(const Trace& t);

// "2x8+1x4" -> members; false when malformed.
bool parse_members(std::string_view s, std::vector<TraceMember>& out);
std::string format_members(const std::vector<TraceMember>& m);

}  // namespace pai::sim
