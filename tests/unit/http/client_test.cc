// lib/http against a real HTTP server on loopback (tests/integration/rest).

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include <gtest/gtest.h>

#include "../../integration/rest/test_server.h"
#include "http/client.h"

namespace {

using pai::http::CurlClient;
using pai::http::ErrorKind;
using pai::http::Options;
using pai::http::Request;
using pai::testing::RestServer;

// Records the waits instead of sleeping.
struct Sleeps {
  std::vector<double> delays;
  Options options(double base = 0.5) {
    Options o;
    o.timeout_s = 5;
    o.connect_timeout_s = 2;
    o.retry.base_delay_s = base;
    o.sleep = [this](double s) { delays.push_back(s); };
    o.seed = 42;
    return o;
  }
};

Request get(const std::string& url) {
  Request r;
  r.url = url;
  return r;
}

TEST(HttpClient, GetsAndRecordsTheRequest) {
  RestServer srv;
  CurlClient c;
  Request r = get(srv.rest() + "/api/v2/info");
  r.headers.push_back({"X-Test", "1"});
  auto res = c.send(r);
  ASSERT_TRUE(res.ok()) << res.message;
  EXPECT_EQ(res.response.status, 200);
  EXPECT_EQ(res.attempts, 1);
  EXPECT_NE(res.response.body.find("PAI RESTful API"), std::string::npos);
  EXPECT_NE(res.response.header("Content-Type").find("application/json"), std::string::npos);
  auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0]["method"], "GET");
  EXPECT_EQ(reqs[0]["path"], "/rest-server/api/v2/info");
  EXPECT_EQ(reqs[0]["headers"]["x-test"], "1");
  EXPECT_EQ(reqs[0]["headers"]["user-agent"].get<std::string>().rfind("paictl/", 0), 0u);
}

TEST(HttpClient, PostSendsTheBodyWithoutExpectContinue) {
  RestServer srv;
  CurlClient c;
  Request r;
  r.method = "POST";
  r.url = srv.rest() + "/api/v2/authn/basic/login";
  r.body = std::string(4000, 'x');  // large enough for curl to add Expect: 100-continue by default
  r.headers.push_back({"Content-Type", "application/x-www-form-urlencoded"});
  auto res = c.send(r);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res.response.status, 400);
  auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0]["body"].get<std::string>().size(), 4000u);
  EXPECT_FALSE(reqs[0]["headers"].contains("expect"));
}

TEST(HttpClient, RetriesIdempotentRequestsOn503WithBackoff) {
  RestServer srv;
  srv.fail({{"path", "/api/v2/info"}, {"status", 503}, {"count", 2}});
  Sleeps s;
  CurlClient c(s.options(0.5));
  auto res = c.send(get(srv.rest() + "/api/v2/info"));
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res.response.status, 200);
  EXPECT_EQ(res.attempts, 3);
  ASSERT_EQ(s.delays.size(), 2u);
  // Equal jitter: attempt n waits between base*2^(n-1)/2 and base*2^(n-1).
  EXPECT_GE(s.delays[0], 0.25);
  EXPECT_LE(s.delays[0], 0.5);
  EXPECT_GE(s.delays[1], 0.5);
  EXPECT_LE(s.delays[1], 1.0);
  EXPECT_EQ(srv.requests().size(), 3u);
}

TEST(HttpClient, GivesUpAfterMaxAttempts) {
  RestServer srv;
  srv.fail({{"path", "/api/v2/info"}, {"status", 502}, {"count", 10}});
  Sleeps s;
  Options o = s.options();
  o.retry.max_attempts = 3;
  CurlClient c(o);
  auto res = c.send(get(srv.rest() + "/api/v2/info"));
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res.response.status, 502);
  EXPECT_EQ(res.attempts, 3);
  EXPECT_EQ(srv.requests().size(), 3u);
}

TEST(HttpClient, NeverResendsAPostAfterA5xx) {
  RestServer srv;
  srv.fail({{"path", "/api/v2/jobs"}, {"method", "POST"}, {"status", 503}, {"count", 5}});
  Sleeps s;
  CurlClient c(s.options());
  Request r;
  r.method = "POST";
  r.url = srv.rest() + "/api/v2/jobs";
  r.body = "name: x";
  auto res = c.send(r);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res.response.status, 503);
  EXPECT_EQ(res.attempts, 1);
  EXPECT_TRUE(s.delays.empty());
  EXPECT_EQ(srv.requests().size(), 1u);
}

