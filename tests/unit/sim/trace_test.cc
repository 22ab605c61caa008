// Trace readers: Philly, Helios, Alibaba and the native CSV, with what they
// leave out and where malformed input is reported.

#include <gtest/gtest.h>

#include <random>

#include "sim/generate.h"
#include "sim/text_input.h"
#include "sim/trace.h"

namespace pai::sim {
namespace {

// Shaped like msr-fiddle/philly-traces cluster_job_log, including its gaps.
const char* kPhilly = R"([
{"status": "Pass", "vc": "6214e9", "jobid": "application_1506638472019_10238", "user": "a1b2",
 "submitted_time": "2017-10-03 06:47:47",
 "attempts": [{"start_time": "2017-10-03 06:47:49", "end_time": "2017-10-03 06:53:01",
               "detail": [{"ip": "m47", "gpus": ["gpu0", "gpu1"]}]}]},
{"status": "Failed", "vc": "6214e9", "jobid": "application_2", "user": "a1b2",
 "submitted_time": "2017-10-03 06:40:00",
 "attempts": [{"start_time": "2017-10-03 06:40:10", "end_time": "2017-10-03 06:41:10",
               "detail": [{"ip": "m1", "gpus": ["gpu0"]}]},
              {"start_time": "2017-10-03 06:50:00", "end_time": "2017-10-03 07:00:00",
               "detail": [{"ip": "m2", "gpus": ["gpu0","gpu1","gpu2","gpu3","gpu4","gpu5","gpu6","gpu7"]},
                          {"ip": "m3", "gpus": ["gpu0","gpu1","gpu2","gpu3","gpu4","gpu5","gpu6","gpu7"]},
                          {"ip": "m4", "gpus": ["gpu0","gpu1","gpu2","gpu3"]}]}]},
{"status": "Killed", "vc": "ee9e8c", "jobid": "application_3", "user": "x", "submitted_time": "2017-10-04 00:00:00",
 "attempts": []},
{"status": "Pass", "vc": "ee9e8c", "jobid": "application_4", "user": "x", "submitted_time": "None",
 "attempts": [{"start_time": "2017-10-04 00:00:00", "end_time": "2017-10-04 01:00:00", "detail": [{"ip": "m5", "gpus": ["gpu0"]}]}]},
{"status": "Running", "vc": "ee9e8c", "jobid": "application_5", "user": "x", "submitted_time": "2017-10-05 00:00:00",
 "attempts": [{"start_time": "2017-10-05 00:00:10", "end_time": null, "detail": [{"ip": "m6", "gpus": ["gpu0"]}]}]},
{"status": "Pass", "vc": "ee9e8c", "jobid": "application_6", "submitted_time": "2017-10-05 01:00:00", "extra": {"x": [1]},
 "attempts": [{"start_time": "2017-10-05 01:00:00", "end_time": "2017-10-05 01:30:00", "detail": [{"ip": "m7", "gpus": []}]}]}
])";

TEST(Trace, ReleasedIdsLeaveTheJobs) {
  Trace t;
  TraceError e;
  ASSERT_TRUE(read_philly(kPhilly, "cluster_job_log", {}, t, e)) << e.message;
  ASSERT_EQ(t.id(t.jobs[1]), "application_1506638472019_10238");
  std::vector<TraceJob> before = t.jobs;
  t.release_ids();
  EXPECT_EQ(t.id_pool.capacity(), std::string().capacity());
  EXPECT_EQ(t.id_offsets.capacity(), 0u);
  EXPECT_EQ(t.id(t.jobs[0]), "");
  EXPECT_EQ(t.id(t.jobs[1]), "");
  ASSERT_EQ(t.jobs.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(t.jobs[i].submit, before[i].submit);
    EXPECT_EQ(t.jobs[i].id, before[i].id);
    EXPECT_EQ(t.gpus(t.jobs[i]), t.gpus(before[i]));
  }
}

