// How long the ARM client and the sign-in may wait, and what they do with
// answers that are not ARM's: against FakeClient with a fake clock, so each
// bound is proved without sleeping. A server that asks for a day's wait, one
// that never answers, a sign-in that never answers, a 200 that is not JSON, a
// token whose lifetime is out of range, and a cancellation during a wait.

#include <algorithm>
#include <atomic>

#include <gtest/gtest.h>

#include "azure/arm.h"
#include "azure/auth.h"
#include "azure/provider.h"
#include "support/fake_client.h"
#include "support/fake_clock.h"
#include "util/strings.h"

namespace {

using nlohmann::json;
using pai::azure::ArmClient;
using pai::azure::ArmOptions;
using pai::azure::ArmWait;
using pai::http::FakeAnswer;
using pai::http::FakeClient;
using pai::http::Route;
using pai::testing::FakeClock;

const std::string kRgPath = "/subscriptions/00000000-aaaa-bbbb-cccc-000000000001/resourceGroups/rg";

struct FixedToken : pai::azure::TokenSource {
  pai::util::Result<std::string> token(bool) override { return std::string("tok"); }
  std::string describe() const override { return "fixed"; }
};

// Every answer of FakeClient takes `seconds` of the fake clock, as a server
// that holds the connection until the client's timeout would.
class SlowClient : public pai::http::Client {
 public:
  SlowClient(pai::http::Client& inner, FakeClock& clock, double seconds)
      : inner_(inner), clock_(clock), seconds_(seconds) {}
  pai::http::Result send(const pai::http::Request& r) override {
    clock_.t += seconds_;
    return inner_.send(r);
  }

 private:
  pai::http::Client& inner_;
  FakeClock& clock_;
  double seconds_;
};

Route arm_bounds_route(const std::string& method, const std::string& path, long status,
                       std::string body, std::vector<pai::http::Header> headers = {}) {
  Route r;
  r.method = method;
  r.path = path;
  FakeAnswer a;
  a.response.status = status;
  a.response.body = std::move(body);
  a.response.headers = std::move(headers);
  a.response.headers.push_back({"content-type", "application/json"});
  r.answers.push_back(a);
  return r;
}

ArmOptions arm_bounds_options(FakeClock& fc, std::vector<ArmWait>* waits = nullptr) {
  ArmOptions o;
  o.endpoints.arm = "https://arm.example";
  o.clock = fc.clock();
  if (waits) o.on_wait = [waits](const ArmWait& w) { waits->push_back(w); };
  return o;
}

TEST(AzureArmBounds, RetryAfterOfADayOnA503IsCappedAndAnnounced) {
  FakeClient http;
  http.add(arm_bounds_route("GET", kRgPath, 503, R"({"error":{"code":"ServerBusy"}})",
                            {{"retry-after", "99999"}}));
  FixedToken tokens;
  FakeClock fc;
  std::vector<ArmWait> waits;
  ArmClient arm(http, tokens, arm_bounds_options(fc, &waits));
  double t0 = fc.t;
  auto r = arm.get(kRgPath, "2021-04-01");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("503 Service Unavailable"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("attempts in"), std::string::npos) << r.error().message;
  auto sleeps = fc.taken();
  ASSERT_FALSE(sleeps.empty());
  for (double s : sleeps) EXPECT_LE(s, ArmOptions{}.max_retry_after_s);
  EXPECT_LE(fc.t - t0, ArmOptions{}.request_deadline_s);
  ASSERT_EQ(waits.size(), sleeps.size()) << "every wait is announced";
  EXPECT_EQ(waits[0].line(),
            "waiting 30 s for ARM (503 Service Unavailable, Retry-After) before GET " + kRgPath +
                "?api-version=2021-04-01");
}

TEST(AzureArmBounds, ASilentEndpointEndsWithinTheRequestDeadline) {
  FakeClient fake;
  Route silent;
  silent.method = "GET";
  silent.path = kRgPath;
  FakeAnswer timeout;
  timeout.error = pai::http::ErrorKind::Timeout;
  timeout.message = "arm.example: no answer within 120 s";
  silent.answers.push_back(timeout);
  fake.add(silent);
  FakeClock fc;
  SlowClient http(fake, fc, 120);  // each attempt takes the client's whole timeout
  FixedToken tokens;
  ArmClient arm(http, tokens, arm_bounds_options(fc));
  double t0 = fc.t;
  auto r = arm.get(kRgPath, "2021-04-01");
  ASSERT_FALSE(r.ok());
  // 6 attempts and their backoff took 782 s; the deadline is 4 attempts' worth.
  EXPECT_LE(fc.t - t0, 480) << r.error().message;
  EXPECT_NE(r.error().message.find("no answer within 120 s"), std::string::npos);
  EXPECT_NE(r.error().message.find("attempts in"), std::string::npos) << r.error().message;
}

TEST(AzureArmBounds, ThrottleWaitsOfOneRequestAreBoundedInAll) {
  FakeClient http;
  http.add(arm_bounds_route("GET", kRgPath, 429, R"({"error":{"code":"TooManyRequests"}})",
                            {{"retry-after", "1000"}}));
  FixedToken tokens;
  FakeClock fc;
  ArmClient arm(http, tokens, arm_bounds_options(fc));
  auto r = arm.get(kRgPath, "2021-04-01");
  ASSERT_FALSE(r.ok());
  // One wait of 1000 s fits in 1200 s; a second would not.
  EXPECT_EQ(fc.taken(), (std::vector<double>{1000}));
}

TEST(AzureArmBounds, ACancellationEndsAWaitAndSendsNothingMore) {
  FakeClient http;
  http.add(arm_bounds_route("GET", kRgPath, 503, "{}", {{"retry-after", "30"}}));
  FixedToken tokens;
  FakeClock fc;
  ArmOptions o = arm_bounds_options(fc);
  double t0 = fc.t;
  o.cancelled = [&fc, t0] { return fc.t >= t0 + 5; };
  ArmClient arm(http, tokens, o);
  auto r = arm.get(kRgPath, "2021-04-01");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("interrupted"), std::string::npos) << r.error().message;
  EXPECT_LE(fc.t - t0, 5.5) << "the 30 s wait ended soon after the cancellation";
  EXPECT_EQ(http.requests().size(), 1u);
}

