// The cluster registry file: format, permissions, atomic replacement, locking
// between processes, kubeconfig-like merging.

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "../../integration/rest/test_server.h"
#include "cluster/registry.h"
#include "test_files.h"

namespace {

using pai::cluster::Cluster;
using pai::cluster::Config;
using pai::cluster::Registry;

using pai::test::slurp;

// The error of a registry write, "" when it worked.
std::string error_of(const pai::util::Result<void>& r) {
  return r.ok() ? std::string() : r.error().message;
}

void spit(const std::string& p, const std::string& s, mode_t mode = 0600) {
  std::ofstream(p) << s;
  chmod(p.c_str(), mode);
}

Cluster make(const std::string& name, const std::string& token = "tok-" + std::string("x")) {
  Cluster c;
  c.name = name;
  c.uri = "https://" + name + ".example.com";
  c.rest_server = c.uri + "/rest-server";
  c.user = "alice";
  c.login = "password";
  c.token = token;
  c.version = "v1.8.0";
  return c;
}

struct TempDir {
  std::string path = pai::testing::make_temp_dir("registry");
  ~TempDir() { pai::testing::remove_tree(path); }
};

TEST(Registry, SerializeAndParseRoundTrip) {
  Config c;
  c.current = "lab";
  c.preference = std::vector<std::string>{"lab", "cloud"};
  c.clusters = {make("lab", "secret-1"), make("cloud", "secret-2")};
  c.clusters[1].auth = pai::cluster::AuthMethod::TokenFile;
  c.clusters[1].token_file = "/run/secrets/t";
  c.clusters[1].token.clear();
  c.clusters[1].insecure = true;
  c.clusters[1].ca_file = "/etc/ca.pem";
  std::string text = pai::cluster::serialize_config(c);
  pai::diag::List d;
  auto back = pai::cluster::parse_config(text, "r.yaml", d);
  ASSERT_TRUE(back) << text;
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(*back->current, "lab");
  EXPECT_EQ(*back->preference, (std::vector<std::string>{"lab", "cloud"}));
  ASSERT_EQ(back->clusters.size(), 2u);
  EXPECT_EQ(back->clusters[0].token, "secret-1");
  EXPECT_EQ(back->clusters[1].auth, pai::cluster::AuthMethod::TokenFile);
  EXPECT_EQ(back->clusters[1].token_file, "/run/secrets/t");
  EXPECT_TRUE(back->clusters[1].insecure);
  EXPECT_EQ(back->clusters[1].ca_file, "/etc/ca.pem");
  EXPECT_EQ(text.find("secret-2"), std::string::npos);
}

TEST(Registry, UnknownKeysAreKept) {
  std::string text =
      "apiVersion: paictl/v1\nteam: ml-infra\nclusters:\n- name: a\n  uri: https://a\n  owner: "
      "bob\n  labels: {gpu: v100}\n";
  pai::diag::List d;
  auto c = pai::cluster::parse_config(text, "r.yaml", d);
  ASSERT_TRUE(c);
  std::string out = pai::cluster::serialize_config(*c);
  EXPECT_NE(out.find("team: ml-infra"), std::string::npos) << out;
  EXPECT_NE(out.find("owner: bob"), std::string::npos) << out;
  EXPECT_NE(out.find("gpu: v100"), std::string::npos) << out;
}

TEST(Registry, MalformedFilesAreReportedWithPositionsAndNeverRewritten) {
  TempDir t;
  std::string p = t.path + "/clusters.yaml";
  std::string bad = "clusters:\n- name: a\n  uri: https://a\n- name: a\n  uri: https://b\n";
  spit(p, bad);
  pai::diag::List d;
  Registry r = Registry::load({p}, d);
  ASSERT_TRUE(d.has_errors());
  EXPECT_EQ(d.items()[0].line, 4u);
  pai::diag::List d2;
  std::string err = error_of(pai::cluster::update_file(
      p,
      [](Config& c) -> pai::util::Result<void> {
        c.current = "a";
        return {};
      },
      d2));
  EXPECT_NE(err.find("left unchanged"), std::string::npos) << err;
  EXPECT_EQ(slurp(p), bad);
  spit(p, "clusters: [unclosed\n");
  pai::diag::List d3;
  Registry::load({p}, d3);
  ASSERT_TRUE(d3.has_errors());
  EXPECT_EQ(d3.items()[0].code, "R001");
}

// A registry paictl wrote and something cut short (a full disk, a copy that
// stopped) is refused, never used with its last cluster half there, and never
// rewritten; one written before the end line existed still reads.
TEST(Registry, TruncatedRegistryIsRefusedAndKept) {
  Config c;
  c.current = "lab";
  c.clusters = {make("lab", "secret-1"), make("cloud", "secret-2")};
  std::string whole = pai::cluster::serialize_config(c);
  ASSERT_EQ(whole.substr(whole.size() - 6), "# end\n");
  pai::diag::List ok;
  EXPECT_TRUE(pai::cluster::parse_config(whole, "r.yaml", ok)) << whole;
  // Cut inside the last cluster, at a line end: still valid YAML.
  std::string cut = whole.substr(0, whole.find("  token: secret-2"));
  pai::diag::List d;
  EXPECT_FALSE(pai::cluster::parse_config(cut, "r.yaml", d));
  ASSERT_TRUE(d.has_errors());
  EXPECT_EQ(d.items()[0].code, "R001");
  EXPECT_NE(d.items()[0].message.find("cut short"), std::string::npos) << d.items()[0].message;
  TempDir t;
  std::string p = t.path + "/clusters.yaml";
  spit(p, cut);
  pai::diag::List d2;
  std::string err = error_of(pai::cluster::update_file(
      p,
      [](Config& cc) -> pai::util::Result<void> {
        cc.current = "cloud";
        return {};
      },
      d2));
  EXPECT_NE(err.find("left unchanged"), std::string::npos) << err;
  EXPECT_EQ(slurp(p), cut);
  // A cluster added by hand after the end line: the file is whole, and read.
  pai::diag::List d4;
  auto appended = pai::cluster::parse_config(
      whole + "- name: gone\n  uri: http://127.0.0.1:1\n  token: t\n", "r.yaml", d4);
  ASSERT_TRUE(appended);
  EXPECT_EQ(appended->clusters.size(), 3u);
  // The header of older paictl versions had no end line: read as before.
  std::string old =
      "# paictl cluster registry, written by 'paictl cluster'. It holds access tokens:\n"
      "# keep it private (paictl writes it with mode 0600).\n"
      "apiVersion: paictl/v1\nclusters:\n- name: a\n  uri: https://a\n";
  pai::diag::List d3;
  EXPECT_TRUE(pai::cluster::parse_config(old, "r.yaml", d3));
}

TEST(Registry, WritesAreMode0600AndAtomic) {
  TempDir t;
  std::string p = t.path + "/sub/dir/clusters.yaml";
  pai::diag::List d;
  umask(022);
  ASSERT_EQ(error_of(pai::cluster::update_file(
                p,
                [](Config& c) -> pai::util::Result<void> {
                  c.clusters.push_back(make("a"));
                  return {};
                },
                d)),
            "");
  struct stat st {};
  ASSERT_EQ(stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  struct stat dst {};
  ASSERT_EQ(stat((t.path + "/sub/dir").c_str(), &dst), 0);
  EXPECT_EQ(dst.st_mode & 0777, 0700u);
  ino_t before = st.st_ino;
  ASSERT_EQ(error_of(pai::cluster::update_file(
                p,
                [](Config& c) -> pai::util::Result<void> {
                  c.clusters.push_back(make("b"));
                  return {};
                },
                d)),
            "");
  ASSERT_EQ(stat(p.c_str(), &st), 0);
  EXPECT_NE(st.st_ino, before);  // replaced by rename, never written in place
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // No temporary file is left behind.
  std::string ls = t.path + "/sub/dir";
  int files = 0;
  for (auto* dir = opendir(ls.c_str()); dir;) {
    dirent* e = readdir(dir);
    if (!e) {
      closedir(dir);
      break;
    }
    std::string n = e->d_name;
    if (n != "." && n != "..") {
      ++files;
      EXPECT_TRUE(n == "clusters.yaml" || n == "clusters.yaml.lock") << n;
    }
  }
  EXPECT_EQ(files, 2);
  // A change that fails leaves the file as it was.
  std::string was = slurp(p);
  EXPECT_EQ(error_of(pai::cluster::update_file(
                p,
                [](Config&) -> pai::util::Result<void> {
                  return pai::util::Error{"no", {}};
                },
                d)),
            "no");
  EXPECT_EQ(slurp(p), was);
}

TEST(Registry, LooseModeIsAWarningAndTheNextWriteFixesIt) {
  TempDir t;
  std::string p = t.path + "/clusters.yaml";
  spit(p, pai::cluster::serialize_config(Config{}), 0644);
  pai::diag::List d;
  Registry::load({p}, d);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d.items()[0].code, "R003");
  EXPECT_EQ(d.items()[0].severity, pai::diag::Severity::Warning);
  EXPECT_EQ(error_of(pai::cluster::update_file(
                p, [](Config&) -> pai::util::Result<void> { return {}; }, d)),
            "");
  struct stat st {};
  stat(p.c_str(), &st);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(Registry, SymlinkedRegistryStaysLinked) {
  TempDir t;
  std::string target = t.path + "/real.yaml";
  std::string link = t.path + "/clusters.yaml";
  spit(target, pai::cluster::serialize_config(Config{}));
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  pai::diag::List d;
  ASSERT_EQ(error_of(pai::cluster::update_file(
                link,
                [](Config& c) -> pai::util::Result<void> {
                  c.clusters.push_back(make("a"));
                  return {};
                },
                d)),
            "");
  struct stat st {};
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_NE(slurp(target).find("name: a"), std::string::npos);
}

TEST(Registry, ConcurrentWritersLoseNoUpdate) {
  TempDir t;
  std::string p = t.path + "/clusters.yaml";
  const int kProcs = 8, kEach = 10;
  std::vector<pid_t> kids;
  for (int i = 0; i < kProcs; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      for (int k = 0; k < kEach; ++k) {
        pai::diag::List d;
        std::string name = "c" + std::to_string(i) + "-" + std::to_string(k);
        std::string err = error_of(pai::cluster::update_file(
            p,
            [&](Config& c) -> pai::util::Result<void> {
              c.clusters.push_back(make(name));
              // Preference is read-modify-write too: every writer appends.
              auto pref = c.preference.value_or(std::vector<std::string>{});
              pref.push_back(name);
              c.preference = pref;
              return {};
            },
            d));
        // A writer that waited too long for the lock was told so and its update
        // was not made; it tries again, as its user would. Any other error fails.
        if (err.find("another paictl process holds") != std::string::npos) {
          --k;
          continue;
        }
        if (!err.empty()) _exit(1);
      }
      _exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t k : kids) {
    int status = 0;
    waitpid(k, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  pai::diag::List d;
  Registry r = Registry::load({p}, d);
  EXPECT_FALSE(d.has_errors());
  EXPECT_EQ(r.clusters().size(), static_cast<size_t>(kProcs * kEach));
  EXPECT_EQ(r.preference().size(), static_cast<size_t>(kProcs * kEach));
}

TEST(Registry, SeveralFilesMergeLikeKubeconfig) {
  TempDir t;
  std::string a = t.path + "/a.yaml", b = t.path + "/b.yaml";
  Config ca;
  ca.clusters = {make("lab", "token-from-a")};
  Config cb;
  cb.current = "cloud";
  cb.preference = std::vector<std::string>{"cloud"};
  cb.clusters = {make("lab", "token-from-b"), make("cloud")};
  spit(a, pai::cluster::serialize_config(ca));
  spit(b, pai::cluster::serialize_config(cb));
  pai::diag::List d;
  Registry r = Registry::load({a, b, t.path + "/missing.yaml"}, d);
  EXPECT_TRUE(d.empty());
  ASSERT_EQ(r.clusters().size(), 2u);
  EXPECT_EQ(r.find("lab")->token, "token-from-a");  // the first file wins
  EXPECT_EQ(r.current(), "cloud");                  // the first file that sets it
  EXPECT_EQ(r.file_for("cloud"), b);
  EXPECT_EQ(r.file_for("new"), a);
  EXPECT_EQ(r.file_for_current(), b);
  EXPECT_EQ(r.file_for_preference(), b);
}

TEST(Registry, DefaultPathsFollowTheEnvironment) {
  setenv("PAICTL_CONFIG", "/x/one.yaml:/y/two.yaml", 1);
  EXPECT_EQ(Registry::default_paths(), (std::vector<std::string>{"/x/one.yaml", "/y/two.yaml"}));
  unsetenv("PAICTL_CONFIG");
  setenv("XDG_CONFIG_HOME", "/cfg", 1);
  EXPECT_EQ(Registry::default_paths(), (std::vector<std::string>{"/cfg/paictl/clusters.yaml"}));
  unsetenv("XDG_CONFIG_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(Registry::default_paths(),
            (std::vector<std::string>{"/home/u/.config/paictl/clusters.yaml"}));
}

TEST(Registry, TokenFilesAreReadAtUse) {
  TempDir t;
  Cluster c = make("a");
  c.auth = pai::cluster::AuthMethod::TokenFile;
  c.token_file = t.path + "/token";
  auto missing = pai::cluster::read_token(c);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot read"), std::string::npos);
  spit(c.token_file, "  abc.def.ghi\n");
  auto read = pai::cluster::read_token(c);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, "abc.def.ghi");
}

TEST(Registry, ClusterNames) {
  EXPECT_TRUE(pai::cluster::valid_cluster_name("lab-1.east_2"));
  EXPECT_FALSE(pai::cluster::valid_cluster_name(""));
  EXPECT_FALSE(pai::cluster::valid_cluster_name("auto"));
  EXPECT_FALSE(pai::cluster::valid_cluster_name("-x"));
  EXPECT_FALSE(pai::cluster::valid_cluster_name("a b"));
  EXPECT_FALSE(pai::cluster::valid_cluster_name(std::string(64, 'a')));
}

}  // namespace
