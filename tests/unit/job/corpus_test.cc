// The job file corpus (tests/data/jobs): every valid file passes without
// warnings; every invalid file lists, in "# expect: CODE LINE" comments, the
// findings it must produce, and produces no other error or warning.

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "job/job_file.h"
#include "job/rules.h"
#include "job/validate.h"
#include "test_files.h"

namespace {

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 5 && n.substr(n.size() - 5) == ".yaml") out.push_back(dir + "/" + n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

using pai::test::slurp;

struct Expectation {
  std::string code;
  uint32_t line;
  bool operator<(const Expectation& o) const {
    return std::tie(code, line) < std::tie(o.code, o.line);
  }
};

std::set<Expectation> expectations(const std::string& text) {
  std::set<Expectation> out;
  // Lines of the form "# expect: J012 7" (code, line).
  const std::string marker = "# expect: ";
  auto digits = [&](size_t from, size_t n) {
    for (size_t i = from; i < from + n; ++i)
      if (i >= text.size() || text[i] < '0' || text[i] > '9') return false;
    return true;
  };
  for (size_t pos = text.find(marker); pos != std::string::npos; pos = text.find(marker, pos + 1)) {
    size_t c = pos + marker.size();
    if (c + 5 >= text.size() || text[c] != 'J' || !digits(c + 1, 3) || text[c + 4] != ' ' ||
        !digits(c + 5, 1))
      continue;
    size_t end = c + 5;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    out.insert(
        {text.substr(c, 4), static_cast<uint32_t>(std::stoul(text.substr(c + 5, end - c - 5)))});
  }
  return out;
}

std::string describe(const pai::diag::List& l) {
  std::string s;
  for (const auto& d : l.items())
    s += "  " + d.code + " " + std::to_string(d.line) + ":" + std::to_string(d.column) + " " +
         d.message + "\n";
  return s;
}

TEST(JobCorpus, ValidFilesHaveNoFindings) {
  auto files = files_in(std::string(PAI_TEST_DATA) + "/jobs/valid");
  ASSERT_GE(files.size(), 3u);
  for (const auto& path : files) {
    pai::job::JobFile f = pai::job::JobFile::load(path);
    pai::diag::List out;
    pai::job::validate(f, out);
    size_t serious =
        out.count(pai::diag::Severity::Error) + out.count(pai::diag::Severity::Warning);
    EXPECT_EQ(serious, 0u) << path << ":\n" << describe(out);
  }
}

TEST(JobCorpus, InvalidFilesReportExactlyTheirExpectedFindings) {
  auto files = files_in(std::string(PAI_TEST_DATA) + "/jobs/invalid");
  ASSERT_GE(files.size(), 20u);
  std::set<std::string> codes_covered;
  for (const auto& path : files) {
    std::string text = slurp(path);
    std::set<Expectation> want = expectations(text);
    ASSERT_FALSE(want.empty()) << path << " has no '# expect:' line";
    pai::job::JobFile f = pai::job::JobFile::load(path);
    pai::diag::List out;
    pai::job::validate(f, out);
    std::set<Expectation> got;
    for (const auto& d : out.items()) {
      EXPECT_NE(pai::job::find_rule(d.code), nullptr)
          << path << ": code " << d.code << " is not in the catalogue";
      if (d.severity == pai::diag::Severity::Info && !want.count({d.code, d.line})) continue;
      got.insert({d.code, d.line});
    }
    for (const auto& w : want)
      EXPECT_TRUE(got.count(w)) << path << ": expected " << w.code << " at line " << w.line
                                << ", got:\n"
                                << describe(out);
    for (const auto& g : got)
      EXPECT_TRUE(want.count(g)) << path << ": unexpected " << g.code << " at line " << g.line
                                 << ", got:\n"
                                 << describe(out);
    for (const auto& w : want) codes_covered.insert(w.code);
  }
  // Every rule of the catalogue is exercised by at least one file (J005, an
  // unreadable file, and J067, which needs --export-params, have their own tests).
  for (const auto& r : pai::job::rules()) {
    if (r.code != "J005" && r.code != "J067") {
      EXPECT_TRUE(codes_covered.count(std::string(r.code)))
          << "no corpus file exercises " << r.code;
    }
  }
}

TEST(JobCorpus, SecretValuesNeverAppearInFindings) {
  for (const auto& dir : {"/jobs/valid", "/jobs/invalid"})
    for (const auto& path : files_in(std::string(PAI_TEST_DATA) + dir)) {
      pai::job::JobFile f = pai::job::JobFile::load(path);
      pai::diag::List out;
      pai::job::validate(f, out);
      for (const auto& d : out.items())
        for (const char* secret :
             {"s3cret-value", "do-not-print-me", "plain-text-password", "not-a-real-password"}) {
          EXPECT_EQ(d.message.find(secret), std::string::npos) << path << ": " << d.message;
          EXPECT_EQ(d.hint.find(secret), std::string::npos) << path << ": " << d.hint;
        }
    }
}

}  // namespace

namespace {

TEST(JobRules, EveryCodeIsDocumentedWithItsName) {
  std::string doc = slurp(std::string(PAI_SOURCE_DIR) + "/docs/jobs.md");
  for (const auto& r : pai::job::rules()) {
    std::string code(r.code);
    std::string heading = "#### " + code + " " + std::string(r.name) + " (";
    EXPECT_NE(doc.find(heading), std::string::npos) << "docs/jobs.md lacks " << heading;
    std::string anchor = code;
    for (char& c : anchor) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_NE(doc.find("<a id=\"" + anchor + "\"></a>"), std::string::npos) << code;
  }
}

}  // namespace
