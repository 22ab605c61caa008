#include "sim/trace.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "sim/text_input.h"
#include "util/fs.h"
#include "util/json_pull.h"
#include "util/printable.h"
#include "util/strings.h"

namespace pai::sim {

static_assert(sizeof(TraceJob) <= 48, "one TraceJob per job: keep it small");

// ---------------------------------------------------------------------------
// Trace model
// ---------------------------------------------------------------------------

std::string_view Trace::id(const TraceJob& j) const {
  if (j.id + size_t{1} >= id_offsets.size()) return {};
  uint32_t b = id_offsets[j.id], e = id_offsets[j.id + 1];
  return std::string_view(id_pool).substr(b, e - b);
}

std::vector<TraceMember> Trace::members(const TraceJob& j) const {
  std::vector<TraceMember> m{{j.pods, j.gpus}};
  if (j.more >= 0) {
    const auto& extra = extra_members[static_cast<size_t>(j.more)];
    m.insert(m.end(), extra.begin(), extra.end());
  }
  return m;
}

int64_t Trace::gpus(const TraceJob& j) const {
  int64_t n = int64_t{j.pods} * j.gpus;
  if (j.more >= 0)
    for (const auto& m : extra_members[static_cast<size_t>(j.more)]) n += int64_t{m.pods} * m.gpus;
  return n;
}

namespace {
int32_t intern(Trace::NameIndex& index, std::vector<std::string>& names, std::string_view name,
               size_t limit = SIZE_MAX) {
  auto it = index.find(name);
  if (it != index.end()) return it->second;
  if (names.size() >= limit) return -1;
  int32_t id = static_cast<int32_t>(names.size());
  names.emplace_back(name);
  index.emplace(std::string(name), id);
  return id;
}
}  // namespace

int32_t Trace::intern_vc(std::string_view name) {
  return intern(vc_index_, vc_names, name);
}
int32_t Trace::intern_leaf_type(std::string_view name) {
  return intern(type_index_, leaf_type_names, name, TraceJob::kMaxLeafTypes);
}
int32_t Trace::intern_pinned(std::string_view name) {
  return intern(pinned_index_, pinned_names, name, TraceJob::kMaxPinned);
}

namespace {
// A name table full (TraceJob's narrow fields): the message at the field.
std::string too_many_names_message(int32_t limit, const char* column) {
  return "more than " + std::to_string(limit) + " distinct " + column + " values in one trace";
}
}  // namespace

void Trace::add(TraceJob j, std::string_view job_id, const std::vector<TraceMember>& ms) {
  if (id_offsets.empty()) id_offsets.push_back(0);
  j.id = static_cast<uint32_t>(id_offsets.size() - 1);
  id_pool.append(job_id);
  id_offsets.push_back(static_cast<uint32_t>(id_pool.size()));
  j.pods = ms.empty() ? 0 : ms[0].pods;
  j.gpus = ms.empty() ? 0 : ms[0].gpus;
  j.more = -1;
  if (ms.size() > 1) {
    j.more = static_cast<int32_t>(extra_members.size());
    extra_members.emplace_back(ms.begin() + 1, ms.end());
  }
  jobs.push_back(j);
}

void Trace::skip(const std::string& reason, const std::string& file, uint32_t line, uint32_t column,
                 const std::string& detail) {
  int64_t& n = skipped[reason];
  if (n < 3)
    examples.push_back(
        {file, line, column, detail.empty() ? reason : reason + ": " + detail, reason});
  ++n;
}

void Trace::finish() {
  // Most traces come in submission order: then the stable sort, and the buffer
  // of half the jobs it allocates, are skipped (same order either way).
  auto by_submit = [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; };
  if (!std::is_sorted(jobs.begin(), jobs.end(), by_submit))
    std::stable_sort(jobs.begin(), jobs.end(), by_submit);
  // The capacity the vectors grew past the trace is not shrunk: it was never
  // written, so it takes no memory (only address space), and shrinking would
  // copy each vector while the old one is still resident (for a million jobs
  // 56 MB more at the peak).
  if (jobs.empty()) return;
  double first = jobs.front().submit;
  origin += first;
  for (auto& j : jobs) j.submit -= first;
}

void Trace::release_ids() {
  // Swapped out: a move from an empty string would keep the buffer.
  std::string().swap(id_pool);
  std::vector<uint32_t>().swap(id_offsets);
}

bool parse_members(std::string_view s, std::vector<TraceMember>& out) {
  out.clear();
  s = util::trim(s);
  if (s.empty()) return false;
  // Over the '+'-separated parts in place (no vector of parts per call: every
  // job of a native trace has a members field).
  for (size_t from = 0;;) {
    size_t plus = s.find('+', from);
    std::string_view part = util::trim(
        s.substr(from, plus == std::string_view::npos ? std::string_view::npos : plus - from));
    auto x = part.find_first_of("xX");
    if (x == std::string_view::npos) return false;
    auto pods = util::parse_int(util::trim(part.substr(0, x)));
    auto gpus = util::parse_int(util::trim(part.substr(x + 1)));
    if (!pods || !gpus || *pods <= 0 || *gpus <= 0 || *pods > 1'000'000 || *gpus > 1'000'000)
      return false;
    out.push_back({static_cast<int32_t>(*pods), static_cast<int32_t>(*gpus)});
    if (plus == std::string_view::npos) break;
    from = plus + 1;
  }
  return !out.empty() && out.size() <= 64;
}

std::string format_members(const std::vector<TraceMember>& m) {
  std::string s;
  for (const auto& x : m) {
    if (!s.empty()) s += '+';
    s += std::to_string(x.pods) + "x" + std::to_string(x.gpus);
  }
  return s;
}

namespace {

// Spreads `gpus` over `nodes` pods as evenly as possible: "10 GPUs on 3 nodes" -> 1x4 + 2x3.
std::vector<TraceMember> spread(int64_t gpus, int64_t nodes) {
  if (nodes <= 0) nodes = 1;
  if (nodes > gpus) nodes = gpus;
  int64_t base = gpus / nodes, extra = gpus % nodes;
  std::vector<TraceMember> m;
  if (extra > 0) m.push_back({static_cast<int32_t>(extra), static_cast<int32_t>(base + 1)});
  if (nodes - extra > 0)
    m.push_back({static_cast<int32_t>(nodes - extra), static_cast<int32_t>(base)});
  return m;
}

bool is_missing(std::string_view s) {
  s = util::trim(s);
  return s.empty() || s == "None" || s == "null" || s == "NULL" || s == "nan" || s == "NaN" ||
         s == "NA";
}

void set_error(TraceError& e, const std::string& file, Position at, std::string message,
               std::string hint = {}) {
  e.file = file;
  e.line = at.line;
  e.column = at.column;
  e.message = std::move(message);
  e.hint = std::move(hint);
}

// Bounds that no real trace comes near: they catch seconds read as dates,
// sentinel years and overflowing numbers before they become a 47-year
// simulation or an infinite run.
constexpr double kEarliestDate = 0;                  // 1970-01-01
constexpr double kLatestDate = 4102444800;           // 2100-01-01
constexpr double kMaxSeconds = 10 * 365.25 * 86400;  // ten years
constexpr double kMaxGpus = 1'000'000;

std::string human_span(double seconds) {
  char buf[64];
  if (seconds >= 365.25 * 86400)
    std::snprintf(buf, sizeof buf, "%.1f years", seconds / (365.25 * 86400));
  else
    std::snprintf(buf, sizeof buf, "%.1f days", seconds / 86400);
  return buf;
}

// "" when `t` (a date, or seconds) is a time a trace can hold, else why not.
std::string time_out_of_range(std::string_view text, double t) {
  if (parse_timestamp(text)) {
    if (t < kEarliestDate) return "is before 1970";
    if (t >= kLatestDate) return "is after 2099";
    return {};
  }
  if (std::fabs(t) >= kLatestDate) return "is out of range (as seconds, it is past the year 2099)";
  return {};
}

// "" when `d` seconds is a run time a trace can hold.
std::string duration_out_of_range(double d) {
  if (d > kMaxSeconds) return "is more than ten years (" + human_span(d) + ")";
  return {};
}

// ---------------------------------------------------------------------------
// Philly cluster_job_log
// ---------------------------------------------------------------------------

// The trace's bytes for the JSON reader.
class SourceText final : public util::JsonPull::Source {
 public:
  explicit SourceText(ByteSource& src) : src_(src) {}
  util::Result<size_t> read(char* buf, size_t cap) override {
    size_t n = src_.read(buf, cap);
    if (n == 0 && !src_.error().empty()) return util::Error{src_.error(), {}};
    return n;
  }

