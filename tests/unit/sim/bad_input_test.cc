// Absurd values in traces are findings with a position, never a silent
// 0-second run or a 47-year simulation; FIFOs are read once and never hang.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "sim/engine.h"
#include "sim/trace.h"

namespace pai::sim {
namespace {

namespace fs = std::filesystem;

std::string philly_job(const std::string& submitted, const std::string& start,
                       const std::string& end) {
  return R"({"jobid": "j1", "vc": "v", "submitted_time": )" + submitted +
         R"(, "attempts": [{"start_time": )" + start + R"(, "end_time": )" + end +
         R"(, "detail": [{"ip": "m1", "gpus": ["gpu0"]}]}]})";
}

TEST(PhillyBadValues, AttemptThatEndsBeforeItStartsIsLeftOutWithItsPosition) {
  std::string text =
      "[\n" +
      philly_job("\"2017-10-03 06:00:00\"", "\"2017-10-03 07:00:00\"", "\"2017-10-03 06:30:00\"") +
      ",\n" +
      philly_job("\"2017-10-03 06:00:00\"", "\"2017-10-03 06:00:00\"", "\"2017-10-03 06:10:00\"") +
      "\n]\n";
  Trace t;
  TraceError e;
  ASSERT_TRUE(read_philly(text, "log", {}, t, e)) << e.message;
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].duration, 600);
  const std::string reason = "an attempt ends before it starts (end_time < start_time)";
  ASSERT_EQ(t.skipped.count(reason), 1u);
  ASSERT_FALSE(t.examples.empty());
  EXPECT_EQ(t.examples[0].line, 2u);
  EXPECT_GT(t.examples[0].column, 60u);  // the attempt, not the job
}

TEST(PhillyBadValues, NumericTimeIsNotADate) {
  std::string text =
      "[" + philly_job("1506998867", "\"2017-10-03 07:00:00\"", "\"2017-10-03 08:00:00\"") + "]";
  Trace t;
  TraceError e;
  EXPECT_FALSE(read_philly(text, "log", {}, t, e));
  EXPECT_NE(e.message.find("submitted_time is the number 1506998867, not a date"),
            std::string::npos)
      << e.message;
  EXPECT_EQ(e.line, 1u);
  EXPECT_EQ(e.column, 47u);
  EXPECT_NE(e.hint.find("2017-10-03 06:47:47"), std::string::npos);
}

TEST(PhillyBadValues, YearOutOfRange) {
  std::string text =
      "[" +
      philly_job("\"2017-10-03 06:00:00\"", "\"2017-10-03 07:00:00\"", "\"9999-12-31 23:59:59\"") +
      "]";
  Trace t;
  TraceError e;
  EXPECT_FALSE(read_philly(text, "log", {}, t, e));
  EXPECT_NE(e.message.find("end_time \"9999-12-31 23:59:59\" is after 2099"), std::string::npos)
      << e.message;
  EXPECT_EQ(e.line, 1u);
  EXPECT_GT(e.column, 100u);
}

TEST(NativeCsvBadValues, HugeDurationAndOutOfRangeCounts) {
  struct Case {
    const char* text;
    uint32_t line, column;
    const char* part;
  };
  const Case cases[] = {
      {"job_id,submit_time,duration,vc,members\na,0,1e300,v,1x1\n", 2, 5, "is more than ten years"},
      {"job_id,submit_time,duration,vc,gpus\na,0,1h,v,99999999999999999999\n", 2, 10,
       "gpus 99999999999999999999 is out of range"},
      {"job_id,submit_time,duration,vc,gpus,pods\na,0,1h,v,8,1e7\n", 2, 12,
       "pods 1e7 is out of range"},
      {"job_id,submit_time,duration,vc,gpus\na,0,1h,v,2.5\n", 2, 10,
       "gpus \"2.5\" is not a whole number"},
      {"job_id,submit_time,duration,vc,members\na,9999-01-01 00:00:00,1h,v,1x1\n", 2, 3,
       "is after 2099"},
      {"job_id,submit_time,duration,vc,members\na,1e300,1h,v,1x1\n", 2, 3, "out of range"},
  };
  for (const auto& c : cases) {
    Trace t;
    TraceError e;
    EXPECT_FALSE(read_native_csv(c.text, "t.csv", {}, t, e)) << c.text;
    EXPECT_EQ(e.line, c.line) << c.text << ": " << e.message;
    EXPECT_EQ(e.column, c.column) << c.text << ": " << e.message;
    EXPECT_NE(e.message.find(c.part), std::string::npos) << c.text << ": " << e.message;
  }
}

