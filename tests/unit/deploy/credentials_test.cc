// What install hands back (lib/deploy/credentials.h): the admin password
// written into services-configuration.yaml with every other line kept, the
// cluster's addresses, and its registration through a sign-in to the gateway
// (against http::FakeClient), which stores the token and never the password.

#include "deploy/credentials.h"

#include <sys/stat.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "support/fake_client.h"

namespace pai::deploy {
namespace {

namespace fs = std::filesystem;

const remote::Secret kPw("Pw7xKq2mZr9TbW4nHc3e");

std::string slurp_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The password the edited text gives load_openpai_settings.
std::string password_of(const std::string& text) {
  std::string path = fs::temp_directory_path() / ("paictl-cred-" + std::to_string(::getpid()));
  std::ofstream(path) << text;
  auto s = load_openpai_settings(path);
  fs::remove(path);
  return s.ok() ? s->admin_password.reveal() : "(error: " + s.error().message + ")";
}

TEST(AdminPassword, AddedUnderRestServerEveryOtherLineKept) {
  const std::string text =
      "# the services of this cluster\n"
      "cluster:\n"
      "  common:\n"
      "    cluster-id: lab   # the registry's name\n"
      "rest-server:\n"
      "    # the admin\n"
      "    default-pai-admin-username: admin\n"
      "webportal:\n"
      "  server-port: 9286\n";
  auto out = with_admin_password(text, "s.yaml", kPw);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out,
            "# the services of this cluster\n"
            "cluster:\n"
            "  common:\n"
            "    cluster-id: lab   # the registry's name\n"
            "rest-server:\n"
            "    # the admin\n"
            "    default-pai-admin-password: \"Pw7xKq2mZr9TbW4nHc3e\"\n"
            "    default-pai-admin-username: admin\n"
            "webportal:\n"
            "  server-port: 9286\n");
  EXPECT_EQ(password_of(*out), kPw.reveal());
}

TEST(AdminPassword, AnEmptyValueIsFilledAndItsCommentKept) {
  auto out = with_admin_password(
      "rest-server:\n  default-pai-admin-password:   # made by install\n  server-port: 9186\n",
      "s.yaml", kPw);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out,
            "rest-server:\n  default-pai-admin-password: \"Pw7xKq2mZr9TbW4nHc3e\"  # made by "
            "install\n  server-port: 9186\n");
  out = with_admin_password("rest-server:\n  default-pai-admin-password: \"\"\n", "s.yaml", kPw);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(password_of(*out), kPw.reveal());
}

TEST(AdminPassword, NoRestServerSectionOrAnEmptyOne) {
  auto out = with_admin_password("cluster:\n  common:\n    cluster-id: lab", "s.yaml", kPw);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out,
            "cluster:\n  common:\n    cluster-id: lab\nrest-server:\n  "
            "default-pai-admin-password: \"Pw7xKq2mZr9TbW4nHc3e\"\n");
  out = with_admin_password("rest-server:   # nothing yet\npylon:\n  port: 80\n", "s.yaml", kPw);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out,
            "rest-server:   # nothing yet\n  default-pai-admin-password: \"Pw7xKq2mZr9TbW4nHc3e\"\n"
            "pylon:\n  port: 80\n");
  EXPECT_EQ(password_of(*out), kPw.reveal());
}

TEST(AdminPassword, WhatCannotBeEditedSafelyIsRefusedWithItsPlace) {
  auto flow = with_admin_password("rest-server: {server-port: 9186}\n", "s.yaml", kPw);
  ASSERT_FALSE(flow.ok());
  EXPECT_EQ(flow.error().message.rfind("s.yaml:1:", 0), 0u) << flow.error().message;
  auto bad = with_admin_password("rest-server: [\n", "s.yaml", kPw);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("s.yaml:", 0), 0u);
  auto set =
      with_admin_password("rest-server:\n  default-pai-admin-password: old\n", "s.yaml", kPw);
  EXPECT_FALSE(set.ok());
}

TEST(AdminPassword, WrittenAtMode0600AndReadBack) {
  std::string dir = fs::temp_directory_path() / ("paictl-cred-w-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string file = dir + "/services-configuration.yaml";
  std::ofstream(file) << "# keep me\nrest-server:\n  server-port: 9186\n";
  ::chmod(file.c_str(), 0644);
  ASSERT_TRUE(write_admin_password(file, kPw).ok());
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(slurp_file(file).rfind("# keep me\n", 0), 0u);
  auto back = read_admin_password(file);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->reveal(), kPw.reveal());
  fs::remove_all(dir);
}

TEST(AdminPassword, MadePasswordsAreLongAndDiffer) {
  auto a = make_admin_password(), b = make_admin_password();
  EXPECT_EQ(a.reveal().size(), 20u);
  EXPECT_NE(a.reveal(), b.reveal());
  for (char c : a.reveal()) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)));
}

