// paictl explain's validate step: a known code (any case) or none passes; an
// unknown one is one usage error whose hint names the closest codes.

#include <gtest/gtest.h>

#include <string>

#include "cmd_explain.h"
#include "command.h"

namespace paictl {
namespace {

TEST(ExplainValidate, KnownCodesAndNoCodePass) {
  for (const char* code : {"", "L001", "l001", "SSH002", "J067", "P120", "G010"}) {
    ExplainOptions o;
    o.code = code;
    Usage u;
    validate_explain(o, u);
    EXPECT_TRUE(u.ok()) << code << ": " << u.summary();
  }
}

TEST(ExplainValidate, AnUnknownCodeNamesTheClosestOnes) {
  ExplainOptions o;
  o.code = "H0005";
  Usage u;
  validate_explain(o, u);
  ASSERT_EQ(u.errors().size(), 1u);
  EXPECT_EQ(u.errors()[0].message, "unknown code \"H0005\"");
  EXPECT_EQ(u.errors()[0].hint.rfind("did you mean H005", 0), 0u) << u.errors()[0].hint;
  o.code = "zzzz-nothing-like-it";
  Usage far;
  validate_explain(o, far);
  ASSERT_EQ(far.errors().size(), 1u);
  EXPECT_EQ(far.errors()[0].hint, "'paictl explain' lists every code");
}

}  // namespace
}  // namespace paictl