TEST(AzureArmBounds, A200ThatIsNotJsonIsAnErrorWithWhatCameBack) {
  for (const std::string& body :
       std::vector<std::string>{"<html><body>Gateway says hello</body></html>",
                                R"({"location":"eastus","properties":{"x":1e400}})", "", "[1,2]",
                                std::string(5000, 'x')}) {
    FakeClient http;
    http.add(arm_bounds_route("GET", kRgPath, 200, body));
    FixedToken tokens;
    FakeClock fc;
    ArmClient arm(http, tokens, arm_bounds_options(fc));
    auto r = arm.get(kRgPath, "2021-04-01");
    ASSERT_FALSE(r.ok()) << body;
    const std::string& m = r.error().message;
    EXPECT_NE(m.find("GET " + kRgPath), std::string::npos) << m;
    EXPECT_NE(m.find("200 OK with "), std::string::npos) << m;
    if (!body.empty() && body[0] != '[') {
      EXPECT_NE(m.find(body.substr(0, 20)), std::string::npos) << m;
    }
    EXPECT_LT(m.size(), 500u) << "truncated";
    EXPECT_TRUE(fc.taken().empty()) << "not retried";
  }
}

TEST(AzureArmBounds, APlanOverNonJsonAnswersFailsInsteadOfPlanningUpdates) {
  FakeClient http;
  pai::azure::Spec s;
  s.azure.subscription = "00000000-aaaa-bbbb-cccc-000000000001";
  s.azure.resource_group = "rg";
  s.azure.location = "eastus";
  for (const auto& r : pai::azure::desired_resources(s))
    http.add(arm_bounds_route("GET", r.path, 200, "Service temporarily unavailable"));
  FixedToken tokens;
  FakeClock fc;
  ArmClient arm(http, tokens, arm_bounds_options(fc));
  auto p = pai::azure::plan(arm, s);
  ASSERT_FALSE(p.ok()) << "planned " << pai::azure::plan_json(*p, s).dump();
  EXPECT_NE(p.error().message.find(kRgPath), std::string::npos) << p.error().message;
  EXPECT_NE(p.error().message.find("Service temporarily unavailable"), std::string::npos);
}