TEST(Trace, NamesPastTheirLimitAreRefused) {
  Trace t;
  for (int32_t i = 0; i < TraceJob::kMaxLeafTypes; ++i)
    ASSERT_EQ(t.intern_leaf_type("type" + std::to_string(i)), i);
  EXPECT_EQ(t.intern_leaf_type("one more"), -1);
  EXPECT_EQ(t.intern_leaf_type("type7"), 7);  // known names still resolve
  EXPECT_EQ(t.leaf_type_names.size(), static_cast<size_t>(TraceJob::kMaxLeafTypes));
  // The narrow fields hold their whole ranges.
  TraceJob j;
  j.leaf_type = static_cast<int16_t>(TraceJob::kMaxLeafTypes - 1);
  j.pinned = TraceJob::kMaxPinned - 1;
  j.priority = 1000;
  j.flags |= TraceJob::kLazy | TraceJob::kPrioritySet;
  EXPECT_EQ(j.leaf_type, TraceJob::kMaxLeafTypes - 1);
  EXPECT_EQ(j.pinned, TraceJob::kMaxPinned - 1);
  EXPECT_EQ(j.priority, 1000);
  EXPECT_EQ(j.flags, TraceJob::kLazy | TraceJob::kPrioritySet);
  j.pinned = -1;
  j.priority = -1;
  EXPECT_EQ(j.pinned, -1);
  EXPECT_EQ(j.priority, -1);
  EXPECT_EQ(j.flags, TraceJob::kLazy | TraceJob::kPrioritySet);
}

TEST(NativeCsv, TooManyLeafTypesIsAnErrorAtTheField) {
  std::string text = "job_id,submit_time,duration,vc,members,leaf_cell_type\n";
  for (int32_t i = 0; i <= TraceJob::kMaxLeafTypes; ++i)
    text += "j" + std::to_string(i) + ",0,60,a,1x1,t" + std::to_string(i) + "\n";
  Trace t;
  TraceError e;
  EXPECT_FALSE(read_native_csv(text, "many.csv", {}, t, e));
  EXPECT_EQ(e.line, static_cast<uint32_t>(TraceJob::kMaxLeafTypes + 2));
  EXPECT_EQ(e.column, 19u);  // "j32767,0,60,a,1x1," is 18 bytes
  EXPECT_NE(e.message.find("more than 32767 distinct leaf_cell_type"), std::string::npos)
      << e.message;
}

TEST(Philly, ReadsJobsAndCountsWhatItLeavesOut) {
  Trace t;
  TraceError e;
  ASSERT_TRUE(read_philly(kPhilly, "cluster_job_log", {}, t, e)) << e.message;
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.records, 6);
  // Sorted by submission; time 0 is the first submission (06:40:00).
  EXPECT_EQ(t.id(t.jobs[0]), "application_2");
  EXPECT_EQ(t.jobs[0].submit, 0);
  EXPECT_EQ(t.jobs[1].submit, 467);
  // Run time is the sum of the attempts; the shape is the last attempt's machines.
  EXPECT_EQ(t.jobs[0].duration, 60 + 600);
  EXPECT_EQ(format_members(t.members(t.jobs[0])), "1x4+2x8");
  EXPECT_EQ(t.gpus(t.jobs[0]), 20);
  EXPECT_EQ(format_members(t.members(t.jobs[1])), "1x2");
  EXPECT_EQ(t.vc_names[static_cast<size_t>(t.jobs[1].vc)], "6214e9");
  EXPECT_EQ(t.jobs[0].priority, 100);
  EXPECT_EQ(t.skipped.at("never ran on GPUs (no attempt with GPUs)"), 2);
  EXPECT_EQ(t.skipped.at("no submitted_time"), 1);
  EXPECT_EQ(t.skipped.at("still running at the end of the trace (no end_time)"), 1);
  EXPECT_TRUE(t.has_dates);
  EXPECT_EQ(format_timestamp(t.origin), "2017-10-03 06:40:00");
}

