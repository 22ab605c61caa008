// lib/api against the REST v2 test server: the exact requests sent, and the
// errors as a user reads them.

#include <gtest/gtest.h>

#include "../../integration/rest/test_server.h"
#include "api/client.h"
#include "http/client.h"

namespace {

using pai::api::Client;
using pai::testing::RestServer;

struct Fixture : ::testing::Test {
  RestServer srv;
  pai::http::CurlClient http{[] {
    pai::http::Options o;
    o.retry.base_delay_s = 0.01;
    return o;
  }()};
  std::string login() {
    Client anon(http, srv.rest());
    auto l = anon.login("alice", "alice-pass-1");
    EXPECT_TRUE(l.ok()) << (l.error ? l.error->summary() : "");
    return l.ok() ? l->token : "";
  }
};

using Api = Fixture;

TEST_F(Api, InfoNeedsNoToken) {
  Client c(http, srv.rest());
  auto i = c.info();
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i->version, "v1.8.0");
  EXPECT_EQ(i->authn_method, "basic");
  auto reqs = srv.requests();
  EXPECT_FALSE(reqs[0]["headers"].contains("authorization"));
}

TEST_F(Api, LoginPostsAFormAndReturnsTheToken) {
  Client c(http, srv.rest());
  auto l = c.login("alice", "alice-pass-1", 3600);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->user, "alice");
  EXPECT_FALSE(l->token.empty());
  auto r = srv.requests()[0];
  EXPECT_EQ(r["method"], "POST");
  EXPECT_EQ(r["path"], "/rest-server/api/v2/authn/basic/login");
  EXPECT_EQ(r["headers"]["content-type"], "application/x-www-form-urlencoded");
  EXPECT_EQ(r["body"], "username=alice&password=alice-pass-1&expiration=3600");
}

TEST_F(Api, WrongPasswordIsAReadableError) {
  Client c(http, srv.rest());
  auto l = c.login("alice", "nope-nope");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.error->status, 400);
  EXPECT_EQ(l.error->code, "IncorrectPasswordError");
  EXPECT_EQ(l.error->summary(), "400 IncorrectPasswordError: Password is incorrect.");
  EXPECT_FALSE(l.error->hint.empty());
}

TEST_F(Api, CallsSendTheBearerToken) {
  std::string token = login();
  srv.reset();
  Client c(http, srv.rest(), token);
  auto vcs = c.virtual_clusters();
  ASSERT_TRUE(vcs.ok());
  ASSERT_EQ(vcs->size(), 2u);
  const auto& def = (*vcs)[0].name == "default" ? (*vcs)[0] : (*vcs)[1];
  EXPECT_DOUBLE_EQ(def.total.gpu, 8);
  EXPECT_DOUBLE_EQ(def.used.gpu, 6);
  EXPECT_DOUBLE_EQ(def.free().gpu, 2);
  EXPECT_DOUBLE_EQ(def.guaranteed.memory_mb, 8 * 16384);
  auto r = srv.requests()[0];
  EXPECT_EQ(r["path"], "/rest-server/api/v2/virtual-clusters");
  EXPECT_EQ(r["headers"]["authorization"], "Bearer " + token);
  EXPECT_EQ(r["headers"]["accept"], "application/json");
}

TEST_F(Api, MissingOrBadTokenIs401) {
  Client none(http, srv.rest());
  auto a = none.virtual_clusters();
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error->status, 401);
  EXPECT_EQ(a.error->message, "Guest is not allowed to do this operation.");
  Client bad(http, srv.rest(), "not-a-token");
  auto b = bad.user("alice");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error->code, "UnauthorizedUserError");
  EXPECT_NE(b.error->hint.find("log in again"), std::string::npos);
}

TEST_F(Api, UserSkusAndStorages) {
  Client c(http, srv.rest(), login());
  auto u = c.user("alice");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->virtual_clusters, (std::vector<std::string>{"default", "research"}));
  auto s = c.sku_types("research");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->size(), 2u);
  auto none = c.sku_types("nope");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error->code, "NoVirtualClusterError");
  auto st = c.storages();
  ASSERT_TRUE(st.ok());
  ASSERT_EQ(st->size(), 2u);
  EXPECT_EQ((*st)[0].name, "team-nfs");
  auto reqs = srv.requests();
  EXPECT_EQ(reqs[reqs.size() - 2]["query"]["vc"], "nope");
}

TEST_F(Api, SubmitSendsTheYamlAsIs) {
  Client c(http, srv.rest(), login());
  srv.reset();
  std::string yaml =
      "protocolVersion: 2\nname: api_job\ntype: job\ntaskRoles:\n  main:\n    instances: 2\n"
      "    resourcePerInstance: {cpu: 1, memoryMB: 1024, gpu: 1}\n";
  auto r = c.submit_job(yaml);
  ASSERT_TRUE(r.ok()) << r.error->summary();
  EXPECT_EQ(*r, "Update job api_job for user alice successfully.");
  auto req = srv.requests()[0];
  EXPECT_EQ(req["method"], "POST");
  EXPECT_EQ(req["path"], "/rest-server/api/v2/jobs");
  EXPECT_EQ(req["headers"]["content-type"], "text/yaml");
  EXPECT_EQ(req["body"], yaml);
  // The same name again: 409 with a hint.
  auto again = c.submit_job(yaml);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error->status, 409);
  EXPECT_EQ(again.error->code, "ConflictJobError");
  EXPECT_NE(again.error->hint.find("--name"), std::string::npos);
  auto exists = c.job_exists("alice", "api_job");
  ASSERT_TRUE(exists.ok());
  EXPECT_TRUE(*exists);
  auto missing = c.job_exists("alice", "never");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(*missing);
}

