// lib/cluster/add: registering a cluster from a program, against answers
// recorded from the REST test server (tests/unit/api/routes/lab.json).

#include "cluster/add.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "../../integration/rest/test_server.h"
#include "api/signin.h"
#include "support/fake_client.h"
#include "test_files.h"
#include "util/fs.h"

namespace {

using pai::cluster::AddError;
using pai::cluster::AddRequest;
using pai::cluster::Credential;
using pai::cluster::Registry;
using pai::http::FakeClient;

using pai::test::slurp;

struct Add : ::testing::Test {
  std::string dir = pai::testing::make_temp_dir("add");
  std::string file = dir + "/clusters.yaml";
  std::string recorded = slurp(std::string(PAI_SOURCE_DIR) + "/tests/unit/api/routes/lab.json");
  FakeClient http{pai::http::routes_from_json(recorded, nullptr)};
  std::string token = nlohmann::json::parse(recorded)["token"];
  pai::diag::List diags;
  ~Add() override { pai::testing::remove_tree(dir); }

  Registry registry() { return Registry::load({file}, diags); }
  AddRequest password_request() {
    AddRequest r;
    r.name = "lab";
    r.uri = "http://pai.test";
    r.user = "alice";
    r.credential = Credential::Password;
    r.secret = "alice-pass-1";
    return r;
  }
};

TEST_F(Add, PasswordSignInStoresOnlyTheToken) {
  Registry reg = registry();
  auto prepared = pai::cluster::prepare_add(password_request(), &reg);
  ASSERT_TRUE(prepared.ok());
  ASSERT_EQ(prepared->warnings.size(), 1u);  // a password over plain http
  EXPECT_NE(prepared->warnings[0].find("plain http://"), std::string::npos);
  auto r = pai::cluster::add_cluster(prepared->request, http, reg, diags);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->cluster.rest_server, "http://pai.test/rest-server");
  EXPECT_EQ(r->cluster.version, "v1.8.0");
  EXPECT_EQ(r->cluster.token, token);
  EXPECT_TRUE(r->made_current);
  EXPECT_EQ(r->user.virtual_clusters, (std::vector<std::string>{"default", "research"}));
  // The probe, the login, the token check: in that order.
  auto reqs = http.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].path, "/rest-server/api/v2/info");
  EXPECT_EQ(reqs[1].body, "username=alice&password=alice-pass-1&expiration=604800");
  EXPECT_EQ(reqs[2].header("authorization"), "Bearer " + token);
  // The registry: the token, not the password, at mode 0600.
  std::string text = slurp(file);
  EXPECT_NE(text.find(token), std::string::npos);
  EXPECT_EQ(text.find("alice-pass-1"), std::string::npos);
  EXPECT_NE(text.find("current: lab"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(http.unmatched().empty());
}

TEST_F(Add, ATokenNamesItsUser) {
  AddRequest req = password_request();
  req.credential = Credential::Token;
  req.user.clear();
  req.secret = token;
  Registry reg = registry();
  auto prepared = pai::cluster::prepare_add(req, &reg);
  ASSERT_TRUE(prepared.ok());
  EXPECT_TRUE(prepared->warnings.empty());  // no password travels
  auto r = pai::cluster::add_cluster(prepared->request, http, reg, diags);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->cluster.user, "alice");
  EXPECT_EQ(r->cluster.login, "token");
}

TEST_F(Add, RefusalsAreStagedAndNothingIsWritten) {
  Registry reg = registry();
  AddRequest wrong = password_request();
  wrong.secret = "nope-nope";
  wrong.token_days = 7;
  auto r = pai::cluster::add_cluster(pai::cluster::prepare_add(wrong)->request, http, reg, diags);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().stage, AddError::Stage::SignIn);
  EXPECT_EQ(r.error().message, "400 IncorrectPasswordError: Password is incorrect.");
  EXPECT_EQ(r.error().doing, "logging in as alice");

  AddRequest bad_token = password_request();
  bad_token.credential = Credential::Token;
  bad_token.secret = "not-a-token";
  r = pai::cluster::add_cluster(bad_token, http, reg, diags);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().stage, AddError::Stage::TokenCheck);
  EXPECT_EQ(r.error().api->code, "UnauthorizedUserError");

  FakeClient nothing;  // no route at all: the probe fails
  r = pai::cluster::add_cluster(password_request(), nothing, reg, diags);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().stage, AddError::Stage::Probe);
  EXPECT_FALSE(pai::util::path_exists(file));
}

TEST_F(Add, OidcClustersNeedAnApplicationToken) {
  http.add("GET", "/rest-server/api/v2/info", 200,
           R"({"name": "PAI", "version": "v1.8.0", "authnMethod": "OIDC"})");
  Registry reg = registry();
  auto r = pai::cluster::add_cluster(password_request(), http, reg, diags);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().stage, AddError::Stage::Request);
  EXPECT_NE(r.error().hint.find("--token-stdin"), std::string::npos);
  for (const auto& q : http.requests()) EXPECT_NE(q.path, "/rest-server/api/v2/authn/basic/login");
}

TEST_F(Add, ABareRestServerIsFoundAtTheRoot) {
  FakeClient bare;
  bare.add("GET", "/rest-server/api/v2/info", 404, "<h1>404</h1>", "text/html");
  bare.add("GET", "/api/v2/info", 200, R"({"name": "PAI", "version": "v1.7.0"})");
  auto p = pai::api::probe(bare, "http://pai.test:9186");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->rest_base, "http://pai.test:9186");
  EXPECT_EQ(p->tried.size(), 2u);
}

TEST_F(Add, PrepareNormalisesAndRefusesBadRequests) {
  std::ofstream(dir + "/ca.pem") << "x";
  AddRequest req = password_request();
  req.uri = "https://alice:SECRET@pai.test/";
  req.ca_file = dir + "/./ca.pem";
  req.insecure = true;
  auto p = pai::cluster::prepare_add(req);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->request.uri, "https://pai.test");
  EXPECT_EQ(p->request.ca_file, dir + "/ca.pem");
  ASSERT_EQ(p->warnings.size(), 2u);  // user info in the URI; --insecure on https
  EXPECT_NE(p->warnings[0].find("ignored and not stored"), std::string::npos);
  EXPECT_NE(p->warnings[1].find("--insecure"), std::string::npos);

  req = password_request();
  req.name = "auto";
  EXPECT_FALSE(pai::cluster::prepare_add(req).ok());
  req = password_request();
  req.uri = "ftp://pai.test";
  EXPECT_FALSE(pai::cluster::prepare_add(req).ok());
  req = password_request();
  req.credential = Credential::TokenFile;
  req.token_file = "relative/token";
  EXPECT_FALSE(pai::cluster::prepare_add(req).ok());
}

TEST(Token, UserFromToken) {
  using pai::api::user_from_token;
  // {"alg":"none"} . {"username":"alice"} . sig
  EXPECT_EQ(user_from_token("eyJhbGciOiJub25lIn0.eyJ1c2VybmFtZSI6ImFsaWNlIn0.c2ln"), "alice");
  EXPECT_EQ(user_from_token("not-a-jwt"), "");
  // {"username": 5}: not a name, and no exception.
  EXPECT_EQ(user_from_token("e30.eyJ1c2VybmFtZSI6IDV9.x"), "");
  EXPECT_EQ(user_from_token("a." + std::string(100000, 'A') + ".b"), "");
}

}  // namespace
