// lib/azure against the ARM test server (tests/integration/azure/arm_server.py)
// over real HTTPS on loopback, with a fake clock: every Retry-After and backoff
// is recorded instead of slept, so the long-running-operation engine runs its
// whole contract in milliseconds.

#include <mutex>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "../../integration/azure/arm_test_server.h"
#include "azure/arm.h"
#include "azure/auth.h"
#include "support/fake_client.h"
#include "support/fake_clock.h"
#include "util/strings.h"

namespace {

using nlohmann::json;
using pai::azure::ArmClient;
using pai::azure::ArmOptions;
using pai::azure::Clock;
using pai::testing::ArmServer;

using pai::testing::FakeClock;

const std::string kSub = "/subscriptions/00000000-aaaa-bbbb-cccc-000000000001";
const std::string kRg = kSub + "/resourceGroups/pai-rg";
const std::string kNet = kRg + "/providers/Microsoft.Network";
const std::string kVmss = kRg + "/providers/Microsoft.Compute/virtualMachineScaleSets/pai-gpu";

// One server, one client, a fake clock and a log.
struct Fixture {
  ArmServer srv;
  FakeClock fc;
  std::vector<std::string> log;
  std::mutex log_mu;
  std::unique_ptr<pai::http::CurlClient> http;
  std::unique_ptr<pai::azure::TokenSource> tokens;
  std::unique_ptr<ArmClient> arm;