 private:
  ByteSource& src_;
};

bool philly(ByteSource& src, const TraceOptions& opt, Trace& out, TraceError& e) {
  using Kind = util::JsonPull::Kind;
  out.format = "philly";
  out.has_dates = true;
  SourceText text_source(src);
  util::JsonPull r(text_source, 256);
  auto pos = [&]() {
    auto [line, column] = r.value_position();
    return Position{line, column};
  };
  auto json_error = [&]() {
    auto [line, column] = r.line_column(r.error_offset());
    set_error(e, src.name(), Position{line, column}, r.error(),
              "a Philly cluster_job_log is a JSON array of jobs (msr-fiddle/philly-traces)");
    return false;
  };
  if (r.peek() != Kind::Array) {
    if (!r.ok()) return json_error();
    set_error(e, src.name(), pos(), "expected a JSON array of jobs",
              "a Philly cluster_job_log is a JSON array of objects with jobid, vc, submitted_time "
              "and attempts");
    return false;
  }
  r.begin_array();
  std::vector<TraceMember> members;
  std::string jobid, vc, scratch, key_scratch;
  std::vector<int32_t> detail, last_detail;  // GPUs per machine of the last attempt on GPUs
  std::string_view key;
  while (r.next_element()) {
    Position at = pos();
    if (r.peek() != Kind::Object) {
      if (!r.ok()) return json_error();
      set_error(e, src.name(), at, "expected a job object in the array");
      return false;
    }
    out.records++;
    r.begin_object();
    jobid.clear();
    vc.clear();
    last_detail.clear();
    std::optional<double> submit;
    bool submit_seen = false, running = false, any_attempt = false;
    std::optional<Position> backwards;  // an attempt that ends before it starts
    double duration = 0;
    auto read_time = [&](const char* what, std::optional<double>& t) -> bool {
      Position vp = pos();
      const bool number = r.peek() == Kind::Number;
      bool was_null = false;
      std::string_view text;
      if (!r.read_scalar_text(text, scratch, was_null)) return false;
      if (was_null || is_missing(text)) {
        t.reset();
        return true;
      }
      if (number) {
        // Seconds would be read as days after 1970: a trace spanning decades.
        set_error(e, src.name(), vp,
                  std::string(what) + " is the number " + std::string(text) + ", not a date",
                  "Philly times are strings such as \"2017-10-03 06:47:47\"");
        return false;
      }
      t = parse_timestamp(text);
      if (!t) {
        set_error(e, src.name(), vp,
                  std::string(what) + " \"" + std::string(text) + "\" is not a time",
                  "Philly times look like \"2017-10-03 06:47:47\"");
        return false;
      }
      if (std::string why = time_out_of_range(text, *t); !why.empty()) {
        set_error(e, src.name(), vp, std::string(what) + " \"" + std::string(text) + "\" " + why,
                  "Philly times are dates of the trace, such as \"2017-10-03 06:47:47\"");
        return false;
      }
      return true;
    };
    // A key given twice in one object: JSON leaves its meaning open (RFC 8259
    // 4), so the trace is refused rather than one of the two values taken.
    unsigned job_keys = 0;
    auto repeated = [&](unsigned& seen, unsigned bit, std::string_view name) {
      if (!(seen & bit)) {
        seen |= bit;
        return false;
      }
      set_error(e, src.name(), pos(), "\"" + std::string(name) + "\" is given twice in one object",
                "each key of a Philly job or attempt appears once");
      return true;
    };
    while (r.next_key(key, key_scratch)) {
      if ((key == "jobid" && repeated(job_keys, 1, key)) ||
          (key == "vc" && repeated(job_keys, 2, key)) ||
          (key == "submitted_time" && repeated(job_keys, 4, key)) ||
          (key == "attempts" && repeated(job_keys, 8, key)))
        return false;
      if (key == "jobid" || key == "vc") {
        std::string& dest = key == "jobid" ? jobid : vc;
        bool was_null = false;
        std::string_view text;
        if (!r.read_scalar_text(text, scratch, was_null)) return json_error();
        dest.assign(text.data(), text.size());
      } else if (key == "submitted_time") {
        submit_seen = true;
        if (!read_time("submitted_time", submit)) return r.ok() ? false : json_error();
      } else if (key == "attempts") {
        if (r.peek() == Kind::Null) {
          r.read_null();
          continue;
        }
        if (r.peek() != Kind::Array) {
          if (!r.ok()) return json_error();
          set_error(e, src.name(), pos(), "attempts must be a list");
          return false;
        }
        r.begin_array();
        while (r.next_element()) {
          const Position attempt_at = pos();
          if (r.peek() != Kind::Object) {
            if (!r.ok()) return json_error();
            set_error(e, src.name(), attempt_at,
                      "an attempt must be an object with start_time, end_time, detail");
            return false;
          }
          r.begin_object();
          std::optional<double> start, end;
          detail.clear();
          unsigned attempt_keys = 0;
          while (r.next_key(key, key_scratch)) {
            if ((key == "start_time" && repeated(attempt_keys, 1, key)) ||
                (key == "end_time" && repeated(attempt_keys, 2, key)) ||
                (key == "detail" && repeated(attempt_keys, 4, key)))
              return false;
            if (key == "start_time") {
              if (!read_time("start_time", start)) return r.ok() ? false : json_error();
            } else if (key == "end_time") {
              if (!read_time("end_time", end)) return r.ok() ? false : json_error();
            } else if (key == "detail") {
              if (r.peek() == Kind::Null) {
                r.read_null();
                continue;
              }
              if (!r.begin_array()) return json_error();
              while (r.next_element()) {
                if (r.peek() != Kind::Object) {
                  if (!r.ok()) return json_error();
                  set_error(e, src.name(), pos(),
                            "a detail entry must be an object with ip and gpus");
                  return false;
                }
                r.begin_object();
                int32_t n = 0;
                while (r.next_key(key, key_scratch)) {
                  if (key == "gpus") {
                    if (r.peek() != Kind::Array) {
                      if (!r.ok()) return json_error();
                      set_error(e, src.name(), pos(),
                                "gpus must be a list such as [\"gpu0\", \"gpu1\"]");
                      return false;
                    }
                    r.begin_array();
                    while (r.next_element()) {
                      r.skip();
                      ++n;
                    }
                  } else {
                    r.skip();
                  }
                  if (!r.ok()) return json_error();
                }
                if (!r.ok()) return json_error();
                if (n > 0) detail.push_back(n);
              }
              if (!r.ok()) return json_error();
            } else {
              r.skip();
            }
            if (!r.ok()) return json_error();
          }
          if (!r.ok()) return json_error();
          any_attempt = true;
          if (!detail.empty()) last_detail.swap(detail);
          if (start && end) {
            if (*end < *start && !backwards) backwards = attempt_at;
            duration += std::max(0.0, *end - *start);
          } else if (start && !end) {
            running = true;
          }
        }
        if (!r.ok()) return json_error();
      } else {
        r.skip();
      }
      if (!r.ok()) return json_error();
    }
    if (!r.ok()) return json_error();
    if (jobid.empty()) {
      out.skip("no jobid", src.name(), at.line, at.column);
      continue;
    }
    if (vc.empty()) {
      out.skip("no vc", src.name(), at.line, at.column, jobid);
      continue;
    }
    if (!submit) {
      out.skip(submit_seen ? "no submitted_time" : "no submitted_time", src.name(), at.line,
               at.column, jobid);
      continue;
    }
    if (!any_attempt || last_detail.empty()) {
      out.skip("never ran on GPUs (no attempt with GPUs)", src.name(), at.line, at.column, jobid);
      continue;
    }
    if (running) {
      out.skip("still running at the end of the trace (no end_time)", src.name(), at.line,
               at.column, jobid);
      continue;
    }
    if (backwards) {
      // Its run time is unknown: counting the attempt as 0 s would shorten the job.
      out.skip("an attempt ends before it starts (end_time < start_time)", src.name(),
               backwards->line, backwards->column, jobid);
      continue;
    }
    // One pod per machine; machines with the same GPU count form one member.
    std::sort(last_detail.begin(), last_detail.end());
    members.clear();
    for (int32_t n : last_detail) {
      if (!members.empty() && members.back().gpus == n)
        members.back().pods++;
      else
        members.push_back({1, n});
    }
    TraceJob j;
    j.submit = *submit;
    j.duration = duration;
    j.vc = out.intern_vc(vc);
    j.priority = opt.default_priority;
    j.line = at.line;
    out.add(j, jobid, members);
  }
  if (!r.ok() || !r.expect_end()) return json_error();
  return true;
}

// ---------------------------------------------------------------------------
// CSV helpers
// ---------------------------------------------------------------------------

struct Columns {
  std::map<std::string, size_t> index;
  int find(const std::string& name) const {
    auto it = index.find(name);
    return it == index.end() ? -1 : static_cast<int>(it->second);
  }
};

bool number_field(const std::vector<std::string>& f, int col, const CsvReader& csv,
                  const std::string& file, const char* what, TraceError& e, double& v) {
  auto x = util::parse_double(util::trim(f[static_cast<size_t>(col)]));
  if (!x || !std::isfinite(*x)) {
    set_error(e, file, {csv.line(), csv.column(static_cast<size_t>(col))},
              std::string(what) + " \"" + f[static_cast<size_t>(col)] + "\" is not a number");
    return false;
  }
  v = *x;
  return true;
}

// ---------------------------------------------------------------------------
// Helios cluster_log.csv
// ---------------------------------------------------------------------------

// The columns of a Helios cluster_log.csv, from its header.
struct HeliosColumns {
  size_t count = 0;
  int id = -1, vc = -1, gpu = -1, node = -1, submit = -1, start = -1, end = -1, dur = -1;
};

bool helios_header(CsvReader& csv, ByteSource& src, HeliosColumns& hc, TraceError& e) {
  std::vector<std::string> f;
  if (!csv.next(f)) {
    if (!csv.error().empty()) {
      set_error(e, src.name(), csv.error_position(), csv.error());
      return false;
    }
    set_error(e, src.name(), {1, 1}, "the file is empty",
              "expected Helios' cluster_log.csv with a header line");
    return false;
  }
  Columns cols;
  for (size_t i = 0; i < f.size(); ++i) {
    std::string name(util::trim(f[i]));
    if (!name.empty() && cols.index.count(name)) {
      set_error(e, src.name(), {csv.line(), csv.column(i)},
                "column \"" + util::printable(name) + "\" appears twice",
                "Helios' cluster_log.csv names each column once");
      return false;
    }
    cols.index[name] = i;
  }
  const size_t header_fields = f.size();
  const int c_id = cols.find("job_id"), c_vc = cols.find("vc"), c_gpu = cols.find("gpu_num"),
            c_node = cols.find("node_num"), c_submit = cols.find("submit_time"),
            c_start = cols.find("start_time"), c_end = cols.find("end_time"),
            c_dur = cols.find("duration");
  for (auto [c, name] :
       {std::pair{c_id, "job_id"}, {c_vc, "vc"}, {c_gpu, "gpu_num"}, {c_submit, "submit_time"}})
    if (c < 0) {
      set_error(e, src.name(), {csv.line(), 1},
                std::string("the header has no ") + name + " column",
                "Helios' cluster_log.csv header: "
                "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,"
                "start_time,end_time,duration,queue");
      return false;
    }
  if (c_dur < 0 && (c_start < 0 || c_end < 0)) {
    set_error(e, src.name(), {csv.line(), 1},
              "the header has neither duration nor start_time and end_time",
              "the run time comes from duration, or from end_time - start_time");
    return false;
  }
  hc.count = header_fields;
  hc.id = c_id;
  hc.vc = c_vc;
  hc.gpu = c_gpu;
  hc.node = c_node;
  hc.submit = c_submit;
  hc.start = c_start;
  hc.end = c_end;
  hc.dur = c_dur;
  return true;
}

bool helios_records(CsvReader& csv, const std::string& file, const HeliosColumns& hc,
                    const TraceOptions& opt, Trace& out, TraceError& e) {
  const size_t header_fields = hc.count;
  const int c_id = hc.id, c_vc = hc.vc, c_gpu = hc.gpu, c_node = hc.node, c_submit = hc.submit,
            c_start = hc.start, c_end = hc.end, c_dur = hc.dur;
  std::vector<std::string> f;
  while (csv.next(f)) {
    out.records++;
    const uint32_t line = csv.line();
    if (f.size() < header_fields) {
      set_error(e, file, {line, 1},
                "this record has " + std::to_string(f.size()) + " fields, the header has " +
                    std::to_string(header_fields));
      return false;
    }
    const std::string id(util::trim(f[static_cast<size_t>(c_id)]));
    double gpus = 0;
    if (is_missing(f[static_cast<size_t>(c_gpu)])) {
      out.skip("no gpu_num", file, line, csv.column(static_cast<size_t>(c_gpu)), id);
      continue;
    }
    if (!number_field(f, c_gpu, csv, file, "gpu_num", e, gpus)) return false;
    if (gpus <= 0) {
      out.skip("CPU-only job (gpu_num 0)", file, line, csv.column(static_cast<size_t>(c_gpu)), id);
      continue;
    }
    if (gpus > kMaxGpus) {
      set_error(e, file, {line, csv.column(static_cast<size_t>(c_gpu))},
                "gpu_num " + std::string(util::trim(f[static_cast<size_t>(c_gpu)])) +
                    " is out of range (at most 1000000 GPUs)");
      return false;
    }
    if (gpus != std::floor(gpus)) {
      set_error(e, file, {line, csv.column(static_cast<size_t>(c_gpu))},
                "gpu_num " + std::string(util::trim(f[static_cast<size_t>(c_gpu)])) +
                    " is not a whole number of GPUs");
      return false;
    }
    double nodes = 0;
    if (c_node >= 0 && !is_missing(f[static_cast<size_t>(c_node)]) &&
        !number_field(f, c_node, csv, file, "node_num", e, nodes))
      return false;
    if (nodes > kMaxGpus) {
      set_error(e, file, {line, csv.column(static_cast<size_t>(c_node))},
                "node_num " + std::string(util::trim(f[static_cast<size_t>(c_node)])) +
                    " is out of range (at most 1000000)");
      return false;
    }
    if (nodes <= 0) nodes = std::ceil(gpus / 8);
    auto submit = parse_time_value(f[static_cast<size_t>(c_submit)]);
    if (!submit) {
      if (is_missing(f[static_cast<size_t>(c_submit)])) {
        out.skip("no submit_time", file, line, csv.column(static_cast<size_t>(c_submit)), id);
        continue;
      }
      set_error(e, file, {line, csv.column(static_cast<size_t>(c_submit))},
                "submit_time \"" + f[static_cast<size_t>(c_submit)] + "\" is not a time",
                "expected \"YYYY-MM-DD HH:MM:SS\" or seconds");
      return false;
    }
    if (std::string why = time_out_of_range(f[static_cast<size_t>(c_submit)], *submit);
        !why.empty()) {
      set_error(e, file, {line, csv.column(static_cast<size_t>(c_submit))},
                "submit_time \"" + std::string(util::trim(f[static_cast<size_t>(c_submit)])) +
                    "\" " + why,
                "expected a date of the trace, \"YYYY-MM-DD HH:MM:SS\"");
      return false;
    }
    std::optional<double> dur;
    if (c_dur >= 0 && !is_missing(f[static_cast<size_t>(c_dur)])) {
      double d;
      if (!number_field(f, c_dur, csv, file, "duration", e, d)) return false;
      if (std::string why = duration_out_of_range(d); !why.empty()) {
        set_error(
            e, file, {line, csv.column(static_cast<size_t>(c_dur))},
            "duration " + std::string(util::trim(f[static_cast<size_t>(c_dur)])) + " s " + why,
            "Helios durations are seconds");
        return false;
      }
      dur = d;
    } else if (c_start >= 0 && c_end >= 0) {
      auto s = parse_time_value(f[static_cast<size_t>(c_start)]);
      auto t = parse_time_value(f[static_cast<size_t>(c_end)]);
      for (int c : {c_start, c_end}) {
        const std::string& text = f[static_cast<size_t>(c)];
        auto v = c == c_start ? s : t;
        if (!v) continue;
        if (std::string why = time_out_of_range(text, *v); !why.empty()) {
          set_error(e, file, {line, csv.column(static_cast<size_t>(c))},
                    std::string(c == c_start ? "start_time" : "end_time") + " \"" +
                        std::string(util::trim(text)) + "\" " + why);
          return false;
        }
      }
      if (s && t) dur = *t - *s;
      if (dur && *dur < 0) {
        out.skip("ends before it starts (end_time < start_time)", file, line,
                 csv.column(static_cast<size_t>(c_end)), id);
        continue;
      }
      if (dur && !duration_out_of_range(*dur).empty()) {
        set_error(e, file, {line, csv.column(static_cast<size_t>(c_end))},
                  "end_time - start_time " + duration_out_of_range(*dur));
        return false;
      }
    }
    if (!dur) {
      out.skip("no run time (duration or start and end)", file, line, 1, id);
      continue;
    }
    if (*dur < 0) {
      out.skip("negative run time", file, line, 1, id);
      continue;
    }
    TraceJob j;
    j.submit = *submit;
    j.duration = *dur;
    j.vc = out.intern_vc(util::trim(f[static_cast<size_t>(c_vc)]));
    j.priority = opt.default_priority;
    j.line = line;
    out.add(j, id, spread(static_cast<int64_t>(gpus), static_cast<int64_t>(nodes)));
  }
  if (!csv.error().empty()) {
    set_error(e, file, csv.error_position(), csv.error());
    return false;
  }
  return true;
}

bool helios(ByteSource& src, const TraceOptions& opt, Trace& out, TraceError& e) {
  out.format = "helios";
  CsvReader csv(src);
  HeliosColumns hc;
  if (!helios_header(csv, src, hc, e) || !helios_records(csv, src.name(), hc, opt, out, e))
    return false;
  out.has_dates = !out.jobs.empty();
  return true;
}

// ---------------------------------------------------------------------------
// Native CSV
// ---------------------------------------------------------------------------

// A whole number of seconds written as plain digits ("0", "1084"), below
// `limit`: what parse_time_value and parse_duration read from such text (it is
// no date, has no unit, and a double holds it exactly), without their general
// parsing. nullopt for anything else, which then takes the general way.
std::optional<double> whole_seconds(std::string_view s, double limit) {
  if (s.empty() || s.size() > 15) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  double d = static_cast<double>(v);
  if (d >= limit) return std::nullopt;
  return d;
}

const std::vector<std::string>& native_columns() {
  static const std::vector<std::string> c = {
      "job_id",  "submit_time",    "duration",       "vc",
      "members", "gpus",           "pods",           "priority",
      "user",    "leaf_cell_type", "pinned_cell_id", "lazy_preemption"};
  return c;
}

// The columns of a native trace, from its header.
struct NativeColumns {
  size_t count = 0;
  int id = -1, submit = -1, dur = -1, vc = -1, members = -1, gpus = -1, pods = -1, prio = -1,
      type = -1, pin = -1, lazy = -1;
};

bool native_header(CsvReader& csv, ByteSource& src, NativeColumns& nc, TraceError& e) {
  std::vector<std::string> f;
  if (!csv.next(f)) {
    if (!csv.error().empty()) {
      set_error(e, src.name(), csv.error_position(), csv.error());
      return false;
    }
    set_error(e, src.name(), {1, 1}, "the file is empty",
              "the first line names the columns, e.g. job_id,submit_time,duration,vc,members");
    return false;
  }
  Columns cols;
  for (size_t i = 0; i < f.size(); ++i) {
    std::string name(util::trim(f[i]));
    if (std::find(native_columns().begin(), native_columns().end(), name) ==
        native_columns().end()) {
      std::string guess = util::did_you_mean(name, native_columns());
      set_error(e, src.name(), {csv.line(), csv.column(i)}, "unknown column \"" + name + "\"",
                guess.empty() ? "known columns: " + util::join(native_columns(), ", ")
                              : "did you mean \"" + guess + "\"?");
      return false;
    }
    if (cols.index.count(name)) {
      set_error(e, src.name(), {csv.line(), csv.column(i)},
                "column \"" + name + "\" appears twice");
      return false;
    }
    cols.index[name] = i;
  }
  for (const char* req : {"job_id", "submit_time", "duration", "vc"})
    if (cols.find(req) < 0) {
      set_error(e, src.name(), {csv.line(), 1}, std::string("the header has no ") + req + " column",
                "required columns: job_id, submit_time, duration, vc, and members (or gpus)");
      return false;
    }
  if (cols.find("members") < 0 && cols.find("gpus") < 0) {
    set_error(e, src.name(), {csv.line(), 1}, "the header has neither members nor gpus",
              "members is PODSxGPUS (e.g. 2x8, or 1x8+1x4); gpus (with pods) is the simple form");
    return false;
  }
  nc.count = cols.index.size();
  nc.id = cols.find("job_id");
  nc.submit = cols.find("submit_time");
  nc.dur = cols.find("duration");
  nc.vc = cols.find("vc");
  nc.members = cols.find("members");
  nc.gpus = cols.find("gpus");
  nc.pods = cols.find("pods");
  nc.prio = cols.find("priority");
  nc.type = cols.find("leaf_cell_type");
  nc.pin = cols.find("pinned_cell_id");
  nc.lazy = cols.find("lazy_preemption");
  return true;
}

// The records after the header; `dates` tells whether they give dates (all
// of them do or none: mixing is an error).
bool native_records(CsvReader& csv, const std::string& file, const NativeColumns& nc,
                    const TraceOptions& opt, Trace& out, TraceError& e, bool& dates) {
  const int c_id = nc.id, c_submit = nc.submit, c_dur = nc.dur, c_vc = nc.vc,
            c_members = nc.members, c_gpus = nc.gpus, c_pods = nc.pods, c_prio = nc.prio,
            c_type = nc.type, c_pin = nc.pin, c_lazy = nc.lazy;
  dates = false;
  std::vector<TraceMember> members;
  // The records as views (no copy of a plain line), each field trimmed once.
  std::vector<std::string_view> raw, fv;
  while (csv.next(raw)) {
    out.records++;
    const uint32_t line = csv.line();
    if (raw.size() != nc.count) {
      set_error(e, file, {line, 1},
                "this record has " + std::to_string(raw.size()) + " fields, the header has " +
                    std::to_string(nc.count),
                "quote fields that contain commas");
      return false;
    }
    fv.resize(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) fv[i] = util::trim(raw[i]);
    auto field = [&](int c) { return fv[static_cast<size_t>(c)]; };
    auto at = [&](int c) { return Position{line, csv.column(static_cast<size_t>(c))}; };
    std::string_view id = field(c_id);
    if (id.empty()) {
      set_error(e, file, at(c_id), "empty job_id");
      return false;
    }
    // Times and durations are mostly whole seconds: read those directly (the
    // same value as parse_time_value and parse_duration give, as they are not
    // dates and not out of range); anything else takes the general way.
    std::optional<double> submit = whole_seconds(field(c_submit), kLatestDate);
    const bool fast_submit = submit.has_value();
    if (!fast_submit) submit = parse_time_value(field(c_submit));
    if (!submit) {
      set_error(e, file, at(c_submit),
                "submit_time \"" + std::string(field(c_submit)) + "\" is not a time",
                "seconds (e.g. 3600) or \"YYYY-MM-DD HH:MM:SS\"");
      return false;
    }
    if (std::string why = fast_submit ? std::string() : time_out_of_range(field(c_submit), *submit);
        !why.empty()) {
      set_error(e, file, at(c_submit),
                "submit_time \"" + std::string(field(c_submit)) + "\" " + why,
                "seconds since the trace starts (e.g. 3600) or a date \"YYYY-MM-DD HH:MM:SS\"");
      return false;
    }
    const bool is_date = !fast_submit && parse_timestamp(field(c_submit)).has_value();
    if (out.records > 1 && is_date != dates) {
      set_error(e, file, at(c_submit), "submit_time mixes dates and seconds in one trace",
                "write every submit_time as seconds since a common start, or every one as a date");
      return false;
    }
    dates = is_date;
    std::optional<double> dur = whole_seconds(field(c_dur), kMaxSeconds);
    const bool fast_dur = dur.has_value();
    if (!fast_dur) dur = parse_duration(field(c_dur));
    if (!dur) {
      set_error(e, file, at(c_dur),
                "duration \"" + std::string(field(c_dur)) + "\" is not a duration",
                "seconds (e.g. 5400) or with a unit: 90m, 1.5h, 2d");
      return false;
    }
    if (std::string why = fast_dur ? std::string() : duration_out_of_range(*dur); !why.empty()) {
      set_error(e, file, at(c_dur), "duration \"" + std::string(field(c_dur)) + "\" " + why,
                "seconds (e.g. 5400) or with a unit: 90m, 1.5h, 2d");
      return false;
    }
    std::string_view vc = field(c_vc);
    if (vc.empty()) {
      set_error(e, file, at(c_vc), "empty vc");
      return false;
    }
    if (c_members >= 0 && !field(c_members).empty()) {
      if (!parse_members(field(c_members), members)) {
        set_error(e, file, at(c_members),
                  "members \"" + std::string(field(c_members)) + "\" is malformed",
                  "PODSxGPUS joined by '+', e.g. 2x8 or 1x8+2x4");
        return false;
      }
    } else {
      if (c_gpus < 0) {
        set_error(e, file, at(c_members), "empty members");
        return false;
      }
      // A count: a whole number within bounds; a number too big to be one is
      // "out of range", not "not a whole number".
      auto count = [&](int c, const char* what, int64_t min, int64_t& v) {
        std::string text(field(c));
        auto i = util::parse_int(text);
        auto d = util::parse_double(text);
        if (i && *i >= min && *i <= 1'000'000) {
          v = *i;
          return true;
        }
        if ((i || (d && std::isfinite(*d) && *d == std::floor(*d))) &&
            (i ? *i > 1'000'000 : *d > 1e6)) {
          set_error(e, file, at(c),
                    std::string(what) + " " + text + " is out of range (at most 1000000)");
        } else if (i || (d && *d < min)) {
          set_error(e, file, at(c),
                    std::string(what) + " " + text + " must be at least " + std::to_string(min));
        } else {
          set_error(e, file, at(c), std::string(what) + " \"" + text + "\" is not a whole number");
        }
        return false;
      };
      int64_t pods = 1, gpus = 0;
      if (c_pods >= 0 && !field(c_pods).empty() && !count(c_pods, "pods", 1, pods)) return false;
      if (!count(c_gpus, "gpus", 0, gpus)) return false;
      std::optional<int64_t> g = gpus;
      if (*g == 0) {
        out.skip("CPU-only job (0 GPUs)", file, line, csv.column(static_cast<size_t>(c_gpus)),
                 std::string(id));
        continue;
      }
      members = spread(*g, pods);
    }
    TraceJob j;
    j.submit = *submit;
    j.duration = *dur;
    j.vc = out.intern_vc(vc);
    j.priority = opt.default_priority;
    if (c_prio >= 0 && !field(c_prio).empty()) {
      auto p = util::parse_int(field(c_prio));
      if (!p || *p < -1 || *p > 1000) {
        set_error(e, file, at(c_prio),
                  "priority \"" + std::string(field(c_prio)) + "\" is out of range",
                  "-1 (opportunistic) or 0..1000 (guaranteed)");
        return false;
      }
      j.priority = static_cast<int16_t>(*p);
      j.flags |= TraceJob::kPrioritySet;
    }
    if (c_type >= 0 && !field(c_type).empty()) {
      int32_t t = out.intern_leaf_type(field(c_type));
      if (t < 0) {
        set_error(e, file, at(c_type),
                  too_many_names_message(TraceJob::kMaxLeafTypes, "leaf_cell_type"));
        return false;
      }
      j.leaf_type = static_cast<int16_t>(t);
    }
    if (c_pin >= 0 && !field(c_pin).empty()) {
      int32_t p = out.intern_pinned(field(c_pin));
      if (p < 0) {
        set_error(e, file, at(c_pin),
                  too_many_names_message(TraceJob::kMaxPinned, "pinned_cell_id"));
        return false;
      }
      j.pinned = p;
    }
    if (c_lazy >= 0 && !field(c_lazy).empty()) {
      const std::string_view v = field(c_lazy);
      if (util::equals_ignoring_case(v, "true") || v == "1" ||
          util::equals_ignoring_case(v, "yes")) {
        j.flags |= TraceJob::kLazy;
      } else if (!(util::equals_ignoring_case(v, "false") || v == "0" ||
                   util::equals_ignoring_case(v, "no"))) {
        set_error(e, file, at(c_lazy), "lazy_preemption must be true or false");
        return false;
      }
    }
    j.line = line;
    out.add(j, id, members);
  }
  if (!csv.error().empty()) {
    set_error(e, file, csv.error_position(), csv.error());
    return false;
  }
  return true;
}

bool native(ByteSource& src, const TraceOptions& opt, Trace& out, TraceError& e) {
  out.format = "csv";
  CsvReader csv(src);
  NativeColumns nc;
  bool dates = false;
  if (!native_header(csv, src, nc, e) || !native_records(csv, src.name(), nc, opt, out, e, dates))
    return false;
  out.has_dates = dates;
  return true;
}

// ---------------------------------------------------------------------------
// Reading a CSV trace on several threads
// ---------------------------------------------------------------------------
//
// A large native or Helios trace is cut into parts at line starts; the first
// part's reader reads the header, then every part's records are read on a
// thread of its own, each into a Trace of its own, with lines counted from
// its part's start. The parts are then joined in file order: lines moved by
// the newlines before the part, names (VCs, leaf cell types, pinned cells)
// interned into the first part's tables in the order the part met them, job
// ids, members and skipped examples appended. That is what one reader gives
// over the whole file, with one exception it cannot see from inside a part: a
// part that starts inside a quoted field. That part's predecessor then ends
// inside the quotes, which is an error there, and any error sends the whole
// file to the one-thread reader, so the message is that reader's, exactly.

// The text of a trace, from a regular file or from memory.
struct TraceText {
  std::string name;  // the file in messages
  bool in_memory = false;
  std::string_view memory;
  uint64_t size = 0;

