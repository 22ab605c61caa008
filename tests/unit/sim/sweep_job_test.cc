// run_sweep_job and its parts (lib/sim/sweep_job.h) against a cluster answered
// by http::FakeClient: the job document for N points in K shards, the record
// written before the submit, a re-run resuming the recorded job without
// submitting again, the results gathered from the tasks' logs, a failed job.

#include "sim/sweep_job.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>

#include "sim/sweep.h"
#include "support/fake_client.h"
#include "support/fake_clock.h"
#include "util/fs.h"

namespace {

using nlohmann::json;
using pai::http::FakeClient;
using pai::sim::SweepJobEvent;
using pai::sim::SweepJobPoint;

const std::string kJobs = "/rest-server/api/v2/jobs";

pai::sim::SweepJobSettings sweep_job_settings() {
  pai::sim::SweepJobSettings s;
  s.spec = "/data/spec.yaml";
  s.vc = "research";
  return s;
}

// The job `name` of alice, going through `states`, its tasks' stdout `logs`.
void sweep_job_on_server(FakeClient& http, const std::string& name,
                         const std::vector<std::string>& states,
                         const std::vector<std::string>& logs) {
  const std::string base = kJobs + "/alice~" + name;
  json tasks = json::array();
  for (size_t i = 0; i < logs.size(); ++i) {
    tasks.push_back({{"taskIndex", i}, {"attemptId", 0}});
    const std::string uri = "http://logs.test/" + name + "/" + std::to_string(i) + "/stdout";
    http.add(
        "GET",
        base + "/attempts/0/taskRoles/shard/taskIndex/" + std::to_string(i) + "/attempts/0/logs",
        200, json{{"locations", {{{"name", "stdout"}, {"uri", uri}}}}}.dump());
    http.add("GET", "/" + name + "/" + std::to_string(i) + "/stdout", 200, logs[i], "text/plain");
  }
  pai::http::Route r;
  r.method = "GET";
  r.path = base;
  for (const auto& s : states) {
    json d = {{"name", name}, {"jobStatus", {{"state", s}, {"attemptId", 0}}}};
    if (s == "SUCCEEDED" || s == "FAILED" || s == "STOPPED")
      d["taskRoles"] = {{"shard", {{"taskStatuses", tasks}}}};
    r.answers.push_back(
        {{200, {{"content-type", "application/json"}}, d.dump()}, pai::http::ErrorKind::None, ""});
  }
  http.add(r);
}

struct SweepJob : ::testing::Test {
  FakeClient http;
  pai::api::Client api{http, "http://lab.test/rest-server", "t"};
  pai::testing::FakeClock fake_clock;
  std::filesystem::path dir;
  std::vector<SweepJobEvent> events;
  std::map<size_t, json> results;