TEST(HttpClient, RetriesA429PostAfterRetryAfter) {
  RestServer srv;
  srv.fail({{"path", "/api/v2/jobs"},
            {"status", 429},
            {"retryAfter", 3},
            {"count", 1},
            {"text", "Too many requests, please try again later."}});
  Sleeps s;
  CurlClient c(s.options(0.01));
  Request r;
  r.method = "POST";
  r.url = srv.rest() + "/api/v2/jobs";
  r.body = "x";
  r.headers.push_back({"Content-Type", "text/yaml"});
  auto res = c.send(r);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res.attempts, 2);
  ASSERT_EQ(s.delays.size(), 1u);
  EXPECT_DOUBLE_EQ(s.delays[0], 3.0);
  EXPECT_EQ(srv.requests().size(), 2u);
}

TEST(HttpClient, DoesNotWaitForAnUnreasonableRetryAfter) {
  RestServer srv;
  srv.fail({{"path", "/api/v2/info"}, {"status", 429}, {"retryAfter", 3600}, {"count", 1}});
  Sleeps s;
  CurlClient c(s.options());
  auto res = c.send(get(srv.rest() + "/api/v2/info"));
  EXPECT_EQ(res.response.status, 429);
  EXPECT_EQ(res.attempts, 1);
}

TEST(HttpClient, ConnectionRefusedIsRetriedThenReported) {
  int port;
  {
    RestServer srv;  // a port that was just free; nothing listens after the server stops
    port = srv.port();
  }
  Sleeps s;
  CurlClient c(s.options(0.01));
  auto res = c.send(get("http://127.0.0.1:" + std::to_string(port) + "/api/v2/info"));
  EXPECT_EQ(res.error, ErrorKind::Connect);
  EXPECT_EQ(res.attempts, 4);
  EXPECT_NE(res.message.find("127.0.0.1:" + std::to_string(port)), std::string::npos)
      << res.message;
}

TEST(HttpClient, TimeoutsAreRetriedOnlyForIdempotentRequests) {
  RestServer srv;
  srv.fail({{"path", "/slow"}, {"delayMs", 1500}, {"count", 10}, {"status", 200}});
  Sleeps s;
  Options o = s.options(0.01);
  o.timeout_s = 0.3;
  o.retry.max_attempts = 2;
  CurlClient c(o);
  auto res = c.send(get(srv.rest() + "/slow"));
  EXPECT_EQ(res.error, ErrorKind::Timeout);
  EXPECT_EQ(res.attempts, 2);
  Request post;
  post.method = "POST";
  post.url = srv.rest() + "/slow";
  auto p = c.send(post);
  EXPECT_EQ(p.error, ErrorKind::Timeout);
  EXPECT_EQ(p.attempts, 1);
}

