#include "util/strings.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "util/fs.h"

namespace pai::util {
namespace {

TEST(Strings, TrimSplitJoin) {
  EXPECT_EQ(trim("  a b \t\n"), "a b");
  auto parts = split("a,,b", ',');
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1], "");
  EXPECT_EQ(join({"x", "y", "z"}, ", "), "x, y, z");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim(" \r\n\t "), "");
  EXPECT_EQ(trim("x"), "x");
  EXPECT_EQ(trim("\tx y\r"), "x y");
}

TEST(Strings, EqualsIgnoringCase) {
  EXPECT_TRUE(equals_ignoring_case("TRUE", "true"));
  EXPECT_TRUE(equals_ignoring_case("Yes", "yes"));
  EXPECT_TRUE(equals_ignoring_case("", ""));
  EXPECT_FALSE(equals_ignoring_case("true ", "true"));
  EXPECT_FALSE(equals_ignoring_case("tru", "true"));
  EXPECT_FALSE(equals_ignoring_case("trve", "true"));
}

TEST(Strings, EditDistanceAndDidYouMean) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);            // transposition
  EXPECT_EQ(edit_distance("abc", "abcdefgh", 2), 3u);  // capped
  std::vector<std::string> keys = {"machine-type", "hostname", "hostip"};
  EXPECT_EQ(did_you_mean("machine-typ", keys), "machine-type");
  EXPECT_EQ(did_you_mean("hostnmae", keys), "hostname");
  EXPECT_EQ(did_you_mean("HOSTIP", keys), "hostip");
  EXPECT_EQ(did_you_mean("machine_type", keys), "machine-type");
  EXPECT_EQ(did_you_mean("completely-different", keys), "");
  EXPECT_EQ(did_you_mean("", keys), "");
}

TEST(Strings, KubernetesNamesAndIps) {
  EXPECT_TRUE(is_dns1123_label("vc-1"));
  EXPECT_FALSE(is_dns1123_label("Vc"));
  EXPECT_FALSE(is_dns1123_label("-a"));
  EXPECT_FALSE(is_dns1123_label("a_b"));
  EXPECT_FALSE(is_dns1123_label(std::string(64, 'a')));
  EXPECT_TRUE(is_dns1123_subdomain("node-1.rack-2.example"));
  EXPECT_FALSE(is_dns1123_subdomain("node..x"));
  EXPECT_TRUE(is_ipv4("10.0.0.255"));
  EXPECT_FALSE(is_ipv4("10.0.0.256"));
  EXPECT_FALSE(is_ipv4("10.0.0"));
  EXPECT_FALSE(is_ipv4("010.0.0.1"));
  EXPECT_FALSE(is_ipv4("a.b.c.d"));
}

TEST(Strings, Quantities) {
  EXPECT_DOUBLE_EQ(*parse_quantity("60Gi"), 60.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*parse_quantity("500M"), 500e6);
  EXPECT_DOUBLE_EQ(*parse_quantity("1.5Ti"), 1.5 * 1099511627776.0);
  EXPECT_DOUBLE_EQ(*parse_quantity("128974848"), 128974848.0);
  EXPECT_DOUBLE_EQ(*parse_quantity("129e6"), 129e6);
  EXPECT_DOUBLE_EQ(*parse_quantity("100m"), 0.1);
  EXPECT_FALSE(parse_quantity("60GB"));
  EXPECT_FALSE(parse_quantity("Gi"));
  EXPECT_FALSE(parse_quantity("-1Gi"));
  EXPECT_FALSE(parse_quantity("1e3Gi"));
  EXPECT_FALSE(parse_quantity("inf"));
  EXPECT_EQ(format_bytes(60.0 * 1024 * 1024 * 1024), "60Gi");
  EXPECT_EQ(format_bytes(1536), "1.5Ki");
}

TEST(Strings, ParseNumbers) {
  EXPECT_EQ(parse_int("-42"), -42);
  EXPECT_FALSE(parse_int("4 2"));
  EXPECT_FALSE(parse_int("99999999999999999999"));
  EXPECT_FALSE(parse_double("0x10"));
  EXPECT_DOUBLE_EQ(*parse_double("2.5e-1"), 0.25);
}

TEST(Strings, ShellQuote) {
  EXPECT_EQ(shell_quote("abc-1.2/x"), "abc-1.2/x");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("$(rm -rf /)"), "'$(rm -rf /)'");
}

namespace fs = std::filesystem;

// The error of a write, "" when it worked.
std::string files_error_of(const pai::util::Result<void>& r) {
  return r.ok() ? std::string() : r.error().message;
}

TEST(Files, AtomicWriteKeepsModeAndReplacesWhole) {
  fs::path dir = fs::temp_directory_path() / ("paictl-fs-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string path = (dir / "secret.yaml").string();
  ASSERT_EQ(files_error_of(write_file_atomic(path, "token: a\n", 0600)), "");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(files_error_of(write_file_atomic(path, "token: b\n", 0600)), "");
  EXPECT_EQ(read_file(path).value(), "token: b\n");
  // No temporary files are left behind.
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) (void)e, ++entries;
  EXPECT_EQ(entries, 1u);
  EXPECT_NE(files_error_of(write_file_atomic((dir / "missing" / "x").string(), "x")), "");
  fs::remove_all(dir);
}

TEST(Files, ReadRefusesDirectoriesFifosAndHugeFiles) {
  fs::path dir = fs::temp_directory_path() / ("paictl-read-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  EXPECT_FALSE(read_file(dir.string()).ok());
  EXPECT_EQ(read_file(dir.string()).error().message, "is a directory");
  std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto r = read_file(fifo);  // must not block
  EXPECT_FALSE(r.ok());
  std::ofstream(dir / "big") << std::string(2048, 'x');
  EXPECT_FALSE(read_file((dir / "big").string(), 1024).ok());
  EXPECT_TRUE(read_file((dir / "big").string(), 4096).ok());
  EXPECT_FALSE(read_file((dir / "nope").string()).ok());
  EXPECT_EQ(files_error_of(make_directories((dir / "a" / "b" / "c").string())), "");
  EXPECT_TRUE(is_directory((dir / "a" / "b" / "c").string()));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pai::util

TEST(Strings, Base64DecodesStandardTextAndRefusesTheRest) {
  EXPECT_EQ(pai::util::base64_decode("aGVsbG8="), "hello");
  EXPECT_EQ(pai::util::base64_decode("aGVs\nbG8h"), "hello!");  // line breaks skipped
  EXPECT_EQ(pai::util::base64_decode(""), "");
  EXPECT_EQ(pai::util::base64_decode("+/8="), std::string("\xfb\xff", 2));
  EXPECT_FALSE(pai::util::base64_decode("aGVs-G8"));   // the URL alphabet is another one
  EXPECT_FALSE(pai::util::base64_decode("aGVs=bG8"));  // '=' only at the end
  EXPECT_FALSE(pai::util::base64_decode("aGVs bG8\x01"));
}
