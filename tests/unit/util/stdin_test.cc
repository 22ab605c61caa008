// Bounded reads from pipes: the stdin of every paictl command goes through them.

#include "util/stdin.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

namespace pai::util {
namespace {

// A child that writes `chunk` forever into a pipe, as `yes` would.
struct EndlessWriter {
  int fd = -1;
  pid_t pid = -1;
  explicit EndlessWriter(std::string chunk) {
    int fds[2];
    if (::pipe(fds) != 0) return;
    pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      std::string block;
      while (block.size() < 65536) block += chunk;
      while (::write(fds[1], block.data(), block.size()) > 0) {
      }
      ::_exit(0);
    }
    ::close(fds[1]);
    fd = fds[0];
  }
  ~EndlessWriter() {
    if (fd >= 0) ::close(fd);
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      int st = 0;
      ::waitpid(pid, &st, 0);
    }
  }
};

int pipe_with(const std::string& text) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  if (::write(fds[1], text.data(), text.size()) != static_cast<ssize_t>(text.size())) return -1;
  ::close(fds[1]);
  return fds[0];
}

TEST(Stdin, ReadsAllWithinTheLimit) {
  int fd = pipe_with("k: v\nx: y\n");
  auto r = read_fd(fd, 64);
  ::close(fd);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value(), "k: v\nx: y\n");
}

TEST(Stdin, AnEndlessProducerEndsWithAnError) {
  EndlessWriter w("k: v\n");
  ASSERT_GE(w.fd, 0);
  auto r = read_fd(w.fd, 1u << 20);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "stdin is larger than 1 MiB");
}

TEST(Stdin, ExactlyTheLimitIsAccepted) {
  int fd = pipe_with(std::string(1024, 'a'));
  EXPECT_TRUE(read_fd(fd, 1024).ok());
  ::close(fd);
  fd = pipe_with(std::string(1025, 'a'));
  auto r = read_fd(fd, 1024);
  ::close(fd);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "stdin is larger than 1 KiB");
}

TEST(Stdin, ReadLineStopsAtTheNewlineAndRefusesEndlessLines) {
  int fd = pipe_with("secret\r\nrest\n");
  auto r = read_line(fd, 64);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), "secret");
  auto rest = read_line(fd, 64);
  EXPECT_EQ(rest.value(), "rest");
  ::close(fd);

  EndlessWriter w("x");  // one endless line, as `yes | tr -d '\n'`
  ASSERT_GE(w.fd, 0);
  auto endless = read_line(w.fd, kMaxSecretBytes);
  EXPECT_FALSE(endless.ok());
  EXPECT_EQ(endless.error().message, "the line on stdin is longer than 64 KiB");
}

TEST(Stdin, FormatLimit) {
  EXPECT_EQ(format_limit(16u << 20), "16 MiB");
  EXPECT_EQ(format_limit(64u << 10), "64 KiB");
  EXPECT_EQ(format_limit(100), "100 bytes");
}

}  // namespace
}  // namespace pai::util
