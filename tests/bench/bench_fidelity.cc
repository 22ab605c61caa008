// Per-decision time of the port on recorded fidelity streams (docs/fidelity.md),
// next to HiveD's own time on the same stream when its driver wrote one.
//
//   ninja -C build-bench bench_fidelity
//   ./build-bench/tests/bench/bench_fidelity [--tie-order hived|config] [--repeat N]
//       STREAM.jsonl[.gz] [HIVED_TIMES]
//
// HIVED_TIMES: one line per schedule request, the microseconds of CPU time
// HiveD's driver spent inside HiveD's calls (Schedule, AddAllocatedPod) for it
// (getrusage before and after). Here each schedule() call is timed by the
// thread's CPU clock, so other load on the machine does not count; the clock's
// own cost (a system call, about as dear as getrusage) is included on both
// sides. Reading and comparing the stream are not timed.
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "config/hived_model.h"
#include "scheduler/hived.h"
#include "scheduler/policy.h"
#include "sim/fidelity.h"
#include "timed_policy.h"

namespace {

using pai::scheduler::Policy;

double cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

std::string read_file(const std::string& path) {
  std::string out;
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files too
  if (!f) return out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

struct Stats {
  size_t n = 0;
  double mean = 0, p50 = 0, p99 = 0, total = 0;
};

Stats stats(std::vector<double> v) {
  Stats s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  for (double x : v) s.total += x;
  s.mean = s.total / static_cast<double>(v.size());
  s.p50 = v[v.size() / 2];
  s.p99 = v[std::min(v.size() - 1, static_cast<size_t>(0.99 * static_cast<double>(v.size())))];
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  bool hived_order = true;
  int repeat = 5;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--tie-order") && i + 1 < argc) {
      hived_order = std::strcmp(argv[++i], "config") != 0;
    } else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else {
      args.push_back(argv[i]);
    }
  }
  if (args.empty()) {
    std::fprintf(stderr,
                 "usage: bench_fidelity [--tie-order hived|config] [--repeat N] STREAM "
                 "[HIVED_TIMES]\n");
    return 2;
  }
  std::string text = read_file(args[0]);
  if (text.empty()) {
    std::fprintf(stderr, "cannot read %s\n", args[0].c_str());
    return 2;
  }
  // The fastest of `repeat` replays (the machine is shared).
  Stats best;
  pai::sim::FidelityReplay r;
  for (int k = 0; k < repeat; ++k) {
    std::vector<double> samples;
    auto make =
        [&](const pai::config::HivedModel& m) -> pai::util::Result<std::unique_ptr<Policy>> {
      auto p = pai::scheduler::make_hived_policy(m, hived_order);
      if (!p.ok()) return p;
      return std::unique_ptr<Policy>(
          std::make_unique<pai::bench::TimedPolicy>(std::move(*p), &samples, cpu_us));
    };
    if (auto replayed = pai::sim::replay_fidelity(text, r, make); !replayed.ok()) {
      std::fprintf(stderr, "%s\n", replayed.error().message.c_str());
      return 2;
    }
    Stats s = stats(samples);
    if (k == 0 || s.total < best.total) best = s;
  }
  std::printf(
      "%s: %s ties, %zu decisions, identical %lld/%lld: mean %.2f us, p50 %.2f us, "
      "p99 %.2f us\n",
      args[0].c_str(), hived_order ? "hived" : "config", best.n, static_cast<long long>(r.matched),
      static_cast<long long>(r.lines), best.mean, best.p50, best.p99);
  if (args.size() > 1) {
    std::ifstream in(args[1]);
    std::vector<double> h;
    double x;
    while (in >> x) h.push_back(x);
    Stats hs = stats(h);
    std::printf(
        "  HiveD: %zu decisions: mean %.1f us, p50 %.1f us, p99 %.1f us; "
        "port faster by %.0fx (mean), %.0fx (p50), %.0fx (p99)\n",
        hs.n, hs.mean, hs.p50, hs.p99, hs.mean / std::max(best.mean, 1e-9),
        hs.p50 / std::max(best.p50, 1e-9), hs.p99 / std::max(best.p99, 1e-9));
  }
  return 0;
}
