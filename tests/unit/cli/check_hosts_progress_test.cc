// `check hosts`' progress line on a terminal: how many hosts are done and which
// ones it still waits for, cut to the terminal's width.

#include <gtest/gtest.h>

#include "check/hosts_common.h"

namespace paictl {
namespace {

pai::check::CollectProgress hosts_progress(size_t done, size_t total,
                                           std::vector<std::string> running) {
  pai::check::CollectProgress p;
  p.done = done;
  p.total = total;
  p.running = std::move(running);
  return p;
}

TEST(CheckHostsProgress, NamesTheHostsStillRunning) {
  EXPECT_EQ(progress_text("checking hosts", hosts_progress(12, 50, {"gpu-07", "gpu-12"}), 80),
            "checking hosts: 12/50 hosts, waiting for gpu-07, gpu-12");
}

TEST(CheckHostsProgress, SaysDoneWhenNoneIsLeft) {
  EXPECT_EQ(progress_text("checking hosts", hosts_progress(2, 2, {}), 80),
            "checking hosts: 2/2 hosts done");
  EXPECT_EQ(progress_text("collecting facts", hosts_progress(0, 3, {}), 80),
            "collecting facts: 0/3 hosts done");
}

TEST(CheckHostsProgress, CountsTheNamesThatDoNotFit) {
  std::vector<std::string> running;
  for (int i = 0; i < 40; ++i) running.push_back("gpu-" + std::to_string(100 + i));
  std::string line = progress_text("checking hosts", hosts_progress(10, 50, running), 80);
  EXPECT_LE(line.size(), 80u) << line;
  EXPECT_EQ(line.rfind("checking hosts: 10/50 hosts, waiting for gpu-100, gpu-101, ", 0), 0u)
      << line;
  // Every name shown is followed by the count of the others.
  size_t shown = 0;
  for (const auto& n : running) shown += line.find(n) != std::string::npos;
  EXPECT_GT(shown, 2u);
  EXPECT_NE(line.find(" and " + std::to_string(40 - shown) + " more"), std::string::npos) << line;
  EXPECT_EQ(line.find(running[shown]), std::string::npos);
}

TEST(CheckHostsProgress, ANarrowTerminalStillGetsOneName) {
  std::string line =
      progress_text("checking hosts", hosts_progress(0, 3, {"a-long-host-name", "b", "c"}), 20);
  EXPECT_EQ(line, "checking hosts: 0/3 hosts, waiting for a-long-host-name and 2 more");
}

}  // namespace
}  // namespace paictl