TEST_F(Api, SchemaErrorsAreExpandedOnePerLine) {
  Client c(http, srv.rest(), login());
  auto r = c.submit_job(
      "protocolVersion: 2\nname: bad name\ntype: job\ntaskRoles:\n  t:\n    resourcePerInstance: "
      "{memory: 1}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->code, "InvalidProtocolError");
  ASSERT_EQ(r.error->details.size(), 2u);
  EXPECT_EQ(r.error->details[0],
            "name: should match pattern \"^[a-zA-Z0-9_-]+$\" (pattern \"^[a-zA-Z0-9_-]+$\")");
  EXPECT_EQ(r.error->details[1],
            "taskRoles['t'].resourcePerInstance: should NOT have additional properties "
            "(additionalProperty \"memory\")");
  EXPECT_EQ(r.error->message, "the server's schema refused the job (2 errors)");
}

TEST_F(Api, ForbiddenVirtualCluster) {
  Client c(http, srv.rest(), login());
  auto r = c.submit_job(
      "protocolVersion: 2\nname: x\ntype: job\ntaskRoles: {t: {instances: 1}}\ndefaults: "
      "{virtualCluster: secret-vc}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->status, 403);
  EXPECT_EQ(r.error->message, "User alice is not allowed to do operation in secret-vc");
}

TEST_F(Api, ListFiltersStopTagsAndLogs) {
  Client c(http, srv.rest(), login());
  pai::api::JobFilter f;
  f.username = "alice";
  f.state = "SUCCEEDED,RUNNING";
  f.limit = 10;
  srv.reset();
  auto list = c.list_jobs(f);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0]["name"], "old_job");
  auto req = srv.requests()[0];
  EXPECT_EQ(req["query"]["username"], "alice");
  EXPECT_EQ(req["query"]["state"], "SUCCEEDED,RUNNING");
  EXPECT_EQ(req["query"]["limit"], "10");

  srv.reset();
  auto stop = c.set_execution_type("alice", "old_job", "STOP");
  ASSERT_TRUE(stop.ok());
  req = srv.requests()[0];
  EXPECT_EQ(req["method"], "PUT");
  EXPECT_EQ(req["path"], "/rest-server/api/v2/jobs/alice~old_job/executionType");
  EXPECT_EQ(req["body"], "{\"value\":\"STOP\"}");
  EXPECT_EQ(req["headers"]["content-type"], "application/json");
  auto other = c.set_execution_type("bob", "bob_job", "STOP");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error->status, 403);

  ASSERT_TRUE(c.add_tag("alice", "old_job", "keep").ok());
  auto job = c.get_job("alice", "old_job");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ((*job)["tags"], nlohmann::json::array({"keep"}));
  ASSERT_TRUE(c.remove_tag("alice", "old_job", "keep").ok());
  auto gone = c.remove_tag("alice", "old_job", "keep");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error->code, "NoTagError");

  srv.reset();
  auto loc = c.task_log_locations("alice", "old_job", 0, "tr", 0, 0, true);
  ASSERT_TRUE(loc.ok()) << loc.error->summary();
  req = srv.requests()[0];
  EXPECT_EQ(
      req["path"],
      "/rest-server/api/v2/jobs/alice~old_job/attempts/0/taskRoles/tr/taskIndex/0/attempts/0/logs");
  EXPECT_EQ(req["query"]["tail-mode"], "true");
  std::string uri = (*loc)["locations"][0]["uri"];
  auto text = c.fetch_log(uri);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "epoch 2 loss 0.25\ndone\n");
}

TEST_F(Api, TheClusterTokenGoesOnlyToTheClustersHost) {
  std::string token = login();
  RestServer other;
  Client c(http, srv.rest(), token);
  ASSERT_TRUE(c.fetch_log(other.uri() + "/log-manager/x/y/0/stdout?token=t").ok());
  EXPECT_FALSE(other.requests()[0]["headers"].contains("authorization"));
  srv.reset();
  ASSERT_TRUE(c.fetch_log(srv.uri() + "/log-manager/x/y/0/stdout").ok());
  EXPECT_EQ(srv.requests()[0]["headers"]["authorization"], "Bearer " + token);
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
  Client c(http, srv.rest(), login());
  auto r = c.job_config("alice", "old_job");
  ASSERT_TRUE(r.ok());
  pai::api::Client wrong(http, srv.uri() + "/rest-server/api/v3-nope", login());
  auto i = wrong.virtual_clusters();
  ASSERT_FALSE(i.ok());
  EXPECT_EQ(i.error->status, 404);
}

TEST_F(Api, ServerErrorsAndRateLimitsThroughTheRetryingClient) {
  Client c(http, srv.rest(), login());
  srv.fail({{"path", "/api/v2/virtual-clusters"}, {"status", 503}, {"count", 1}});
  auto ok = c.virtual_clusters();
  ASSERT_TRUE(ok.ok());  // the GET was retried
  srv.fail({{"path", "/api/v2/virtual-clusters"},
            {"status", 500},
            {"code", "UnknownError"},
            {"message", "db down"}});
  auto bad = c.virtual_clusters();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error->summary(), "500 UnknownError: db down");
}

}  // namespace
