// plan_clone, plan_resubmit, plan_sweep and apply_clone (lib/job/clone.h)
// against clusters answered by http::FakeClient: the copy planned from the
// server's config, the overrides, a target that cannot take the job, a sweep's
// jobs, a dry run, and the posting (in order, at most N unfinished, stopping
// at the first failure).

#include "job/clone.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "job/clone_json.h"
#include "support/fake_client.h"
#include "support/fake_clock.h"

namespace {

using pai::http::FakeClient;
using pai::job::CloneCluster;
using pai::job::CloneDeps;
using pai::job::CloneError;
using pai::job::CloneEvent;
using pai::job::CloneFailure;
using pai::job::ClonePlan;

const char* kStoredJob = R"(protocolVersion: 2
name: src
type: job
parameters:
  lr: 0.1
prerequisites:
  - name: img
    type: dockerimage
    uri: ubuntu:22.04
taskRoles:
  worker:
    instances: 1
    dockerImage: img
    resourcePerInstance: {cpu: 4, memoryMB: 16384, gpu: 1}
    commands:
      - python train.py --lr <% $parameters.lr %>
defaults:
  virtualCluster: default
)";

std::string clone_vcs(const std::string& vc) {
  return R"({")" + vc + R"(": {"capacity": 50, "usedCapacity": 0, "maxCapacity": 50,
  "dedicated": false, "resourcesUsed": {"cpu": 0, "memory": 0, "gpu": 0},
  "resourcesGuaranteed": {"cpu": 32, "memory": 131072, "gpu": 8},
  "resourcesTotal": {"cpu": 32, "memory": 131072, "gpu": 8}}})";
}

// A cluster whose VC `vc` alice may use, with a GPU SKU; job names are free
// unless a test says otherwise.
std::shared_ptr<FakeClient> clone_rest(const std::string& vc = "default") {
  auto http = std::make_shared<FakeClient>();
  http->add("GET", "/rest-server/api/v2/virtual-clusters", 200, clone_vcs(vc));
  http->add("GET", "/rest-server/api/v2/users/alice", 200,
            R"({"username": "alice", "admin": false, "virtualCluster": [")" + vc + R"("]})");
  http->add("GET", "/rest-server/api/v2/cluster/sku-types", 200,
            R"({"GPU": {"cpu": 4, "memory": 16384, "gpu": 1}})");
  http->add("GET", "/rest-server/api/v2/storages", 200, "[]");
  http->add("GET", "/rest-server/api/v2/jobs", 200, "[]");
  http->add("POST", "/rest-server/api/v2/jobs", 202,
            R"({"status": 202, "message": "Update job successfully."})");
  return http;
}

// No job `name` yet; once posted, it can be tagged.
void job_free(FakeClient& http, const std::string& name) {
  http.add("GET", "/rest-server/api/v2/jobs/alice~" + name, 404,
           R"({"code": "NoJobError", "message": "Job is not found."})");
  http.add("PUT", "/rest-server/api/v2/jobs/alice~" + name + "/tag", 200,
           R"({"message": "tagged"})");
}

void job_state(FakeClient& http, const std::string& name, std::vector<std::string> states) {
  pai::http::Route r;
  r.method = "GET";
  r.path = "/rest-server/api/v2/jobs/alice~" + name;
  for (const auto& s : states)
    r.answers.push_back({{200,
                          {{"content-type", "application/json"}},
                          R"({"name": ")" + name + R"(", "jobStatus": {"state": ")" + s + "\"}}"},
                         pai::http::ErrorKind::None,
                         ""});
  http.add(r);
}

CloneCluster clone_open(const std::string& name, const std::shared_ptr<FakeClient>& http) {
  return {name, "alice",
          std::make_shared<pai::api::Client>(*http, "http://" + name + ".test/rest-server", "t")};
}

std::vector<pai::http::SeenRequest> clone_sent(const FakeClient& http, const std::string& method) {
  std::vector<pai::http::SeenRequest> out;
  for (const auto& r : http.requests())
    if (r.method == method) out.push_back(r);
  return out;
}

struct Clone : ::testing::Test {
  std::shared_ptr<FakeClient> lab = clone_rest();
  std::shared_ptr<FakeClient> cloud = clone_rest("gpu");
  std::vector<std::string> opened;
  pai::testing::FakeClock fake_clock;
  CloneDeps deps;
  std::filesystem::path dir;