  void SetUp() override {
    static std::atomic<int> n{0};
    dir = std::filesystem::temp_directory_path() /
          ("paictl-sweep-job-test-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    std::filesystem::create_directories(dir);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  pai::sim::SweepJobRequest request(std::vector<SweepJobPoint> points) {
    pai::sim::SweepJobRequest r;
    r.cluster = "lab";
    r.out = dir.string();
    r.settings = sweep_job_settings();
    r.points = std::move(points);
    r.poll_s = 5;
    return r;
  }
  pai::sim::SweepJobOutcome run(const pai::sim::SweepJobRequest& r) {
    pai::sim::SweepJobDeps deps{api, "alice", fake_clock.clock()};
    return pai::sim::run_sweep_job(
        r, deps, [&](size_t index, const json& res) { results[index] = res; },
        [&](const SweepJobEvent& e) { events.push_back(e); });
  }
  size_t posts() const {
    size_t n = 0;
    for (const auto& r : http.requests()) n += r.method == "POST";
    return n;
  }
  std::vector<SweepJobEvent::Kind> kinds() const {
    std::vector<SweepJobEvent::Kind> out;
    for (const auto& e : events) out.push_back(e.kind);
    return out;
  }
};

const std::vector<SweepJobPoint> kThree = {{4, "kd"}, {0, "ka"}, {2, "kc"}};

TEST(SweepJobDocument, NPointsInKShards) {
  auto s = sweep_job_settings();
  s.shards = 2;
  auto doc = pai::sim::sweep_job_document(s, kThree, 0);
  EXPECT_EQ(doc.shards, 2);
  EXPECT_EQ(doc.keys, (std::vector<std::string>{"ka", "kc", "kd"}));  // grid order
  EXPECT_EQ(doc.name.rfind("paictl-sweep-", 0), 0u);
  EXPECT_EQ(doc.name.size(), std::string("paictl-sweep-").size() + 12);
  EXPECT_NE(doc.yaml.find("name: " + doc.name + "\n"), std::string::npos);
  EXPECT_NE(doc.yaml.find("  shard:\n    instances: 2\n"), std::string::npos) << doc.yaml;
  EXPECT_NE(doc.yaml.find("--run 0:ka,2:kc,4:kd --shard \\\"$PAI_TASK_INDEX/2\\\""),
            std::string::npos)
      << doc.yaml;
  EXPECT_NE(doc.yaml.find("'/data/spec.yaml'"), std::string::npos);
  EXPECT_NE(doc.yaml.find("virtualCluster: research"), std::string::npos);
  EXPECT_NE(doc.yaml.find("cpu: 1\n      memoryMB: 4096\n      gpu: 0\n"), std::string::npos);

  // No shards asked: one per point, at most 8.
  s.shards = 0;
  EXPECT_EQ(pai::sim::sweep_job_document(s, kThree, 0).shards, 3);
  std::vector<SweepJobPoint> many;
  for (size_t i = 0; i < 20; ++i) many.push_back({i, "k" + std::to_string(i)});
  EXPECT_EQ(pai::sim::sweep_job_document(s, many, 0).shards, 8);

  // Another job before it: another name, for the same points.
  EXPECT_NE(pai::sim::sweep_job_document(s, kThree, 1).name,
            pai::sim::sweep_job_document(s, kThree, 0).name);
  EXPECT_EQ(pai::sim::sweep_job_document(s, kThree, 1).name,
            pai::sim::sweep_job_document(s, kThree, 1).name);
}

TEST_F(SweepJob, RecordsTheJobBeforeSubmittingAndGathersItsLogs) {
  auto r = request(kThree);
  r.settings.shards = 2;
  const auto doc = pai::sim::sweep_job_document(r.settings, r.points, 0);
  sweep_job_on_server(
      http, doc.name, {"WAITING", "RUNNING", "RUNNING", "SUCCEEDED"},
      {pai::sim::encode_result("ka", {{"v", 1}}) + pai::sim::encode_result("kd", {{"v", 3}}),
       "noise\n" + pai::sim::encode_result("kc", {{"error", "boom"}}) +
           pai::sim::encode_result("other", {{"v", 9}})});
  // The submit finds the record already written.
  bool recorded_at_submit = false;
  pai::http::Route post;
  post.method = "POST";
  post.path = kJobs;
  post.answers.push_back(
      {{202, {{"content-type", "application/json"}}, "{}"}, pai::http::ErrorKind::None, ""});
  http.add(post);
  auto outcome = [&] {
    pai::sim::SweepJobDeps deps{api, "alice", fake_clock.clock()};
    return pai::sim::run_sweep_job(
        r, deps, [&](size_t index, const json& res) { results[index] = res; },
        [&](const SweepJobEvent& e) {
          if (e.kind == SweepJobEvent::Kind::Submitted) {
            auto rec = pai::sim::read_sweep_job_records(dir.string());
            recorded_at_submit = rec.ok() && rec->size() == 1;
          }
          events.push_back(e);
        });
  }();
  ASSERT_FALSE(outcome.failure) << outcome.failure->message;
  EXPECT_EQ(outcome.job_id, "alice~" + doc.name);
  EXPECT_TRUE(recorded_at_submit);
  EXPECT_EQ(posts(), 1u);
  for (const auto& q : http.requests())
    if (q.method == "POST") {
      EXPECT_EQ(q.body, doc.yaml);
    }

  auto rec = pai::sim::read_sweep_job_records(dir.string());
  ASSERT_TRUE(rec.ok());
  ASSERT_EQ(rec->size(), 1u);
  EXPECT_EQ((*rec)[0], (json{{"cluster", "lab"},
                             {"user", "alice"},
                             {"job", doc.name},
                             {"shards", 2},
                             {"keys", {"ka", "kc", "kd"}}}));

  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0], (json{{"v", 1}}));
  EXPECT_EQ(results[2], (json{{"error", "boom"}}));
  EXPECT_EQ(results[4], (json{{"v", 3}}));
  // Polled every 5 s until it ended; each state once.
  EXPECT_EQ(fake_clock.taken(), (std::vector<double>{5, 5, 5}));
  using K = SweepJobEvent::Kind;
  EXPECT_EQ(kinds(), (std::vector<K>{K::Submitted, K::State, K::State, K::State, K::Gathered}));
  EXPECT_EQ(events[0].points, 3u);
  EXPECT_EQ(events[0].shards, 2);
  EXPECT_EQ(events[0].vc, "research");
  EXPECT_EQ(events[3].state, "SUCCEEDED");
  EXPECT_EQ(events[4].got, 3u);
  EXPECT_EQ(events[4].points, 3u);
  EXPECT_TRUE(http.unmatched().empty());
}

