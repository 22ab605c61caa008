// lib/api against answers recorded from the REST v2 test server
// (routes/lab.json, made by record_routes.py): the exact requests sent, and the
// errors as a user reads them. No server is started; tests/integration/rest
// drives the real binary against the real test server.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "api/client.h"
#include "http/client.h"
#include "support/fake_client.h"

namespace {

using pai::api::Client;
using pai::http::FakeClient;

const std::string kBase = "http://pai.test/rest-server";

struct Recording {
  std::vector<pai::http::Route> routes;
  std::string token;  // what the recorded default login returned
};

const Recording& recording() {
  static const Recording r = [] {
    Recording rec;
    std::ifstream in(std::string(PAI_SOURCE_DIR) + "/tests/unit/api/routes/lab.json");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string error;
    rec.routes = pai::http::routes_from_json(ss.str(), &error);
    EXPECT_TRUE(error.empty()) << error;
    rec.token = nlohmann::json::parse(ss.str()).value("token", std::string());
    return rec;
  }();
  return r;
}

struct Api : ::testing::Test {
  FakeClient http{recording().routes};
  std::string login() {
    Client anon(http, kBase);
    auto l = anon.login("alice", "alice-pass-1");
    EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.error().summary());
    return l.ok() ? l->token : "";
  }
  void TearDown() override {
    for (const auto& r : http.unmatched())
      ADD_FAILURE() << "no recorded answer for " << r.method << " " << r.url;
  }
};

TEST_F(Api, InfoNeedsNoToken) {
  Client c(http, kBase);
  auto i = c.info();
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i->version, "v1.8.0");
  EXPECT_EQ(i->authn_method, "basic");
  auto reqs = http.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].path, "/rest-server/api/v2/info");
  EXPECT_FALSE(reqs[0].has_header("authorization"));
}

TEST_F(Api, LoginPostsAFormAndReturnsTheToken) {
  Client c(http, kBase);
  auto l = c.login("alice", "alice-pass-1", 3600);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->user, "alice");
  EXPECT_FALSE(l->token.empty());
  auto r = http.requests()[0];
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.path, "/rest-server/api/v2/authn/basic/login");
  EXPECT_EQ(r.header("content-type"), "application/x-www-form-urlencoded");
  EXPECT_EQ(r.body, "username=alice&password=alice-pass-1&expiration=3600");
}

TEST_F(Api, WrongPasswordIsAReadableError) {
  Client c(http, kBase);
  auto l = c.login("alice", "nope-nope");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.error().status, 400);
  EXPECT_EQ(l.error().code, "IncorrectPasswordError");
  EXPECT_EQ(l.error().summary(), "400 IncorrectPasswordError: Password is incorrect.");
  EXPECT_FALSE(l.error().hint.empty());
}

TEST_F(Api, CallsSendTheBearerToken) {
  std::string token = login();
  EXPECT_EQ(token, recording().token);
  http.clear_requests();
  Client c(http, kBase, token);
  auto vcs = c.virtual_clusters();
  ASSERT_TRUE(vcs.ok());
  ASSERT_EQ(vcs->size(), 2u);
  const auto& def = (*vcs)[0].name == "default" ? (*vcs)[0] : (*vcs)[1];
  EXPECT_DOUBLE_EQ(def.total.gpu, 8);
  EXPECT_DOUBLE_EQ(def.used.gpu, 6);
  EXPECT_DOUBLE_EQ(def.free().gpu, 2);
  EXPECT_DOUBLE_EQ(def.guaranteed.memory_mb, 8 * 16384);
  auto r = http.requests()[0];
  EXPECT_EQ(r.path, "/rest-server/api/v2/virtual-clusters");
  EXPECT_EQ(r.header("authorization"), "Bearer " + token);
  EXPECT_EQ(r.header("accept"), "application/json");
}

TEST_F(Api, MissingOrBadTokenIs401) {
  Client none(http, kBase);
  auto a = none.virtual_clusters();
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().status, 401);
  EXPECT_EQ(a.error().message, "Guest is not allowed to do this operation.");
  Client bad(http, kBase, "not-a-token");
  auto b = bad.user("alice");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().code, "UnauthorizedUserError");
  EXPECT_NE(b.error().hint.find("log in again"), std::string::npos);
}