TEST(Philly, ReportsMalformedInputWithPositions) {
  struct Case {
    const char* text;
    uint32_t line, column;
    const char* part;
  };
  const Case cases[] = {
      {"{\"jobs\": []}", 1, 1, "expected a JSON array"},
      {"[{\"jobid\": \"a\", \"vc\": \"v\", \"submitted_time\": \"10/03/2017\"}]", 1, 46,
       "is not a time"},
      {"[{\"jobid\": \"a\",\n \"attempts\": 5}]", 2, 14, "attempts must be a list"},
      {"[{\"jobid\": \"a\"}", 1, 16, "expected ',' or ']'"},
      {"[1]", 1, 2, "expected a job object"},
  };
  for (const auto& c : cases) {
    Trace t;
    TraceError e;
    EXPECT_FALSE(read_philly(c.text, "log", {}, t, e)) << c.text;
    EXPECT_EQ(e.line, c.line) << c.text << ": " << e.message;
    EXPECT_EQ(e.column, c.column) << c.text << ": " << e.message;
    EXPECT_NE(e.message.find(c.part), std::string::npos) << c.text << ": " << e.message;
  }
}

TEST(Helios, ReadsClusterLog) {
  const char* text =
      "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,"
      "queue\n"
      "1425511,uXBbc,vcJkd,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-10 "
      "04:55:09,36848,0\n"
      "1425512,uVMrF,vchbv,0,16,1,FAILED,2020-06-09 18:41:27,2020-06-09 18:41:27,2020-06-09 "
      "18:45:36,249,0\n"
      "1425513,uzqls,vcpDC,10,1,3,CANCELLED,2020-06-09 18:41:28,2020-06-09 18:41:28,2020-06-17 "
      "14:15:21,675233,0\n"
      "1425514,uzqls,vcpDC,16,1,,COMPLETED,2020-06-09 18:42:00,,,120,0\n";
  Trace t;
  TraceError e;
  ASSERT_TRUE(read_helios(text, "cluster_log.csv", {}, t, e)) << e.message;
  ASSERT_EQ(t.jobs.size(), 3u);
  EXPECT_EQ(t.skipped.at("CPU-only job (gpu_num 0)"), 1);
  EXPECT_EQ(t.jobs[0].duration, 36848);
  EXPECT_EQ(format_members(t.members(t.jobs[1])), "1x4+2x3");  // 10 GPUs on 3 nodes
  EXPECT_EQ(format_members(t.members(t.jobs[2])), "2x8");      // no node_num: 8 GPUs a node
  EXPECT_EQ(t.jobs[2].submit, 59);
}

TEST(Helios, ReportsBadValues) {
  Trace t;
  TraceError e;
  EXPECT_FALSE(
      read_helios("job_id,vc,gpu_num,submit_time,duration\n1,v,two,2020-06-09 18:41:01,10\n",
                  "c.csv", {}, t, e));
  EXPECT_EQ(e.line, 2u);
  EXPECT_EQ(e.column, 5u);
  EXPECT_NE(e.message.find("gpu_num"), std::string::npos);
  EXPECT_FALSE(read_helios("job_id,vc,submit_time,duration\n", "c.csv", {}, t, e));
  EXPECT_NE(e.message.find("no gpu_num column"), std::string::npos);
  EXPECT_FALSE(read_helios("job_id,vc,gpu_num,submit_time\n", "c.csv", {}, t, e));
  EXPECT_NE(e.message.find("neither duration nor start_time"), std::string::npos);
}

