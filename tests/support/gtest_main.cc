// The unit tests' main(): GoogleTest's, except that under PAI_REQUIRE_ALL=1 (CI:
// .ci/run, scripts/test.sh when CI is set) a skipped test (GTEST_SKIP: no root, no
// openssl, no unshare...) fails the run. ctest shows a skipped test case as
// "Passed", so without this a machine that lacks a prerequisite passes quietly.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  int rc = RUN_ALL_TESTS();
  const char* require = std::getenv("PAI_REQUIRE_ALL");
  if (!require || std::strcmp(require, "1") != 0) return rc;
  const testing::UnitTest& unit = *testing::UnitTest::GetInstance();
  if (unit.skipped_test_count() == 0) return rc;
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const testing::TestSuite& suite = *unit.GetTestSuite(i);
    for (int j = 0; j < suite.total_test_count(); ++j) {
      const testing::TestInfo& t = *suite.GetTestInfo(j);
      if (t.result()->Skipped())
        std::fprintf(stderr,
                     "FAIL: %s.%s was skipped; under PAI_REQUIRE_ALL=1 a skip is a failure\n",
                     t.test_suite_name(), t.name());
    }
  }
  return 1;
}
