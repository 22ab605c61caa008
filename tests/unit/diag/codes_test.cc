// The code catalogue (lib/diag/codes.h) against the source: every code a finding
// is reported with has an entry, every entry is a code something reports, and the
// rule lists of check config and job validate are made from it.
#include "diag/codes.h"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "config/rules.h"
#include "job/rules.h"
#include "test_files.h"

namespace pai::diag {
namespace {

namespace fs = std::filesystem;

// Every string literal of lib/ and cli/ that is shaped like a code ("L001",
// "SSH002"), with the first file that has it. Comments are left out: they name GPU
// models ("A100", "V100") in quotes.
std::map<std::string, std::string> codes_in_source() {
  std::map<std::string, std::string> found;
  static const std::regex kCode("\"((?:[A-Z]|SSH)[0-9]{3})\"");
  for (const char* dir : {"lib", "cli"}) {
    for (const auto& e :
         fs::recursive_directory_iterator(std::string(PAI_SOURCE_DIR) + "/" + dir)) {
      std::string ext = e.path().extension().string();
      if (ext != ".cc" && ext != ".h") continue;
      // The catalogue itself is what is checked, not a place that reports codes.
      if (e.path().filename().string().rfind("codes", 0) == 0 &&
          e.path().parent_path().filename() == "diag")
        continue;
      std::string text = test::slurp(e.path().string());
      std::string code_only;
      for (size_t i = 0; i < text.size();) {
        if (text.compare(i, 2, "//") == 0) {
          i = text.find('\n', i);
          if (i == std::string::npos) break;
        } else {
          code_only += text[i++];
        }
      }
      for (std::sregex_iterator it(code_only.begin(), code_only.end(), kCode), end; it != end; ++it)
        found.emplace((*it)[1].str(), fs::relative(e.path(), PAI_SOURCE_DIR).string());
    }
  }
  return found;
}

TEST(CodeCatalogue, EveryCodeReportedInTheSourceHasAnEntry) {
  auto found = codes_in_source();
  ASSERT_GT(found.size(), 150u) << "the scan found too few codes to be looking at the source";
  for (const auto& [code, file] : found)
    EXPECT_NE(find_code(code), nullptr)
        << code << " (" << file << ") is missing from lib/diag/codes*.cc";
}

TEST(CodeCatalogue, EveryEntryIsACodeTheSourceReports) {
  auto found = codes_in_source();
  for (const auto& c : codes())
    EXPECT_TRUE(found.count(std::string(c.code)))
        << c.code << " is in the catalogue, but nothing reports it";
}

TEST(CodeCatalogue, EntriesAreCompleteAndUnique) {
  std::set<std::string> seen;
  for (const auto& c : codes()) {
    EXPECT_TRUE(seen.insert(std::string(c.code)).second) << c.code << " twice";
    EXPECT_FALSE(c.name.empty()) << c.code;
    EXPECT_FALSE(c.reporter.empty()) << c.code;
    EXPECT_FALSE(c.title.empty()) << c.code;
    EXPECT_FALSE(c.meaning.empty()) << c.code;
    EXPECT_FALSE(c.fix.empty()) << c.code;
    EXPECT_EQ(c.title.back() == '.', false) << c.code << ": a title is one line without a period";
    for (char ch : c.name)
      EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-')
          << c.code << " name " << c.name;
  }
  EXPECT_GE(codes().size(), 150u);
}

TEST(CodeCatalogue, ExamplesShowTheirOwnCode) {
  for (const auto& c : codes()) {
    if (c.example.empty()) continue;
    // A job example is a wrong snippet; every other example quotes paictl's line.
    if (family_of(c.code) == "J") continue;
    EXPECT_NE(c.example.find("[" + std::string(c.code) + "]"), std::string_view::npos)
        << c.code << "'s example does not show what paictl says about it";
  }
}

// libpai names no CLI flag (docs/architecture.md): the texts of check config's codes
// say what a finding is, and the front end adds its flags (explain: --fail-on-warn).
// The one flag left is kubelet's own, which C006 is about.
TEST(CodeCatalogue, CheckConfigTextsNameNoFlagOfPaictl) {
  static const std::regex kFlag("(^|[^-A-Za-z0-9])--[a-z][a-z-]*");
  static const std::set<std::string_view> kConfigFamilies{"F", "L", "C", "A", "S", "H", "X"};
  size_t checked = 0;
  for (const auto& c : codes()) {
    if (!kConfigFamilies.count(family_of(c.code))) continue;
    ++checked;
    for (std::string_view t : {c.title, c.meaning, c.fix, c.example}) {
      std::string text(t);
      for (std::sregex_iterator it(text.begin(), text.end(), kFlag), end; it != end; ++it) {
        std::string flag = (*it).str();
        EXPECT_NE(flag.find("--image-pull-progress-deadline"), std::string::npos)
            << c.code << " names " << flag << ": " << t;
      }
    }
  }
  EXPECT_GT(checked, 50u);  // F L C A S H X: 80 codes
}

TEST(CodeCatalogue, RuleListsAreMadeFromIt) {
  size_t config = 0, job = 0;
  for (const auto& c : codes()) {
    std::string_view f = family_of(c.code);
    if (f == "J") ++job;
    if (f.size() == 1 && std::string_view("FLCASHX").find(f) != std::string_view::npos) ++config;
  }
  ASSERT_EQ(pai::config::rules().size(), config);
  ASSERT_EQ(pai::job::rules().size(), job);
  for (const auto& r : pai::config::rules()) {
    const CodeInfo* c = find_code(r.code);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(r.summary, c->title);
    EXPECT_EQ(r.severity, c->severity);
  }
  EXPECT_EQ(pai::config::rules().front().code, "F001");
  EXPECT_EQ(pai::job::rules().front().code, "J001");
}

TEST(CodeCatalogue, FindsCodesIgnoringCaseAndSuggestsNearOnes) {
  ASSERT_NE(find_code("l001"), nullptr);
  EXPECT_EQ(find_code("l001")->code, "L001");
  EXPECT_EQ(find_code("L999"), nullptr);
  EXPECT_EQ(find_code(""), nullptr);
  EXPECT_EQ(family_of("SSH002"), "SSH");
  EXPECT_EQ(family_of("P101"), "P");
  auto near = similar_codes("L1");
  ASSERT_FALSE(near.empty());
  EXPECT_EQ(near.front(), "L001");
  near = similar_codes("J099");
  ASSERT_FALSE(near.empty());
  EXPECT_EQ(family_of(near.front()), "J") << "a code of the same family comes first";
  near = similar_codes("invalid-hostname");
  ASSERT_FALSE(near.empty());
  EXPECT_EQ(near.front(), "L001") << "a code's name finds it";
  EXPECT_TRUE(similar_codes("completely-unrelated-words").empty());
}

}  // namespace
}  // namespace pai::diag