  void SetUp() override {
    lab->add("GET", "/rest-server/api/v2/jobs/alice~src/config", 200, kStoredJob,
             "text/yaml; charset=utf-8");
    deps.source = clone_open("lab", lab);
    deps.open_target = [this](const std::string& name) -> pai::util::Result<CloneCluster> {
      opened.push_back(name);
      if (name == "cloud") return clone_open("cloud", cloud);
      if (name == "" || name == "lab") return clone_open("lab", lab);
      return pai::util::Error{"unknown cluster " + name, ""};
    };
    deps.now = [] { return std::time_t{1714564984}; };  // 2024-05-01T12:03:04Z
    deps.clock = fake_clock.clock();
    static std::atomic<int> n{0};
    dir = std::filesystem::temp_directory_path() /
          ("paictl-clone-test-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    std::filesystem::create_directories(dir);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string write_job(const std::string& text = kStoredJob) {
    std::ofstream(dir / "job.yaml") << text;
    return (dir / "job.yaml").string();
  }
  pai::job::CloneRequest clone_request(const std::string& name = "copy") {
    pai::job::CloneRequest r;
    r.user = "alice";
    r.name = "src";
    if (!name.empty()) r.overrides.name = name;
    return r;
  }
  // lr=0.1,0.01 x bs=32,64 over the file, sweep id t1.
  pai::job::SweepRequest sweep_request() {
    pai::job::SweepRequest r;
    r.file = write_job();
    r.axes = {{"lr", {"0.1", "0.01"}}, {"bs", {"32", "64"}}};
    r.sweep_id = "t1";
    for (const char* n :
         {"src-t1-lr0_1-bs32", "src-t1-lr0_1-bs64", "src-t1-lr0_01-bs32", "src-t1-lr0_01-bs64"})
      job_free(*lab, n);
    return r;
  }
};

TEST_F(Clone, PlannedFromTheSourceJobsStoredConfig) {
  job_free(*lab, "copy");
  int checked = 0;
  auto p = pai::job::plan_clone(clone_request(), deps, [&](const pai::diag::List& findings) {
    ++checked;
    EXPECT_FALSE(findings.has_errors());
  });
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(checked, 1);
  EXPECT_TRUE(opened.empty());  // the copy stays on the job's cluster
  EXPECT_EQ(p->target.name, "lab");
  ASSERT_EQ(p->jobs.size(), 1u);
  EXPECT_EQ(p->jobs[0].job_id, "alice~copy");
  EXPECT_NE(p->jobs[0].body.find("name: copy"), std::string::npos) << p->jobs[0].body;
  EXPECT_NE(p->jobs[0].body.find("python train.py"), std::string::npos);
  EXPECT_TRUE(p->jobs[0].tags.empty());
  EXPECT_TRUE(p->evaluation.eligible);
  EXPECT_TRUE(p->jobs[0].masked_body.empty());  // not a dry run
  bool read_config = false;
  for (const auto& r : lab->requests()) read_config |= r.path.ends_with("/jobs/alice~src/config");
  EXPECT_TRUE(read_config);
  EXPECT_TRUE(clone_sent(*lab, "POST").empty());
  EXPECT_TRUE(lab->unmatched().empty());
}

TEST_F(Clone, OverridesAndTheGeneratedName) {
  auto r = clone_request("");
  r.overrides.params.push_back({"lr", "0.5"});
  r.target_cluster = "cloud";
  r.overrides.virtual_cluster = "gpu";
  job_free(*cloud, "src-clone-20240501-120304");
  auto p = pai::job::plan_clone(r, deps);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(opened, (std::vector<std::string>{"cloud"}));
  EXPECT_EQ(p->target.name, "cloud");
  EXPECT_EQ(p->jobs[0].name, "src-clone-20240501-120304");
  EXPECT_EQ(p->job.virtual_cluster, "gpu");
  const std::string& body = p->jobs[0].body;
  EXPECT_NE(body.find("0.5"), std::string::npos) << body;
  EXPECT_EQ(body.find("lr: 0.1"), std::string::npos) << body;
  EXPECT_NE(body.find("virtualCluster: gpu"), std::string::npos) << body;
  EXPECT_TRUE(cloud->unmatched().empty());
}

TEST_F(Clone, ATargetThatCannotTakeTheJobRefusesThePlan) {
  auto r = clone_request();
  r.target_cluster = "cloud";  // has VC gpu only; the job asks for default
  job_free(*cloud, "copy");
  auto p = pai::job::plan_clone(r, deps);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().kind, CloneError::Kind::Refused);
  EXPECT_EQ(p.error().message.rfind("cloud cannot take alice~copy: ", 0), 0u) << p.error().message;
  ASSERT_TRUE(p.error().evaluation);
  EXPECT_FALSE(p.error().evaluation->eligible);
  bool failed = false;
  for (const auto& c : p.error().evaluation->checks) failed |= !c.ok;
  EXPECT_TRUE(failed);
  EXPECT_TRUE(clone_sent(*cloud, "POST").empty());
  EXPECT_TRUE(clone_sent(*lab, "POST").empty());
}

