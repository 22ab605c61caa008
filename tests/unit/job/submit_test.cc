// plan_submit and apply_submit (lib/job/submit.h) against clusters answered by
// http::FakeClient: the file refused before any request, the one cluster's
// checks, --cluster auto's ranking, the dry run, and the POST.

#include "job/submit.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "job/submit_json.h"
#include "support/fake_client.h"

namespace {

using pai::http::FakeClient;
using pai::job::OpenedClusters;
using pai::job::SubmitCluster;
using pai::job::SubmitDeps;
using pai::job::SubmitError;
using pai::job::SubmitRequest;

const char* kSubmitJob = R"(protocolVersion: 2
name: train
type: job
parameters:
  note: short
secrets:
  token: very-secret-value
prerequisites:
  - name: img
    type: dockerimage
    uri: ubuntu:22.04
taskRoles:
  worker:
    instances: 2
    dockerImage: img
    resourcePerInstance: {cpu: 4, memoryMB: 16384, gpu: 1}
    commands:
      - echo <% $parameters.note %>
defaults:
  virtualCluster: default
)";

const char* kSubmitVcs = R"({"default": {"capacity": 50, "usedCapacity": 25, "maxCapacity": 50,
  "dedicated": false,
  "resourcesUsed": {"cpu": 8, "memory": 32768, "gpu": 2},
  "resourcesGuaranteed": {"cpu": 32, "memory": 131072, "gpu": 8},
  "resourcesTotal": {"cpu": 32, "memory": 131072, "gpu": 8}}})";

// A temporary directory for job files, removed at the end of the test.
struct SubmitFiles {
  std::filesystem::path dir;
  SubmitFiles() {
    dir = std::filesystem::temp_directory_path() /
          ("paictl-submit-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    std::filesystem::create_directories(dir);
  }
  ~SubmitFiles() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  static std::atomic<int>& counter() {
    static std::atomic<int> n{0};
    return n;
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
};

// The REST answers a cluster gives the checks: VC `vc` exists, alice may use
// it, a GPU SKU, the name train is free.
std::shared_ptr<FakeClient> rest_cluster(const std::string& vc = "default") {
  auto http = std::make_shared<FakeClient>();
  std::string vcs = kSubmitVcs;
  vcs.replace(vcs.find("\"default\""), 9, "\"" + vc + "\"");
  http->add("GET", "/rest-server/api/v2/virtual-clusters", 200, vcs);
  http->add("GET", "/rest-server/api/v2/users/alice", 200,
            R"({"username": "alice", "admin": false, "virtualCluster": [")" + vc + R"("]})");
  http->add("GET", "/rest-server/api/v2/cluster/sku-types", 200,
            R"({"GPU": {"cpu": 4, "memory": 16384, "gpu": 1}})");
  http->add("GET", "/rest-server/api/v2/jobs/alice~train", 404,
            R"({"code": "NoJobError", "message": "Job alice~train is not found."})");
  http->add("GET", "/rest-server/api/v2/jobs", 200, "[]");
  http->add("POST", "/rest-server/api/v2/jobs", 202,
            R"({"status": 202, "message": "Update job train for user alice successfully."})");
  return http;
}

SubmitCluster open_cluster(const std::string& name, std::shared_ptr<FakeClient> http) {
  SubmitCluster c;
  c.name = name;
  c.user = "alice";
  c.http = http;
  c.api = std::make_shared<pai::api::Client>(*http, "http://" + name + ".test/rest-server", "t");
  return c;
}

size_t submit_posts(const FakeClient& http) {
  size_t n = 0;
  for (const auto& r : http.requests()) n += r.method == "POST";
  return n;
}

struct Submit : ::testing::Test {
  SubmitFiles files;
  std::shared_ptr<FakeClient> lab = rest_cluster();
  std::vector<std::string> calls;  // "checked", "open", in order
  SubmitDeps deps;
  void SetUp() override {
    deps.open = [this](const SubmitRequest&) -> pai::util::Result<OpenedClusters> {
      calls.push_back("open");
      OpenedClusters o;
      o.clusters.push_back(open_cluster("lab", lab));
      return o;
    };
  }
  pai::util::Result<pai::job::SubmitPlan, SubmitError> plan(const SubmitRequest& r) {
    return pai::job::plan_submit(r, deps,
                                 [this](const pai::diag::List&) { calls.push_back("checked"); });
  }
  SubmitRequest request(const std::string& text = kSubmitJob) {
    SubmitRequest r;
    r.file = files.write("job.yaml", text);
    return r;
  }
};

TEST_F(Submit, AValidFilePlannedAgainstOneCluster) {
  auto p = plan(request());
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(calls, (std::vector<std::string>{"checked", "open"}));
  EXPECT_FALSE(p->findings.has_errors());
  ASSERT_TRUE(p->target);
  EXPECT_EQ(p->target->name, "lab");
  EXPECT_EQ(p->job_id, "alice~train");
  EXPECT_EQ(p->url, "http://lab.test/rest-server/api/v2/jobs");
  ASSERT_EQ(p->evaluations.size(), 1u);
  EXPECT_TRUE(p->evaluations[0].eligible) << p->evaluations[0].reason;
  EXPECT_EQ(p->chosen(), &p->evaluations[0]);
  EXPECT_EQ(p->job.total_gpu(), 2);
  EXPECT_EQ(p->job.virtual_cluster, "default");
  EXPECT_NE(p->body.find("name: train"), std::string::npos) << p->body;
  EXPECT_TRUE(p->masked_body.empty());    // not a dry run
  EXPECT_FALSE(p->evaluations[0].cells);  // HiveD is asked with automatic only
  EXPECT_EQ(submit_posts(*lab), 0u);
  EXPECT_TRUE(lab->unmatched().empty());
}

TEST_F(Submit, AFileWithErrorsIsRefusedBeforeAnyRequest) {
  std::string bad = kSubmitJob;
  bad.replace(bad.find("type: job"), 9, "type: jobb");
  auto p = plan(request(bad));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().kind, SubmitError::Kind::Input);
  EXPECT_NE(p.error().message.find("has errors; the server would refuse it"), std::string::npos);
  EXPECT_TRUE(p.error().findings.has_errors());
  EXPECT_EQ(calls, (std::vector<std::string>{"checked"}));  // never opened
  EXPECT_TRUE(lab->requests().empty());
}

TEST_F(Submit, AnUnreadableFileIsInput) {
  SubmitRequest r;
  r.file = (files.dir / "missing.yaml").string();
  auto p = plan(r);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().kind, SubmitError::Kind::Input);
  EXPECT_EQ(p.error().message.rfind("cannot read " + r.file + ": ", 0), 0u) << p.error().message;
  EXPECT_TRUE(calls.empty());
}

