// Signing in to the ARM test server's token endpoints: client secret (file and
// AZURE_CLIENT_SECRET), federated token file, managed identity; and what a
// refused sign-in says (never the secret).

#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "../../integration/azure/arm_test_server.h"
#include "azure/auth.h"

namespace {

using pai::testing::ArmServer;

struct Env {
  std::map<std::string, std::string> vars;
  std::function<const char*(const char*)> fn() {
    return [this](const char* n) -> const char* {
      auto it = vars.find(n);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

pai::azure::TokenOptions options(const ArmServer& srv) {
  pai::azure::TokenOptions o;
  o.endpoints.arm = srv.base();
  o.endpoints.authority = srv.base();
  o.clock = pai::azure::Clock::real();
  return o;
}

std::vector<std::string> token_form_keys(const ArmServer& srv) {
  for (auto& r : srv.requests())
    if (r["kind"] == "token") return r["query"]["keys"].get<std::vector<std::string>>();
  return {};
}

TEST(AzureAuth, ClientSecretFromEnvironment) {
  ArmServer srv;
  if (!srv.ok()) GTEST_SKIP() << "openssl is missing";
  pai::http::Options ho;
  ho.tls.ca_file = srv.ca_file();
  pai::http::CurlClient http(ho);
  Env env;
  env.vars["AZURE_CLIENT_SECRET"] = ArmServer::kSecret;
  env.vars["AZURE_TENANT_ID"] = "t1";
  env.vars["AZURE_CLIENT_ID"] = ArmServer::kClientId;
  auto src = pai::azure::make_token_source({}, http, options(srv), env.fn());
  ASSERT_TRUE(src.ok()) << src.error().message;
  auto t = (*src)->token();
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->rfind("arm-", 0), 0u);
  EXPECT_EQ(token_form_keys(srv),
            (std::vector<std::string>{"client_id", "client_secret", "grant_type", "scope"}));
  EXPECT_NE((*src)->describe().find("AZURE_CLIENT_SECRET"), std::string::npos);
}

TEST(AzureAuth, SecretFileWinsOverEnvironment) {
  ArmServer srv;
  if (!srv.ok()) GTEST_SKIP() << "openssl is missing";
  pai::http::Options ho;
  ho.tls.ca_file = srv.ca_file();
  pai::http::CurlClient http(ho);
  Env env;
  env.vars["AZURE_CLIENT_SECRET"] = "a-wrong-secret";
  pai::azure::Identity id{"t1", ArmServer::kClientId, srv.secret_file()};
  auto src = pai::azure::make_token_source(id, http, options(srv), env.fn());
  ASSERT_TRUE(src.ok());
  EXPECT_TRUE((*src)->token().ok());
}

TEST(AzureAuth, WrongSecretSaysWhyWithoutTheSecret) {
  ArmServer srv;
  if (!srv.ok()) GTEST_SKIP() << "openssl is missing";
  pai::http::Options ho;
  ho.tls.ca_file = srv.ca_file();
  pai::http::CurlClient http(ho);
  Env env;
  env.vars["AZURE_CLIENT_SECRET"] = "wrong-Secret-123";
  pai::azure::Identity id{"t1", ArmServer::kClientId, ""};
  auto src = pai::azure::make_token_source(id, http, options(srv), env.fn());
  ASSERT_TRUE(src.ok());
  auto t = (*src)->token();
  ASSERT_FALSE(t.ok());
  EXPECT_NE(
      t.error().message.find(
          "401 Unauthorized: AADSTS7000215: Invalid client secret provided. (invalid_client)"),
      std::string::npos)
      << t.error().message;
  EXPECT_EQ(t.error().message.find("wrong-Secret-123"), std::string::npos);
  EXPECT_EQ(t.error().hint.find("wrong-Secret-123"), std::string::npos);
}

TEST(AzureAuth, FederatedTokenFileIsAClientAssertion) {
  ArmServer srv;
  if (!srv.ok()) GTEST_SKIP() << "openssl is missing";
  pai::http::Options ho;
  ho.tls.ca_file = srv.ca_file();
  pai::http::CurlClient http(ho);
  Env env;
  env.vars["AZURE_FEDERATED_TOKEN_FILE"] = srv.assertion_file();
  pai::azure::Identity id{"t1", ArmServer::kClientId, ""};
  auto src = pai::azure::make_token_source(id, http, options(srv), env.fn());
  ASSERT_TRUE(src.ok());
  auto t = (*src)->token();
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(token_form_keys(srv),
            (std::vector<std::string>{"client_assertion", "client_assertion_type", "client_id",
                                      "grant_type", "scope"}));
}

// The platform rotates the projected token: each sign-in reads the file again.
TEST(AzureAuth, FederatedTokenFileIsReadAgainForEachToken) {
  ArmServer srv;
  if (!srv.ok()) GTEST_SKIP() << "openssl is missing";
  pai::http::Options ho;
  ho.tls.ca_file = srv.ca_file();
  pai::http::CurlClient http(ho);
  std::string good;
  {
    std::ifstream in(srv.assertion_file());
    std::getline(in, good);
  }
  ASSERT_FALSE(good.empty());
  std::string file = ::testing::TempDir() + "paictl-federated-token";
  auto write = [&](const std::string& text) {
    std::ofstream(file, std::ios::trunc) << text << "\n";
  };
  write(good);
  Env env;
  env.vars["AZURE_FEDERATED_TOKEN_FILE"] = file;
  auto src =
      pai::azure::make_token_source({"t1", ArmServer::kClientId, ""}, http, options(srv), env.fn());
  ASSERT_TRUE(src.ok()) << src.error().message;
  ASSERT_TRUE((*src)->token().ok());
  write("eyJhbGciOi.rotated-by-someone-else.sig");
  auto stale = (*src)->token(true);
  ASSERT_FALSE(stale.ok()) << "the file was not read again";
  EXPECT_NE(stale.error().message.find("AADSTS700024"), std::string::npos) << stale.error().message;
  EXPECT_EQ(stale.error().message.find("rotated-by-someone-else"), std::string::npos)
      << "the assertion is a secret";
  write(good);
  EXPECT_TRUE((*src)->token(true).ok());
  std::remove(file.c_str());
}

TEST(AzureAuth, ManagedIdentityEndpoint) {
  ArmServer srv;
  if (!srv.ok()) GTEST_SKIP() << "openssl is missing";
  pai::http::Options ho;
  ho.tls.ca_file = srv.ca_file();
  pai::http::CurlClient http(ho);
  Env env;
  env.vars["IDENTITY_ENDPOINT"] = srv.base() + "/msi/token";
  env.vars["IDENTITY_HEADER"] = ArmServer::kIdentityHeader;
  auto src = pai::azure::make_token_source({}, http, options(srv), env.fn());
  ASSERT_TRUE(src.ok()) << src.error().message;
  auto t = (*src)->token();
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->rfind("msi-", 0), 0u);
  auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0]["query"]["resource"], "https://management.azure.com/");
}

TEST(AzureAuth, NoCredentialsIsAClearError) {
  pai::http::CurlClient http;
  Env env;
  auto src = pai::azure::make_token_source({"t", "c", ""}, http, {}, env.fn());
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.error().message, "no Azure credentials");
  EXPECT_NE(src.error().hint.find("client-secret-file"), std::string::npos);
  auto missing =
      pai::azure::make_token_source({"t", "c", "/nonexistent/secret"}, http, {}, env.fn());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot read client-secret-file /nonexistent/secret"),
            std::string::npos);
}

}  // namespace