TEST(Alibaba, JoinsJobsAndTasks) {
  const char* jobs =
      "job_name,inst_id,user,status,start_time,end_time\n"
      "j1,i1,alice,Terminated,100.0,900.0\n"
      "j2,i2,bob,Terminated,50.0,300.0\n"
      "j3,i3,bob,Terminated,70.0,80.0\n"
      "j4,i4,carol,Running,,\n";
  const char* tasks =
      "j1,worker,2.0,Terminated,120.0,800.0,600.0,29.3,100.0,V100\n"
      "j1,ps,1.0,Terminated,120.0,800.0,600.0,29.3,,\n"
      "j2,tensorflow,1.0,Terminated,60.0,260.0,600.0,29.3,50.0,MISC\n"
      "j3,ps,1.0,Terminated,70.0,80.0,600.0,29.3,0.0,\n"
      "j4,worker,1.0,Running,,,600.0,29.3,100.0,T4\n"
      "j9,worker,1.0,Terminated,1.0,2.0,600.0,29.3,100.0,T4\n";
  Trace t;
  TraceError e;
  ASSERT_TRUE(read_alibaba(jobs, tasks, {}, t, e)) << e.message;
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.id(t.jobs[0]), "j2");                        // submitted first
  EXPECT_EQ(format_members(t.members(t.jobs[0])), "1x1");  // 50% of a GPU rounds up
  EXPECT_EQ(t.jobs[0].duration, 200);
  EXPECT_EQ(t.vc_names[static_cast<size_t>(t.jobs[0].vc)], "bob");  // the user stands for the VC
  EXPECT_EQ(t.leaf_type_names[static_cast<size_t>(t.jobs[1].leaf_type)], "V100");
  EXPECT_EQ(format_members(t.members(t.jobs[1])), "2x1");
  EXPECT_EQ(t.skipped.at("CPU-only job (no task with plan_gpu)"), 1);
  EXPECT_EQ(t.skipped.at("no start_time (submission) in pai_job_table"), 1);
  EXPECT_EQ(t.skipped.at("task of a job that is not in pai_job_table"), 1);
  EXPECT_EQ(t.notes.at("fractional GPU requests rounded up to whole GPUs"), 1);
}

TEST(NativeCsv, ReadsEveryColumn) {
  const char* text =
      "# comment\n"
      "job_id,submit_time,duration,vc,members,priority,leaf_cell_type,pinned_cell_id,lazy_"
      "preemption\n"
      "a,60,1h,research,2x8+1x4,500,V100,,true\n"
      "b,0,90,interns,1x1,-1,,,\n"
      "c,30,30m,production,1x2,,T4,production-t4-n3,false\n";
  Trace t;
  TraceError e;
  TraceOptions opt;
  opt.default_priority = 7;
  ASSERT_TRUE(read_native_csv(text, "t.csv", opt, t, e)) << e.message;
  ASSERT_EQ(t.jobs.size(), 3u);
  const TraceJob& a = t.jobs[2];  // submitted at 60
  EXPECT_EQ(t.id(a), "a");
  EXPECT_EQ(a.duration, 3600);
  EXPECT_EQ(t.gpus(a), 20);
  EXPECT_EQ(a.priority, 500);
  EXPECT_TRUE(a.flags & TraceJob::kLazy);
  EXPECT_EQ(t.jobs[0].priority, -1);
  EXPECT_EQ(t.jobs[1].priority, 7);  // default
  EXPECT_EQ(t.jobs[1].duration, 1800);
  EXPECT_EQ(t.pinned_names.at(static_cast<size_t>(t.jobs[1].pinned)), "production-t4-n3");
}