TEST_F(Submit, ABodyTooLargeIsRefused) {
  SubmitRequest r = request();
  r.overrides.params.push_back({"note", std::string(pai::job::kMaxBodyBytes, 'x')});
  auto p = plan(r);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().kind, SubmitError::Kind::Input);
  EXPECT_NE(p.error().message.find("bytes; the server accepts at most 102400"), std::string::npos)
      << p.error().message;
  EXPECT_EQ(calls, (std::vector<std::string>{"checked"}));
  EXPECT_TRUE(lab->requests().empty());
}

TEST_F(Submit, AClusterThatCannotBeAskedIsARemoteError) {
  lab->add("GET", "/rest-server/api/v2/virtual-clusters", 401,
           R"({"code": "UnauthorizedUserError", "message": "Your token is invalid."})");
  auto p = plan(request());
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().kind, SubmitError::Kind::Remote);
  EXPECT_EQ(p.error().cluster, "lab");
  EXPECT_EQ(p.error().message, "checking the job against the cluster");
  ASSERT_TRUE(p.error().api);
  EXPECT_EQ(p.error().api->status, 401);
}

TEST_F(Submit, AClusterThatCannotTakeTheJobIsNoTarget) {
  lab = rest_cluster("other");
  auto p = plan(request());
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->target);
  EXPECT_EQ(p->chosen(), nullptr);
  ASSERT_EQ(p->evaluations.size(), 1u);
  EXPECT_FALSE(p->evaluations[0].eligible);
  EXPECT_TRUE(p->job_id.empty());
}

