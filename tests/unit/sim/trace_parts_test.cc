// CSV traces read in parts on several threads: every field of every job,
// every name table, count, skipped example and error must be what the
// one-thread reader gives, wherever the parts are cut.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>

#include "sim/generate.h"
#include "sim/trace.h"

namespace pai::sim {
namespace {

struct Read {
  bool ok = false;
  Trace trace;
  TraceError error;
};

TraceOptions parts_options(int threads) {
  TraceOptions o;
  o.read_threads = threads;
  o.parallel_min_bytes = 0;  // split even the smallest text
  return o;
}

Read read_csv(const std::string& text, int threads, const std::string& format = "csv") {
  Read r;
  TraceOptions o = parts_options(threads);
  r.ok = format == "csv" ? read_native_csv(text, "t.csv", o, r.trace, r.error)
                         : read_helios(text, "t.csv", o, r.trace, r.error);
  return r;
}

void expect_same_trace(const Trace& a, const Trace& b) {
  EXPECT_EQ(a.format, b.format);
  EXPECT_EQ(a.files, b.files);
  EXPECT_EQ(a.origin, b.origin);
  EXPECT_EQ(a.has_dates, b.has_dates);
  EXPECT_EQ(a.records, b.records);
  EXPECT_EQ(a.skipped, b.skipped);
  EXPECT_EQ(a.notes, b.notes);
  EXPECT_EQ(a.vc_names, b.vc_names);
  EXPECT_EQ(a.leaf_type_names, b.leaf_type_names);
  EXPECT_EQ(a.pinned_names, b.pinned_names);
  EXPECT_EQ(a.id_pool, b.id_pool);
  EXPECT_EQ(a.id_offsets, b.id_offsets);
  ASSERT_EQ(a.examples.size(), b.examples.size());
  for (size_t i = 0; i < a.examples.size(); ++i) {
    EXPECT_EQ(a.examples[i].file, b.examples[i].file) << i;
    EXPECT_EQ(a.examples[i].line, b.examples[i].line) << i;
    EXPECT_EQ(a.examples[i].column, b.examples[i].column) << i;
    EXPECT_EQ(a.examples[i].message, b.examples[i].message) << i;
    EXPECT_EQ(a.examples[i].reason, b.examples[i].reason) << i;
  }
  ASSERT_EQ(a.extra_members.size(), b.extra_members.size());
  for (size_t i = 0; i < a.extra_members.size(); ++i) {
    ASSERT_EQ(a.extra_members[i].size(), b.extra_members[i].size());
    for (size_t m = 0; m < a.extra_members[i].size(); ++m) {
      EXPECT_EQ(a.extra_members[i][m].pods, b.extra_members[i][m].pods);
      EXPECT_EQ(a.extra_members[i][m].gpus, b.extra_members[i][m].gpus);
    }
  }
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    const TraceJob &x = a.jobs[i], &y = b.jobs[i];
    SCOPED_TRACE("job " + std::to_string(i) + " (line " + std::to_string(y.line) + ")");
    EXPECT_EQ(x.submit, y.submit);
    EXPECT_EQ(x.duration, y.duration);
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(a.id(x), b.id(y));
    EXPECT_EQ(x.vc, y.vc);
    EXPECT_EQ(x.leaf_type, y.leaf_type);
    EXPECT_EQ(x.priority, y.priority);
    EXPECT_EQ(x.pinned, y.pinned);
    EXPECT_EQ(x.flags, y.flags);
    EXPECT_EQ(x.pods, y.pods);
    EXPECT_EQ(x.gpus, y.gpus);
    EXPECT_EQ(x.more, y.more);
    EXPECT_EQ(x.line, y.line);
  }
}

void expect_same_error(const TraceError& a, const TraceError& b) {
  EXPECT_EQ(a.file, b.file);
  EXPECT_EQ(a.line, b.line);
  EXPECT_EQ(a.column, b.column);
  EXPECT_EQ(a.message, b.message);
  EXPECT_EQ(a.hint, b.hint);
}

// Reads `text` on 1 thread and on 2..8, and compares. Returns the part
// counts the reads used (index = threads asked for).
std::vector<int> expect_same_on_any_threads(const std::string& text,
                                            const std::string& format = "csv") {
  Read serial = read_csv(text, 1, format);
  EXPECT_EQ(serial.trace.read_parts, 1);
  std::vector<int> used(9, 0);
  for (int threads : {2, 3, 4, 5, 8}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    Read r = read_csv(text, threads, format);
    EXPECT_EQ(r.ok, serial.ok);
    if (serial.ok)
      expect_same_trace(r.trace, serial.trace);
    else
      expect_same_error(r.error, serial.error);
    used[static_cast<size_t>(threads)] = r.trace.read_parts;
  }
  return used;
}

std::string generated(int64_t jobs, uint64_t seed, double opportunistic = 0) {
  GenerateOptions g;
  g.jobs = jobs;
  g.seed = seed;
  g.opportunistic = opportunistic;
  return write_native_csv(generate_trace(g, philly_cluster_template(1, 15)));
}

TEST(TraceParts, GeneratedTracesReadAsOnOneThread) {
  for (uint64_t seed : {1, 7, 11}) {
    std::string text = generated(2000, seed, seed == 11 ? 0.3 : 0);
    auto used = expect_same_on_any_threads(text);
    EXPECT_EQ(used[2], 2);
    EXPECT_EQ(used[4], 4);
    EXPECT_EQ(used[8], 8);
  }
}

// Every column, names first met in later parts, multi-member jobs, skipped
// CPU-only jobs spread over the parts (the first three examples), comments,
// blank lines, CRLF line ends and quoted fields without newlines.
std::string mixed_trace(uint64_t seed, int records, bool crlf_everywhere) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::string text =
      "# a comment\n"
      "job_id,submit_time,duration,vc,members,gpus,pods,priority,user,leaf_cell_type,"
      "pinned_cell_id,lazy_preemption\n";
  for (int i = 0; i < records; ++i) {
    std::string id = "j" + std::to_string(i);
    if (rng() % 17 == 0) id = "\"q," + id + "\"";  // quoted, with a comma
    std::string vc = "vc" + std::to_string(rng() % (3 + static_cast<unsigned>(i) / 20));
    std::string members, gpus, pods;
    switch (rng() % 4) {
      case 0:
        members = "1x" + std::to_string(1 + rng() % 8);
        break;
      case 1:
        members = "2x8+1x" + std::to_string(1 + rng() % 4);
        break;
      case 2:
        gpus = std::to_string(rng() % 5);  // 0: a CPU-only job, skipped
        pods = std::to_string(1 + rng() % 2);
        break;
      default:
        members = " 1x1 + 3x2 ";
        break;
    }
    std::string prio = rng() % 3 == 0 ? "" : std::to_string(static_cast<int>(rng() % 1002) - 1);
    std::string type = rng() % 4 == 0 ? "type" + std::to_string(rng() % (1 + i / 30)) : "";
    std::string pin = rng() % 9 == 0 ? "pin" + std::to_string(rng() % (1 + i / 10)) : "";
    const char* lazy[] = {"", "true", "false", "yes", "0"};
    text += id + "," + std::to_string(i * 7 + static_cast<int>(rng() % 5)) + "," +
            std::to_string(60 + rng() % 10000) + (rng() % 5 == 0 ? "s" : "") + "," + vc + "," +
            members + "," + gpus + "," + pods + "," + prio + ",u," + type + "," + pin + "," +
            lazy[rng() % 5];
    text += crlf_everywhere || rng() % 7 == 0 ? "\r\n" : "\n";
    if (rng() % 23 == 0) text += "\n";
    if (rng() % 29 == 0) text += "# note\n";
    if (rng() % 31 == 0) text += "\r\n";
  }
  return text;
}