TEST_F(SweepJob, ARerunResumesTheRecordedJobWithoutSubmitting) {
  auto r = request(kThree);
  const auto doc = pai::sim::sweep_job_document(r.settings, r.points, 0);
  json records = json::array();
  records.push_back({{"cluster", "other"}, {"user", "alice"}, {"job", "x"}, {"keys", {"ka"}}});
  records.push_back({{"cluster", "lab"},
                     {"user", "alice"},
                     {"job", doc.name},
                     {"shards", 3},
                     {"keys", {"ka", "kc", "kd"}}});
  ASSERT_TRUE(pai::sim::write_sweep_job_records(dir.string(), records).ok());
  // The first answer is the one asking whether the job exists.
  sweep_job_on_server(http, doc.name, {"RUNNING", "RUNNING", "SUCCEEDED"},
                      {pai::sim::encode_result("ka", 1), pai::sim::encode_result("kc", 2),
                       pai::sim::encode_result("kd", 3)});

  auto outcome = run(r);
  ASSERT_FALSE(outcome.failure) << outcome.failure->message;
  EXPECT_EQ(outcome.job_id, "alice~" + doc.name);
  EXPECT_EQ(posts(), 0u);
  EXPECT_EQ(results, (std::map<size_t, json>{{0, 1}, {2, 2}, {4, 3}}));
  using K = SweepJobEvent::Kind;
  ASSERT_EQ(kinds(), (std::vector<K>{K::Resuming, K::State, K::State, K::Gathered}));
  EXPECT_EQ(events[0].job_id, "alice~" + doc.name);
  EXPECT_EQ(events[0].points, 3u);
  auto after = pai::sim::read_sweep_job_records(dir.string());
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, records);  // nothing new recorded
  // The other cluster's job was not asked about.
  for (const auto& q : http.requests()) EXPECT_EQ(q.path.find("alice~x"), std::string::npos);
}

TEST_F(SweepJob, PointsAnEndedJobGaveNoResultGoIntoANewJob) {
  auto r = request(kThree);
  const auto first = pai::sim::sweep_job_document(r.settings, r.points, 0);
  ASSERT_TRUE(
      pai::sim::write_sweep_job_records(dir.string(), json::array({{{"cluster", "lab"},
                                                                    {"user", "alice"},
                                                                    {"job", first.name},
                                                                    {"keys", {"ka", "kc", "kd"}}}}))
          .ok());
  sweep_job_on_server(http, first.name, {"FAILED"}, {pai::sim::encode_result("ka", 1)});
  const auto second = pai::sim::sweep_job_document(r.settings, {{2, "kc"}, {4, "kd"}}, 1);
  ASSERT_NE(second.name, first.name);
  sweep_job_on_server(http, second.name, {"SUCCEEDED"},
                      {pai::sim::encode_result("kc", 2), pai::sim::encode_result("kd", 3)});
  http.add("POST", kJobs, 202, "{}");

  auto outcome = run(r);
  ASSERT_FALSE(outcome.failure) << outcome.failure->message;
  EXPECT_EQ(outcome.job_id, "alice~" + second.name);
  EXPECT_EQ(posts(), 1u);
  EXPECT_EQ(results, (std::map<size_t, json>{{0, 1}, {2, 2}, {4, 3}}));
  auto rec = pai::sim::read_sweep_job_records(dir.string());
  ASSERT_TRUE(rec.ok());
  ASSERT_EQ(rec->size(), 2u);
  EXPECT_EQ((*rec)[1]["keys"], (json{"kc", "kd"}));
}