  explicit Fixture(int polls = 2, int retry_after = 1, ArmOptions extra = {})
      : srv(polls, retry_after) {
    if (!srv.ok()) return;
    pai::http::Options ho;
    ho.tls.ca_file = srv.ca_file();
    ho.retry.max_attempts = 1;
    ho.timeout_s = 10;
    http = std::make_unique<pai::http::CurlClient>(ho);
    pai::azure::Endpoints ep;
    ep.arm = srv.base();
    ep.authority = srv.base();
    ep.ca_file = srv.ca_file();
    pai::azure::TokenOptions to;
    to.endpoints = ep;
    to.clock = fc.clock();
    to.log = [this](const std::string& l) { add_log(l); };
    pai::azure::Identity id{"tenant-1", ArmServer::kClientId, srv.secret_file()};
    auto t = pai::azure::make_token_source(id, *http, to,
                                           [](const char*) -> const char* { return nullptr; });
    if (!t.ok()) throw std::runtime_error(t.error().message);
    tokens = std::move(t.value());
    ArmOptions o = extra;
    o.endpoints = ep;
    o.clock = fc.clock();
    o.log = [this](const std::string& l) { add_log(l); };
    arm = std::make_unique<ArmClient>(*http, *tokens, o);
  }
  void add_log(const std::string& l) {
    std::lock_guard<std::mutex> g(log_mu);
    log.push_back(l);
  }
  std::string all_log() {
    std::lock_guard<std::mutex> g(log_mu);
    return pai::util::join(log, "\n");
  }
  void resource_group() {
    auto r = arm->put(kRg, "2021-04-01", json{{"location", "eastus"}});
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  void vnet() {
    json body = {
        {"location", "eastus"},
        {"properties",
         {{"addressSpace", {{"addressPrefixes", {"10.100.0.0/16"}}}},
          {"subnets", {{{"name", "gpu"}, {"properties", {{"addressPrefix", "10.100.1.0/24"}}}}}}}}};
    auto r = arm->put(kNet + "/virtualNetworks/pai-vnet", "2024-05-01", body);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  json vmss_body(int capacity) {
    json b = json::parse(R"({"location": "eastus",
      "sku": {"name": "Standard_ND96asr_v4", "tier": "Standard", "capacity": 1},
      "properties": {"orchestrationMode": "Uniform", "upgradePolicy": {"mode": "Manual"},
        "virtualMachineProfile": {
          "osProfile": {"computerNamePrefix": "paigpu", "adminUsername": "paiadmin",
            "linuxConfiguration": {"disablePasswordAuthentication": true,
              "ssh": {"publicKeys": [{"path": "/home/paiadmin/.ssh/authorized_keys",
                                      "keyData": "ssh-ed25519 AAAA test"}]}}},
          "networkProfile": {"networkInterfaceConfigurations": [{"name": "nic0",
            "properties": {"primary": true, "ipConfigurations": [{"name": "ip0",
              "properties": {"subnet": {"id": "SUBNET"}}}]}}]}}}})");
    b["sku"]["capacity"] = capacity;
    b["properties"]["virtualMachineProfile"]["networkProfile"]["networkInterfaceConfigurations"][0]
     ["properties"]["ipConfigurations"][0]["properties"]["subnet"]["id"] =
         kNet + "/virtualNetworks/pai-vnet/subnets/gpu";
    return b;
  }
  // The ARM requests whose path ends with `tail`, by method.
  int count(const std::string& method, const std::string& tail, const std::string& kind = "") {
    int n = 0;
    for (auto& r : srv.arm_requests()) {
      std::string p = r["path"];
      if (r["method"] == method && p.size() >= tail.size() &&
          p.compare(p.size() - tail.size(), tail.size(), tail) == 0 &&
          (kind.empty() || r["kind"] == kind))
        ++n;
    }
    return n;
  }
};

#define NEED_SERVER(f) \
  if (!(f).srv.ok()) GTEST_SKIP() << "openssl is missing"

TEST(AzureArm, PutWaitsOnAzureAsyncOperationWithItsRetryAfter) {
  Fixture f(/*polls=*/2, /*retry_after=*/7);
  NEED_SERVER(f);
  f.resource_group();
  f.srv.clear_requests();
  f.vnet();
  auto reqs = f.srv.arm_requests();
  ASSERT_EQ(reqs.size(), 4u) << reqs.dump(1);  // PUT, poll, poll, final GET
  EXPECT_EQ(reqs[0]["method"], "PUT");
  EXPECT_EQ(reqs[0]["status"], 201);
  EXPECT_EQ(reqs[1]["kind"], "poll");
  EXPECT_EQ(reqs[2]["kind"], "poll");
  EXPECT_EQ(reqs[3]["method"], "GET");
  EXPECT_EQ(reqs[3]["kind"], "arm");
  EXPECT_EQ(f.fc.taken(), (std::vector<double>{7, 7}));
  auto got = f.arm->get(kNet + "/virtualNetworks/pai-vnet", "2024-05-01");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->body["properties"]["provisioningState"], "Succeeded");
  auto st = f.arm->stats();
  EXPECT_EQ(st.polls, 2);
  EXPECT_DOUBLE_EQ(st.poll_waited_s, 14);
}

TEST(AzureArm, DeleteFollowsLocationUntilDone) {
  Fixture f(3, 2);
  NEED_SERVER(f);
  f.resource_group();
  f.vnet();
  f.srv.clear_requests();
  auto sleeps_before = f.fc.taken().size();
  auto r = f.arm->remove(kRg, "2021-04-01");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(*r);
  auto reqs = f.srv.arm_requests();
  ASSERT_EQ(reqs.size(), 4u) << reqs.dump(1);  // DELETE 202, 202, 202, 200
  EXPECT_EQ(reqs[0]["status"], 202);
  EXPECT_EQ(reqs[1]["status"], 202);
  EXPECT_EQ(reqs[3]["status"], 200);
  EXPECT_NE(reqs[3]["path"].get<std::string>().find("/operationResults/"), std::string::npos);
  EXPECT_EQ(f.fc.taken().size() - sleeps_before, 3u);
  EXPECT_TRUE(f.srv.resources().empty());  // the VNet went with its group
  // Deleting what is gone is success without waiting.
  auto again = f.arm->remove(kRg, "2021-04-01");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
}

TEST(AzureArm, OneScaleSetPutDespiteThrottledAndFailingPolls) {
  Fixture f;
  NEED_SERVER(f);
  f.resource_group();
  f.vnet();
  f.srv.clear_requests();
  f.srv.fail(json::array({{{"kind", "poll"}, {"status", 429}, {"retryAfter", 17}, {"count", 1}},
                          {{"kind", "poll"}, {"status", 500}, {"count", 1}},
                          {{"kind", "poll"}, {"close", true}, {"count", 1}}}));
  auto r = f.arm->put(kVmss, "2024-07-01", f.vmss_body(2));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(f.count("PUT", "/pai-gpu"), 1);
  EXPECT_EQ((*r)["properties"]["provisioningState"], "Succeeded");
  auto sleeps = f.fc.taken();
  EXPECT_NE(std::find(sleeps.begin(), sleeps.end(), 17.0), sleeps.end()) << "429 Retry-After";
  auto st = f.arm->stats();
  EXPECT_EQ(st.throttled, 1);
  EXPECT_GE(st.transient, 1);
  std::vector<int> poll_status;
  for (auto& q : f.srv.arm_requests())
    if (q["kind"] == "poll") poll_status.push_back(q["status"]);
  ASSERT_GE(poll_status.size(), 5u);
  // 429, 500, a dropped connection (0), then the two polls that finish it.
  EXPECT_EQ(std::vector<int>(poll_status.begin(), poll_status.begin() + 3),
            (std::vector<int>{429, 500, 0}));
  // The scale set's VMs exist once it succeeded.
  auto vms = f.arm->list(kVmss + "/virtualMachines", "2024-07-01");
  ASSERT_TRUE(vms.ok()) << vms.error().message;
  EXPECT_EQ(vms->size(), 2u);
}

TEST(AzureArm, ThrottledAndFailingPutIsSentAgainButProcessedOnce) {
  Fixture f;
  NEED_SERVER(f);
  f.resource_group();
  f.vnet();
  f.srv.fail(json::array(
      {{{"method", "PUT"}, {"path", "pai-gpu$"}, {"status", 429}, {"retryAfter", 9}, {"count", 1}},
       {{"method", "PUT"}, {"path", "pai-gpu$"}, {"status", 503}, {"count", 1}}}));
  auto r = f.arm->put(kVmss, "2024-07-01", f.vmss_body(1));
  ASSERT_TRUE(r.ok()) << r.error().message;
  int processed = 0, sent = 0;
  for (auto& q : f.srv.arm_requests())
    if (q["method"] == "PUT" && q["path"].get<std::string>().ends_with("/pai-gpu")) {
      ++sent;
      processed += q["status"] == 201 ? 1 : 0;
    }
  EXPECT_EQ(sent, 3);
  EXPECT_EQ(processed, 1);
  auto sleeps = f.fc.taken();
  ASSERT_GE(sleeps.size(), 2u);
  EXPECT_EQ(sleeps[sleeps.size() - 4], 9);  // 429's Retry-After, then a backoff, then 2 polls
}

TEST(AzureArm, ContentionIsRetriedWithBackoff) {
  Fixture f;
  NEED_SERVER(f);
  f.resource_group();
  f.srv.fail({{"method", "PUT"},
              {"path", "virtualNetworks"},
              {"status", 409},
              {"code", "AnotherOperationInProgress"},
              {"message", "Another operation on this or dependent resource is in progress."},
              {"count", 2}});
  f.srv.fail({{"method", "PUT"},
              {"path", "virtualNetworks"},
              {"status", 429},
              {"code", "RetryableErrorDueToAnotherOperation"},
              {"count", 1}});
  f.vnet();
  auto sleeps = f.fc.taken();
  ASSERT_GE(sleeps.size(), 5u);
  EXPECT_EQ(sleeps[0], 5);
  EXPECT_EQ(sleeps[1], 10);
  EXPECT_EQ(sleeps[2], 20);
  EXPECT_EQ(f.arm->stats().contention, 3);
  EXPECT_EQ(f.arm->stats().throttled, 0);  // contention is not throttling
}

TEST(AzureArm, FailedOperationIsOneLineWithTheCode) {
  Fixture f;
  NEED_SERVER(f);
  f.resource_group();
  f.vnet();
  f.srv.fail_operation(
      {{"path", "pai-gpu"},
       {"code", "OperationNotAllowed"},
       {"message",
        "Operation could not be completed as it results in exceeding approved\nTotal Regional "
        "Cores quota."},
       {"details", {{{"code", "QuotaExceeded"}, {"message", "Current Limit: 10"}}}}});
  auto r = f.arm->put(kVmss, "2024-07-01", f.vmss_body(2));
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message;
  EXPECT_NE(m.find("operation failed: OperationNotAllowed: Operation could not be completed"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("(details: QuotaExceeded: Current Limit: 10)"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_NE(m.find("x-ms-client-request-id "), std::string::npos);
  auto g = f.arm->get(kVmss, "2024-07-01");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->body["properties"]["provisioningState"], "Failed");
}

TEST(AzureArm, MissingRetryAfterWaitsTheDefault) {
  ArmOptions o;
  o.default_wait_s = 13;
  Fixture f(2, 1, o);
  NEED_SERVER(f);
  f.resource_group();
  f.srv.config({{"omitRetryAfter", true}});
  f.vnet();
  EXPECT_EQ(f.fc.taken(), (std::vector<double>{13, 13}));
}

TEST(AzureArm, MissingRetryAfterDefaultsToTheContractsMinute) {
  // async-api-reference.md: without Retry-After a client waits 60 s.
  EXPECT_DOUBLE_EQ(ArmOptions{}.default_wait_s, 60);
  Fixture f;
  NEED_SERVER(f);
  f.resource_group();
  f.srv.config({{"omitRetryAfter", true}});
  f.vnet();
  EXPECT_EQ(f.fc.taken(), (std::vector<double>{60, 60}));
}

TEST(AzureArm, LongThrottleWithinTheLimitIsWaitedInFull) {
  // A 429's Retry-After may exceed the 600 s of polls (Compute: 20 minutes);
  // up to max_throttle_wait_s it is waited as given, and the request is sent once more.
  Fixture f;
  NEED_SERVER(f);
  f.srv.fail({{"kind", "arm"},
              {"method", "PUT"},
              {"status", 429},
              {"retryAfter", 900},
              {"shape", "compute"},
              {"code", "OperationNotAllowed"},
              {"count", 1}});
  f.resource_group();
  EXPECT_EQ(f.fc.taken(), (std::vector<double>{900}));
  EXPECT_EQ(f.count("PUT", "/resourceGroups/pai-rg"), 2);
  EXPECT_EQ(f.arm->stats().throttled, 1);
}

TEST(AzureArm, RemainingRequestCountsAreObservedAndSlowDown) {
  Fixture f;
  NEED_SERVER(f);
  f.srv.config({{"remainingReads", 100}, {"remainingWrites", 3}});
  f.resource_group();  // one PUT: 2 writes left, below 5
  ASSERT_TRUE(f.arm->get(kRg, "2021-04-01").ok());
  auto st = f.arm->stats();
  EXPECT_EQ(st.min_remaining_writes, 2);
  EXPECT_EQ(st.min_remaining_reads, 99);
  EXPECT_EQ(f.fc.taken(), (std::vector<double>{1})) << "one pause after the write ran low";
  EXPECT_NE(f.all_log().find("only 2 writes left in this subscription's window; slowing down"),
            std::string::npos)
      << f.all_log();
}

TEST(AzureArm, ErrorAnswersAreValuesWithCodeAndRequestId) {
  Fixture f;
  NEED_SERVER(f);
  auto r = f.arm->put(kNet + "/virtualNetworks/x", "2024-05-01", json{{"location", "eastus"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(
      r.error().message.find(
          "404 Not Found: ResourceGroupNotFound: Resource group 'pai-rg' could not be found."),
      std::string::npos)
      << r.error().message;
  auto g = f.arm->get(kRg, "2021-04-01");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->status, 404);  // absence is an answer, not an error
  f.resource_group();
  auto dup = f.arm->put(kRg, "2021-04-01", json{{"location", "westeurope"}});
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.error().message.find("InvalidResourceLocation"), std::string::npos);
}

TEST(AzureArm, EveryRequestHasItsOwnClientRequestIdInTheLog) {
  Fixture f;
  NEED_SERVER(f);
  f.resource_group();
  f.vnet();
  std::regex uuid("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  std::set<std::string> ids;
  std::string log = f.all_log();
  for (auto& r : f.srv.arm_requests()) {
    std::string id = r["clientRequestId"];
    EXPECT_TRUE(std::regex_match(id, uuid)) << id;
    ids.insert(id);
    EXPECT_NE(log.find("x-ms-client-request-id " + id), std::string::npos) << id;
    EXPECT_TRUE(r["bearer"].get<bool>());
  }
  EXPECT_EQ(ids.size(), f.srv.arm_requests().size());
  EXPECT_EQ(log.find(ArmServer::kSecret), std::string::npos);
  EXPECT_EQ(log.find("arm-"), std::string::npos) << "a token in the log";
  EXPECT_EQ(log.find("Bearer"), std::string::npos);
}

TEST(AzureArm, ListFollowsNextLink) {
  Fixture f(1, 1);
  NEED_SERVER(f);
  f.resource_group();
  f.vnet();
  auto r = f.arm->put(kVmss, "2024-07-01", f.vmss_body(5));
  ASSERT_TRUE(r.ok()) << r.error().message;
  f.srv.config({{"pageSize", 2}});
  f.srv.clear_requests();
  auto nics = f.arm->list(kVmss + "/networkInterfaces", "2018-10-01");
  ASSERT_TRUE(nics.ok()) << nics.error().message;
  ASSERT_EQ(nics->size(), 5u);
  EXPECT_EQ(f.srv.arm_requests().size(), 3u);
  std::set<std::string> ips;
  for (auto& n : *nics)
    ips.insert(n["properties"]["ipConfigurations"][0]["properties"]["privateIPAddress"]);
  EXPECT_EQ(ips.size(), 5u);
  EXPECT_TRUE(ips.count("10.100.1.4")) << "the first address Azure hands out in 10.100.1.0/24";
}

TEST(AzureArm, TokenIsCachedAndRenewedBeforeExpiry) {
  Fixture f;
  NEED_SERVER(f);
  auto tokens = [&] {
    int n = 0;
    for (auto& r : f.srv.requests()) n += r["kind"] == "token" ? 1 : 0;
    return n;
  };
  ASSERT_TRUE(f.arm->get(kRg, "2021-04-01").ok());
  ASSERT_TRUE(f.arm->get(kRg, "2021-04-01").ok());
  EXPECT_EQ(tokens(), 1);
  f.fc.clock().sleep(3600 - 200);  // within 5 minutes of the expiry
  ASSERT_TRUE(f.arm->get(kRg, "2021-04-01").ok());
  EXPECT_EQ(tokens(), 2);
  // A token the server no longer accepts is renewed once.
  f.srv.control("POST", "/__control/expire-tokens", "{}");
  auto g = f.arm->get(kRg, "2021-04-01");
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->status, 404);
  EXPECT_EQ(tokens(), 3);
}

TEST(AzureArm, LongThrottleIsReportedNotWaited) {
  Fixture f;
  NEED_SERVER(f);
  f.srv.fail({{"kind", "arm"},
              {"status", 429},
              {"retryAfter", 5000},
              {"shape", "compute"},
              {"code", "OperationNotAllowed"},
              {"message",
               "The server rejected the request because too many requests have been received for "
               "this subscription."}});
  auto r = f.arm->put(kRg, "2021-04-01", json{{"location", "eastus"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(
      r.error().message.find("429 Too Many Requests: OperationNotAllowed: The server rejected"),
      std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("(details: TooManyRequests"), std::string::npos);
  EXPECT_TRUE(f.fc.taken().empty());
}

TEST(AzureArm, OperationUrlOnAnotherHostIsRefused) {
  pai::http::FakeClient http;
  pai::http::Route put;
  put.method = "PUT";
  put.path = "/subscriptions/s/resourcegroups/rg/providers/Microsoft.Network/virtualNetworks/v";
  pai::http::FakeAnswer a;
  a.response.status = 201;
  a.response.headers = {{"azure-asyncoperation", "https://elsewhere.example/op/1"},
                        {"retry-after", "1"}};
  a.response.body = "{}";
  put.answers.push_back(a);
  http.add(put);
  struct Fixed : pai::azure::TokenSource {
    pai::util::Result<std::string> token(bool) override { return std::string("tok"); }
    std::string describe() const override { return "fixed"; }
  } tokens;
  FakeClock fc;
  ArmOptions o;
  o.endpoints.arm = "https://arm.example";
  o.clock = fc.clock();
  ArmClient arm(http, tokens, o);
  auto r =
      arm.put("/subscriptions/s/resourcegroups/rg/providers/Microsoft.Network/virtualNetworks/v",
              "2024-05-01", json{{"location", "x"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("refusing to send the ARM token to elsewhere.example"),
            std::string::npos)
      << r.error().message;
  for (auto& q : http.requests()) EXPECT_EQ(q.host.find("elsewhere"), std::string::npos);
}

TEST(AzureArmErrors, BothBodyShapesAndDetails) {
  using pai::azure::format_arm_error;
  EXPECT_EQ(format_arm_error(409, json::parse(R"({"error":{"code":"Conflict","message":"a\nb"}})")),
            "409 Conflict: Conflict: a b");
  EXPECT_EQ(
      format_arm_error(
          429,
          json::parse(
              R"({"code":"OperationNotAllowed","message":"m","details":[{"code":"TooManyRequests","target":"t","message":"x"}]})")),
      "429 Too Many Requests: OperationNotAllowed: m (details: TooManyRequests: x)");
  EXPECT_EQ(format_arm_error(502, json(nullptr)), "502 Bad Gateway");
  EXPECT_EQ(pai::azure::arm_error_code(json::parse(R"({"error":{"code":"X"}})")), "X");
}

}  // namespace
