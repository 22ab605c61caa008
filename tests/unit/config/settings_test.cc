// paictl's settings of a cluster directory in config.yaml (ssh_config, ssh_user,
// known_hosts, ssh_key_file_path, ignore_check_errors, hived_url): read, resolved
// against the directory, bad values reported with positions; and what check
// config says of a directory install cannot use.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config/cluster_files.h"

namespace fs = std::filesystem;

namespace pai::config {
namespace {

struct SettingsDir {
  fs::path path = fs::temp_directory_path() / ("paictl-settings-" + std::to_string(::getpid()));
  SettingsDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~SettingsDir() { fs::remove_all(path); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
  }
};

std::string settings_findings(const CheckOutcome& out) {
  std::string s;
  for (const auto& d : out.diagnostics.items())
    s += d.code + " " + fs::path(d.file).filename().string() + ":" + std::to_string(d.line) + " " +
         d.message + "\n";
  return s;
}

const char* kSettingsLayout =
    "machine-sku:\n  m:\n    mem: 8Gi\n    cpu:\n      vcore: 2\n"
    "machine-list:\n  - hostname: a\n    hostip: 10.0.0.1\n    machine-type: m\n"
    "    pai-master: \"true\"\n  - hostname: b\n    hostip: 10.0.0.2\n    machine-type: m\n"
    "    pai-worker: \"true\"\n";

}  // namespace

TEST(ClusterSettings, ReadAndResolvedAgainstTheDirectory) {
  SettingsDir d;
  d.write("layout.yaml", kSettingsLayout);
  d.write("ssh_config", "Host *\n");
  fs::create_directories(d.path / "keys");
  d.write("keys/id", "key");
  d.write("config.yaml",
          "user: root\ndocker_image_tag: v1.8.0\nssh_config: ssh_config\nssh_user: admin\n"
          "ssh_key_file_path: keys/id\nknown_hosts: /etc/hostname\n"
          "ignore_check_errors: [CPU, DNS]\nhived_url: http://10.0.0.1:30096\n");
  CheckOutcome out = check_paths({d.path.string()});
  EXPECT_TRUE(out.diagnostics.empty()) << settings_findings(out);
  ASSERT_EQ(out.clusters.size(), 1u);
  const ClusterConfig& c = *out.clusters[0].config;
  EXPECT_EQ(c.ssh_user, "admin");
  EXPECT_EQ(c.ignore_check_errors, (std::vector<std::string>{"CPU", "DNS"}));
  EXPECT_EQ(c.hived_url, "http://10.0.0.1:30096");
  EXPECT_EQ(resolve_setting_path(c.file, c.ssh_config), d.path.string() + "/ssh_config");
  EXPECT_EQ(resolve_setting_path(c.file, c.ssh_key_file_path), d.path.string() + "/keys/id");
  EXPECT_EQ(resolve_setting_path(c.file, c.known_hosts), "/etc/hostname");
  EXPECT_EQ(resolve_setting_path(c.file, "none"), "none");
  // The same settings read alone, for a command's defaults.
  auto s = read_cluster_settings(d.path.string());
  ASSERT_TRUE(s);
  EXPECT_EQ(s->hived_url, "http://10.0.0.1:30096");
  EXPECT_FALSE(read_cluster_settings((d.path / "nowhere").string()));
  EXPECT_TRUE(install_readiness(out, {d.path.string()}).empty());
}

TEST(ClusterSettings, BadValuesAreFindingsAtTheirPlace) {
  SettingsDir d;
  d.write("layout.yaml", kSettingsLayout);
  d.write("config.yaml",
          "user: root\ndocker_image_tag: v1.8.0\n"
          "ssh_config: missing_config\n"         // 3: C009
          "ssh_user: \"a b\"\n"                  // 4: C003
          "ignore_check_errors: CPU,DNS\n"       // 5: F005, not a list
          "hived_url: 10.0.0.1:30096\n"          // 6: C003
          "known_hosts: [a]\n"                   // 7: F005
          "ssh_key_file_path: keys/missing\n");  // 8: C009
  CheckOutcome out = check_paths({d.path.string()});
  std::string got = settings_findings(out);
  for (const char* want : {"C009 config.yaml:3", "C003 config.yaml:4", "F005 config.yaml:5",
                           "C003 config.yaml:6", "F005 config.yaml:7", "C009 config.yaml:8"})
    EXPECT_NE(got.find(want), std::string::npos) << want << " in\n" << got;
  EXPECT_NE(got.find(d.path.string() + "/missing_config does not exist"), std::string::npos) << got;
  // Checked in memory (no directory), files are not looked for.
  CheckOutcome mem = check_sources(
      {{"config.yaml", "user: root\ndocker_image_tag: v1.8.0\nssh_config: missing_config\n"}});
  EXPECT_TRUE(mem.diagnostics.empty()) << settings_findings(mem);
  // A list of names where the items are not names.
  CheckOutcome items = check_sources(
      {{"config.yaml",
        "user: root\ndocker_image_tag: v1.8.0\nignore_check_errors: [\"CPU,DNS\"]\n"}});
  EXPECT_NE(settings_findings(items).find("C003 config.yaml:3"), std::string::npos)
      << settings_findings(items);
  // Its hint says where the names are without naming a flag of paictl (libpai names none).
  ASSERT_FALSE(items.diagnostics.empty());
  const std::string& hint = items.diagnostics.items().front().hint;
  EXPECT_NE(hint.find("ignore_check_errors: [CPU, DNS]"), std::string::npos) << hint;
  EXPECT_NE(hint.find("host checks"), std::string::npos) << hint;
  EXPECT_EQ(hint.find("--"), std::string::npos) << hint;
}

TEST(ClusterSettings, ADirectoryInstallCannotUseSaysWhatToAdd) {
  SettingsDir d;
  d.write("layout.yaml", kSettingsLayout);
  CheckOutcome out = check_paths({d.path.string()});
  EXPECT_FALSE(out.diagnostics.has_errors()) << settings_findings(out);
  diag::List ready = install_readiness(out, {d.path.string() + "/"});
  ASSERT_EQ(ready.size(), 1u);
  const auto& f = ready.items()[0];
  EXPECT_EQ(f.code, "F012");
  EXPECT_EQ(f.severity, diag::Severity::Warning);
  EXPECT_NE(f.message.find("no config.yaml"), std::string::npos) << f.message;
  EXPECT_NE(f.hint.find("docker_image_tag"), std::string::npos) << f.hint;
  EXPECT_NE(f.hint.find("paictl init"), std::string::npos) << f.hint;
  // A config.yaml without its required keys: check config's F007 says which.
  d.write("config.yaml", "ssh_user: root\n");
  CheckOutcome partial = check_paths({d.path.string()});
  std::string got = settings_findings(partial);
  EXPECT_NE(got.find("F007 config.yaml:1 config.yaml is missing the required key \"user\""),
            std::string::npos)
      << got;
  EXPECT_NE(got.find("\"docker_image_tag\""), std::string::npos) << got;
}

}  // namespace pai::config