TEST_F(SweepJob, AFailedJobIsReported) {
  auto r = request(kThree);
  const auto doc = pai::sim::sweep_job_document(r.settings, r.points, 0);
  sweep_job_on_server(http, doc.name, {"RUNNING", "FAILED"},
                      {"Traceback: no results\n", pai::sim::encode_result("kc", 2), ""});
  http.add("POST", kJobs, 202, "{}");
  auto outcome = run(r);
  ASSERT_FALSE(outcome.failure);
  EXPECT_EQ(results, (std::map<size_t, json>{{2, 2}}));
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[events.size() - 2].kind, SweepJobEvent::Kind::State);
  EXPECT_EQ(events[events.size() - 2].state, "FAILED");
  EXPECT_EQ(events.back().kind, SweepJobEvent::Kind::Gathered);
  EXPECT_EQ(events.back().got, 1u);
  EXPECT_EQ(events.back().points, 3u);
}

TEST_F(SweepJob, AJobThatCannotBeReadOrIsNoSweepStopsTheRun) {
  auto r = request(kThree);
  const auto doc = pai::sim::sweep_job_document(r.settings, r.points, 0);
  http.add("POST", kJobs, 202, "{}");
  http.add("GET", kJobs + "/alice~" + doc.name, 500, R"({"message": "down"})");
  auto outcome = run(r);
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->kind, pai::sim::SweepJobError::Kind::Remote);
  EXPECT_EQ(outcome.failure->doing, "reading job alice~" + doc.name);
  ASSERT_TRUE(outcome.failure->api);
  EXPECT_EQ(outcome.failure->api->status, 500);
  EXPECT_EQ(outcome.job_id, "alice~" + doc.name);

  http.add("GET", kJobs + "/alice~" + doc.name, 200,
           R"({"jobStatus": {"state": "SUCCEEDED"}, "taskRoles": {"worker": {}}})");
  // The job was recorded: the re-run asks whether it exists and gathers it.
  outcome = run(r);
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->kind, pai::sim::SweepJobError::Kind::NotSweep);
  EXPECT_NE(outcome.failure->message.find("no task role \"shard\""), std::string::npos);
  EXPECT_EQ(posts(), 1u);
  EXPECT_TRUE(results.empty());
}

TEST_F(SweepJob, AnExistingJobIsGatheredAndOtherSubmitErrorsStop) {
  auto r = request(kThree);
  const auto doc = pai::sim::sweep_job_document(r.settings, r.points, 0);
  http.add("POST", kJobs, 409, R"({"code": "ConflictJobError", "message": "exists"})");
  sweep_job_on_server(http, doc.name, {"SUCCEEDED"}, {pai::sim::encode_result("ka", 1)});
  auto outcome = run(r);
  ASSERT_FALSE(outcome.failure);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].kind, SweepJobEvent::Kind::Exists);
  EXPECT_EQ(results.size(), 1u);

  std::filesystem::remove(pai::sim::sweep_job_records_path(dir.string()));
  events.clear();
  http.add("POST", kJobs, 400, R"({"code": "InvalidProtocolError", "message": "bad"})");
  outcome = run(r);
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->kind, pai::sim::SweepJobError::Kind::Remote);
  EXPECT_EQ(outcome.failure->doing, "submitting alice~" + doc.name);
  EXPECT_TRUE(outcome.job_id.empty());
  EXPECT_TRUE(events.empty());
}

TEST_F(SweepJob, RecordsFile) {
  auto none = pai::sim::read_sweep_job_records(dir.string());
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, json::array());
  ASSERT_TRUE(pai::util::write_file_atomic(pai::sim::sweep_job_records_path(dir.string()),
                                           "{\"not\": \"an array\"}")
                  .ok());
  EXPECT_FALSE(pai::sim::read_sweep_job_records(dir.string()).ok());
  ASSERT_TRUE(pai::sim::write_sweep_job_records(dir.string(), json::array({{{"job", "j"}}})).ok());
  EXPECT_EQ(*pai::util::read_file(pai::sim::sweep_job_records_path(dir.string())),
            "[\n {\n  \"job\": \"j\"\n }\n]\n");
}

}  // namespace