TEST(TraceParts, EveryColumnCommentsBlankLinesAndQuotesReadAsOnOneThread) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::string text = mixed_trace(seed, 40 + static_cast<int>(seed) * 37, seed % 4 == 0);
    Read serial = read_csv(text, 1);
    ASSERT_TRUE(serial.ok) << serial.error.message << " at line " << serial.error.line;
    ASSERT_GT(serial.trace.skipped.size(), 0u);  // CPU-only jobs left out, with examples
    auto used = expect_same_on_any_threads(text);
    EXPECT_EQ(used[3], 3);
  }
}

TEST(TraceParts, NoTrailingNewlineAndTheLastLineAtASplit) {
  std::string text = mixed_trace(3, 200, false);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  auto used = expect_same_on_any_threads(text);
  EXPECT_EQ(used[2], 2);
  // The header in one part and the only record, without its newline, in the other.
  used = expect_same_on_any_threads("job_id,submit_time,duration,vc,members\nj,0,60,a,1x1");
  EXPECT_EQ(used[2], 2);
  // One line: nothing to split.
  used = expect_same_on_any_threads("job_id,submit_time,duration,vc,members");
  EXPECT_EQ(used[2], 1);
}

// Where the cut falls: after every byte of a text in turn (the split point is
// the first line start after the middle), so that a part starts after a CR LF,
// after a blank line, at a comment, at the record after a quoted field.
TEST(TraceParts, EveryCutPointReadsAsOnOneThread) {
  const std::string text =
      "job_id,submit_time,duration,vc,members,lazy_preemption\r\n"
      "a,0,60,v1,1x1,true\r\n"
      "\r\n"
      "\"b,1\",1,60,v2,1x2,\r\n"
      "# comment\n"
      "\n"
      "c,2,60,v1,2x8,false\n"
      "\"d\"\"x\",3,60,v3,1x1,\n"
      "e,4,60,v2,1x4,yes\r\n"
      "f,5,60,v4,1x1,\r\n";
  Read serial = read_csv(text, 1);
  ASSERT_TRUE(serial.ok) << serial.error.message;
  int split = 0;
  // Grow a prefix of comment bytes so the middle moves over every byte.
  for (size_t pad = 0; pad < text.size() * 2; ++pad) {
    std::string padded = "#" + std::string(pad, 'x') + "\n" + text;
    Read one = read_csv(padded, 1), two = read_csv(padded, 2);
    ASSERT_TRUE(two.ok) << pad << ": " << two.error.message;
    expect_same_trace(two.trace, one.trace);
    EXPECT_EQ(one.trace.jobs.size(), 6u);
    split += two.trace.read_parts == 2;
  }
  EXPECT_GT(split, 0);
}