TEST(AzureArmBounds, APutAnsweredWithNonJsonIsAnError) {
  FakeClient http;
  http.add(arm_bounds_route("PUT", kRgPath, 200, "OK"));
  FixedToken tokens;
  FakeClock fc;
  ArmClient arm(http, tokens, arm_bounds_options(fc));
  auto r = arm.put(kRgPath, "2021-04-01", json{{"location", "eastus"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not JSON: \"OK\""), std::string::npos) << r.error().message;
}

// A sign-in that fails while an operation is polled ends the wait at once
// instead of polling (and backing off) ten more times.
TEST(AzureArmBounds, AFailedSignInEndsTheOperationsWait) {
  FakeClient http;
  http.add(arm_bounds_route(
      "PUT", kRgPath, 201, "{}",
      {{"azure-asyncoperation", "https://arm.example/op/1"}, {"retry-after", "5"}}));
  struct Once : pai::azure::TokenSource {
    int calls = 0;
    pai::util::Result<std::string> token(bool) override {
      if (++calls == 1) return std::string("tok");
      return pai::util::Error{"sign-in to login.example failed: 401 Unauthorized", ""};
    }
    std::string describe() const override { return "once"; }
  } tokens;
  FakeClock fc;
  ArmClient arm(http, tokens, arm_bounds_options(fc));
  auto r = arm.put(kRgPath, "2021-04-01", json{{"location", "eastus"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("sign-in to login.example failed"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(fc.taken(), (std::vector<double>{5})) << "only the first poll's wait";
  EXPECT_EQ(http.requests().size(), 1u);
}

// --- the sign-in -------------------------------------------------------------------

struct SignIn {
  FakeClient fake;
  FakeClock fc;
  std::vector<std::string> log;
  std::unique_ptr<pai::azure::TokenSource> make(pai::http::Client& http) {
    pai::azure::TokenOptions to;
    to.endpoints.authority = "https://login.example";
    to.clock = fc.clock();
    to.log = [this](const std::string& l) { log.push_back(l); };
    auto t = pai::azure::make_token_source(
        {"tenant-1", "00000000-0000-0000-0000-00000000000c", ""}, http, to,
        [](const char* n) -> const char* {
          return std::string(n) == "AZURE_CLIENT_SECRET" ? "s3cret" : nullptr;
        });
    if (!t.ok()) throw std::runtime_error(t.error().message);
    return std::move(t.value());
  }
  void answer(long status, const std::string& body) {
    fake.add(arm_bounds_route("POST", "/tenant-1/oauth2/v2.0/token", status, body));
  }
  int token_requests() const {
    int n = 0;
    for (const auto& r : fake.requests()) n += r.host.find("login.example") == 0 ? 1 : 0;
    return n;
  }
};

TEST(AzureSignInBounds, AFailedSignInIsNotAskedAgainForEveryResource) {
  SignIn si;
  Route silent;
  silent.method = "POST";
  silent.path = "/tenant-1/oauth2/v2.0/token";
  FakeAnswer timeout;
  timeout.error = pai::http::ErrorKind::Timeout;
  timeout.message = "login.example: no answer within 120 s";
  silent.answers.push_back(timeout);
  si.fake.add(silent);
  SlowClient http(si.fake, si.fc, 120);
  auto tokens = si.make(http);
  ArmClient arm(http, *tokens, arm_bounds_options(si.fc));
  double t0 = si.fc.t;
  for (int i = 0; i < 4; ++i) {
    auto r = arm.get(kRgPath + "/r" + std::to_string(i), "2021-04-01");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("cannot reach the sign-in endpoint login.example"),
              std::string::npos)
        << r.error().message;
  }
  EXPECT_EQ(si.token_requests(), 3) << "one sign-in's attempts, not one per resource";
  EXPECT_LE(si.fc.t - t0, 480);
  for (const auto& r : si.fake.requests())
    EXPECT_NE(r.host.find("login.example"), std::string::npos);
}

TEST(AzureSignInBounds, ALifetimeOutOfRangeIsClampedOrRefused) {
  {
    SignIn si;
    si.answer(200, R"({"access_token":"a","expires_in":1e308})");
    auto t = si.make(si.fake);
    ASSERT_TRUE(t->token().ok());
    std::string all = pai::util::join(si.log, "\n");
    EXPECT_NE(all.find("the token is valid for 86400 s"), std::string::npos) << all;
    si.fc.t += 86400 - 10;  // a day later it is asked for again
    ASSERT_TRUE(t->token().ok());
    EXPECT_EQ(si.token_requests(), 2);
  }
  for (const std::string& bad : std::vector<std::string>{R"("-5")", "-1", "0", R"("soon")", "[]"}) {
    SignIn si;
    si.answer(200, R"({"access_token":"a","expires_in":)" + bad + "}");
    auto t = si.make(si.fake);
    auto r = t->token();
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find("not a positive number of seconds"), std::string::npos)
        << r.error().message;
    EXPECT_EQ(r.error().message.find("\"a\""), std::string::npos) << "never the token";
  }
}

// A sign-in endpoint answering JSON nested far deeper than any token answer (read
// through util::parse_json like every outside answer), on success and on
// refusal: a sign-in that failed, never a crash.
TEST(AzureSignInBounds, ADeeplyNestedAnswerIsRefusedNotACrash) {
  std::string deep = std::string(200000, '[') + std::string(200000, ']');
  for (long status : {200L, 400L}) {
    SignIn si;
    si.answer(status, deep);
    auto t = si.make(si.fake);
    auto r = t->token();
    ASSERT_FALSE(r.ok()) << status;
    if (status == 200) {
      EXPECT_NE(r.error().message.find("without an access_token"), std::string::npos)
          << r.error().message;
    }
  }
}

}  // namespace
