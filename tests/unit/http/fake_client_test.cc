// http::FakeClient: the test stand-in for CurlClient answers from routes and
// records what it was sent.

#include "support/fake_client.h"

#include <gtest/gtest.h>

namespace {

using pai::http::FakeClient;
using pai::http::Request;

Request req(std::string method, std::string url, std::string body = {}) {
  Request r;
  r.method = std::move(method);
  r.url = std::move(url);
  r.body = std::move(body);
  return r;
}

TEST(FakeClient, MatchesMethodPathQueryHeadersAndBody) {
  std::string err;
  auto routes = pai::http::routes_from_json(R"([
    {"request": {"method": "GET", "path": "/a b", "query": {"vc": "x,y"},
                 "headers": {"authorization": "Bearer t"}},
     "responses": [{"status": 200, "body": {"ok": true}}]},
    {"request": {"method": "GET", "path": "/a b", "headers": {"authorization": ""}},
     "responses": [{"status": 401, "body": "no"}]},
    {"request": {"method": "POST", "path": "/p", "body": "k=v"},
     "responses": [{"status": 201}, {"status": 409}]}
  ])",
                                            &err);
  ASSERT_TRUE(err.empty()) << err;
  FakeClient f(routes);
  Request a = req("GET", "http://h:1/a%20b?vc=x%2Cy&other=1");
  a.headers.push_back({"Authorization", "Bearer t"});
  auto r = f.send(a);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.response.status, 200);
  EXPECT_EQ(r.response.body, R"({"ok":true})");
  EXPECT_EQ(f.send(req("GET", "http://h:1/a%20b")).response.status, 401);
  // Answers in order, then the last again.
  EXPECT_EQ(f.send(req("POST", "http://h/p", "k=v")).response.status, 201);
  EXPECT_EQ(f.send(req("POST", "http://h/p", "k=v")).response.status, 409);
  EXPECT_EQ(f.send(req("POST", "http://h/p", "k=v")).response.status, 409);
  // No route: a failure the test sees, and the request is kept as unmatched.
  auto miss = f.send(req("POST", "http://h/p", "other"));
  EXPECT_FALSE(miss.ok());
  EXPECT_EQ(miss.message, "no fake route for POST http://h/p");
  ASSERT_EQ(f.unmatched().size(), 1u);
  auto seen = f.requests();
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen[0].host, "h:1");
  EXPECT_EQ(seen[0].path, "/a b");
  EXPECT_EQ(seen[0].query.at("vc"), "x,y");
  EXPECT_EQ(seen[0].header("AUTHORIZATION"), "Bearer t");
}

TEST(FakeClient, LaterRoutesWinAndTimesRunOut) {
  FakeClient f;
  f.add("GET", "/x", 200, "first");
  pai::http::Route once;
  once.path = "/x";
  once.times = 1;
  once.answers.push_back({});
  once.answers[0].response.status = 503;
  f.add(once);
  EXPECT_EQ(f.send(req("GET", "http://h/x")).response.status, 503);
  EXPECT_EQ(f.send(req("GET", "http://h/x")).response.body, "first");
  f.clear_requests();
  EXPECT_TRUE(f.requests().empty());
}

TEST(FakeClient, BadRoutesAreReported) {
  std::string err;
  EXPECT_TRUE(pai::http::routes_from_json("{", &err).empty());
  EXPECT_EQ(err, "the routes are not JSON");
  EXPECT_TRUE(pai::http::routes_from_json(R"([{"request": {"path": "x"}}])", &err).empty());
  EXPECT_EQ(err, "a route's path must start with '/'");
}

}  // namespace
