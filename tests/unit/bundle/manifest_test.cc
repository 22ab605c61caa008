#include "bundle/manifest.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "util/sha256.h"

namespace pai::bundle {
namespace {

namespace fs = std::filesystem;

class BundleDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("paictl-bundle-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void put(const std::string& rel, const std::string& content) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel, std::ios::binary) << content;
  }
  // A bundle of one .deb and one image, its manifest written.
  Bundle make() {
    Bundle b;
    b.cluster = "lab";
    b.created = "2026-12-06T14:00:00Z";
    b.kube_version = "1.30.4";
    b.platforms = {{"ubuntu-22.04", "amd64"}};
    b.driver = "535";
    put("debs/ubuntu-22.04-amd64/kubeadm_1.30.4-1.1_amd64.deb", "deb bytes");
    put("images/pause-3.9.tar", "image bytes!");
    b.files.push_back({"debs/ubuntu-22.04-amd64/kubeadm_1.30.4-1.1_amd64.deb", FileKind::Deb,
                       "kubeadm", "1.30.4-1.1", "", util::sha256_hex("deb bytes"), 9});
    b.files.push_back({"images/pause-3.9.tar", FileKind::Image, "", "", "registry.k8s.io/pause:3.9",
                       util::sha256_hex("image bytes!"), 12});
    put("manifest.json", manifest_json(b));
    return b;
  }
  std::string dir() const { return dir_.string(); }

  fs::path dir_;
};

TEST_F(BundleDir, RoundTripsAndVerifies) {
  make();
  auto b = verify_bundle(dir());
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->cluster, "lab");
  EXPECT_EQ(b->kube_version, "1.30.4");
  ASSERT_EQ(b->platforms.size(), 1u);
  EXPECT_EQ(b->platforms[0].dir_name(), "ubuntu-22.04-amd64");
  EXPECT_EQ(b->driver.value_or(""), "535");
  ASSERT_EQ(b->files.size(), 2u);
  EXPECT_EQ(b->debs_for({"ubuntu-22.04", "amd64"}).size(), 1u);
  EXPECT_EQ(b->debs_for({"ubuntu-22.04", "arm64"}).size(), 0u);
  ASSERT_EQ(b->images().size(), 1u);
  EXPECT_EQ(b->images()[0]->image, "registry.k8s.io/pause:3.9");
  EXPECT_EQ(b->find("images/pause-3.9.tar")->bytes, 12u);
}

TEST_F(BundleDir, RefusesATamperedFileOfTheSameSize) {
  make();
  put("images/pause-3.9.tar", "image bytes?");
  auto b = verify_bundle(dir());
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("images/pause-3.9.tar has SHA-256"), std::string::npos)
      << b.error().message;
  EXPECT_EQ(b.error().kind, util::Error::Kind::Input);
  // read_bundle reads only the manifest.
  EXPECT_TRUE(read_bundle(dir()).ok());
}

TEST_F(BundleDir, RefusesAFileOfAnotherSize) {
  make();
  put("debs/ubuntu-22.04-amd64/kubeadm_1.30.4-1.1_amd64.deb", "deb");
  auto b = verify_bundle(dir());
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("kubeadm_1.30.4-1.1_amd64.deb has 3 bytes; the manifest says 9"),
            std::string::npos)
      << b.error().message;
}

TEST_F(BundleDir, RefusesAMissingFile) {
  make();
  fs::remove(dir_ / "images/pause-3.9.tar");
  auto b = verify_bundle(dir());
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("images/pause-3.9.tar is missing"), std::string::npos)
      << b.error().message;
}

TEST_F(BundleDir, RefusesAnUnlistedFile) {
  make();
  put("images/extra.tar", "x");
  auto b = verify_bundle(dir());
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("images/extra.tar is not in the bundle's manifest"),
            std::string::npos)
      << b.error().message;
  fs::remove(dir_ / "images/extra.tar");
  put("notes/readme.txt", "x");
  b = verify_bundle(dir());
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("notes/ is not in the bundle's manifest"), std::string::npos)
      << b.error().message;
}