TEST_F(Api, UserSkusAndStorages) {
  Client c(http, kBase, login());
  auto u = c.user("alice");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->virtual_clusters, (std::vector<std::string>{"default", "research"}));
  auto s = c.sku_types("research");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->size(), 2u);
  auto none = c.sku_types("nope");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, "NoVirtualClusterError");
  auto st = c.storages();
  ASSERT_TRUE(st.ok());
  ASSERT_EQ(st->size(), 2u);
  EXPECT_EQ((*st)[0].name, "team-nfs");
  auto reqs = http.requests();
  EXPECT_EQ(reqs[reqs.size() - 2].query["vc"], "nope");
}

TEST_F(Api, SubmitSendsTheYamlAsIs) {
  Client c(http, kBase, login());
  http.clear_requests();
  std::string yaml =
      "protocolVersion: 2\nname: api_job\ntype: job\ntaskRoles:\n  main:\n    instances: 2\n"
      "    resourcePerInstance: {cpu: 1, memoryMB: 1024, gpu: 1}\n";
  auto r = c.submit_job(yaml);
  ASSERT_TRUE(r.ok()) << r.error().summary();
  EXPECT_EQ(*r, "Update job api_job for user alice successfully.");
  auto req = http.requests()[0];
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.path, "/rest-server/api/v2/jobs");
  EXPECT_EQ(req.header("content-type"), "text/yaml");
  EXPECT_EQ(req.body, yaml);
  // The same name again: 409 with a hint.
  auto again = c.submit_job(yaml);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().status, 409);
  EXPECT_EQ(again.error().code, "ConflictJobError");
  EXPECT_NE(again.error().hint.find("--name"), std::string::npos);
  auto exists = c.job_exists("alice", "api_job");
  ASSERT_TRUE(exists.ok());
  EXPECT_TRUE(*exists);
  auto missing = c.job_exists("alice", "never");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(*missing);
}

TEST_F(Api, SchemaErrorsAreExpandedOnePerLine) {
  Client c(http, kBase, login());
  auto r = c.submit_job(
      "protocolVersion: 2\nname: bad name\ntype: job\ntaskRoles:\n  t:\n    resourcePerInstance: "
      "{memory: 1}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "InvalidProtocolError");
  ASSERT_EQ(r.error().details.size(), 2u);
  EXPECT_EQ(r.error().details[0],
            "name: should match pattern \"^[a-zA-Z0-9_-]+$\" (pattern \"^[a-zA-Z0-9_-]+$\")");
  EXPECT_EQ(r.error().details[1],
            "taskRoles['t'].resourcePerInstance: should NOT have additional properties "
            "(additionalProperty \"memory\")");
  EXPECT_EQ(r.error().message, "the server's schema refused the job (2 errors)");
}

TEST_F(Api, ForbiddenVirtualCluster) {
  Client c(http, kBase, login());
  auto r = c.submit_job(
      "protocolVersion: 2\nname: x\ntype: job\ntaskRoles: {t: {instances: 1}}\ndefaults: "
      "{virtualCluster: secret-vc}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().status, 403);
  EXPECT_EQ(r.error().message, "User alice is not allowed to do operation in secret-vc");
}

TEST_F(Api, ListFiltersStopTagsAndLogs) {
  Client c(http, kBase, login());
  pai::api::JobFilter f;
  f.username = "alice";
  f.state = "SUCCEEDED,RUNNING";
  f.limit = 10;
  http.clear_requests();
  auto list = c.list_jobs(f);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0]["name"], "old_job");
  auto req = http.requests()[0];
  EXPECT_EQ(req.query["username"], "alice");
  EXPECT_EQ(req.query["state"], "SUCCEEDED,RUNNING");
  EXPECT_EQ(req.query["limit"], "10");

  http.clear_requests();
  auto stop = c.set_execution_type("alice", "old_job", "STOP");
  ASSERT_TRUE(stop.ok());
  req = http.requests()[0];
  EXPECT_EQ(req.method, "PUT");
  EXPECT_EQ(req.path, "/rest-server/api/v2/jobs/alice~old_job/executionType");
  EXPECT_EQ(req.body, "{\"value\":\"STOP\"}");
  EXPECT_EQ(req.header("content-type"), "application/json");
  auto other = c.set_execution_type("bob", "bob_job", "STOP");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().status, 403);

  ASSERT_TRUE(c.add_tag("alice", "old_job", "keep").ok());
  auto job = c.get_job("alice", "old_job");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ((*job)["tags"], nlohmann::json::array({"keep"}));
  ASSERT_TRUE(c.remove_tag("alice", "old_job", "keep").ok());
  auto gone = c.remove_tag("alice", "old_job", "keep");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, "NoTagError");

  http.clear_requests();
  auto loc = c.task_log_locations("alice", "old_job", 0, "tr", 0, 0, true);
  ASSERT_TRUE(loc.ok()) << loc.error().summary();
  req = http.requests()[0];
  EXPECT_EQ(
      req.path,
      "/rest-server/api/v2/jobs/alice~old_job/attempts/0/taskRoles/tr/taskIndex/0/attempts/0/logs");
  EXPECT_EQ(req.query["tail-mode"], "true");
  std::string uri = (*loc)["locations"][0]["uri"];
  auto text = c.fetch_log(uri);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "epoch 2 loss 0.25\ndone\n");
}

