// The retry policy and the helpers, without a network.

#include <gtest/gtest.h>

#include "http/client.h"

namespace {

using pai::http::decide_retry;
using pai::http::ErrorKind;
using pai::http::Request;
using pai::http::Result;
using pai::http::RetryPolicy;

Result status(long s, const std::string& retry_after = {}) {
  Result r;
  r.response.status = s;
  if (!retry_after.empty()) r.response.headers.push_back({"retry-after", retry_after});
  return r;
}

Result failure(ErrorKind k) {
  Result r;
  r.error = k;
  r.message = "host:1: something";
  return r;
}

Request method(const char* m) {
  Request r;
  r.method = m;
  return r;
}

TEST(Retry, IdempotenceFollowsTheMethod) {
  EXPECT_TRUE(method("GET").is_idempotent());
  EXPECT_TRUE(method("PUT").is_idempotent());
  EXPECT_TRUE(method("DELETE").is_idempotent());
  EXPECT_FALSE(method("POST").is_idempotent());
  Request login = method("POST");
  login.idempotent = true;
  EXPECT_TRUE(login.is_idempotent());
}

TEST(Retry, WhatIsRetried) {
  RetryPolicy p;
  EXPECT_TRUE(decide_retry(method("GET"), status(503), 1, p, 0.5, 0).retry);
  EXPECT_TRUE(decide_retry(method("GET"), status(502), 1, p, 0.5, 0).retry);
  EXPECT_TRUE(decide_retry(method("GET"), status(504), 1, p, 0.5, 0).retry);
  EXPECT_TRUE(decide_retry(method("GET"), status(429), 1, p, 0.5, 0).retry);
  EXPECT_FALSE(decide_retry(method("GET"), status(500), 1, p, 0.5, 0).retry);
  EXPECT_FALSE(decide_retry(method("GET"), status(404), 1, p, 0.5, 0).retry);
  EXPECT_FALSE(decide_retry(method("GET"), status(200), 1, p, 0.5, 0).retry);
  // A POST: only when the server surely did nothing.
  EXPECT_TRUE(decide_retry(method("POST"), status(429), 1, p, 0.5, 0).retry);
  EXPECT_TRUE(decide_retry(method("POST"), failure(ErrorKind::Connect), 1, p, 0.5, 0).retry);
  EXPECT_TRUE(decide_retry(method("POST"), failure(ErrorKind::Resolve), 1, p, 0.5, 0).retry);
  auto no = decide_retry(method("POST"), status(503), 1, p, 0.5, 0);
  EXPECT_FALSE(no.retry);
  EXPECT_NE(no.why_not.find("POST"), std::string::npos);
  EXPECT_FALSE(decide_retry(method("POST"), failure(ErrorKind::Timeout), 1, p, 0.5, 0).retry);
  EXPECT_FALSE(decide_retry(method("POST"), failure(ErrorKind::Receive), 1, p, 0.5, 0).retry);
  EXPECT_TRUE(decide_retry(method("GET"), failure(ErrorKind::Timeout), 1, p, 0.5, 0).retry);
  EXPECT_FALSE(decide_retry(method("GET"), failure(ErrorKind::Tls), 1, p, 0.5, 0).retry);
  EXPECT_FALSE(decide_retry(method("GET"), failure(ErrorKind::Redirect), 1, p, 0.5, 0).retry);
}

TEST(Retry, BackoffIsExponentialCappedAndJittered) {
  RetryPolicy p;
  p.max_attempts = 10;
  p.base_delay_s = 1;
  p.max_delay_s = 8;
  EXPECT_DOUBLE_EQ(decide_retry(method("GET"), status(503), 1, p, 0.0, 0).delay_s, 0.5);
  EXPECT_DOUBLE_EQ(decide_retry(method("GET"), status(503), 1, p, 0.999999, 0).delay_s, 0.9999995);
  EXPECT_DOUBLE_EQ(decide_retry(method("GET"), status(503), 3, p, 0.0, 0).delay_s, 2);
  EXPECT_DOUBLE_EQ(decide_retry(method("GET"), status(503), 8, p, 0.0, 0).delay_s,
                   4);  // capped at 8 before jitter
  EXPECT_FALSE(decide_retry(method("GET"), status(503), 10, p, 0.0, 0).retry);
}

TEST(Retry, RetryAfterIsHonouredAndBounded) {
  RetryPolicy p;
  EXPECT_DOUBLE_EQ(decide_retry(method("GET"), status(429, "7"), 1, p, 0.0, 0).delay_s, 7);
  // An HTTP date 30 s after "now".
  std::time_t now = 784111747;  // Sun, 06 Nov 1994 08:49:07 GMT
  auto d =
      decide_retry(method("GET"), status(503, "Sun, 06 Nov 1994 08:49:37 GMT"), 1, p, 0.0, now);
  EXPECT_DOUBLE_EQ(d.delay_s, 30);
  auto far = decide_retry(method("GET"), status(503, "3600"), 1, p, 0.0, 0);
  EXPECT_FALSE(far.retry);
  EXPECT_NE(far.why_not.find("Retry-After"), std::string::npos);
  EXPECT_FALSE(pai::http::parse_retry_after("soon", 0));
  EXPECT_EQ(*pai::http::parse_retry_after(" 12 ", 0), 12);
}

TEST(HttpHelpers, Encoding) {
  EXPECT_EQ(pai::http::url_encode("a b/c~d"), "a%20b%2Fc~d");
  EXPECT_EQ(pai::http::form_encode({{"username", "al ice"}, {"password", "p&=?"}}),
            "username=al%20ice&password=p%26%3D%3F");
}

TEST(HttpHelpers, RedactUrl) {
  using pai::http::redact_url;
  EXPECT_EQ(redact_url("http://u:pw@host/x?token=abc&tail-mode=true"),
            "http://***@host/x?token=***&tail-mode=true");
  EXPECT_EQ(redact_url("https://h/p?a=1&access_token=z#frag"),
            "https://h/p?a=1&access_token=***#frag");
  EXPECT_EQ(redact_url("https://h/p"), "https://h/p");
  EXPECT_EQ(pai::http::host_of("https://user@h.example:8443/x"), "h.example:8443");
}

TEST(HttpHelpers, StripUserinfo) {
  using pai::http::strip_userinfo;
  bool had = false;
  EXPECT_EQ(strip_userinfo("http://user:SECRET@host:9186/rest-server", &had),
            "http://host:9186/rest-server");
  EXPECT_TRUE(had);
  EXPECT_EQ(strip_userinfo("https://host/a@b", &had), "https://host/a@b");  // '@' in the path
  EXPECT_FALSE(had);
  EXPECT_EQ(strip_userinfo("https://u@p@host"), "https://host");
}

}  // namespace
