// A sweep's store: results stored as they arrive are not run again, an error
// result fails its point and stores nothing, a stored file that is not the
// point's (another key, a cut file) does not count, and the document lists
// every point with its status.

#include "sim/sweep_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace pai::sim {
namespace {

namespace fs = std::filesystem;

class SweepStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("paictl-sweep-store-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    diag::List d;
    ASSERT_TRUE(
        parse_sweep_spec("configs: [clusters/heterogeneous]\n"
                         "traces: [{name: gen, generate: {jobs: 20}}]\n"
                         "policies: [quota, hived, k8s-default]\n",
                         "sweep.yaml", PAI_SOURCE_DIR "/examples", spec_, d));
    points_ = sweep_points(spec_);
    ASSERT_EQ(points_.size(), 3u);
    ASSERT_TRUE(key_sweep_points(spec_, "v1", points_).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  SweepStore open() {
    auto s = SweepStore::open(spec_, points_, dir_.string());
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    return std::move(s).value();
  }

  fs::path dir_;
  SweepSpec spec_;
  std::vector<SweepPoint> points_;
};

TEST_F(SweepStoreTest, StoredResultsAreNotRunAgain) {
  SweepStore s = open();
  EXPECT_EQ(s.dir(), dir_.string() + "/points");
  EXPECT_TRUE(fs::is_directory(s.dir()));
  EXPECT_EQ(s.pending(), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(s.stored(), 0u);

  auto a = s.accept(1, {{"result", {{"jobs", 20}}}}, 2.5);
  EXPECT_TRUE(a.ok);
  EXPECT_EQ(a.axes["policy"], "hived");
  auto f = s.accept(2, {{"error", "a bad trace"}}, 0);
  EXPECT_FALSE(f.ok);
  EXPECT_EQ(f.error, "a bad trace");
  EXPECT_EQ(s.ran(), 1u);
  EXPECT_EQ(s.failed(), 1u);
  EXPECT_FALSE(fs::exists(s.dir() + "/" + points_[2].key + ".json"));

  std::ifstream in(s.dir() + "/" + points_[1].key + ".json");
  auto rec = nlohmann::json::parse(in);
  EXPECT_EQ(rec["key"], points_[1].key);
  EXPECT_EQ(rec["seconds"], 2.5);
  EXPECT_EQ(rec["point"]["policy"], "hived");

  // Again: the stored point is not pending; the failed one is.
  SweepStore again = open();
  EXPECT_EQ(again.pending(), (std::vector<size_t>{0, 2}));
  EXPECT_EQ(again.stored(), 1u);
  auto doc = again.document("v9", "sweep.yaml");
  EXPECT_EQ(doc["paictl"], "v9");
  EXPECT_EQ(doc["spec"], "sweep.yaml");
  EXPECT_EQ(doc["points"], 3);
  EXPECT_EQ(doc["stored"], 1);
  EXPECT_EQ(doc["ran"], 0);
  EXPECT_EQ(doc["items"][1]["status"], "stored");
  EXPECT_EQ(doc["items"][1]["result"]["result"]["jobs"], 20);
  EXPECT_EQ(doc["items"][0]["status"], "pending");
  EXPECT_FALSE(doc["items"][0].contains("result"));
}

TEST_F(SweepStoreTest, AFileThatIsNotThePointsDoesNotCount) {
  SweepStore s = open();
  fs::create_directories(s.dir());
  std::ofstream(s.dir() + "/" + points_[0].key + ".json") << R"({"key": "other", "result": 1})";
  std::ofstream(s.dir() + "/" + points_[1].key + ".json")
      << R"({"key": ")" << points_[1].key << R"(", "resu)";
  SweepStore again = open();
  EXPECT_EQ(again.pending(), (std::vector<size_t>{0, 1, 2}));
}

TEST_F(SweepStoreTest, PointsWithoutAResultFail) {
  SweepStore s = open();
  ASSERT_TRUE(s.accept(0, {{"result", 1}}, 1).ok);
  s.fail_pending("no result came back from the cluster");
  EXPECT_EQ(s.ran(), 1u);
  EXPECT_EQ(s.failed(), 2u);
  auto doc = s.document("v1", "s.yaml");
  EXPECT_EQ(doc["items"][0]["status"], "ran");
  EXPECT_EQ(doc["items"][2]["status"], "failed");
  EXPECT_EQ(doc["items"][2]["error"], "no result came back from the cluster");
  EXPECT_EQ(doc["failed"], 2);
}

TEST_F(SweepStoreTest, AStoreThatCannotBeMadeIsAnError) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "out") << "a file where the sweep's directory goes";
  const std::string out = (dir_ / "out").string();
  auto s = SweepStore::open(spec_, points_, out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message.rfind("cannot create " + out + "/points: ", 0), 0u)
      << s.error().message;
}

}  // namespace
}  // namespace pai::sim
