// The one dispatcher: complete, then validate; every usage error and its hint on
// stderr, the command's help named, exit 2, and run never reached.

#include <gtest/gtest.h>

#include <string>

#include "command.h"
#include "exit_codes.h"

namespace paictl {
namespace {

TEST(Dispatch, UsageErrorsStopBeforeRun) {
  bool completed = false, ran = false;
  testing::internal::CaptureStderr();
  int rc = dispatch_command(
      {"node", "add"}, [&] { completed = true; },
      [&](Usage& u) {
        EXPECT_TRUE(completed) << "complete runs before validate";
        u.error("first problem", "first hint");
        u.error("second problem");
      },
      [&] {
        ran = true;
        return 0;
      });
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, kExitUsage);
  EXPECT_FALSE(ran);
  EXPECT_NE(err.find("first problem\n  hint: first hint\n"), std::string::npos) << err;
  EXPECT_NE(err.find("second problem\n"), std::string::npos) << err;
  EXPECT_LT(err.find("first problem"), err.find("second problem")) << err;
  EXPECT_NE(err.find("Run 'paictl node add --help' for usage."), std::string::npos) << err;
}

TEST(Dispatch, NoUsageErrorRuns) {
  testing::internal::CaptureStderr();
  int rc = dispatch_command(
      {"version"}, [] {}, [](Usage&) {}, [] { return 3; });
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(rc, 3);
}

}  // namespace
}  // namespace paictl
