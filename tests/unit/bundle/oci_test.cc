#include "bundle/oci.h"

#include <gtest/gtest.h>

#include <archive.h>
#include <archive_entry.h>

#include <unistd.h>

#include <filesystem>

#include "support/fake_client.h"
#include "util/json.h"
#include "util/sha256.h"

namespace pai::bundle {
namespace {

namespace fs = std::filesystem;

std::string oci_test_digest(const std::string& s) {
  return "sha256:" + util::sha256_hex(s);
}

http::Route oci_test_route(const std::string& path, long status, std::string body,
                           std::map<std::string, std::string> headers = {},
                           std::map<std::string, std::string> need = {}) {
  http::Route r;
  r.path = path;
  r.headers = std::move(need);
  http::FakeAnswer a;
  a.response.status = status;
  a.response.body = std::move(body);
  for (auto& [k, v] : headers) a.response.headers.push_back({k, v});
  r.answers.push_back(std::move(a));
  return r;
}

class OciPull : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("paictl-oci-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// Docker Hub's way: 401 naming a Bearer realm, a token from the realm, the
// manifest and config with the token, a layer redirected to a CDN (fetched
// without the token); an index filtered to linux/amd64.
TEST_F(OciPull, TokenFlowIndexAndRedirect) {
  std::string config = R"({"architecture":"amd64","os":"linux"})";
  std::string layer = "layer bytes";
  std::string manifest = util::dump_json(
      {{"schemaVersion", 2},
       {"mediaType", "application/vnd.docker.distribution.manifest.v2+json"},
       {"config", {{"digest", oci_test_digest(config)}, {"size", config.size()}}},
       {"layers",
        nlohmann::json::array({{{"digest", oci_test_digest(layer)}, {"size", layer.size()}}})}});
  std::string index = util::dump_json(
      {{"schemaVersion", 2},
       {"mediaType", "application/vnd.docker.distribution.manifest.list.v2+json"},
       {"manifests",
        nlohmann::json::array({{{"digest", oci_test_digest(manifest)},
                                {"size", manifest.size()},
                                {"platform", {{"os", "linux"}, {"architecture", "amd64"}}}},
                               {{"digest", oci_test_digest("other")},
                                {"size", 5},
                                {"platform", {{"os", "linux"}, {"architecture", "s390x"}}}}})}});
  http::FakeClient c;
  const std::string repo = "/v2/library/postgres";
  c.add(oci_test_route(repo + "/manifests/12", 401, "",
                       {{"www-authenticate",
                         "Bearer realm=\"https://auth.docker.io/token\","
                         "service=\"registry.docker.io\","
                         "scope=\"repository:library/postgres:pull\""}}));
  c.add(oci_test_route(repo + "/manifests/12", 200, index, {}, {{"authorization", "Bearer T"}}));
  c.add(oci_test_route("/token", 200, R"({"token":"T"})"));
  c.add(oci_test_route(repo + "/manifests/" + oci_test_digest(manifest), 200, manifest, {},
                       {{"authorization", "Bearer T"}}));
  c.add(oci_test_route(repo + "/blobs/" + oci_test_digest(config), 200, config, {},
                       {{"authorization", "Bearer T"}}));
  http::Route redirect = oci_test_route(repo + "/blobs/" + oci_test_digest(layer), 307, "",
                                        {{"location", "https://cdn.example/blob?sig=x"}});
  redirect.answers[0].error = http::ErrorKind::Redirect;
  c.add(redirect);
  c.add(oci_test_route("/blob", 200, layer, {}, {{"authorization", ""}}));

  auto ref = deploy::parse_image_ref("postgres:12");
  ASSERT_TRUE(ref.ok());
  BlobStore store((dir_ / "blobs").string());
  PullOptions o;
  o.archs = {"amd64"};
  auto img = pull_image(c, *ref, ref->str(), o, store);
  ASSERT_TRUE(img.ok()) << img.error().message;
  EXPECT_TRUE(c.unmatched().empty());
  bool asked_token = false;
  for (const auto& r : c.requests())
    if (r.path == "/token") {
      asked_token = true;
      EXPECT_EQ(r.host, "auth.docker.io");
      EXPECT_EQ(r.query.at("scope"), "repository:library/postgres:pull");
      EXPECT_EQ(r.query.at("service"), "registry.docker.io");
    }
  EXPECT_TRUE(asked_token);
  EXPECT_EQ(img->blobs.size(), 4u);  // the filtered index, the manifest, config, layer
  auto top = util::parse_json(*store.get(img->digest));
  ASSERT_TRUE(top.ok());
  ASSERT_EQ((*top)["manifests"].size(), 1u);
  EXPECT_EQ((*top)["manifests"][0]["platform"]["architecture"], "amd64");

  // The tar: oci-layout, index.json naming the image, every blob.
  std::string tar = (dir_ / "img.tar").string();
  ASSERT_TRUE(write_image_tar(*img, store, tar).ok());
  struct archive* a = archive_read_new();
  archive_read_support_format_tar(a);
  ASSERT_EQ(archive_read_open_filename(a, tar.c_str(), 10240), ARCHIVE_OK);
  std::vector<std::string> names;
  std::string index_json;
  struct archive_entry* e = nullptr;
  while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
    names.push_back(archive_entry_pathname(e));
    if (names.back() == "index.json") {
      index_json.resize(static_cast<size_t>(archive_entry_size(e)));
      archive_read_data(a, index_json.data(), index_json.size());
    }
  }
  archive_read_free(a);
  EXPECT_EQ(names.size(), 4u + 4u);
  auto ij = util::parse_json(index_json);
  ASSERT_TRUE(ij.ok());
  EXPECT_EQ((*ij)["manifests"][0]["annotations"]["io.containerd.image.name"],
            "docker.io/library/postgres:12");
  EXPECT_EQ((*ij)["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"], "12");

  // A second pull fetches only the tag's manifest: every blob is in the store.
  c.clear_requests();
  auto again = pull_image(c, *ref, ref->str(), o, store);
  ASSERT_TRUE(again.ok());
  for (const auto& r : c.requests()) EXPECT_EQ(r.path.find("/blobs/"), std::string::npos) << r.path;
}

TEST_F(OciPull, ABlobOfOtherContentIsRefused) {
  BlobStore store((dir_ / "blobs").string());
  auto r = store.put(oci_test_digest("a"), "b");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not the sha256:"), std::string::npos);
  EXPECT_FALSE(store.has(oci_test_digest("a")));
}

}  // namespace
}  // namespace pai::bundle