TEST(NativeCsvBadValues, SpanOfDecadesIsAnError) {
  // Seconds since the start next to seconds since 1970: a 47-year trace.
  const char* text =
      "job_id,submit_time,duration,vc,members\n"
      "a,0,1h,v,1x1\n"
      "b,1506998867,1h,v,1x1\n";
  Trace t;
  TraceError e;
  EXPECT_FALSE(read_native_csv(text, "t.csv", {}, t, e));
  EXPECT_NE(e.message.find("span 47.8 years"), std::string::npos) << e.message;
  EXPECT_EQ(e.line, 3u);
  EXPECT_NE(e.hint.find("seconds since 1970"), std::string::npos);
}

TEST(HeliosBadValues, OutOfRangeIsNotCalledNotAWholeNumber) {
  Trace t;
  TraceError e;
  EXPECT_FALSE(
      read_helios("job_id,vc,gpu_num,submit_time,duration\n1,v,1e7,2020-06-09 18:41:01,10\n",
                  "c.csv", {}, t, e));
  EXPECT_NE(e.message.find("gpu_num 1e7 is out of range"), std::string::npos) << e.message;
  EXPECT_EQ(e.message.find("whole number"), std::string::npos) << e.message;
  EXPECT_FALSE(
      read_helios("job_id,vc,gpu_num,submit_time,duration\n1,v,1,2020-06-09 18:41:01,1e300\n",
                  "c.csv", {}, t, e));
  EXPECT_NE(e.message.find("more than ten years"), std::string::npos) << e.message;
  EXPECT_EQ(e.line, 2u);
  EXPECT_EQ(e.column, 27u);
  EXPECT_FALSE(read_helios("job_id,vc,gpu_num,submit_time,duration\n1,v,1,9999-06-09 18:41:01,10\n",
                           "c.csv", {}, t, e));
  EXPECT_NE(e.message.find("is after 2099"), std::string::npos) << e.message;
}

// Found by fuzz_trace: with a column named twice, the header had more fields
// than distinct names, so a short record passed the length check and a later
// column was read past the end of the record.
TEST(HeliosBadValues, AColumnNamedTwiceIsRefusedWithItsPosition) {
  Trace t;
  TraceError e;
  EXPECT_FALSE(
      read_helios("job_id,vc,gpu_num,submit_time,duration,submit_time,start_time,end_time\n"
                  "1,v,1,2020-06-09 18:41:01,10\n",
                  "c.csv", {}, t, e));
  EXPECT_NE(e.message.find("column \"submit_time\" appears twice"), std::string::npos) << e.message;
  EXPECT_EQ(e.line, 1u);
  EXPECT_EQ(e.column, 40u);
  // A record shorter than the header is an error, counted against every header field.
  EXPECT_FALSE(
      read_helios("job_id,vc,gpu_num,submit_time,start_time,end_time,queue\n"
                  "1,v,1,2020-06-09 18:41:01,2020-06-09 18:41:01\n",
                  "c.csv", {}, t, e));
  EXPECT_NE(e.message.find("the header has 7"), std::string::npos) << e.message;
}

TEST(AlibabaBadValues, TasksThatEndBeforeTheyStartAreNamedSo) {
  const char* jobs =
      "job_name,inst_id,user,status,start_time,end_time\n"
      "j1,i1,alice,Terminated,100.0,900.0\n";
  const char* tasks = "j1,worker,1.0,Terminated,800.0,120.0,600.0,29.3,100.0,V100\n";
  Trace t;
  TraceError e;
  ASSERT_TRUE(read_alibaba(jobs, tasks, {}, t, e)) << e.message;
  EXPECT_TRUE(t.jobs.empty());
  const std::string reason = "its GPU tasks end before they start (end_time < start_time)";
  ASSERT_EQ(t.skipped.count(reason), 1u);
  EXPECT_EQ(t.skipped.count("no task start_time and end_time"), 0u);
  ASSERT_FALSE(t.examples.empty());
  EXPECT_EQ(t.examples[0].file, "pai_task_table.csv");
  EXPECT_EQ(t.examples[0].line, 1u);
  EXPECT_EQ(t.examples[0].column, 32u);
}

