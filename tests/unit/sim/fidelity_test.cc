// Replays the recorded decisions of HiveD's own code (tests/data/fidelity,
// docs/fidelity.md) through the port, decision by decision.

#include "sim/fidelity.h"

#include "config/hived_model.h"
#include "scheduler/hived.h"
#include "test_files.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace pai::sim {
namespace {

// PAI_FIDELITY_DIR replays another directory of recorded files (re-recording,
// docs/fidelity.md); files it has no line for in expected.tsv are only reported.
// PAI_FIDELITY_TIE_ORDER=config replays with configuration-order ties and only
// reports (for the figures in docs/fidelity.md).
const std::string kDir = std::getenv("PAI_FIDELITY_DIR") ? std::getenv("PAI_FIDELITY_DIR")
                                                         : std::string(PAI_TEST_DATA) + "/fidelity";

using pai::test::slurp;

// A recorded file, gzip-compressed (.jsonl.gz) or not.
std::string read_recorded(const std::string& path) {
  if (path.size() < 3 || path.compare(path.size() - 3, 3, ".gz") != 0) return slurp(path);
  std::string out;
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

// expected.tsv: file, then the line of the first decision that may differ from
// HiveD's ("none": every decision must match), then why.
std::map<std::string, int64_t> expectations() {
  std::map<std::string, int64_t> out;
  std::istringstream in(slurp(kDir + "/expected.tsv"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    std::string file, first;
    f >> file >> first;
    out[file] = first == "none" ? -1 : std::stoll(first);
  }
  return out;
}

TEST(Fidelity, RecordedDecisionsOfHived) {
  const char* ties = std::getenv("PAI_FIDELITY_TIE_ORDER");
  const bool config_ties = ties && std::string(ties) == "config";
  const bool own_dir = std::getenv("PAI_FIDELITY_DIR") == nullptr && !config_ties;
  PolicyFactory make;
  if (config_ties)
    make = [](const config::HivedModel& m) { return scheduler::make_hived_policy(m, false); };
  auto expected = expectations();
  if (own_dir) {
    ASSERT_FALSE(expected.empty());
  }
  int files = 0;
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  for (const auto& path : paths) {
    std::string name = path.filename().string();
    if (name.size() > 3 && name.compare(name.size() - 3, 3, ".gz") == 0)
      name.resize(name.size() - 3);
    if (std::filesystem::path(name).extension() != ".jsonl") continue;
    ++files;
    SCOPED_TRACE(name);
    if (own_dir) {
      ASSERT_TRUE(expected.count(name)) << "no line for " << name << " in expected.tsv";
    }
    FidelityReplay r;
    std::string text = read_recorded(path.string());
    ASSERT_FALSE(text.empty()) << "cannot read " << path;
    auto replayed = replay_fidelity(text, r, make);
    ASSERT_TRUE(replayed.ok()) << replayed.error().message;
    EXPECT_GT(r.decisions, 100);
    std::printf(
        "%s: %lld/%lld requests identical, first divergence %s%s; preemptions %lld (HiveD "
        "%lld), victims %lld (HiveD %lld)\n",
        name.c_str(), static_cast<long long>(r.matched), static_cast<long long>(r.lines),
        r.first_divergence < 0 ? "none" : ("at line " + std::to_string(r.first_divergence)).c_str(),
        r.first_divergence < 0 ? "" : (": " + r.divergence).c_str(),
        static_cast<long long>(r.policy_preemptions), static_cast<long long>(r.hived_preemptions),
        static_cast<long long>(r.policy_victims), static_cast<long long>(r.hived_victims));
    if (!own_dir || !expected.count(name)) continue;
    const int64_t allowed = expected[name];
    if (allowed < 0) {
      EXPECT_EQ(r.first_divergence, -1) << r.divergence;
    } else {
      EXPECT_TRUE(r.first_divergence < 0 || r.first_divergence >= allowed)
          << "diverges at line " << r.first_divergence << ", earlier than line " << allowed << ": "
          << r.divergence;
    }
  }
  if (own_dir) {
    EXPECT_EQ(files, static_cast<int>(expected.size()));
  }
}

// The comparison itself: a recorded decision changed by one leaf cell is found.
TEST(Fidelity, ReportsTheFirstDifferentDecision) {
  std::string yaml =
      "physicalCluster:\n"
      "  cellTypes:\n"
      "    NODE: {childCellType: GPU, childCellNumber: 4, isNodeLevel: true}\n"
      "  physicalCells:\n"
      "  - {cellType: NODE, cellAddress: n1}\n"
      "  - {cellType: NODE, cellAddress: n2}\n"
      "virtualClusters:\n"
      "  a: {virtualCells: [{cellType: NODE, cellNumber: 2}]}\n";
  std::string text = fidelity_config_line(yaml) + "\n";
  text +=
      R"({"op":"schedule","group":"g1","vc":"a","priority":0,"members":[{"podNumber":1,"leafCellNumber":2}],)"
      R"("hived":{"outcome":"bound","chain":"NODE","pods":[["n1",[0,1]]]}})"
      "\n";
  text +=
      R"({"op":"schedule","group":"g2","vc":"a","priority":0,"members":[{"podNumber":1,"leafCellNumber":4}],)"
      R"("hived":{"outcome":"bound","chain":"NODE","pods":[["n2",[0,1,2,3]]]}})"
      "\n";
  text += R"({"op":"release","group":"g1","hived":{"outcome":"released","released":true}})"
          "\n";
  FidelityReplay r;
  auto replayed = replay_fidelity(text, r);
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  EXPECT_EQ(r.lines, 3);
  EXPECT_EQ(r.matched, 3);
  EXPECT_EQ(r.first_divergence, -1);

  std::string changed = text;
  changed.replace(changed.find("[0,1,2,3]"), 9, "[0,1,2,4]");
  replayed = replay_fidelity(changed, r);
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  EXPECT_EQ(r.matched, 2);
  EXPECT_EQ(r.first_divergence, 3);
  EXPECT_NE(r.divergence.find("g2"), std::string::npos) << r.divergence;

  replayed = replay_fidelity(R"({"op":"schedule"})", r);
  ASSERT_FALSE(replayed.ok());
  EXPECT_NE(replayed.error().message.find("before the config"), std::string::npos)
      << replayed.error().message;
}

}  // namespace
}  // namespace pai::sim