TEST_F(BundleDir, RefusesASymbolicLinkInPlaceOfAFile) {
  make();
  put("elsewhere", "image bytes!");
  fs::remove(dir_ / "images/pause-3.9.tar");
  fs::create_symlink(dir_ / "elsewhere", dir_ / "images/pause-3.9.tar");
  fs::rename(dir_ / "elsewhere",
             fs::temp_directory_path() / ("paictl-elsewhere-" + std::to_string(::getpid())));
  auto b = verify_bundle(dir());
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("images/pause-3.9.tar"), std::string::npos) << b.error().message;
  fs::remove(fs::temp_directory_path() / ("paictl-elsewhere-" + std::to_string(::getpid())));
}

TEST_F(BundleDir, NoManifestSaysHowToMakeOne) {
  auto b = read_bundle(dir());
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("has no manifest.json"), std::string::npos);
  EXPECT_NE(b.error().hint.find("paictl bundle build"), std::string::npos);
}

TEST(BundleManifest, BadManifestsAreFileLineColumn) {
  struct Case {
    std::string text, want;
  } cases[] = {
      {"{\"apiVersion\": \"paictl.io/bundle/v1\",\n \"kubeVersion\": 5}", "m.json:2:17: "},
      {"{\"apiVersion\": \"paictl.io/bundle/v2\"}", "m.json:1:16: apiVersion is"},
      {"{\"apiVersion\": \"paictl.io/bundle/v1\", \"kubeVersion\": \"1.30.4\",\n"
       " \"platforms\": [{\"os\": \"ubuntu-22.04\", \"arch\": \"amd64\"}],\n"
       " \"files\": [\n  {\"path\": \"../etc/passwd\", \"kind\": \"deb\"}]}",
       "m.json:4:3: \"../etc/passwd\" is not a bundle path"},
      {"{\"apiVersion\": \"paictl.io/bundle/v1\", \"kubeVersion\": \"1.30.4\",\n"
       " \"platforms\": [{\"os\": \"ubuntu-22.04\", \"arch\": \"amd64\"}],\n"
       " \"files\": [{\"path\": \"images/a.tar\", \"kind\": \"image\", \"image\": \"x:1\",\n"
       " \"sha256\": \"ABC\", \"bytes\": 3}]}",
       "m.json:3:12: images/a.tar: \"sha256\" must be 64 lower-case hex digits"},
      {"{\"apiVersion\": \"paictl.io/bundle/v1\", \"kubeVersion\": \"1.30.4\",\n"
       " \"platforms\": [{\"os\": \"ubuntu-22.04\", \"arch\": \"amd64\"}],\n"
       " \"files\": [{\"path\": \"images/a.tar\", \"kind\": \"image\", \"image\": \"x:1\",\n"
       " \"sha256\": \"" +
           std::string(64, 'a') + "\", \"bytes\": -3}]}",
       "m.json:4:89: \"bytes\" must be a whole number"},
      {"{\"apiVersion\": \"paictl.io/bundle/v1\", \"kubeVersion\": \"1.30.4\",\n"
       " \"platforms\": [], \"files\": []}",
       "m.json:1:1: no \"platforms\""},
      {"{\"apiVersion\": \"paictl.io/bundle/v1\",\n \"files\": [}", "m.json:2:12: "},
      {"[1]", "m.json:1:1: a bundle manifest must be a JSON object"},
  };
  for (const auto& c : cases) {
    auto b = parse_manifest(c.text, "m.json");
    ASSERT_FALSE(b.ok()) << c.text;
    EXPECT_EQ(b.error().message.rfind(c.want, 0), 0u) << b.error().message;
    EXPECT_FALSE(b.error().hint.empty());
  }
}

TEST(BundleManifest, ValidPaths) {
  EXPECT_TRUE(valid_file_path("debs/ubuntu-22.04-amd64/a.deb"));
  EXPECT_TRUE(valid_file_path("images/a.tar"));
  EXPECT_FALSE(valid_file_path("/images/a.tar"));
  EXPECT_FALSE(valid_file_path("images/../a.tar"));
  EXPECT_FALSE(valid_file_path("images//a.tar"));
  EXPECT_FALSE(valid_file_path("manifest.json"));
  EXPECT_FALSE(valid_file_path("other/a.tar"));
}

}  // namespace
}  // namespace pai::bundle