TEST_F(Clone, ATargetThatCannotBeOpenedOrAskedIsAnError) {
  auto r = clone_request();
  r.target_cluster = "nowhere";
  auto p = pai::job::plan_clone(r, deps);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().kind, CloneError::Kind::NotOpened);

  lab->add("GET", "/rest-server/api/v2/virtual-clusters", 500,
           R"({"code": "UnknownError", "message": "boom"})");
  job_free(*lab, "copy");
  auto q = pai::job::plan_clone(clone_request(), deps);
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().kind, CloneError::Kind::Remote);
  EXPECT_EQ(q.error().cluster, "lab");
  EXPECT_EQ(q.error().message, "checking the job against the cluster");
  ASSERT_TRUE(q.error().api);
  EXPECT_EQ(q.error().api->status, 500);
}

TEST_F(Clone, AStoredConfigWithSecretsOrNotAJobIsRefused) {
  std::string with_secrets = std::string(kStoredJob) + "secrets: '******'\n";
  lab->add("GET", "/rest-server/api/v2/jobs/alice~src/config", 200, with_secrets, "text/yaml");
  auto p = pai::job::plan_clone(clone_request(), deps);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().kind, CloneError::Kind::HasSecrets);
  EXPECT_EQ(p.error().message.rfind("alice~src has secrets", 0), 0u) << p.error().message;

  lab->add("GET", "/rest-server/api/v2/jobs/alice~src/config", 200, "- a list\n", "text/yaml");
  auto q = pai::job::plan_clone(clone_request(), deps);
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().kind, CloneError::Kind::BadConfig);
  EXPECT_EQ(q.error().message, "lab: the config of alice~src is not a job document");

  lab->add("GET", "/rest-server/api/v2/jobs/alice~src/config", 404,
           R"({"code": "NoJobError", "message": "Job is not found."})");
  auto n = pai::job::plan_clone(clone_request(), deps);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().kind, CloneError::Kind::Remote);
  EXPECT_EQ(n.error().message, "reading the config of alice~src");
  EXPECT_TRUE(clone_sent(*lab, "POST").empty());
}

TEST_F(Clone, ADryRunSendsNothing) {
  job_free(*lab, "copy");
  auto r = clone_request();
  r.dry_run = true;
  auto p = pai::job::plan_clone(r, deps);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_NE(p->jobs[0].masked_body.find("name: copy"), std::string::npos);
  size_t before = lab->requests().size();
  auto out = pai::job::apply_clone(*p, deps);
  EXPECT_TRUE(out.submitted.empty());
  EXPECT_FALSE(out.failure);
  EXPECT_EQ(lab->requests().size(), before);
  EXPECT_TRUE(clone_sent(*lab, "POST").empty());
  auto j = pai::job::clone_json(*p);
  EXPECT_EQ(j["dryRun"], true);
  EXPECT_EQ(j["job"], "alice~copy");
  EXPECT_EQ(j["body"], p->jobs[0].masked_body);
}

TEST_F(Clone, ResubmitTakesTheFirstFreeNameAndTagsTheJob) {
  job_state(*lab, "src", {"RUNNING"});
  pai::job::ResubmitRequest r{"alice", "src", {}, false, false};
  auto refused = pai::job::plan_resubmit(r, deps);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, CloneError::Kind::NotEnded);
  EXPECT_EQ(refused.error().state, "RUNNING");

  job_state(*lab, "src", {"FAILED"});
  job_state(*lab, "src-r1", {"FAILED"});  // taken
  job_free(*lab, "src-r2");
  auto p = pai::job::plan_resubmit(r, deps);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->jobs[0].job_id, "alice~src-r2");
  EXPECT_EQ(p->jobs[0].tags, (std::vector<std::string>{"resubmit-of-src"}));

  auto out = pai::job::apply_clone(*p, deps);
  ASSERT_FALSE(out.failure);
  EXPECT_EQ(out.submitted, (std::vector<std::string>{"alice~src-r2"}));
  auto tags = clone_sent(*lab, "PUT");
  ASSERT_EQ(tags.size(), 1u);
  EXPECT_EQ(tags[0].path, "/rest-server/api/v2/jobs/alice~src-r2/tag");
  EXPECT_NE(tags[0].body.find("resubmit-of-src"), std::string::npos) << tags[0].body;
  EXPECT_EQ(pai::job::clone_json(*p, out)["message"], "Update job successfully.");
}

