// js-yaml 3 typing and JavaScript string conversion, as the rest-server sees values.

#include <cmath>

#include <gtest/gtest.h>

#include "job/js_value.h"
#include "yaml/yaml.h"

namespace {

using pai::job::JsType;

pai::job::JsScalar plain(const char* s) {
  return pai::job::js_resolve_plain(s);
}

TEST(JsValue, NullsAndBooleansFollowJsYaml3) {
  for (const char* s : {"", "~", "null", "Null", "NULL"})
    EXPECT_EQ(plain(s).type, JsType::Null) << s;
  for (const char* s : {"true", "True", "TRUE"}) {
    EXPECT_EQ(plain(s).type, JsType::Boolean) << s;
    EXPECT_TRUE(plain(s).boolean);
  }
  EXPECT_FALSE(plain("FALSE").boolean);
  // YAML 1.1 words that js-yaml 3 keeps as strings.
  for (const char* s : {"yes", "no", "on", "off", "y", "tRUE"})
    EXPECT_EQ(plain(s).type, JsType::String) << s;
}

TEST(JsValue, IntegersIncludeOctalHexBinaryAndSexagesimal) {
  EXPECT_EQ(plain("42").number, 42);
  EXPECT_EQ(plain("-17").number, -17);
  EXPECT_EQ(plain("1_000").number, 1000);
  EXPECT_EQ(plain("0755").number, 493);
  EXPECT_EQ(plain("0x1F").number, 31);
  EXPECT_EQ(plain("0b101").number, 5);
  EXPECT_EQ(plain("1:30").number, 90);
  EXPECT_EQ(plain("08").type, JsType::String);  // not octal, not a float
  EXPECT_EQ(plain("1_").type, JsType::String);
  EXPECT_EQ(plain("0o17").type, JsType::String);  // YAML 1.2 octal is unknown to js-yaml 3
}

TEST(JsValue, FloatsAndSpecialValues) {
  EXPECT_EQ(plain("0.010").number, 0.01);
  EXPECT_EQ(plain("1e3").number, 1000);
  EXPECT_EQ(plain(".5").number, 0.5);
  EXPECT_EQ(plain("1.").number, 1);
  EXPECT_TRUE(std::isinf(plain(".inf").number));
  EXPECT_TRUE(std::isnan(plain(".NaN").number));
  EXPECT_EQ(plain("1.2.3").type, JsType::String);
  EXPECT_EQ(plain("v1.0").type, JsType::String);
}

TEST(JsValue, DatesAreDates) {
  EXPECT_EQ(plain("2024-01-01").type, JsType::Date);
  EXPECT_EQ(plain("2024-01-01T10:20:30Z").type, JsType::Date);
  EXPECT_EQ(pai::job::js_to_string(plain("2024-01-01")),
            "Mon Jan 01 2024 00:00:00 GMT+0000 (Coordinated Universal Time)");
  EXPECT_EQ(pai::job::js_to_string(plain("2024-02-29 23:59:59 +01:00")),
            "Thu Feb 29 2024 22:59:59 GMT+0000 (Coordinated Universal Time)");
  EXPECT_EQ(plain("2024-1-1").type, JsType::String);  // the date form needs two-digit months
}

TEST(JsValue, NumberToStringMatchesJavaScript) {
  using pai::job::js_number_to_string;
  EXPECT_EQ(js_number_to_string(10), "10");
  EXPECT_EQ(js_number_to_string(0.01), "0.01");
  EXPECT_EQ(js_number_to_string(1.1), "1.1");
  EXPECT_EQ(js_number_to_string(-0.5), "-0.5");
  EXPECT_EQ(js_number_to_string(1e21), "1e+21");
  EXPECT_EQ(js_number_to_string(123456789012345680000.0), "123456789012345680000");
  EXPECT_EQ(js_number_to_string(1e-7), "1e-7");
  EXPECT_EQ(js_number_to_string(0.000001), "0.000001");
  EXPECT_EQ(js_number_to_string(1.5e-10), "1.5e-10");
  EXPECT_EQ(js_number_to_string(0.1 + 0.2), "0.30000000000000004");
}

TEST(JsValue, NodesKeepQuotesAndTags) {
  pai::yaml::Stream st = pai::yaml::load(
      "a: \"10\"\nb: 10\nc: !!str 1.0\nd: !!int '12'\ne: !foo x\nf: [1, null, x]\ng: |\n  text\n");
  const pai::yaml::Node* r = st.documents[0];
  EXPECT_EQ(pai::job::js_type(r->get("a")), JsType::String);
  EXPECT_EQ(pai::job::js_type(r->get("b")), JsType::Number);
  EXPECT_EQ(pai::job::js_type(r->get("c")), JsType::String);
  EXPECT_EQ(pai::job::js_scalar(r->get("d")).number, 12);
  EXPECT_FALSE(pai::job::js_scalar(r->get("e")).error.empty());
  EXPECT_EQ(pai::job::js_to_string(r->get("f")), "1,,x");
  EXPECT_EQ(pai::job::js_type(r->get("g")), JsType::String);
  EXPECT_TRUE(pai::job::js_is_integer(r->get("b")));
}

}  // namespace