// A quoted field with newlines across the cut: the part before it ends inside
// the quotes, so the whole file is read on one thread, with its result.
TEST(TraceParts, QuotedFieldSpanningLinesAtTheCutFallsBackToOneThread) {
  std::string text = "job_id,submit_time,duration,vc,members\n";
  for (int i = 0; i < 50; ++i) text += "a" + std::to_string(i) + ",1,60,v,1x1\n";
  text += "\"multi";
  for (int i = 0; i < 40; ++i) text += "\nline " + std::to_string(i);
  text += "\",2,60,v,1x1\n";
  for (int i = 0; i < 50; ++i) text += "b" + std::to_string(i) + ",3,60,w,1x2\n";
  Read serial = read_csv(text, 1);
  ASSERT_TRUE(serial.ok) << serial.error.message;
  ASSERT_EQ(serial.trace.jobs.size(), 101u);
  EXPECT_EQ(serial.trace.jobs[100].line, 50 + 41 + 51u);
  Read two = read_csv(text, 2);
  ASSERT_TRUE(two.ok) << two.error.message;
  EXPECT_EQ(two.trace.read_parts, 1);  // the middle is inside the quoted field
  expect_same_trace(two.trace, serial.trace);
  expect_same_on_any_threads(text);
}

// An error in a later part: the message, line and column are the one-thread
// reader's, exactly (the file is read again on one thread).
TEST(TraceParts, AnErrorInALaterPartIsReportedAtItsLineAndColumn) {
  std::string good = generated(400, 3);
  const std::vector<std::pair<std::string, std::string>> mistakes = {
      {",12,60,vcX,1x1,100,,,false", "empty job_id"},
      {"x,12,sixty,vcX,1x1,100,,,false", "is not a duration"},
      {"x,12,60,vcX,9x,100,,,false", "is malformed"},
      {"x,2017-10-03 06:47:47,60,vcX,1x1,100,,,false", "mixes dates and seconds"},
      {"x,12,60,vcX,1x1,100,,,maybe", "lazy_preemption must be true or false"},
      {"x,12,60,vcX,1x1,1", "fields, the header has"},
      {"\"x,12,60,vcX,1x1,100,,,false", "unterminated quoted field"},
  };
  for (const auto& [bad, message] : mistakes) {
    SCOPED_TRACE(bad);
    // Three quarters into the file: past the middle, in the second of two parts.
    size_t at = good.find('\n', good.size() * 3 / 4) + 1;
    std::string text = good.substr(0, at) + bad + "\n" + good.substr(at);
    Read serial = read_csv(text, 1), two = read_csv(text, 2);
    ASSERT_FALSE(serial.ok);
    EXPECT_NE(serial.error.message.find(message), std::string::npos) << serial.error.message;
    const uint32_t line = static_cast<uint32_t>(std::count(
                              text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n')) +
                          1;
    EXPECT_EQ(serial.error.line, line);
    ASSERT_FALSE(two.ok);
    expect_same_error(two.error, serial.error);
    expect_same_on_any_threads(text);
  }
}

// Dates in one part and seconds in the next: the error the one-thread reader
// gives at the first record that changes.
TEST(TraceParts, DatesAndSecondsMixedAcrossPartsIsTheSameError) {
  std::string text = "job_id,submit_time,duration,vc,members\n";
  for (int i = 0; i < 100; ++i) text += "a" + std::to_string(i) + ",2017-10-03 06:47:47,60,v,1x1\n";
  for (int i = 0; i < 100; ++i) text += "b" + std::to_string(i) + ",100,60,v,1x1\n";
  Read serial = read_csv(text, 1), two = read_csv(text, 2);
  ASSERT_FALSE(serial.ok);
  EXPECT_EQ(serial.error.line, 102u);
  EXPECT_NE(serial.error.message.find("mixes dates and seconds"), std::string::npos);
  ASSERT_FALSE(two.ok);
  expect_same_error(two.error, serial.error);
  // All dates: read in parts, with dates.
  std::string dates = "job_id,submit_time,duration,vc,members\n";
  for (int i = 0; i < 200; ++i)
    dates += "a" + std::to_string(i) + ",2017-10-03 06:" + std::to_string(10 + i / 60) + ":" +
             std::to_string(10 + i % 40) + ",60,v,1x1\n";
  Read d = read_csv(dates, 2);
  ASSERT_TRUE(d.ok) << d.error.message;
  EXPECT_EQ(d.trace.read_parts, 2);
  EXPECT_TRUE(d.trace.has_dates);
  expect_same_on_any_threads(dates);
}

// Each part alone holds fewer distinct leaf cell types than a trace may; all
// together hold more: the one-thread reader's error at the field.
TEST(TraceParts, NamesPastTheLimitAcrossPartsIsTheSameError) {
  std::string text = "job_id,submit_time,duration,vc,members,leaf_cell_type\n";
  for (int32_t i = 0; i <= TraceJob::kMaxLeafTypes; ++i)
    text += "j" + std::to_string(i) + ",0,60,a,1x1,t" + std::to_string(i) + "\n";
  Read serial = read_csv(text, 1), two = read_csv(text, 2);
  ASSERT_FALSE(serial.ok);
  EXPECT_EQ(serial.error.line, static_cast<uint32_t>(TraceJob::kMaxLeafTypes + 2));
  ASSERT_FALSE(two.ok);
  expect_same_error(two.error, serial.error);
}

// Only comments before the cut: the first part has no header, so the text is
// read on one thread.
TEST(TraceParts, AHeaderAfterTheCut) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "# comment " + std::to_string(i) + "\n";
  text += "job_id,submit_time,duration,vc,members\nj,0,60,a,1x1\nk,1,60,b,1x2\n";
  auto used = expect_same_on_any_threads(text);
  EXPECT_EQ(used[2], 1);
  // Only a header: no job either way.
  used = expect_same_on_any_threads(
      std::string(200, '\n') + "job_id,submit_time,duration,vc,members\n" + std::string(300, '\n'));
}

TEST(TraceParts, HeliosReadsAsOnOneThread) {
  std::mt19937 rng(9);
  std::string text =
      "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,"
      "queue\n";
  for (int i = 0; i < 600; ++i) {
    int gpus = static_cast<int>(rng() % 10);  // 0: a CPU-only job, skipped
    std::string dur = rng() % 13 == 0 ? "" : std::to_string(rng() % 100000);
    text += "job" + std::to_string(i) + ",u,vc" + std::to_string(rng() % (2 + i / 50)) + "," +
            std::to_string(gpus) + ",8," + (rng() % 3 ? "" : std::to_string(1 + rng() % 3)) +
            ",COMPLETED,2020-04-01 0" + std::to_string(i / 100) + ":" +
            std::to_string(10 + i % 50) + ":00,2020-04-01 10:00:00,2020-04-01 11:00:00," + dur +
            ",0\n";
  }
  Read serial = read_csv(text, 1, "helios");
  ASSERT_TRUE(serial.ok) << serial.error.message;
  ASSERT_FALSE(serial.trace.skipped.empty());
  auto used = expect_same_on_any_threads(text, "helios");
  EXPECT_EQ(used[2], 2);
  // An error in the second half.
  size_t at = text.find('\n', text.size() * 2 / 3) + 1;
  std::string bad = text.substr(0, at) + "jx,u,vc1,2.5,8,,COMPLETED,2020-04-01 08:00:00,,,60,0\n" +
                    text.substr(at);
  Read s = read_csv(bad, 1, "helios"), t = read_csv(bad, 2, "helios");
  ASSERT_FALSE(s.ok);
  EXPECT_NE(s.error.message.find("not a whole number"), std::string::npos) << s.error.message;
  expect_same_error(t.error, s.error);
}

// A trace file read by read_trace: each part from the file itself.
TEST(TraceParts, AFileReadInPartsAsOnOneThread) {
  char path[] = "/tmp/paictl-trace-parts-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::string text = generated(3000, 5, 0.2);
  { std::ofstream(path, std::ios::binary) << text; }
  TraceOptions one = parts_options(1), two = parts_options(2), four = parts_options(4);
  Trace a, b, c;
  TraceError ea, eb, ec;
  ASSERT_TRUE(read_trace({path}, one, a, ea)) << ea.message;
  ASSERT_TRUE(read_trace({path}, two, b, eb)) << eb.message;
  ASSERT_TRUE(read_trace({path}, four, c, ec)) << ec.message;
  EXPECT_EQ(a.read_parts, 1);
  EXPECT_EQ(b.read_parts, 2);
  EXPECT_EQ(c.read_parts, 4);
  expect_same_trace(b, a);
  expect_same_trace(c, a);
  // The default threshold keeps a small file on one thread.
  Trace d;
  ASSERT_TRUE(read_trace({path}, {}, d, ea));
  EXPECT_EQ(d.read_parts, 1);
  // An error in the second part names the file, line and column as on one thread.
  size_t at = text.find('\n', text.size() * 3 / 4) + 1;
  {
    std::ofstream(path, std::ios::binary) << text.substr(0, at) << "x,1,60,vc01,0x1,100,,,false\n"
                                          << text.substr(at);
  }
  ASSERT_FALSE(read_trace({path}, one, a, ea));
  ASSERT_FALSE(read_trace({path}, two, b, eb));
  expect_same_error(eb, ea);
  EXPECT_EQ(ea.file, path);
  EXPECT_GT(ea.line, 2000u);
  std::remove(path);
}

}  // namespace
}  // namespace pai::sim