TEST(ClusterAccess, TheGatewayAndHivedAsTheInstallServesThem) {
  OpenPaiSettings o;
  o.cluster_id = "lab";
  o.hived_config = "physicalCluster: {}\n";
  o.hived_port = 30096;
  o.services_file = "c/services-configuration.yaml";
  ClusterAccess a = cluster_access(o, "10.0.0.1");
  EXPECT_EQ(a.gateway, "http://10.0.0.1");
  EXPECT_EQ(a.hived, "http://10.0.0.1:30096");
  EXPECT_EQ(a.name, "lab");
  EXPECT_EQ(cluster_add_command("lab", a),
            "paictl cluster add lab --uri http://10.0.0.1 --user admin --hived "
            "http://10.0.0.1:30096 --password-stdin");
  o.pylon_port = 8080;
  o.hived_enabled = false;
  a = cluster_access(o, "10.0.0.1");
  EXPECT_EQ(a.gateway, "http://10.0.0.1:8080");
  EXPECT_EQ(a.hived, "");
}

// The gateway of an installed cluster as it answers a sign-in of its admin.
void installed_gateway(http::FakeClient& f, const std::string& password) {
  f.add("GET", "/rest-server/api/v2/info", 200,
        R"({"name": "PAI RESTful API", "version": "v1.8.0", "authnMethod": "basic"})");
  http::Route login;
  login.method = "POST";
  login.path = "/rest-server/api/v2/authn/basic/login";
  login.body = "username=admin&password=" + password + "&expiration=604800";
  http::FakeAnswer ok;
  ok.response.status = 200;
  ok.response.headers.push_back({"content-type", "application/json"});
  ok.response.body = R"({"token": "tok-admin-1", "user": "admin", "admin": true})";
  login.answers.push_back(ok);
  f.add(login);
  http::Route user;
  user.path = "/rest-server/api/v2/users/admin";
  user.headers["authorization"] = "Bearer tok-admin-1";
  http::FakeAnswer u;
  u.response.status = 200;
  u.response.headers.push_back({"content-type", "application/json"});
  u.response.body = R"({"username": "admin", "admin": true, "virtualCluster": ["default"]})";
  user.answers.push_back(u);
  f.add(user);
}

struct Register : ::testing::Test {
  std::string dir = fs::temp_directory_path() / ("paictl-register-" + std::to_string(::getpid()));
  std::string file = dir + "/clusters.yaml";
  diag::List diags;
  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override { fs::remove_all(dir); }
  RegisterRequest request() {
    OpenPaiSettings o;
    o.cluster_id = "lab";
    o.hived_config = "physicalCluster: {}\n";
    RegisterRequest r;
    r.name = "lab";
    r.access = cluster_access(o, "10.0.0.1");
    r.password = kPw;
    return r;
  }
};

TEST_F(Register, SignsInAsTheAdminAndStoresTheTokenAndHived) {
  http::FakeClient gw;
  installed_gateway(gw, kPw.reveal());
  auto reg = cluster::Registry::load({file}, diags);
  auto done = register_cluster(request(), gw, reg, diags);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(done->cluster.token, "tok-admin-1");
  EXPECT_EQ(done->cluster.hived, "http://10.0.0.1:30096");
  EXPECT_EQ(done->cluster.user, "admin");
  EXPECT_TRUE(done->made_current);
  EXPECT_TRUE(gw.unmatched().empty());
  std::string text = slurp_file(file);
  EXPECT_NE(text.find("tok-admin-1"), std::string::npos);
  EXPECT_NE(text.find("http://10.0.0.1:30096"), std::string::npos);
  EXPECT_EQ(text.find(kPw.reveal()), std::string::npos);  // never the password
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // Again under the same name: refused unless forced (a re-run forces it for
  // the same gateway).
  auto again = register_cluster(request(), gw, cluster::Registry::load({file}, diags), diags);
  EXPECT_FALSE(again.ok());
  RegisterRequest forced = request();
  forced.force = true;
  EXPECT_TRUE(register_cluster(forced, gw, cluster::Registry::load({file}, diags), diags).ok());
}

TEST_F(Register, AWrongPasswordIsASignInErrorAndWritesNothing) {
  http::FakeClient gw;
  installed_gateway(gw, "another-password");
  http::Route refused;
  refused.method = "POST";
  refused.path = "/rest-server/api/v2/authn/basic/login";
  refused.body = "username=admin&password=" + kPw.reveal() + "&expiration=604800";
  http::FakeAnswer no;
  no.response.status = 400;
  no.response.headers.push_back({"content-type", "application/json"});
  no.response.body = R"({"code": "IncorrectPasswordError", "message": "Password is incorrect."})";
  refused.answers.push_back(no);
  gw.add(refused);
  auto reg = cluster::Registry::load({file}, diags);
  auto done = register_cluster(request(), gw, reg, diags);
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.error().stage, cluster::AddError::Stage::SignIn);
  EXPECT_FALSE(fs::exists(file));
}

}  // namespace
}  // namespace pai::deploy
