// The restore's host scripts in a real sh, on directories of the test's own:
// the swap is two renames whatever state a killed run left (never a second
// swap, never a half-swapped data directory, a state it cannot name refused);
// the snapshot upload is checked by its SHA-256 and skipped when present.

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include "deploy/restore.h"
#include "util/sha256.h"

namespace pai::deploy {
namespace {

namespace fs = std::filesystem;

struct RestoreScriptsTest : ::testing::Test {
  std::string root;
  RestoreLayout l;
  void SetUp() override {
    root = ::testing::TempDir() + "/paictl-restore-scripts-" + std::to_string(::getpid());
    fs::remove_all(root);
    fs::create_directories(root);
    l = restore_layout(root + "/etcd", "TS", false);
  }
  void TearDown() override { fs::remove_all(root); }
  // Runs `script` with `input` on stdin; its exit status, its output in `out`.
  int run(const std::string& script, const std::string& input = {}, std::string* out = nullptr) {
    std::ofstream(root + "/script.sh") << script;
    std::ofstream(root + "/input", std::ios::binary) << input;
    int rc = std::system(
        ("sh " + root + "/script.sh < " + root + "/input > " + root + "/out 2>&1").c_str());
    if (out) {
      std::ifstream in(root + "/out");
      std::stringstream ss;
      ss << in.rdbuf();
      *out = ss.str();
    }
    return WEXITSTATUS(rc);
  }
  void mark(const std::string& dir, const std::string& what) {
    fs::create_directories(dir);
    std::ofstream(dir + "/which") << what;
  }
  std::string which(const std::string& dir) {
    std::ifstream in(dir + "/which");
    std::string s;
    std::getline(in, s);
    return s;
  }
};

TEST_F(RestoreScriptsTest, TheSwapIsTwoRenamesAndNeverHappensTwice) {
  mark(l.data_dir + "/member", "old");
  mark(l.new_dir + "/member", "new");
  std::string out;
  ASSERT_EQ(run(restore_swap_script(l), {}, &out), 0) << out;
  EXPECT_EQ(which(l.data_dir + "/member"), "new");
  EXPECT_EQ(which(l.old_dir + "/member"), "old");
  EXPECT_FALSE(fs::exists(l.new_dir + "/member"));
  // Again: nothing moves.
  ASSERT_EQ(run(restore_swap_script(l), {}, &out), 0) << out;
  EXPECT_NE(out.find("already swapped"), std::string::npos);
  EXPECT_EQ(which(l.data_dir + "/member"), "new");
  EXPECT_EQ(which(l.old_dir + "/member"), "old");
}

TEST_F(RestoreScriptsTest, ARunKilledBetweenTheRenamesIsFinished) {
  // The first rename done, the second not.
  mark(l.old_dir + "/member", "old");
  mark(l.new_dir + "/member", "new");
  fs::create_directories(l.data_dir);
  std::string out;
  ASSERT_EQ(run(restore_swap_script(l), {}, &out), 0) << out;
  EXPECT_EQ(which(l.data_dir + "/member"), "new");
  EXPECT_EQ(which(l.old_dir + "/member"), "old");
  // Killed after making OLD, before the first rename.
  fs::remove_all(root);
  mark(l.data_dir + "/member", "old");
  mark(l.new_dir + "/member", "new");
  fs::create_directories(l.old_dir);
  ASSERT_EQ(run(restore_swap_script(l), {}, &out), 0) << out;
  EXPECT_EQ(which(l.data_dir + "/member"), "new");
  EXPECT_EQ(which(l.old_dir + "/member"), "old");
}

TEST_F(RestoreScriptsTest, AStateItCannotNameIsRefusedUntouched) {
  mark(l.data_dir + "/member", "a");
  mark(l.new_dir + "/member", "b");
  mark(l.old_dir + "/member", "c");
  std::string out;
  EXPECT_NE(run(restore_swap_script(l), {}, &out), 0);
  EXPECT_NE(out.find("all exist: not swapping"), std::string::npos) << out;
  EXPECT_EQ(which(l.data_dir + "/member"), "a");
  EXPECT_EQ(which(l.new_dir + "/member"), "b");
  EXPECT_EQ(which(l.old_dir + "/member"), "c");
  // No restored data and no old data kept: nothing to swap in.
  fs::remove_all(root);
  mark(l.data_dir + "/member", "a");
  EXPECT_NE(run(restore_swap_script(l), {}, &out), 0);
  EXPECT_EQ(which(l.data_dir + "/member"), "a");
}

TEST_F(RestoreScriptsTest, TheUploadIsCheckedAndSkippedWhenPresent) {
  fs::create_directories(l.data_dir);
  std::string snap = "snapshot bytes\n";
  std::string sha = util::sha256_hex(snap);
  std::string out;
  // Damaged on the way: refused, nothing left.
  EXPECT_NE(run(restore_upload_script(l, sha), "other bytes\n", &out), 0);
  EXPECT_NE(out.find("damaged"), std::string::npos);
  EXPECT_FALSE(fs::exists(l.snapshot));
  for (const auto& e : fs::directory_iterator(root))
    EXPECT_EQ(e.path().filename().string().find("etcd-restore"), std::string::npos) << e.path();
  ASSERT_EQ(run(restore_upload_script(l, sha), snap, &out), 0) << out;
  EXPECT_NE(out.find("uploaded"), std::string::npos);
  EXPECT_EQ((fs::status(l.snapshot).permissions() & fs::perms::all),
            fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_EQ(run(restore_upload_script(l, sha), "", &out), 0) << out;
  EXPECT_NE(out.find("present"), std::string::npos);
}

TEST(RestoreLayout, NewAndOldDirectoriesStayOnTheDataDirectorysFileSystem) {
  auto s = restore_layout("/var/lib/etcd", "20261206T120000Z", false);
  EXPECT_EQ(s.new_dir, "/var/lib/etcd-restore-20261206T120000Z");
  EXPECT_EQ(s.old_dir, "/var/lib/etcd.before-restore-20261206T120000Z");
  EXPECT_EQ(s.stash, "/etc/kubernetes/manifests.before-restore-20261206T120000Z");
  auto i = restore_layout("/var/lib/etcd", "T", true);
  EXPECT_EQ(i.new_dir, "/var/lib/etcd/restore-T");
  EXPECT_EQ(i.old_dir, "/var/lib/etcd/before-restore-T");
}

TEST(RestoreJournal, RoundTrip) {
  RestoreJournal j;
  j.archive = "/a.tar.gz";
  j.archive_sha256 = std::string(64, 'a');
  j.ts = "T";
  j.layout = restore_layout("/var/lib/etcd", "T", false);
  j.etcd = {"m", "/var/lib/etcd", "m=https://x:2380", "https://x:2380", "https://x:2379"};
  j.done = {"upload", "etcd-restore"};
  auto back = parse_restore_journal(restore_journal_json(j));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->layout, j.layout);
  EXPECT_EQ(back->etcd, j.etcd);
  EXPECT_EQ(back->done, j.done);
  EXPECT_FALSE(back->finished);
  EXPECT_FALSE(parse_restore_journal("{\"archive\": 1}").ok());
}

}  // namespace
}  // namespace pai::deploy
