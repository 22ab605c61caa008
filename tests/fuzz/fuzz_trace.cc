// Fuzz the trace and fault readers. The first byte picks the reader: P philly,
// H helios, C native CSV, A alibaba (job and task tables split at the first
// byte 0x01), F fault file; anything else runs every reader. Any bytes must
// give a trace or one error with a position inside the input, never a crash,
// a hang or unbounded memory; a trace that is read must be usable.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "scheduler/cluster.h"
#include "sim/engine.h"
#include "sim/trace.h"

namespace {

uint32_t lines_in(std::string_view s) {
  uint32_t n = 1;
  for (char c : s) n += c == '\n';
  return n;
}

void check(bool ok, const pai::sim::Trace& t, const pai::sim::TraceError& e, uint32_t lines) {
  if (!ok) {
    if (e.message.empty()) std::abort();
    if (e.line > lines + 1) std::abort();
    return;
  }
  double last = 0;
  for (const auto& j : t.jobs) {
    if (j.submit < last || j.submit < 0) std::abort();  // sorted from time 0
    last = j.submit;
    if (!(j.duration >= 0)) std::abort();
    if (t.gpus(j) <= 0) std::abort();
    if (j.vc < 0 || static_cast<size_t>(j.vc) >= t.vc_names.size()) std::abort();
    if (j.priority < -1 || j.priority > 1000) std::abort();
    (void)t.id(j);
    (void)pai::sim::format_members(t.members(j));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char kind = static_cast<char>(data[0]);
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const uint32_t lines = lines_in(text);
  const bool all = kind != 'P' && kind != 'H' && kind != 'C' && kind != 'A' && kind != 'F';
  pai::sim::TraceOptions opt;
  pai::sim::Trace t;
  pai::sim::TraceError e;
  if (all || kind == 'P') check(pai::sim::read_philly(text, "fuzz", opt, t, e), t, e, lines);
  if (all || kind == 'H') check(pai::sim::read_helios(text, "fuzz", opt, t, e), t, e, lines);
  if (all || kind == 'C') check(pai::sim::read_native_csv(text, "fuzz", opt, t, e), t, e, lines);
  if (all || kind == 'A') {
    size_t cut = text.find('\x01');
    std::string_view jobs = cut == std::string_view::npos ? text : text.substr(0, cut);
    std::string_view tasks =
        cut == std::string_view::npos ? std::string_view() : text.substr(cut + 1);
    check(pai::sim::read_alibaba(jobs, tasks, opt, t, e), t, e, lines);
  }
  if (all || kind == 'F') {
    pai::scheduler::ClusterShape shape;
    shape.nodes.push_back({"v100-r1-n1", {}, 0});
    shape.nodes.push_back({"t4-n1", {}, 0});
    pai::sim::Trace dated;
    dated.has_dates = true;
    pai::sim::FaultSpec f;
    pai::sim::TraceError fe;
    if (!pai::sim::read_fault_text(text, "fuzz", shape, dated, f, fe)) {
      if (fe.message.empty() || fe.line > lines + 1) std::abort();
    } else {
      for (const auto& ev : f.events)
        if (ev.node < 0 || ev.node > 1) std::abort();
    }
  }
  return 0;
}