TEST_F(Submit, AutoPicksTheEligibleCluster) {
  auto other = rest_cluster("research");        // has no VC default: dropped
  auto hived = std::make_shared<FakeClient>();  // no route: HiveD does not answer
  deps.open = [&](const SubmitRequest& r) -> pai::util::Result<OpenedClusters> {
    EXPECT_TRUE(r.automatic);
    OpenedClusters o;
    o.clusters.push_back(open_cluster("other", other));
    o.clusters.push_back(open_cluster("lab", lab));
    for (auto& c : o.clusters)
      c.hived =
          pai::job::HivedEndpoint{hived, "http://" + c.name + ".test:30096", "t", c.name + ".test"};
    o.unusable = {"broken"};
    o.preference = {"other", "lab"};
    return o;
  };
  SubmitRequest r = request();
  r.automatic = true;
  auto p = plan(r);
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_TRUE(p->target);
  EXPECT_EQ(p->target->name, "lab");
  ASSERT_EQ(p->evaluations.size(), 3u);
  EXPECT_EQ(p->evaluations[0].cluster, "lab");
  EXPECT_EQ(p->evaluations[0].rank, 1);
  EXPECT_EQ(p->evaluations[0].preference, 1);
  ASSERT_TRUE(p->evaluations[0].cells);
  EXPECT_FALSE(p->evaluations[0].cells->known);
  EXPECT_EQ(p->evaluations[0].cells->why_unknown.rfind(
                "no HiveD inspect API at http://lab.test:30096", 0),
            0u)
      << p->evaluations[0].cells->why_unknown;
  // The dropped ones by name: the unusable one as unreachable.
  EXPECT_EQ(p->evaluations[1].cluster, "broken");
  EXPECT_FALSE(p->evaluations[1].eligible);
  EXPECT_NE(p->evaluations[1].reason.find("cannot use its credentials"), std::string::npos);
  EXPECT_EQ(p->evaluations[2].cluster, "other");
  EXPECT_FALSE(p->evaluations[2].eligible);
  // Only lab's HiveD was asked: other's SKU types are unknown without its VC.
  std::set<std::string> hosts;
  for (const auto& q : hived->requests()) hosts.insert(q.host);
  EXPECT_EQ(hosts, (std::set<std::string>{"lab.test:30096"}));
  ASSERT_TRUE(p->evaluations[2].cells);
  EXPECT_EQ(p->evaluations[2].cells->why_unknown, "the VC's SKU types are not known");
  auto d = pai::job::decision_cells(p->evaluations[0]);
  EXPECT_EQ(d.cells, "no HiveD");
  EXPECT_EQ(d.start, "now");
  EXPECT_EQ(pai::job::decision_cells(p->evaluations[2]).cells, "-");
  EXPECT_EQ(submit_posts(*lab) + submit_posts(*other), 0u);
}

TEST_F(Submit, AutoWithoutClustersIsNoCluster) {
  deps.open = [](const SubmitRequest&) -> pai::util::Result<OpenedClusters> {
    return OpenedClusters{};
  };
  SubmitRequest r = request();
  r.automatic = true;
  auto p = plan(r);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().kind, SubmitError::Kind::NoCluster);
}

TEST_F(Submit, AFrontEndThatCannotOpenIsNotOpened) {
  deps.open = [](const SubmitRequest&) -> pai::util::Result<OpenedClusters> {
    return pai::util::Error{"no current cluster", {}};
  };
  auto p = plan(request());
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().kind, SubmitError::Kind::NotOpened);
}

TEST_F(Submit, TheDryRunSendsNothingAndMasksSecrets) {
  SubmitRequest r = request();
  r.dry_run = true;
  auto p = plan(r);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(submit_posts(*lab), 0u);
  EXPECT_EQ(p->masked_body.find("very-secret-value"), std::string::npos) << p->masked_body;
  EXPECT_NE(p->masked_body.find("******"), std::string::npos) << p->masked_body;
  EXPECT_NE(p->body.find("very-secret-value"), std::string::npos);  // what a real run sends
  auto j = pai::job::submit_json(*p);
  EXPECT_EQ(j["target"], "lab");
  EXPECT_EQ(j["dryRun"], true);
  EXPECT_EQ(j["http"]["url"], "http://lab.test/rest-server/api/v2/jobs");
  EXPECT_EQ(j["http"]["bytes"], p->body.size());
  EXPECT_EQ(j["http"]["body"], p->masked_body);
  EXPECT_EQ(j["request"]["gpu"], 2);
  ASSERT_EQ(j["decision"].size(), 1u);
  EXPECT_EQ(j["decision"][0]["decision"], "kept");
  EXPECT_EQ(j["decision"][0]["hived"], nullptr);
}

TEST_F(Submit, ApplyPostsExactlyTheBody) {
  auto p = plan(request());
  ASSERT_TRUE(p.ok()) << p.error().message;
  lab->clear_requests();
  auto sent = pai::job::apply_submit(*p);
  ASSERT_TRUE(sent.ok()) << sent.error().summary();
  auto seen = lab->requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "POST");
  EXPECT_EQ(seen[0].path, "/rest-server/api/v2/jobs");
  EXPECT_EQ(seen[0].body, p->body);
  EXPECT_EQ(seen[0].header("content-type"), "text/yaml");
  EXPECT_EQ(sent->job_id, "alice~train");
  EXPECT_EQ(sent->cluster, "lab");
  EXPECT_EQ(sent->virtual_cluster, "default");
  EXPECT_EQ(sent->message, "Update job train for user alice successfully.");
  auto j = pai::job::submit_json(*p, *sent);
  EXPECT_EQ(j["dryRun"], false);
  EXPECT_EQ(j["job"], "alice~train");
}

