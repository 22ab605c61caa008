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

TEST(RandomHex, TwoDigitsAByteOfLowerCaseHexNeverTheSameTwice) {
  auto a = random_hex(32);
  auto b = random_hex(32);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 64u);
  EXPECT_EQ(a->find_first_not_of("0123456789abcdef"), std::string::npos) << *a;
  EXPECT_NE(*a, *b);
  EXPECT_NE(*a, std::string(64, '0'));
  EXPECT_EQ(random_hex(0)->size(), 0u);
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

// read_file is the one reader of files paictl is given: it says what is at the
// path instead of blocking, aborting or taking it for "no file".
using ReadFile = AtomicWrite;

std::string fs_read_error_of(const std::string& p, size_t max = 64u << 20) {
  auto r = read_file(p, max);
  return r.ok() ? std::string() : r.error().message;
}

TEST_F(ReadFile, SaysWhatIsInPlaceOfTheFile) {
  fs::create_directories(dir_ / "d");
  EXPECT_EQ(fs_read_error_of(path("d")), "is a directory");
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  // Refused at once: a FIFO without a writer would block a plain open for ever.
  EXPECT_EQ(fs_read_error_of(path("fifo")), "is a FIFO (named pipe), not a regular file");
  EXPECT_EQ(fs_read_error_of("/dev/zero"), "is a character device, not a regular file");
  fs::create_symlink(path("missing"), path("dangling"));
  EXPECT_EQ(fs_read_error_of(path("dangling")),
            "is a broken symbolic link (to " + path("missing") + ", which does not exist)");
  fs::create_symlink(path("loop2"), path("loop1"));
  fs::create_symlink(path("loop1"), path("loop2"));
  EXPECT_EQ(fs_read_error_of(path("loop1")), "is a loop of symbolic links");
  EXPECT_EQ(fs_read_error_of(path("absent")), "No such file or directory");
  std::ofstream(path("big")) << std::string(5000, 'x');
  EXPECT_EQ(fs_read_error_of(path("big"), 4096), "is larger than 4 KiB (5000 bytes)");
  EXPECT_EQ(read_file(path("big"), 5000).value().size(), 5000u);
  EXPECT_EQ(read_file(path("dangling")).error().kind, Error::Kind::Input);
}

TEST_F(ReadFile, IfPresentIsNulloptOnlyWhenNothingIsThere) {
  auto absent = read_file_if_present(path("absent"));
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
  fs::create_symlink(path("missing"), path("dangling"));
  EXPECT_FALSE(read_file_if_present(path("dangling")).ok());
  fs::create_directories(dir_ / "d");
  EXPECT_FALSE(read_file_if_present(path("d")).ok());
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  EXPECT_FALSE(read_file_if_present(path("fifo")).ok());
  std::ofstream(path("f")) << "text";
  EXPECT_EQ(read_file_if_present(path("f")).value().value(), "text");
  EXPECT_TRUE(path_entry_exists(path("dangling")));
  EXPECT_FALSE(path_entry_exists(path("absent")));
}

TEST_F(ReadFile, TailReadsOnlyTheEnd) {
  std::ofstream(path("log")) << "first line\nsecond\nthird\n";
  auto t = read_file_tail(path("log"), 8);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->text, "d\nthird\n");
  EXPECT_EQ(t->skipped, 16u);
  auto all = read_file_tail(path("log"), 1000);
  EXPECT_EQ(all->skipped, 0u);
  EXPECT_EQ(all->text.size(), 24u);
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  EXPECT_FALSE(read_file_tail(path("fifo"), 8).ok());
  EXPECT_TRUE(check_regular_file(path("log")).ok());
  EXPECT_FALSE(check_regular_file(path("log"), 4).ok());
  EXPECT_FALSE(check_regular_file(path("fifo")).ok());
}

}  // namespace
}  // namespace pai::util
