// write_file_atomic replaces only regular files: device nodes, FIFOs and the
// targets of symbolic links are written through or refused, never renamed over.
#include "util/fs.h"
#include "util/path.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace pai::util {
namespace {

namespace fs = std::filesystem;

// The error of a write, "" when it worked.
std::string fs_error_of(const Result<void>& r) {
  return r.ok() ? std::string() : r.error().message;
}

class AtomicWrite : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("paictl-atomic-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  size_t entries() const {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir_)) (void)e, ++n;
    return n;
  }
  static std::string slurp(const std::string& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  fs::path dir_;
};

TEST(AtomicWriteErrors, NameThePathGivenNotTheTemporaryFile) {
  auto r = write_file_atomic("/nonexistent-dir-of-paictl/plan.svg", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "/nonexistent-dir-of-paictl/plan.svg: the directory /nonexistent-dir-of-paictl does "
            "not exist");
  EXPECT_EQ(r.error().message.find(".tmp."), std::string::npos);
}

TEST(JoinPath, TrailingSlashesAreNotDoubled) {
  EXPECT_EQ(join_path("big/", "hivedscheduler.yaml"), "big/hivedscheduler.yaml");
  EXPECT_EQ(join_path("big//", "a"), "big/a");
  EXPECT_EQ(join_path("big", "a"), "big/a");
  EXPECT_EQ(join_path("", "a"), "a");
  EXPECT_EQ(join_path("/", "a"), "/a");
}

TEST_F(AtomicWrite, CharacterDeviceIsWrittenThroughAndKept) {
  // A null device of our own (1:3 is /dev/null's number), never the real /dev/null.
  std::string dev = path("null");
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
    GTEST_SKIP() << "mknod needs root (CAP_MKNOD)";
  EXPECT_EQ(fs_error_of(write_file_atomic(dev, "a trace\n")), "");
  struct stat st {};
  ASSERT_EQ(::lstat(dev.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device node was replaced";
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
  EXPECT_EQ(entries(), 1u) << "a temporary file was left behind";
}

TEST_F(AtomicWrite, BlockDeviceIsRefused) {
  std::string dev = path("disk");
  // 7:0 is /dev/loop0; nothing is opened, so no real device is touched.
  if (::mknod(dev.c_str(), S_IFBLK | 0600, makedev(7, 0)) != 0)
    GTEST_SKIP() << "mknod needs root (CAP_MKNOD)";
  std::string err = fs_error_of(write_file_atomic(dev, "x"));
  EXPECT_NE(err.find("block device"), std::string::npos) << err;
  struct stat st {};
  ASSERT_EQ(::lstat(dev.c_str(), &st), 0);
  EXPECT_TRUE(S_ISBLK(st.st_mode));
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicWrite, FifoWithReaderIsWrittenThrough) {
  std::string fifo = path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] {
    std::ifstream in(fifo);  // blocks until the writer opens
    std::stringstream ss;
    ss << in.rdbuf();
    got = ss.str();
  });
  // The writer does not wait for a reader; retry until the reader has opened.
  std::string err;
  for (int i = 0; i < 500; ++i) {
    err = fs_error_of(write_file_atomic(fifo, "through the pipe\n"));
    if (err.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!err.empty()) {
    int fd = ::open(fifo.c_str(), O_WRONLY);  // unblock the reader
    if (fd >= 0) ::close(fd);
  }
  reader.join();
  EXPECT_EQ(err, "");
  EXPECT_EQ(got, "through the pipe\n");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicWrite, FifoWithoutReaderFailsAtOnce) {
  std::string fifo = path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string err = fs_error_of(write_file_atomic(fifo, "x"));
  EXPECT_NE(err.find("FIFO with no reader"), std::string::npos) << err;
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicWrite, SymlinkKeepsTheLinkAndReplacesItsTarget) {
  fs::create_directories(dir_ / "real");
  std::string target = path("real/trace.json");
  std::ofstream(target) << "old\n";
  std::string link = path("trace.json");
  ASSERT_EQ(::symlink("real/trace.json", link.c_str()), 0);
  EXPECT_EQ(fs_error_of(write_file_atomic(link, "new\n")), "");
  struct stat st {};
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link was replaced by a file";
  EXPECT_EQ(slurp(target), "new\n");
  EXPECT_EQ(entries(), 2u);  // the link and real/, no temporary file
  size_t in_real = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "real")) (void)e, ++in_real;
  EXPECT_EQ(in_real, 1u);
}

TEST_F(AtomicWrite, SymlinkToADeviceWritesThrough) {
  std::string dev = path("null");
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
    GTEST_SKIP() << "mknod needs root (CAP_MKNOD)";
  std::string link = path("out");
  ASSERT_EQ(::symlink(dev.c_str(), link.c_str()), 0);
  EXPECT_EQ(fs_error_of(write_file_atomic(link, "x")), "");
  struct stat st {};
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  ASSERT_EQ(::lstat(dev.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(entries(), 2u);
}

TEST_F(AtomicWrite, DanglingSymlinkIsRefused) {
  std::string link = path("out");
  ASSERT_EQ(::symlink("missing/file", link.c_str()), 0);
  std::string err = fs_error_of(write_file_atomic(link, "x"));
  EXPECT_NE(err.find("symbolic link to a missing file"), std::string::npos) << err;
  struct stat st {};
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicWrite, DirectoryIsRefused) {
  fs::create_directories(dir_ / "d");
  std::string err = fs_error_of(write_file_atomic(path("d"), "x"));
  EXPECT_NE(err.find("is a directory"), std::string::npos) << err;
  EXPECT_TRUE(fs::is_directory(dir_ / "d"));
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicWrite, RegularFileIsReplacedWithTheNewMode) {
  std::string p = path("f");
  std::ofstream(p) << "old";
  ASSERT_EQ(fs_error_of(write_file_atomic(p, "new", 0600)), "");
  EXPECT_EQ(slurp(p), "new");
  struct stat st {};
  ASSERT_EQ(::lstat(p.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(entries(), 1u);
}

}  // namespace
}  // namespace pai::util
