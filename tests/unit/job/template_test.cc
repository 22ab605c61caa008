// The <% %> templates: mustache.js 2.3 tokenizing with the server's render loop.

#include <map>

#include <gtest/gtest.h>

#include "job/template.h"

namespace {

using pai::job::parse_template;
using pai::job::render_template;

std::string render(const std::string& text, const std::map<std::string, std::string>& vars) {
  auto t = parse_template(text);
  EXPECT_FALSE(t.error) << text;
  return render_template(t, [&](const std::string& n) -> std::optional<std::string> {
    auto it = vars.find(n);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}

TEST(Template, SubstitutesVariablesAndKeepsUnknownOnes) {
  EXPECT_EQ(render("python train.py --lr <% $parameters.lr %>", {{"$parameters.lr", "0.01"}}),
            "python train.py --lr 0.01");
  EXPECT_EQ(render("<%$parameters.lr%>x", {{"$parameters.lr", "1"}}), "1x");
  // Unknown names stay, written with single spaces.
  EXPECT_EQ(render("a <%   $parameters.x   %> b", {}), "a <% $parameters.x %> b");
}

TEST(Template, IndexesBecomeDottedNames) {
  EXPECT_EQ(pai::job::lookup_name("$data.uri[0]"), "$data.uri.0");
  EXPECT_EQ(pai::job::lookup_name("$a[1][2].b"), "$a.1.2.b");
  EXPECT_EQ(render("<% $data.uri[1] %>", {{"$data.uri.1", "hdfs://b"}}), "hdfs://b");
  // The literal kept for a miss is the rewritten name, as the server writes it.
  EXPECT_EQ(render("<% $data.uri[7] %>", {}), "<% $data.uri.7 %>");
}

TEST(Template, SectionsCommentsAndOtherTagsAreDropped) {
  EXPECT_EQ(render("a<%# s %>hidden <% x %><%/ s %>b", {{"x", "X"}}), "ab");
  EXPECT_EQ(render("a<%! a comment %>b", {}), "ab");
  EXPECT_EQ(render("a<%& x %>b<%{ x }%>c", {{"x", "X"}}), "abc");
  EXPECT_EQ(render("a<%> partial %>b", {}), "ab");
}

TEST(Template, StandaloneTagLinesLoseTheirLine) {
  // A line holding only a comment disappears with its newline.
  EXPECT_EQ(render("echo 1\n  <%! note %>  \necho 2", {}), "echo 1\necho 2");
  // A variable on its own line stays.
  EXPECT_EQ(render("echo 1\n<% x %>\necho 2", {{"x", "X"}}), "echo 1\nX\necho 2");
}

TEST(Template, DelimitersCanChange) {
  EXPECT_EQ(render("<%={{ }}=%>{{ x }} <% x %>", {{"x", "X"}}), "X <% x %>");
}

TEST(Template, ResultIsTrimmed) {
  EXPECT_EQ(render("  \n echo hi \n\n", {}), "echo hi");
}

TEST(Template, SyntaxErrorsAreReportedWithOffsets) {
  auto a = parse_template("echo <% $parameters.x");
  ASSERT_TRUE(a.error);
  EXPECT_EQ(a.error->offset, 5u);
  auto b = parse_template("<%# a %>x<%/ b %>");
  ASSERT_TRUE(b.error);
  EXPECT_NE(b.error->message.find("\"a\""), std::string::npos);
  auto c = parse_template("x<%/ a %>");
  ASSERT_TRUE(c.error);
  auto d = parse_template("<%# open %>");
  ASSERT_TRUE(d.error);
  EXPECT_NE(d.error->message.find("never closed"), std::string::npos);
  EXPECT_FALSE(parse_template("100% sure, 5 < 6 % 4").error);
}

TEST(Template, TrimKnowsJavaScriptWhitespace) {
  EXPECT_EQ(pai::job::js_trim("\xC2\xA0 x \t\r\n"), "x");
  EXPECT_EQ(pai::job::js_trim("\xEF\xBB\xBFy"), "y");
  EXPECT_EQ(pai::job::js_trim(""), "");
}

}  // namespace