TEST(NativeCsv, LazyPreemptionInAnyCaseAndFieldsWithSpaces) {
  const char* text =
      "job_id,submit_time,duration,vc,members,lazy_preemption\n"
      "a,0,60,v,1x1,TRUE\n"
      "b,1,60,v,1x1,Yes\n"
      "c,2,60,v,1x1,1\n"
      "d,3,60,v,1x1,False\n"
      "e,4,60,v,1x1,NO\n"
      "f,5,60,v,1x1,0\n"
      "g,6,60, v ,\t2x4 ,  true\r\n"
      "h,7,60,v, 1x1,\n";
  Trace t;
  TraceError e;
  ASSERT_TRUE(read_native_csv(text, "t.csv", TraceOptions{}, t, e)) << e.message;
  ASSERT_EQ(t.jobs.size(), 8u);
  std::string lazy;
  for (const TraceJob& j : t.jobs) lazy += (j.flags & TraceJob::kLazy) ? 'L' : '-';
  EXPECT_EQ(lazy, "LLL---L-");
  EXPECT_EQ(t.vc_names, std::vector<std::string>{"v"});  // " v " is trimmed to the same VC
  EXPECT_EQ(t.gpus(t.jobs[6]), 8);
  for (const char* bad : {"truee", "tru", "on", "y"}) {
    Trace u;
    TraceError ue;
    std::string one = std::string(
                          "job_id,submit_time,duration,vc,members,lazy_preemption\n"
                          "a,0,60,v,1x1,") +
                      bad + "\n";
    EXPECT_FALSE(read_native_csv(one, "t.csv", TraceOptions{}, u, ue)) << bad;
    EXPECT_EQ(ue.message, "lazy_preemption must be true or false") << bad;
  }
}

TEST(NativeCsv, RejectsMistakesWithPositionAndHint) {
  struct Case {
    const char* text;
    uint32_t line, column;
    const char* part;
    const char* hint;
  };
  const Case cases[] = {
      {"job_id,submit_time,duration,vc,memebrs\n", 1, 32, "unknown column \"memebrs\"",
       "did you mean \"members\"?"},
      {"job_id,submit_time,vc,members\n", 1, 1, "no duration column", ""},
      {"job_id,submit_time,duration,vc,members\na,0,1h,v,8\n", 2, 10, "members \"8\" is malformed",
       "PODSxGPUS"},
      {"job_id,submit_time,duration,vc,members,priority\na,0,1h,v,1x1,2000\n", 2, 14,
       "out of range", ""},
      {"job_id,submit_time,duration,vc,members\na,soon,1h,v,1x1\n", 2, 3, "is not a time", ""},
      {"job_id,submit_time,duration,vc,members\na,0,1h,v\n", 2, 1, "this record has 4 fields", ""},
      {"job_id,submit_time,duration,vc,members\na,0,1h,v,1x1\nb,2017-10-01 00:00:00,1h,v,1x1\n", 3,
       3, "mixes dates and seconds", "common start"},
  };
  for (const auto& c : cases) {
    Trace t;
    TraceError e;
    EXPECT_FALSE(read_native_csv(c.text, "t.csv", {}, t, e)) << c.text;
    EXPECT_EQ(e.line, c.line) << c.text << ": " << e.message;
    EXPECT_EQ(e.column, c.column) << c.text << ": " << e.message;
    EXPECT_NE(e.message.find(c.part), std::string::npos) << c.text << ": " << e.message;
    EXPECT_NE(e.hint.find(c.hint), std::string::npos) << c.text << ": " << e.hint;
  }
}

TEST(Writers, NativeCsvAndPhillyRoundTrip) {
  GenerateOptions g;
  g.jobs = 300;
  g.seed = 5;
  g.opportunistic = 0.3;
  Trace t = generate_trace(g, philly_cluster_template(1, 15));
  ASSERT_EQ(t.jobs.size(), 300u);
  Trace back;
  TraceError e;
  std::string csv = write_native_csv(t);
  ASSERT_TRUE(read_native_csv(csv, "gen.csv", {}, back, e)) << e.message;
  ASSERT_EQ(back.jobs.size(), t.jobs.size());
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    EXPECT_EQ(back.id(back.jobs[i]), t.id(t.jobs[i]));
    EXPECT_EQ(back.jobs[i].submit, t.jobs[i].submit);
    EXPECT_EQ(back.jobs[i].duration, t.jobs[i].duration);
    EXPECT_EQ(back.jobs[i].priority, t.jobs[i].priority);
    EXPECT_EQ(format_members(back.members(back.jobs[i])), format_members(t.members(t.jobs[i])));
  }
  Trace philly;
  std::string json = write_philly_json(t);
  ASSERT_TRUE(read_philly(json, "gen.json", {}, philly, e)) << e.message;
  ASSERT_EQ(philly.jobs.size(), t.jobs.size());
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    EXPECT_EQ(philly.jobs[i].submit, t.jobs[i].submit);
    EXPECT_EQ(philly.jobs[i].duration, t.jobs[i].duration);
    EXPECT_EQ(philly.gpus(philly.jobs[i]), t.gpus(t.jobs[i]));
  }
}