TEST_F(Clone, ASweepExpandsIntoOneJobPerCombination) {
  auto p = pai::job::plan_sweep(sweep_request(), deps);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(opened, (std::vector<std::string>{""}));
  EXPECT_EQ(p->tag, "sweep-src-t1");
  ASSERT_EQ(p->jobs.size(), 4u);
  EXPECT_EQ(p->jobs[0].job_id, "alice~src-t1-lr0_1-bs32");
  EXPECT_EQ(p->jobs[1].job_id, "alice~src-t1-lr0_1-bs64");  // the last axis changes fastest
  EXPECT_EQ(p->jobs[3].job_id, "alice~src-t1-lr0_01-bs64");
  EXPECT_EQ(p->jobs[2].label, "lr0.01-bs32");
  for (const auto& j : p->jobs) {
    EXPECT_EQ(j.tags, (std::vector<std::string>{"sweep-src-t1"}));
    EXPECT_NE(j.body.find("name: " + j.name), std::string::npos) << j.body;
  }
  // Every name was asked about; nothing was sent.
  for (const auto& j : p->jobs) {
    bool asked = false;
    for (const auto& r : lab->requests()) asked |= r.path.ends_with("/jobs/" + j.job_id);
    EXPECT_TRUE(asked) << j.job_id;
  }
  EXPECT_TRUE(clone_sent(*lab, "POST").empty());
  auto doc = pai::job::sweep_json(*p);
  EXPECT_EQ(doc["items"].size(), 4u);
  EXPECT_EQ(doc["items"][1]["parameters"]["bs"], "64");
  EXPECT_EQ(doc["dryRun"], true);
}

TEST_F(Clone, ASweepWithATakenNameIsRefusedBeforeSending) {
  auto r = sweep_request();
  job_state(*lab, "src-t1-lr0_01-bs32", {"SUCCEEDED"});
  auto p = pai::job::plan_sweep(r, deps);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().kind, CloneError::Kind::NameTaken);
  EXPECT_EQ(p.error().job_id, "alice~src-t1-lr0_01-bs32");
  // The names after the taken one are not asked.
  for (const auto& q : lab->requests())
    EXPECT_FALSE(q.path.ends_with("alice~src-t1-lr0_01-bs64")) << q.path;
  EXPECT_TRUE(clone_sent(*lab, "POST").empty());
}

TEST_F(Clone, ApplyPostsExactlyThePlannedBodiesInOrder) {
  auto p = pai::job::plan_sweep(sweep_request(), deps);
  ASSERT_TRUE(p.ok()) << p.error().message;
  std::vector<std::string> events;
  auto out = pai::job::apply_clone(*p, deps, [&](const CloneEvent& ev) {
    ASSERT_EQ(ev.kind, CloneEvent::Kind::Submitted);
    events.push_back(ev.job->job_id);
  });
  ASSERT_FALSE(out.failure);
  auto posts = clone_sent(*lab, "POST");
  ASSERT_EQ(posts.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(posts[i].body, p->jobs[i].body) << i;
  EXPECT_EQ(out.submitted, events);
  EXPECT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0], "alice~src-t1-lr0_1-bs32");
  EXPECT_EQ(clone_sent(*lab, "PUT").size(), 4u);
  EXPECT_TRUE(fake_clock.taken().empty());  // no limit: no wait
  EXPECT_EQ(pai::job::sweep_json(*p, out)["dryRun"], false);
}