TEST_F(Submit, AServerErrorSurfacesAsApiError) {
  lab->add("POST", "/rest-server/api/v2/jobs", 409,
           R"({"code": "ConflictJobError", "message": "Job alice~train already exists."})");
  auto p = plan(request());
  ASSERT_TRUE(p.ok()) << p.error().message;
  auto sent = pai::job::apply_submit(*p);
  ASSERT_FALSE(sent.ok());
  EXPECT_EQ(sent.error().kind, pai::api::Error::Kind::Http);
  EXPECT_EQ(sent.error().status, 409);
  EXPECT_EQ(sent.error().code, "ConflictJobError");
  EXPECT_EQ(submit_posts(*lab), 1u);
}

TEST(SubmitTiming, TheVerdictsAfterTheLastAnswers) {
  pai::job::SubmitTiming t;
  t.asked = std::chrono::steady_clock::time_point{} + std::chrono::milliseconds(1000);
  pai::job::VerdictTiming a, b, none;
  a.arrived = t.asked + std::chrono::milliseconds(40);
  a.after_ms = 3;
  a.after_cpu_ms = 2;
  a.bytes = 100;
  b.arrived = t.asked + std::chrono::milliseconds(70);
  b.after_ms = 5;
  b.after_cpu_ms = 4;
  b.bytes = 50;
  t.clusters = {a, none, b};
  auto v = pai::job::verdict_times(t);
  EXPECT_EQ(v.clusters, 2u);
  EXPECT_EQ(v.bytes, 150u);
  EXPECT_EQ(v.last_arrived, b.arrived);
  EXPECT_DOUBLE_EQ(v.answers_ms, 70);
  EXPECT_DOUBLE_EQ(v.slowest_ms, 5);
  EXPECT_DOUBLE_EQ(v.cpu_ms, 6);
}

}  // namespace

namespace {

const char* kSubmitJobList = R"([
  {"name": "a", "username": "alice", "state": "SUCCEEDED", "launchedTime": 0, "completedTime": 100000},
  {"name": "b", "username": "alice", "state": "FAILED", "launchedTime": 0, "completedTime": 300000},
  {"name": "c", "username": "alice", "state": "STOPPED", "launchedTime": 0, "completedTime": 200000},
  {"name": "run", "username": "alice", "state": "RUNNING", "launchedTime": 1000000},
  {"name": "other", "username": "bob", "state": "RUNNING", "launchedTime": 1000000}])";

TEST(CellVerdict, RunningJobsEndAfterTheirUsersMedianRun) {
  FakeClient http;
  http.add("GET", "/rest-server/api/v2/jobs", 200, kSubmitJobList);
  pai::api::Client rest(http, "http://lab.test/rest-server", "t");
  auto ends = pai::job::expected_ends(rest, std::nullopt);
  EXPECT_EQ(ends, (std::map<std::string, double>{{"alice~run", 1200}}));
  ASSERT_EQ(http.requests().size(), 1u);
  EXPECT_EQ(http.requests()[0].query["state"], "RUNNING,SUCCEEDED,FAILED,STOPPED");
}

TEST(CellVerdict, AnExpectedDurationEndsEveryRunningJob) {
  FakeClient http;
  http.add("GET", "/rest-server/api/v2/jobs", 200, kSubmitJobList);
  pai::api::Client rest(http, "http://lab.test/rest-server", "t");
  auto ends = pai::job::expected_ends(rest, 50);
  EXPECT_EQ(ends, (std::map<std::string, double>{{"alice~run", 1050}, {"bob~other", 1050}}));
  EXPECT_EQ(http.requests()[0].query["state"], "RUNNING");
}

TEST(CellVerdict, APinnedCellIsNotJudgedAndHivedNotAsked) {
  FakeClient http;
  pai::api::Client rest(http, "http://lab.test/rest-server", "t");
  pai::hived::Client hived(http, "http://lab.test:30096");
  pai::job::JobRequest job;
  job.task_roles.push_back({});
  job.task_roles[0].name = "worker";
  job.task_roles[0].pinned_cell = "cell-1";
  pai::job::ClusterFacts facts;
  facts.skus = std::vector<pai::api::SkuType>{};
  pai::job::VerdictTiming timing;
  auto v = pai::job::cell_verdict({&job, &facts, std::nullopt, {}}, hived, rest, timing);
  EXPECT_FALSE(v.known);
  EXPECT_EQ(v.why_unknown,
            "task role worker asks for a pinned cell, which HiveD's inspect API does not show");
  EXPECT_TRUE(http.requests().empty());
  EXPECT_LT(timing.after_ms, 0);  // no answers were judged
}

}  // namespace