TEST(HttpClient, ACancellationEndsATransferUnderWay) {
  RestServer srv;
  srv.fail({{"path", "/slow"}, {"delayMs", 20000}, {"count", 1}, {"status", 200}});
  Sleeps s;
  Options o = s.options(0.01);
  o.timeout_s = 30;
  o.retry.max_attempts = 1;
  std::atomic<bool> stop{false};
  o.cancelled = [&stop] { return stop.load(); };
  CurlClient c(o);
  std::thread t([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  auto start = std::chrono::steady_clock::now();
  auto res = c.send(get(srv.rest() + "/slow"));
  double s_taken = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  t.join();
  EXPECT_FALSE(res.ok());
  EXPECT_NE(res.message.find("interrupted"), std::string::npos) << res.message;
  EXPECT_LT(s_taken, 5) << "the 20 s answer was waited for";
}

TEST(HttpClient, DroppedConnectionsAreReceiveErrors) {
  RestServer srv;
  srv.fail({{"path", "/api/v2/info"}, {"close", true}, {"count", 1}});
  Sleeps s;
  CurlClient c(s.options(0.01));
  auto res = c.send(get(srv.rest() + "/api/v2/info"));
  ASSERT_TRUE(res.ok()) << res.message;  // the second attempt gets through
  EXPECT_EQ(res.attempts, 2);
}

TEST(HttpClient, RedirectsAreNotFollowed) {
  RestServer srv;
  srv.fail({{"path", "/api/v2/info"},
            {"status", 302},
            {"headers", {{"Location", "https://elsewhere.example/?token=abc"}}}});
  CurlClient c;
  auto res = c.send(get(srv.rest() + "/api/v2/info"));
  EXPECT_EQ(res.error, ErrorKind::Redirect);
  EXPECT_NE(res.message.find("elsewhere.example"), std::string::npos);
  EXPECT_EQ(res.message.find("abc"), std::string::npos) << res.message;
  EXPECT_EQ(srv.requests().size(), 1u);
}

TEST(HttpClient, ResponsesAboveTheLimitAreRefused) {
  RestServer srv;
  Options o;
  o.max_response_bytes = 16;
  CurlClient c(o);
  auto res = c.send(get(srv.rest() + "/api/v2/info"));
  EXPECT_EQ(res.error, ErrorKind::TooLarge);
}

TEST(HttpClient, TlsIsVerifiedUnlessInsecure) {
  pai::testing::TestCert cert;
  if (cert.cert.empty()) GTEST_SKIP() << "the openssl tool is not installed";
  RestServer srv("lab", {"--tls-cert", cert.cert, "--tls-key", cert.key});
  std::string url = srv.https_uri() + "/rest-server/api/v2/info";
  {
    CurlClient c;
    auto res = c.send(get(url));
    EXPECT_EQ(res.error, ErrorKind::Tls) << res.message;
    EXPECT_NE(res.message.find("--ca-file"), std::string::npos);
  }
  {
    Options o;
    o.tls.ca_file = cert.cert;
    CurlClient c(o);
    auto res = c.send(get(url));
    ASSERT_TRUE(res.ok()) << res.message;
    EXPECT_EQ(res.response.status, 200);
  }
  {
    Options o;
    o.tls.insecure = true;
    CurlClient c(o);
    auto res = c.send(get(url));
    ASSERT_TRUE(res.ok()) << res.message;
  }
}

TEST(HttpClient, ProxyFromTheEnvironmentIsUsedAndNoProxyRespected) {
  RestServer proxy;
  RestServer direct;
  setenv("http_proxy", proxy.uri().c_str(), 1);
  unsetenv("no_proxy");
  unsetenv("NO_PROXY");
  {
    CurlClient c;
    auto res = c.send(get("http://pai.example.invalid/rest-server/api/v2/info"));
    ASSERT_TRUE(res.ok()) << res.message;
    EXPECT_NE(res.response.body.find("\"proxied\": true"), std::string::npos) << res.response.body;
    auto reqs = proxy.requests();
    ASSERT_EQ(reqs.size(), 1u);
    EXPECT_EQ(reqs[0]["path"], "http://pai.example.invalid/rest-server/api/v2/info");
  }
  setenv("no_proxy", "127.0.0.1", 1);
  {
    CurlClient c;
    auto res = c.send(get(direct.rest() + "/api/v2/info"));
    ASSERT_TRUE(res.ok()) << res.message;
    EXPECT_EQ(direct.requests().size(), 1u);
    EXPECT_EQ(proxy.requests().size(), 1u);  // unchanged
  }
  unsetenv("http_proxy");
  unsetenv("no_proxy");
}

TEST(HttpClient, LogLinesNeverHoldSecrets) {
  RestServer srv;
  std::vector<std::string> lines;
  Options o;
  o.log = [&](const std::string& l) { lines.push_back(l); };
  CurlClient c(o);
  Request r = get(srv.rest() + "/api/v2/info?token=supersecret&x=1");
  r.headers.push_back({"Authorization", "Bearer bearer-secret"});
  auto res = c.send(r);
  ASSERT_TRUE(res.ok());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("200 OK"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].find("supersecret"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].find("bearer-secret"), std::string::npos) << lines[0];
}

TEST(HttpClient, ConcurrentSendsFromSeveralThreads) {
  RestServer srv;
  CurlClient c;
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      for (int k = 0; k < 5; ++k)
        if (c.send(get(srv.rest() + "/api/v2/info")).response.status == 200) ++ok;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 40);
  EXPECT_EQ(srv.requests().size(), 40u);
}

}  // namespace