  static TraceText in_file(const std::string& path, uint64_t bytes) {
    TraceText t;
    t.name = path;
    t.size = bytes;
    return t;
  }
  static TraceText of_memory(std::string_view text, const std::string& name) {
    TraceText t;
    t.name = name;
    t.in_memory = true;
    t.memory = text;
    t.size = text.size();
    return t;
  }

  std::unique_ptr<ByteSource> open(uint64_t begin, uint64_t end) const {
    if (in_memory)
      return std::make_unique<ByteSource>(
          memory.substr(static_cast<size_t>(begin), static_cast<size_t>(end - begin)), name);
    return std::make_unique<ByteSource>(name, begin, end - begin);
  }

  // The offset just past the first LF at or after `from`, or 0 when there is
  // none in the next MiB (then no part starts there).
  uint64_t line_start_after(uint64_t from) const {
    constexpr uint64_t kWindow = 1u << 20;
    const uint64_t limit = std::min(size, from + kWindow);
    if (in_memory) {
      size_t lf =
          memory.substr(0, static_cast<size_t>(limit)).find('\n', static_cast<size_t>(from));
      return lf == std::string_view::npos ? 0 : lf + 1;
    }
    int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    uint64_t found = 0;
    char buf[4096];
    for (uint64_t at = from; at < limit && !found;) {
      ssize_t r = ::pread(fd, buf, static_cast<size_t>(std::min<uint64_t>(sizeof buf, limit - at)),
                          static_cast<off_t>(at));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      if (const void* lf = std::memchr(buf, '\n', static_cast<size_t>(r)))
        found = at + static_cast<uint64_t>(static_cast<const char*>(lf) - buf) + 1;
      at += static_cast<uint64_t>(r);
    }
    ::close(fd);
    return found;
  }
};

// One part's outcome.
struct TracePart {
  Trace trace;
  TraceError error;
  bool ok = false;
  bool dates = false;     // its records give dates (native CSV)
  uint32_t newlines = 0;  // in the part's bytes
};

// Appends `part` (read after what `out` holds, its lines counted from 1) to
// `out`. False when a name table overflows, which the one-thread reader
// reports at the field.
bool append_trace_part(Trace& out, Trace& part, uint32_t line_offset) {
  std::vector<int32_t> vcs, types, pins;
  for (const auto& n : part.vc_names) vcs.push_back(out.intern_vc(n));
  for (const auto& n : part.leaf_type_names) {
    types.push_back(out.intern_leaf_type(n));
    if (types.back() < 0) return false;
  }
  for (const auto& n : part.pinned_names) {
    pins.push_back(out.intern_pinned(n));
    if (pins.back() < 0) return false;
  }
  if (!part.jobs.empty()) {
    if (out.id_offsets.empty()) out.id_offsets.push_back(0);
    const uint32_t id_base = static_cast<uint32_t>(out.id_offsets.size() - 1);
    const size_t pool_base = out.id_pool.size();
    const int32_t more_base = static_cast<int32_t>(out.extra_members.size());
    out.id_pool.append(part.id_pool);
    for (size_t i = 1; i < part.id_offsets.size(); ++i)
      out.id_offsets.push_back(static_cast<uint32_t>(pool_base + part.id_offsets[i]));
    for (auto& m : part.extra_members) out.extra_members.push_back(std::move(m));
    for (TraceJob j : part.jobs) {
      j.id += id_base;
      if (j.vc >= 0) j.vc = vcs[static_cast<size_t>(j.vc)];
      if (j.leaf_type >= 0)
        j.leaf_type = static_cast<int16_t>(types[static_cast<size_t>(j.leaf_type)]);
      if (j.pinned >= 0) j.pinned = pins[static_cast<size_t>(j.pinned)];
      if (j.more >= 0) j.more += more_base;
      j.line += line_offset;
      out.jobs.push_back(j);
    }
  }
  out.records += part.records;
  // The first few examples per reason: the part's k-th of a reason is the
  // whole file's (count before the part + k)-th.
  std::map<std::string, int64_t> seen;
  for (auto& x : part.examples) {
    auto it = seen.try_emplace(x.reason, 0).first;
    auto before = out.skipped.find(x.reason);
    if ((before == out.skipped.end() ? 0 : before->second) + it->second++ < 3) {
      x.line += line_offset;
      out.examples.push_back(std::move(x));
    }
  }
  for (const auto& [reason, n] : part.skipped) out.skipped[reason] += n;
  for (const auto& [reason, n] : part.notes) out.notes[reason] += n;
  return true;
}

// How many parts a text of `size` bytes is read in; 1 = one thread.
size_t trace_read_parts(uint64_t size, const TraceOptions& opt) {
  if (size < opt.parallel_min_bytes) return 1;
  size_t n = opt.read_threads > 0 ? static_cast<size_t>(opt.read_threads)
                                  : std::max(1u, std::thread::hardware_concurrency());
  return std::min<size_t>(n, kMaxTraceReadThreads);
}

// Reads `text` in parts on threads: `header(csv, src, error)` on the first
// part, then `records(csv, src, trace, error, dates)` on each. False when
// the text is to be read on one thread instead (it is too small to split, or
// any part failed); `out` then holds a partial result to discard.
template <class Header, class Records>
bool read_csv_parts(const TraceText& text, const TraceOptions& opt, Header&& header,
                    Records&& records, Trace& out, bool& dates) {
  const size_t wanted = trace_read_parts(text.size, opt);
  if (wanted < 2) return false;
  std::vector<uint64_t> starts{0};
  for (size_t k = 1; k < wanted; ++k) {
    uint64_t s = text.line_start_after(text.size / wanted * k);
    if (s > starts.back() && s < text.size) starts.push_back(s);
  }
  if (starts.size() < 2) return false;
  starts.push_back(text.size);
  const size_t n = starts.size() - 1;
  std::vector<TracePart> parts(n);
  auto first = text.open(starts[0], starts[1]);
  if (!first->error().empty()) return false;
  CsvReader first_csv(*first);
  if (!header(first_csv, *first, parts[0].error)) return false;
  auto read_part = [&](size_t k, ByteSource* src, CsvReader* csv, Trace& into) {
    TracePart& p = parts[k];
    try {
      std::unique_ptr<ByteSource> own_src;
      std::unique_ptr<CsvReader> own_csv;
      if (!src) {
        own_src = text.open(starts[k], starts[k + 1]);
        own_csv = std::make_unique<CsvReader>(*own_src);
        src = own_src.get();
        csv = own_csv.get();
      }
      p.ok = src->error().empty() && records(*csv, *src, into, p.error, p.dates) &&
             src->error().empty();
      p.newlines = src->position().line - 1;
    } catch (const std::exception&) {
      p.ok = false;  // e.g. out of memory: the one-thread reader tries again
    }
  };
  // The parts' large buffers are taken here, before the threads start: memory
  // a thread allocates comes from its own malloc arena, which keeps what is
  // freed (the parts' buffers, once joined) resident to the end of the run.
  // A record takes at least 12 bytes ("a,0,0,v,1x1\n"), so these are upper
  // bounds; the pages beyond what a part fills are never touched.
  for (size_t k = 1; k < n; ++k) {
    const uint64_t bytes = starts[k + 1] - starts[k];
    Trace& t = parts[k].trace;
    t.jobs.reserve(static_cast<size_t>(bytes / 12 + 1));
    t.id_offsets.reserve(static_cast<size_t>(bytes / 12 + 2));
    t.id_pool.reserve(static_cast<size_t>(bytes));
  }
  std::vector<std::thread> threads;
  try {
    for (size_t k = 1; k < n; ++k)
      threads.emplace_back([&, k] { read_part(k, nullptr, nullptr, parts[k].trace); });
  } catch (const std::system_error&) {
    // No thread to spare: the parts without one stay failed.
  }
  read_part(0, first.get(), &first_csv, out);
  for (auto& t : threads) t.join();
  for (const TracePart& p : parts)
    if (!p.ok) return false;
  // Dates and seconds must not mix across parts either (the one-thread reader
  // reports the first record that changes).
  bool any = out.records > 0;
  dates = parts[0].dates;
  for (size_t k = 1; k < n; ++k) {
    if (parts[k].trace.records == 0) continue;
    if (any && parts[k].dates != dates) return false;
    any = true;
    dates = parts[k].dates;
  }
  size_t jobs = out.jobs.size();
  for (size_t k = 1; k < n; ++k) jobs += parts[k].trace.jobs.size();
  out.jobs.reserve(jobs);
  uint32_t line_offset = parts[0].newlines;
  for (size_t k = 1; k < n; ++k) {
    if (!append_trace_part(out, parts[k].trace, line_offset)) return false;
    parts[k].trace = Trace();  // its memory back before the next part grows `out`
    line_offset += parts[k].newlines;
  }
  out.read_parts = static_cast<int>(n);
  // The threads' malloc arenas keep what they freed (small buffers, and any
  // part that outgrew its reservation): given back before the simulation
  // allocates its own state, so that it does not add to the run's peak.
  malloc_trim(0);
  return true;
}

// The native and Helios readers over `text` on several threads, when it is
// large enough; false when it is to be read on one thread (`out` is then
// left empty but for its files).
bool read_csv_trace_in_parts(const TraceText& text, const std::string& format,
                             const TraceOptions& opt, Trace& out) {
  if (trace_read_parts(text.size, opt) < 2) return false;
  bool ok = false, dates = false;
  if (format == "csv") {
    NativeColumns nc;
    ok = read_csv_parts(
        text, opt,
        [&](CsvReader& csv, ByteSource& src, TraceError& e) {
          return native_header(csv, src, nc, e);
        },
        [&](CsvReader& csv, ByteSource& src, Trace& t, TraceError& e, bool& d) {
          return native_records(csv, src.name(), nc, opt, t, e, d);
        },
        out, dates);
    out.format = "csv";
    out.has_dates = dates;
  } else if (format == "helios") {
    HeliosColumns hc;
    ok = read_csv_parts(
        text, opt,
        [&](CsvReader& csv, ByteSource& src, TraceError& e) {
          return helios_header(csv, src, hc, e);
        },
        [&](CsvReader& csv, ByteSource& src, Trace& t, TraceError& e, bool& d) {
          d = false;
          return helios_records(csv, src.name(), hc, opt, t, e);
        },
        out, dates);
    out.format = "helios";
    out.has_dates = !out.jobs.empty();
  }
  if (!ok) {
    Trace empty;
    empty.files = std::move(out.files);
    out = std::move(empty);
  }
  return ok;
}

// ---------------------------------------------------------------------------
// Alibaba cluster-trace-gpu-v2020
// ---------------------------------------------------------------------------

struct AliJob {
  std::string name;
  std::string user;
  double submit = 0;
  bool submit_ok = false;
  uint32_t line = 0;
  std::vector<TraceMember> members;
  double duration = -1;
  std::string gpu_type;
  bool fractional = false;
  uint32_t backwards_line = 0;  // a task that ends before it starts
  uint32_t backwards_column = 0;
};

bool alibaba(ByteSource& jobs_src, ByteSource& tasks_src, const TraceOptions& opt, Trace& out,
             TraceError& e) {
  out.format = "alibaba";
  std::vector<AliJob> jobs;
  std::unordered_map<std::string, size_t> by_name;
  std::vector<std::string> f;
  {
    CsvReader csv(jobs_src);
    bool first = true;
    while (csv.next(f)) {
      if (first && !f.empty() && util::trim(f[0]) == "job_name") {
        first = false;
        continue;  // header
      }
      first = false;
      out.records++;
      if (f.size() < 6) {
        set_error(e, jobs_src.name(), {csv.line(), 1},
                  "a pai_job_table record has " + std::to_string(f.size()) + " fields, expected 6",
                  "columns: job_name,inst_id,user,status,start_time,end_time");
        return false;
      }
      AliJob j;
      j.name = std::string(util::trim(f[0]));
      j.user = std::string(util::trim(f[2]));
      j.line = csv.line();
      if (!is_missing(f[4])) {
        auto t = util::parse_double(util::trim(f[4]));
        if (!t || !std::isfinite(*t)) {
          set_error(e, jobs_src.name(), {csv.line(), csv.column(4)},
                    "start_time \"" + f[4] + "\" is not a number",
                    "pai_job_table times are seconds");
          return false;
        }
        if (std::string why = time_out_of_range(f[4], *t); !why.empty()) {
          set_error(e, jobs_src.name(), {csv.line(), csv.column(4)},
                    "start_time " + std::string(util::trim(f[4])) + " " + why,
                    "pai_job_table times are seconds since the trace starts");
          return false;
        }
        j.submit = *t;
        j.submit_ok = true;
      }
      if (by_name.emplace(j.name, jobs.size()).second) jobs.push_back(std::move(j));
    }
    if (!csv.error().empty()) {
      set_error(e, jobs_src.name(), csv.error_position(), csv.error());
      return false;
    }
  }
  {
    CsvReader csv(tasks_src);
    bool first = true;
    while (csv.next(f)) {
      if (first && !f.empty() && util::trim(f[0]) == "job_name") {
        first = false;
        continue;
      }
      first = false;
      if (f.size() < 10) {
        set_error(
            e, tasks_src.name(), {csv.line(), 1},
            "a pai_task_table record has " + std::to_string(f.size()) + " fields, expected 10",
            "columns: "
            "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_"
            "type");
        return false;
      }
      auto it = by_name.find(std::string(util::trim(f[0])));
      if (it == by_name.end()) {
        out.skip("task of a job that is not in pai_job_table", tasks_src.name(), csv.line(), 1,
                 f[0]);
        continue;
      }
      if (is_missing(f[8])) continue;  // CPU task
      auto plan_gpu = util::parse_double(util::trim(f[8]));
      auto inst = util::parse_double(util::trim(f[2]));
      if (!plan_gpu || !std::isfinite(*plan_gpu) || *plan_gpu < 0) {
        set_error(e, tasks_src.name(), {csv.line(), csv.column(8)},
                  "plan_gpu \"" + f[8] + "\" is not a percentage");
        return false;
      }
      if (*plan_gpu == 0) continue;
      if (inst && std::isfinite(*inst) && *inst > 1e6) {
        set_error(
            e, tasks_src.name(), {csv.line(), csv.column(2)},
            "inst_num " + std::string(util::trim(f[2])) + " is out of range (at most 1000000)");
        return false;
      }
      if (!inst || !std::isfinite(*inst) || *inst < 1) {
        set_error(e, tasks_src.name(), {csv.line(), csv.column(2)},
                  "inst_num \"" + f[2] + "\" is not an instance count");
        return false;
      }
      AliJob& j = jobs[it->second];
      double gpus = std::ceil(*plan_gpu / 100.0 - 1e-9);
      if (gpus > 1e6) gpus = 1e6;
      if (*plan_gpu < 100 || std::fmod(*plan_gpu, 100.0) != 0) j.fractional = true;
      j.members.push_back({static_cast<int32_t>(*inst), static_cast<int32_t>(std::max(1.0, gpus))});
      if (j.gpu_type.empty()) j.gpu_type = std::string(util::trim(f[9]));
      auto s = util::parse_double(util::trim(f[4]));
      auto t = util::parse_double(util::trim(f[5]));
      for (size_t c : {size_t{4}, size_t{5}}) {
        auto v = c == 4 ? s : t;
        if (!v || !std::isfinite(*v)) continue;
        if (std::string why = time_out_of_range(f[c], *v); !why.empty()) {
          set_error(e, tasks_src.name(), {csv.line(), csv.column(c)},
                    std::string(c == 4 ? "start_time " : "end_time ") +
                        std::string(util::trim(f[c])) + " " + why,
                    "pai_task_table times are seconds since the trace starts");
          return false;
        }
      }
      if (s && t && std::isfinite(*s) && std::isfinite(*t)) {
        if (*t >= *s) {
          if (!duration_out_of_range(*t - *s).empty()) {
            set_error(e, tasks_src.name(), {csv.line(), csv.column(5)},
                      "end_time - start_time " + duration_out_of_range(*t - *s));
            return false;
          }
          j.duration = std::max(j.duration, *t - *s);
        } else if (!j.backwards_line) {
          j.backwards_line = csv.line();
          j.backwards_column = csv.column(5);
        }
      }
    }
    if (!csv.error().empty()) {
      set_error(e, tasks_src.name(), csv.error_position(), csv.error());
      return false;
    }
  }
  for (AliJob& j : jobs) {
    if (j.members.empty()) {
      out.skip("CPU-only job (no task with plan_gpu)", jobs_src.name(), j.line, 1, j.name);
      continue;
    }
    if (!j.submit_ok) {
      out.skip("no start_time (submission) in pai_job_table", jobs_src.name(), j.line, 1, j.name);
      continue;
    }
    if (j.duration < 0) {
      if (j.backwards_line)
        out.skip("its GPU tasks end before they start (end_time < start_time)", tasks_src.name(),
                 j.backwards_line, j.backwards_column, j.name);
      else
        out.skip("no task start_time and end_time", jobs_src.name(), j.line, 1, j.name);
      continue;
    }
    if (j.fractional) out.note("fractional GPU requests rounded up to whole GPUs");
    // Members with the same GPU count merge, as HiveD does.
    std::sort(j.members.begin(), j.members.end(),
              [](const auto& a, const auto& b) { return a.gpus < b.gpus; });
    std::vector<TraceMember> merged;
    for (const auto& m : j.members) {
      if (!merged.empty() && merged.back().gpus == m.gpus)
        merged.back().pods += m.pods;
      else
        merged.push_back(m);
    }
    TraceJob tj;
    tj.submit = j.submit;
    tj.duration = j.duration;
    tj.vc = out.intern_vc(j.user.empty() ? "default" : j.user);
    tj.priority = opt.default_priority;
    if (!j.gpu_type.empty() && !is_missing(j.gpu_type)) {
      int32_t t = out.intern_leaf_type(j.gpu_type);
      if (t < 0) {
        set_error(e, jobs_src.name(), {j.line, 1},
                  too_many_names_message(TraceJob::kMaxLeafTypes, "gpu_type"));
        return false;
      }
      tj.leaf_type = static_cast<int16_t>(t);
    }
    tj.line = j.line;
    out.add(tj, j.name, merged);
  }
  return true;
}

bool finish(Trace& out, const TraceOptions& opt, TraceError& e) {
  if (out.format == "csv") {
    // A job_id names one job: two records with the same one are an error, not two jobs.
    std::unordered_map<std::string_view, uint32_t> first_line;
    first_line.reserve(out.jobs.size());
    for (const auto& j : out.jobs) {
      auto [it, added] = first_line.emplace(out.id(j), j.line);
      if (added) continue;
      e.file = out.files.empty() ? "" : out.files[0];
      e.line = std::max(j.line, it->second);
      e.column = 1;
      e.message = "job_id \"" + std::string(it->first) + "\" is given twice (lines " +
                  std::to_string(std::min(j.line, it->second)) + " and " +
                  std::to_string(std::max(j.line, it->second)) + ")";
      e.hint = "each record of a trace is one job with an id of its own";
      return false;
    }
  }
  if (!out.jobs.empty()) {
    auto [lo, hi] = std::minmax_element(
        out.jobs.begin(), out.jobs.end(),
        [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; });
    if (hi->submit - lo->submit > kMaxSeconds) {
      e.file = out.files.empty() ? "" : out.files[0];
      e.line = hi->line;
      e.column = 1;
      e.message = "the submissions span " + human_span(hi->submit - lo->submit) + " (job \"" +
                  std::string(out.id(*lo)) + "\" on line " + std::to_string(lo->line) +
                  " to job \"" + std::string(out.id(*hi)) + "\" here)";
      e.hint =
          "submission times mix scales (seconds since the start and seconds since 1970?); a "
          "trace covers at most ten years";
      return false;
    }
  }
  out.finish();
  if (opt.limit > 0 && static_cast<int64_t>(out.jobs.size()) > opt.limit) {
    out.skipped["beyond --limit"] += static_cast<int64_t>(out.jobs.size()) - opt.limit;
    out.jobs.resize(static_cast<size_t>(opt.limit));
  }
  return true;
}

std::string basename(const std::string& p) {
  auto s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}
std::string dirname(const std::string& p) {
  auto s = p.find_last_of('/');
  return s == std::string::npos ? "." : p.substr(0, s);
}

// The alibaba pair from the paths given: two files, a directory, or one of the two files.
bool alibaba_files(const std::vector<std::string>& paths, std::string& jobs, std::string& tasks) {
  auto pick = [&](const std::string& dir) {
    for (const char* ext : {".csv", ""}) {
      std::string j = dir + "/pai_job_table" + ext, t = dir + "/pai_task_table" + ext;
      if (util::is_regular_file(j) && util::is_regular_file(t)) {
        jobs = j;
        tasks = t;
        return true;
      }
    }
    return false;
  };
  if (paths.size() == 1 && util::is_directory(paths[0])) return pick(paths[0]);
  if (paths.size() == 2) {
    bool swap = basename(paths[0]).find("task") != std::string::npos;
    jobs = paths[swap ? 1 : 0];
    tasks = paths[swap ? 0 : 1];
    return true;
  }
  if (paths.size() == 1) return pick(dirname(paths[0]));
  return false;
}

}  // namespace

namespace {

// The format of a single trace file from its first bytes, or why it is unknown.
util::Result<std::string> detect_from_content(std::string_view head, const std::string& name) {
  size_t i = 0;
  while (i < head.size() && std::isspace(static_cast<unsigned char>(head[i]))) ++i;
  if (i < head.size() && head[i] == '[') return std::string("philly");
  // First line that is not a comment.
  std::string_view line;
  while (i < head.size()) {
    size_t e = head.find('\n', i);
    std::string_view l =
        head.substr(i, e == std::string_view::npos ? std::string_view::npos : e - i);
    i = e == std::string_view::npos ? head.size() : e + 1;
    if (!l.empty() && l[0] != '#' && !util::trim(l).empty()) {
      line = l;
      break;
    }
  }
  if (line.find("gpu_num") != std::string_view::npos) return std::string("helios");
  if (line.find("job_id") != std::string_view::npos &&
      line.find("submit_time") != std::string_view::npos)
    return std::string("csv");
  if (line.find("job_name") != std::string_view::npos &&
      line.find("inst_id") != std::string_view::npos)
    return std::string("alibaba");
  return util::Error{
      head.empty() ? name + " is empty" : "cannot tell the format of " + name + " from its content",
      {}};
}

bool is_alibaba_name(const std::string& path) {
  std::string base = basename(path);
  return base.find("pai_job_table") != std::string::npos ||
         base.find("pai_task_table") != std::string::npos;
}

constexpr size_t kDetectBytes = 4096;
const char* kFormatHint = "pass --trace-format philly|helios|alibaba|csv";

}  // namespace

util::Result<std::string> detect_trace_format(const std::vector<std::string>& paths) {
  if (paths.empty()) {
    return util::Error{"no trace given", {}};
  }
  if (paths.size() == 2) return std::string("alibaba");
  if (paths.size() > 2) {
    return util::Error{"give one trace file (two for alibaba: pai_job_table and pai_task_table)",
                       {}};
  }
  const std::string& p = paths[0];
  if (util::is_directory(p)) {
    if (util::is_regular_file(p + "/pai_job_table.csv") ||
        util::is_regular_file(p + "/pai_job_table"))
      return std::string("alibaba");
    if (util::is_regular_file(p + "/cluster_log.csv")) return std::string("helios");
    return util::Error{
        "the directory " + p +
            " holds neither pai_job_table.csv (alibaba) nor cluster_log.csv (helios)",
        {}};
  }
  if (is_alibaba_name(p)) return std::string("alibaba");
  ByteSource src(p);
  if (!src.error().empty()) {
    return util::Error{"cannot read " + p + ": " + src.error(), {}};
  }
  return detect_from_content(src.head(kDetectBytes), p);
}

bool read_trace(const std::vector<std::string>& paths, const TraceOptions& opt, Trace& out,
                TraceError& e) {
  out = Trace();
  out.files = paths;
  std::string format = opt.format;
  auto open = [&](const std::string& path, std::unique_ptr<ByteSource>& src) {
    if (util::is_directory(path)) {
      e.file = path;
      e.message = path + " is a directory";
      e.hint = format == "alibaba" ? "" : "give the trace file itself";
      return false;
    }
    src = std::make_unique<ByteSource>(path, opt.first_byte_timeout_ms);
    if (!src->error().empty()) {
      e.file = path;
      e.message = "cannot read " + path + ": " + src->error();
      e.hint.clear();
      return false;
    }
    return true;
  };
  // One file that is not a directory: open it once and tell its format from the
  // bytes read, so that a FIFO or a process substitution works.
  std::unique_ptr<ByteSource> single;
  if (paths.size() == 1 && !util::is_directory(paths[0]) && format != "alibaba" &&
      (!format.empty() || !is_alibaba_name(paths[0]))) {
    if (!open(paths[0], single)) return false;
    if (format.empty()) {
      auto detected = detect_from_content(single->head(kDetectBytes), paths[0]);
      if (!single->error().empty()) {
        e.file = paths[0];
        e.message = "cannot read " + paths[0] + ": " + single->error();
        return false;
      }
      if (!detected.ok()) {
        e.file = paths[0];
        e.message = detected.error().message;
        e.hint = kFormatHint;
        return false;
      }
      format = *detected;
    }
  }
  if (format.empty()) {
    auto detected = detect_trace_format(paths);
    if (!detected.ok()) {
      const std::string& why = detected.error().message;
      e.file = paths.empty() ? "" : paths[0];
      e.message = why;
      e.hint = why.rfind("cannot read", 0) == 0 ? "" : kFormatHint;
      return false;
    }
    format = *detected;
  }
  bool ok = false;
  if (format == "alibaba") {
    std::string jobs, tasks;
    if (!alibaba_files(paths, jobs, tasks)) {
      e.file = paths.empty() ? "" : paths[0];
      e.message = "the alibaba format needs pai_job_table.csv and pai_task_table.csv";
      e.hint =
          "give both files (--trace pai_job_table.csv --trace pai_task_table.csv) or their "
          "directory";
      return false;
    }
    std::unique_ptr<ByteSource> js, ts;
    if (!open(jobs, js) || !open(tasks, ts)) return false;
    out.files = {jobs, tasks};
    ok = alibaba(*js, *ts, opt, out, e);
  } else {
    if (paths.size() != 1) {
      e.message = "the " + format + " format takes one file";
      return false;
    }
    std::string path = paths[0];
    if (format == "helios" && util::is_directory(path)) path += "/cluster_log.csv";
    std::unique_ptr<ByteSource> src = std::move(single);
    if (!src && !open(path, src)) return false;
    struct stat st {};
    if ((format == "csv" || format == "helios") && ::stat(path.c_str(), &st) == 0 &&
        S_ISREG(st.st_mode)) {
      if (read_csv_trace_in_parts(TraceText::in_file(path, static_cast<uint64_t>(st.st_size)),
                                  format, opt, out))
        return finish(out, opt, e);
    }
    if (format == "philly")
      ok = philly(*src, opt, out, e);
    else if (format == "helios")
      ok = helios(*src, opt, out, e);
    else if (format == "csv")
      ok = native(*src, opt, out, e);
    else {
      e.file = path;
      e.message = "unknown trace format \"" + format + "\"";
      e.hint = "philly, helios, alibaba or csv";
      return false;
    }
    if (ok && !src->error().empty()) {
      e.file = path;
      e.message = "read error: " + src->error();
      return false;
    }
  }
  return ok && finish(out, opt, e);
}

bool read_philly(std::string_view text, const std::string& name, const TraceOptions& opt,
                 Trace& out, TraceError& e) {
  out = Trace();
  ByteSource src(text, name);
  return philly(src, opt, out, e) && finish(out, opt, e);
}

bool read_helios(std::string_view text, const std::string& name, const TraceOptions& opt,
                 Trace& out, TraceError& e) {
  out = Trace();
  if (read_csv_trace_in_parts(TraceText::of_memory(text, name), "helios", opt, out))
    return finish(out, opt, e);
  ByteSource src(text, name);
  return helios(src, opt, out, e) && finish(out, opt, e);
}

bool read_native_csv(std::string_view text, const std::string& name, const TraceOptions& opt,
                     Trace& out, TraceError& e) {
  out = Trace();
  if (read_csv_trace_in_parts(TraceText::of_memory(text, name), "csv", opt, out))
    return finish(out, opt, e);
  ByteSource src(text, name);
  return native(src, opt, out, e) && finish(out, opt, e);
}

bool read_alibaba(std::string_view jobs, std::string_view tasks, const TraceOptions& opt,
                  Trace& out, TraceError& e) {
  out = Trace();
  ByteSource js(jobs, "pai_job_table.csv"), ts(tasks, "pai_task_table.csv");
  return alibaba(js, ts, opt, out, e) && finish(out, opt, e);
}

namespace {
std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string number(double v) {
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}
}  // namespace

std::string write_native_csv(const Trace& t) {
  std::string out =
      "# paictl simulate trace (native CSV): times and durations in seconds; members are "
      "PODSxGPUS\n"
      "job_id,submit_time,duration,vc,members,priority,leaf_cell_type,pinned_cell_id,lazy_"
      "preemption\n";
  for (const TraceJob& j : t.jobs) {
    out += csv_field(t.id(j));
    out += ',';
    out += number(j.submit);
    out += ',';
    out += number(j.duration);
    out += ',';
    out += csv_field(t.vc_names[static_cast<size_t>(j.vc)]);
    out += ',';
    out += format_members(t.members(j));
    out += ',';
    out += std::to_string(j.priority);
    out += ',';
    if (j.leaf_type >= 0) out += csv_field(t.leaf_type_names[static_cast<size_t>(j.leaf_type)]);
    out += ',';
    if (j.pinned >= 0) out += csv_field(t.pinned_names[static_cast<size_t>(j.pinned)]);
    out += ',';
    out += (j.flags & TraceJob::kLazy) ? "true" : "false";
    out += '\n';
  }
  return out;
}

std::string write_philly_json(const Trace& t) {
  std::string out = "[\n";
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    const TraceJob& j = t.jobs[i];
    std::string submit = format_timestamp(t.origin + j.submit);
    std::string end = format_timestamp(t.origin + j.submit + j.duration);
    out += "{\"status\": \"Pass\", \"vc\": " + json_string(t.vc_names[static_cast<size_t>(j.vc)]) +
           ", \"jobid\": " + json_string(t.id(j)) + ", \"submitted_time\": \"" + submit +
           "\", \"user\": \"generated\", \"attempts\": [{\"start_time\": \"" + submit +
           "\", \"end_time\": \"" + end + "\", \"detail\": [";
    int machine = 0;
    bool first = true;
    for (const auto& m : t.members(j))
      for (int32_t p = 0; p < m.pods; ++p) {
        out += first ? "" : ", ";
        first = false;
        out += "{\"ip\": \"m" + std::to_string(++machine) + "\", \"gpus\": [";
        for (int32_t g = 0; g < m.gpus; ++g)
          out += (g ? ", \"gpu" : "\"gpu") + std::to_string(g) + "\"";
        out += "]}";
      }
    out += "]}]}";
    out += i + 1 < t.jobs.size() ? ",\n" : "\n";
  }
  return out + "]\n";
}

}  // namespace pai::sim