TEST_F(Clone, MaxParallelWaitsForAJobToEnd) {
  auto r = sweep_request();
  r.max_parallel = 2;
  r.interval_s = 1;
  auto p = pai::job::plan_sweep(r, deps);
  ASSERT_TRUE(p.ok()) << p.error().message;
  job_state(*lab, "src-t1-lr0_1-bs32", {"RUNNING", "SUCCEEDED"});
  job_state(*lab, "src-t1-lr0_1-bs64", {"RUNNING", "RUNNING", "FAILED"});
  job_state(*lab, "src-t1-lr0_01-bs32", {"RUNNING"});
  lab->clear_requests();
  auto out = pai::job::apply_clone(*p, deps);
  ASSERT_FALSE(out.failure);
  EXPECT_EQ(out.submitted.size(), 4u);
  // Replay the requests with the states the routes answered: a job is posted
  // only while fewer than two posted jobs are unfinished.
  std::map<std::string, std::vector<std::string>> states = {
      {"src-t1-lr0_1-bs32", {"RUNNING", "SUCCEEDED"}},
      {"src-t1-lr0_1-bs64", {"RUNNING", "RUNNING", "FAILED"}},
      {"src-t1-lr0_01-bs32", {"RUNNING"}}};
  std::map<std::string, size_t> polled;
  std::set<std::string> unfinished;
  size_t posts = 0;
  for (const auto& q : lab->requests()) {
    if (q.method == "POST") {
      EXPECT_LT(unfinished.size(), 2u) << "post " << posts << " while two jobs run";
      unfinished.insert(p->jobs[posts++].name);
    } else if (q.method == "GET") {
      std::string name = q.path.substr(q.path.find('~') + 1);
      ASSERT_TRUE(unfinished.count(name)) << "polled a job not running: " << name;
      const auto& s = states.at(name);
      if (pai::job::job_state_final(s[std::min(polled[name]++, s.size() - 1)]))
        unfinished.erase(name);
    }
  }
  EXPECT_EQ(posts, 4u);
  EXPECT_EQ(polled["src-t1-lr0_1-bs32"], 2u);
  EXPECT_EQ(polled["src-t1-lr0_1-bs64"], 3u);
  // Three waits of one second, each in steps of at most 50 ms.
  double slept = 0;
  for (double s : fake_clock.taken()) {
    EXPECT_LE(s, 0.05 + 1e-9);
    slept += s;
  }
  EXPECT_NEAR(slept, 3.0, 1e-6);
}

TEST_F(Clone, AServerErrorStopsTheSweepAndATagErrorDoesNot) {
  auto p = pai::job::plan_sweep(sweep_request(), deps);
  ASSERT_TRUE(p.ok()) << p.error().message;
  pai::http::Route post;
  post.method = "POST";
  post.path = "/rest-server/api/v2/jobs";
  pai::http::Response ok{202, {}, R"({"status": 202, "message": "ok"})"};
  pai::http::Response bad{500, {}, R"({"code": "UnknownError", "message": "disk full"})"};
  post.answers = {{ok, pai::http::ErrorKind::None, ""},
                  {ok, pai::http::ErrorKind::None, ""},
                  {bad, pai::http::ErrorKind::None, ""}};
  lab->add(post);
  lab->add("PUT", "/rest-server/api/v2/jobs/alice~src-t1-lr0_1-bs32/tag", 500,
           R"({"code": "UnknownError", "message": "no tags today"})");
  std::vector<std::string> events;
  auto out = pai::job::apply_clone(*p, deps, [&](const CloneEvent& ev) {
    events.push_back((ev.kind == CloneEvent::Kind::TagFailed ? "tag-failed " : "submitted ") +
                     ev.job->job_id);
  });
  EXPECT_EQ(events, (std::vector<std::string>{"tag-failed alice~src-t1-lr0_1-bs32",
                                              "submitted alice~src-t1-lr0_1-bs32",
                                              "submitted alice~src-t1-lr0_1-bs64"}));
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->kind, CloneFailure::Kind::Submit);
  EXPECT_EQ(out.failure->job_id, "alice~src-t1-lr0_01-bs32");
  ASSERT_TRUE(out.failure->api);
  EXPECT_EQ(out.failure->api->status, 500);
  EXPECT_EQ(out.submitted.size(), 2u);
  EXPECT_EQ(clone_sent(*lab, "POST").size(), 3u);  // the fourth is not sent
}

TEST_F(Clone, AnInterruptedWaitStopsTheSweep) {
  auto r = sweep_request();
  r.max_parallel = 1;
  auto p = pai::job::plan_sweep(r, deps);
  ASSERT_TRUE(p.ok()) << p.error().message;
  job_state(*lab, "src-t1-lr0_1-bs32", {"RUNNING"});
  int asked = 0;
  deps.interrupted = [&] { return ++asked > 3; };
  auto out = pai::job::apply_clone(*p, deps);
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->kind, CloneFailure::Kind::Interrupted);
  EXPECT_EQ(out.submitted.size(), 1u);
  EXPECT_EQ(clone_sent(*lab, "POST").size(), 1u);
}

}  // namespace