TEST_F(Api, TheClusterTokenGoesOnlyToTheClustersHost) {
  std::string token = login();
  pai::http::Route log;
  log.path = "/log-manager/x/y/0/stdout";
  log.answers.push_back({});
  log.answers[0].response.status = 200;
  log.answers[0].response.body = "log";
  http.add(log);
  http.clear_requests();
  Client c(http, kBase, token);
  ASSERT_TRUE(c.fetch_log("http://other.test/log-manager/x/y/0/stdout?token=t").ok());
  ASSERT_TRUE(c.fetch_log("http://pai.test/log-manager/x/y/0/stdout").ok());
  ASSERT_TRUE(c.fetch_log("/log-manager/x/y/0/stdout").ok());  // relative: the cluster's host
  auto reqs = http.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].host, "other.test");
  EXPECT_FALSE(reqs[0].has_header("authorization"));
  EXPECT_EQ(reqs[1].header("authorization"), "Bearer " + token);
  EXPECT_EQ(reqs[2].host, "pai.test");
  EXPECT_EQ(reqs[2].header("authorization"), "Bearer " + token);
}

TEST_F(Api, ErrorBodiesThatAreNotJson) {
  pai::http::Response html;
  html.status = 502;
  html.headers.push_back({"content-type", "text/html"});
  html.body =
      "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad "
      "Gateway</h1></center>"
      "<hr><center>nginx</center></body></html>";
  auto e = pai::api::error_from_response(html);
  EXPECT_EQ(e.summary(), "502: 502 Bad Gateway 502 Bad Gateway nginx");
  pai::http::Response limited;
  limited.status = 429;
  limited.headers.push_back({"retry-after", "60"});
  limited.body = "Too many requests, please try again later.";
  auto l = pai::api::error_from_response(limited);
  EXPECT_EQ(l.message, "Too many requests, please try again later.");
  EXPECT_NE(l.hint.find("60 s"), std::string::npos);
  pai::http::Response empty;
  empty.status = 503;
  EXPECT_EQ(pai::api::error_from_response(empty).message, "Service Unavailable");
}

TEST_F(Api, UnknownRoutesAreNoApiError) {
  std::string token = login();
  Client c(http, kBase, token);
  auto r = c.job_config("alice", "old_job");
  ASSERT_TRUE(r.ok());
  pai::api::Client wrong(http, "http://pai.test/rest-server/api/v3-nope", token);
  auto i = wrong.virtual_clusters();
  ASSERT_FALSE(i.ok());
  EXPECT_EQ(i.error().status, 404);
}

TEST_F(Api, ServerErrorsAndTransportFailures) {
  Client c(http, kBase, login());
  http.add("GET", "/rest-server/api/v2/virtual-clusters", 500,
           R"({"code": "UnknownError", "message": "db down"})");
  auto bad = c.virtual_clusters();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().summary(), "500 UnknownError: db down");

  pai::http::Route down;
  down.path = "/rest-server/api/v2/info";
  down.answers.push_back({});
  down.answers[0].error = pai::http::ErrorKind::Connect;
  down.answers[0].message = "pai.test:80: Connection refused";
  http.add(down);
  auto info = c.info();
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().kind, pai::api::Error::Kind::Transport);
  EXPECT_EQ(info.error().summary(), "pai.test:80: Connection refused");
  EXPECT_NE(info.error().hint.find("is the cluster up"), std::string::npos);

  http.add("GET", "/rest-server/api/v2/storages", 200, "<html>login page</html>", "text/html");
  auto st = c.storages();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, pai::api::Error::Kind::Decode);
}

}  // namespace