TEST(AlibabaBadValues, OutOfRangeInstances) {
  const char* jobs = "j1,i1,alice,Terminated,100.0,900.0\n";
  const char* tasks = "j1,worker,1e9,Terminated,120.0,800.0,600.0,29.3,100.0,V100\n";
  Trace t;
  TraceError e;
  EXPECT_FALSE(read_alibaba(jobs, tasks, {}, t, e));
  EXPECT_NE(e.message.find("inst_num 1e9 is out of range"), std::string::npos) << e.message;
}

class TraceFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("paictl-trace-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(TraceFiles, MissingFileGivesTheOsErrorAndNoFormatHint) {
  Trace t;
  TraceError e;
  EXPECT_FALSE(read_trace({(dir_ / "nope.csv").string()}, {}, t, e));
  EXPECT_NE(e.message.find("No such file or directory"), std::string::npos) << e.message;
  EXPECT_EQ(e.hint.find("--trace-format"), std::string::npos) << e.hint;
}

TEST_F(TraceFiles, FifoWithAWriterIsDetectedFromItsContent) {
  const std::string fifo = (dir_ / "trace").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    std::ofstream out(fifo);  // blocks until the reader opens
    out << "job_id,submit_time,duration,vc,members\na,0,1h,v,1x8\nb,60,2h,v,2x8\n";
  });
  Trace t;
  TraceError e;
  bool ok = read_trace({fifo}, {}, t, e);
  writer.join();
  ASSERT_TRUE(ok) << e.message;
  EXPECT_EQ(t.format, "csv");
  EXPECT_EQ(t.jobs.size(), 2u);
}

TEST_F(TraceFiles, FifoWithoutAWriterFailsInsteadOfHanging) {
  const std::string fifo = (dir_ / "trace").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  TraceOptions opt;
  opt.first_byte_timeout_ms = 200;
  for (const char* format : {"", "philly"}) {
    opt.format = format;
    Trace t;
    TraceError e;
    EXPECT_FALSE(read_trace({fifo}, opt, t, e));
    EXPECT_NE(e.message.find("nothing arrived within 1 s"), std::string::npos) << e.message;
  }
}

// A stream of bytes without a line end (/dev/zero): a bounded error, never
// a field that grows until memory runs out.
TEST_F(TraceFiles, EndlessLineIsRefusedAfterOneMiB) {
  TraceOptions opt;
  opt.format = "csv";
  Trace t;
  TraceError e;
  EXPECT_FALSE(read_trace({"/dev/zero"}, opt, t, e));
  EXPECT_NE(e.message.find("longer than 1 MiB"), std::string::npos) << e.message;
}

TEST_F(TraceFiles, EndlessQuotedFieldIsRefusedAfterOneMiB) {
  const std::string p = (dir_ / "quoted.csv").string();
  {
    std::ofstream out(p);
    out << "job_id,submit_time,duration,vc,members\n\"" << std::string(3u << 20, 'x');
  }
  TraceOptions opt;
  opt.format = "csv";
  Trace t;
  TraceError e;
  EXPECT_FALSE(read_trace({p}, opt, t, e));
  EXPECT_NE(e.message.find("longer than 1 MiB"), std::string::npos) << e.message;
}

TEST_F(TraceFiles, EndlessFaultFileIsRefusedAfterOneMiB) {
  scheduler::ClusterShape shape;
  Trace t;
  FaultSpec faults;
  TraceError e;
  EXPECT_FALSE(read_fault_file("/dev/zero", shape, t, faults, e));
  EXPECT_NE(e.message.find("longer than 1 MiB"), std::string::npos) << e.message;
}

TEST_F(TraceFiles, EmptyFileSaysSo) {
  const std::string p = (dir_ / "empty.csv").string();
  std::ofstream(p).close();
  Trace t;
  TraceError e;
  EXPECT_FALSE(read_trace({p}, {}, t, e));
  EXPECT_NE(e.message.find("is empty"), std::string::npos) << e.message;
}

}  // namespace
}  // namespace pai::sim
