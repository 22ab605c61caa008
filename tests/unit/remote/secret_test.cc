#include "remote/secret.h"

#include <gtest/gtest.h>
#include <unistd.h>

using namespace pai::remote;

TEST(Secret, ReadsOneLineAndLeavesTheRest) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const char text[] = "s3cr3t pass\r\nsecond line\n";
  ASSERT_EQ(::write(fds[1], text, sizeof text - 1), static_cast<ssize_t>(sizeof text - 1));
  ::close(fds[1]);
  auto s = read_secret_line(fds[0]);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->reveal(), "s3cr3t pass");
  char rest[32] = {};
  ASSERT_GT(::read(fds[0], rest, sizeof rest - 1), 0);
  EXPECT_STREQ(rest, "second line\n");  // nothing beyond the newline was consumed
  ::close(fds[0]);
}

TEST(Secret, EmptyInputAndCopies) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[1]);
  EXPECT_TRUE(read_secret_line(fds[0])->empty());
  ::close(fds[0]);
  Secret a("x");
  Secret b = a;
  Secret c = std::move(a);
  EXPECT_EQ(b.reveal(), "x");
  EXPECT_EQ(c.reveal(), "x");
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from secrets are empty
  c.clear();
  EXPECT_TRUE(c.empty());
}