TEST(Members, ParseAndFormat) {
  std::vector<TraceMember> m;
  ASSERT_TRUE(parse_members(" 2x8 + 1X4 ", m));
  EXPECT_EQ(format_members(m), "2x8+1x4");
  for (const char* bad : {"", "8", "0x8", "2x0", "2x", "x8", "2x8+", "-1x2"})
    EXPECT_FALSE(parse_members(bad, m)) << bad;
}

// Whole seconds are read by a shortcut: it must give what the general
// parsers give (parse_time_value, parse_duration) for every form of number,
// and leave out-of-range values to their errors.
TEST(NativeCsv, WholeSecondsReadAsTheGeneralParsers) {
  std::mt19937 rng(5);
  auto number = [&](bool duration) {
    static const char* forms[] = {"0",   "7",   "0012", "1084", "99999999", "315575999", "1.5",
                                  "2e3", "90m", "1.5h", "2d",   "00",       "3600",      "86400.0"};
    std::string s = forms[rng() % (sizeof forms / sizeof *forms)];
    if (!duration && (s.back() == 'm' || s.back() == 'h' || s.back() == 'd')) s = "60";
    if (rng() % 4 == 0) s = std::to_string(rng() % 1000000);
    if (rng() % 8 == 0) s = " " + s + " ";
    return s;
  };
  for (int round = 0; round < 50; ++round) {
    std::string text = "job_id,submit_time,duration,vc,members\n";
    std::vector<std::string> submits, durations;
    for (int i = 0; i < 40; ++i) {
      submits.push_back(i == 0 ? "0" : number(false));
      durations.push_back(number(true));
      text +=
          "j" + std::to_string(i) + "," + submits.back() + "," + durations.back() + ",vc1,1x1\n";
    }
    Trace t;
    TraceError e;
    ASSERT_TRUE(read_native_csv(text, "t.csv", {}, t, e)) << e.message << "\n" << text;
    ASSERT_EQ(t.jobs.size(), submits.size());
    for (const TraceJob& j : t.jobs) {
      const size_t i = j.line - 2;
      EXPECT_EQ(j.submit, *parse_time_value(submits[i])) << submits[i];
      EXPECT_EQ(j.duration, *parse_duration(durations[i])) << durations[i];
    }
  }
  const std::pair<const char*, const char*> bad[] = {
      {"4102444800,1", "submit_time \"4102444800\" is out of range"},
      {"999999999999999,1", "submit_time \"999999999999999\" is out of range"},
      {"1,315576001", "duration \"315576001\" is more than ten years"},
      {"1,999999999999999", "duration \"999999999999999\" is more than ten years"}};
  for (const auto& [record, message] : bad) {
    std::string text =
        std::string("job_id,submit_time,duration,vc,members\nj,") + record + ",vc1,1x1\n";
    Trace t;
    TraceError e;
    EXPECT_FALSE(read_native_csv(text, "t.csv", {}, t, e)) << record;
    EXPECT_NE(e.message.find(message), std::string::npos) << e.message;
  }
}

}  // namespace
}  // namespace pai::sim
