// Every `check config` rule has a case directory under tests/data/config/cases/
// with files that break it; `expect` lists every finding (code file:line:col)
// that the directory must produce, no more and no less.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "config/cluster_files.h"
#include "config/rules.h"

namespace fs = std::filesystem;

namespace pai::config {
namespace {

std::vector<std::string> read_lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

std::vector<fs::path> case_dirs() {
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(fs::path(PAI_TEST_DATA) / "config" / "cases"))
    if (e.is_directory()) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

class ConfigCase : public ::testing::TestWithParam<fs::path> {};

TEST_P(ConfigCase, ProducesExactlyTheExpectedFindings) {
  const fs::path dir = GetParam();
  std::vector<std::string> expected = read_lines(dir / "expect");
  CheckOutcome out = check_paths({dir.string()});
  std::vector<std::string> got;
  for (const auto& d : out.diagnostics.items())
    got.push_back(d.code + " " + fs::path(d.file).filename().string() + ":" +
                  std::to_string(d.line) + ":" + std::to_string(d.column));
  EXPECT_EQ(got, expected) << "case " << dir.filename();
  EXPECT_FALSE(out.input_error);
  // Every finding has a message and every error a hint.
  for (const auto& d : out.diagnostics.items()) {
    EXPECT_FALSE(d.message.empty()) << d.code;
    if (d.severity == diag::Severity::Error && d.code != "F001") {
      EXPECT_FALSE(d.hint.empty()) << d.code << ": " << d.message;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ConfigCase, ::testing::ValuesIn(case_dirs()),
                         [](const ::testing::TestParamInfo<fs::path>& info) {
                           std::string n = info.param.filename().string();
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(ConfigCases, EveryRuleHasACaseThatProducesIt) {
  std::set<std::string> produced;
  for (const auto& dir : case_dirs())
    for (const auto& line : read_lines(dir / "expect"))
      produced.insert(line.substr(0, line.find(' ')));
  // F008-F010 are about paths, tested in cli/test_check_config.sh and below; F012
  // (a directory install cannot use) is check config's, tested below.
  for (const auto& r : rules()) {
    std::string code(r.code);
    if (code == "F008" || code == "F009" || code == "F010" || code == "F012") continue;
    EXPECT_TRUE(produced.count(code)) << "no case produces " << code << " (" << r.name << ")";
  }
}

TEST(ConfigCases, CaseNamesMatchTheirMainFinding) {
  for (const auto& dir : case_dirs()) {
    std::string name = dir.filename().string();
    if (name.rfind("valid", 0) == 0) {
      EXPECT_TRUE(read_lines(dir / "expect").empty()) << name;
      continue;
    }
    std::string code = name.substr(0, 4);
    bool found = false;
    for (const auto& line : read_lines(dir / "expect")) found |= line.rfind(code, 0) == 0;
    EXPECT_TRUE(found) << name << " does not produce " << code;
  }
}

TEST(CheckPaths, UnreadableAndUnknownPaths) {
  CheckOutcome out = check_paths({"/nonexistent/layout.yaml"});
  EXPECT_TRUE(out.input_error);
  ASSERT_EQ(out.diagnostics.size(), 1u);
  EXPECT_EQ(out.diagnostics.items()[0].code, "F008");

  fs::path tmp = fs::temp_directory_path() / ("paictl-cases-" + std::to_string(::getpid()));
  fs::create_directories(tmp / "empty");
  CheckOutcome empty = check_paths({(tmp / "empty").string()});
  EXPECT_TRUE(empty.input_error);
  ASSERT_EQ(empty.diagnostics.size(), 1u);
  EXPECT_EQ(empty.diagnostics.items()[0].code, "F010");

  std::ofstream(tmp / "notes.yaml") << "hello: world\n";
  CheckOutcome unknown = check_paths({(tmp / "notes.yaml").string()});
  ASSERT_EQ(unknown.diagnostics.size(), 1u);
  EXPECT_EQ(unknown.diagnostics.items()[0].code, "F009");
  EXPECT_TRUE(unknown.input_error);  // not a cluster file: bad input, exit 2
  fs::remove_all(tmp);
}

TEST(CheckPaths, KindFromContentWhenNameIsUnusual) {
  fs::path tmp = fs::temp_directory_path() / ("paictl-kind-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  std::ifstream src(fs::path(PAI_TEST_DATA) / "config" / "cases" / "valid" / "hivedscheduler.yaml");
  std::stringstream ss;
  ss << src.rdbuf();
  EXPECT_EQ(detect_kind((tmp / "prod.yaml").string(), ss.str()), FileKind::Hived);
  EXPECT_EQ(detect_kind("x/layout.yaml", ""), FileKind::Layout);
  EXPECT_EQ(detect_kind("x/whatever.yaml", "user: a\ndocker_image_tag: v1\n"),
            FileKind::ClusterConfig);
  EXPECT_EQ(detect_kind("x/whatever.yaml", "rest-server: {}\n"), FileKind::ServicesConfig);
  EXPECT_EQ(detect_kind("x/whatever.yaml", "- a\n"), FileKind::Unknown);
  fs::remove_all(tmp);
}

TEST(CheckPaths, BundledExamples) {
  const fs::path ex = fs::path(PAI_SOURCE_DIR) / "examples" / "clusters";
  for (const char* good : {"quickstart", "heterogeneous"}) {
    CheckOutcome out = check_paths({(ex / good).string()});
    EXPECT_FALSE(out.diagnostics.has_errors()) << good;
    EXPECT_EQ(out.diagnostics.count(diag::Severity::Warning), 0u) << good;
    ASSERT_EQ(out.clusters.size(), 1u);
    ASSERT_TRUE(out.clusters[0].model);
    EXPECT_TRUE(out.clusters[0].model->complete);
  }
  CheckOutcome broken = check_paths({(ex / "broken").string()});
  EXPECT_TRUE(broken.diagnostics.has_errors());
  std::set<std::string> codes;
  for (const auto& d : broken.diagnostics.items()) codes.insert(d.code);
  for (const char* c : {"L001", "L002", "L004", "L005", "L010", "L011", "C008", "C001", "C004",
                        "H004", "H005", "H007", "H009", "H013", "H014", "H015", "X001"})
    EXPECT_TRUE(codes.count(c)) << c;
}

}  // namespace
}  // namespace pai::config
