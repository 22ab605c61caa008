// The real process runner: argv without a shell, stdin, captured output, exit
// statuses, signals, a timeout that kills what the program started, and the
// shell only when asked for.

#include "util/process.h"

#include "support/scripted_process.h"

#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <thread>
#include <vector>

namespace pai::util {
namespace {

ProcessResult run_ok(const ProcessRequest& r) {
  auto res = ProcessRunner::real().run(r);
  EXPECT_TRUE(res.ok()) << (res.ok() ? "" : res.error().message);
  return res.ok() ? res.value() : ProcessResult{};
}

TEST(Process, TrueAndFalse) {
  auto t = run_ok({.argv = {"true"}});
  EXPECT_TRUE(t.exited());
  EXPECT_TRUE(t.succeeded());
  EXPECT_EQ(t.exit_code, 0);
  auto f = run_ok({.argv = {"false"}});
  EXPECT_EQ(f.exit_code, 1);
  EXPECT_FALSE(f.succeeded());
  EXPECT_FALSE(f.timed_out);
}

TEST(Process, CatGivesBackItsStdin) {
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "line " + std::to_string(i) + "\n";  // > a pipe's buffer
  auto r = run_ok({.argv = {"cat"}, .stdin_text = big});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, big);
  EXPECT_EQ(r.err, "");
  auto empty = run_ok({.argv = {"cat"}});
  EXPECT_EQ(empty.out, "");
}

TEST(Process, ArgvIsNotAShellLine) {
  auto r = run_ok({.argv = {"echo", "a  b", "$HOME", "; false"}});
  EXPECT_EQ(r.out, "a  b $HOME ; false\n");
  EXPECT_EQ(r.exit_code, 0);
}

TEST(Process, ShellWhenAsked) {
  auto req = ProcessRequest::shell("echo out; echo err >&2; printf %s \"$PAI_X\"; exit 7");
  req.env = {{"PAI_X", "x=1"}};
  auto r = run_ok(req);
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.out, "out\nx=1");
  EXPECT_EQ(r.err, "err\n");
}

TEST(Process, OutputArrivesThroughTheCallback) {
  std::string out, err;
  auto req = ProcessRequest::shell("echo one; echo two >&2; echo three");
  req.on_output = [&](OutputStream s, std::string_view chunk) {
    (s == OutputStream::Out ? out : err).append(chunk);
  };
  auto r = run_ok(req);
  EXPECT_EQ(out, "one\nthree\n");
  EXPECT_EQ(err, "two\n");
  EXPECT_EQ(r.out, out);
}

TEST(Process, NoSuchProgramIsAnError) {
  auto r = ProcessRunner::real().run({.argv = {"/nonexistent/paictl-no-such-program"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("cannot start /nonexistent/paictl-no-such-program"),
            std::string::npos)
      << r.error().message;
  auto p = ProcessRunner::real().run({.argv = {"paictl-no-such-program-on-path"}});
  EXPECT_FALSE(p.ok());
}

TEST(Process, ProgramDiffersFromArgv0) {
  auto r = run_ok({.argv = {"my-name", "-c", "echo $0"}, .program = "/bin/sh"});
  EXPECT_EQ(r.out, "my-name\n");
}

TEST(Process, ASignalEndsIt) {
  auto r = run_ok(ProcessRequest::shell("kill -TERM $$"));
  EXPECT_FALSE(r.exited());
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_FALSE(r.timed_out);
}

TEST(Process, TimeoutKillsTheProgramAndWhatItStarted) {
  auto req = ProcessRequest::shell("echo started; sleep 30; echo never");
  req.timeout_s = 0.3;
  auto r = run_ok(req);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.exited());
  EXPECT_EQ(r.out, "started\n");
}

TEST(Process, AProgramThatLeavesAChildHoldingItsOutputEnds) {
  // The background sleep keeps stdout open; the shell's own end is what counts.
  auto r = run_ok(ProcessRequest::shell("echo mine; sleep 30 & exit 3"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "mine\n");
}

TEST(Process, UncapturedOutputIsNotKept) {
  auto r =
      run_ok({.argv = {"sh", "-c", "echo to-the-parent >&2; echo kept"}, .capture_err = false});
  EXPECT_EQ(r.out, "kept\n");
  EXPECT_EQ(r.err, "");
}

TEST(Process, SeveralAtOnceFromThreads) {
  std::vector<std::thread> ts;
  std::vector<std::string> outs(6);
  for (size_t i = 0; i < outs.size(); ++i)
    ts.emplace_back([&, i] {
      auto r =
          ProcessRunner::real().run({.argv = {"sh", "-c", "sleep 0.1; echo " + std::to_string(i)}});
      if (r.ok()) outs[i] = r->out;
    });
  for (auto& t : ts) t.join();
  for (size_t i = 0; i < outs.size(); ++i) EXPECT_EQ(outs[i], std::to_string(i) + "\n");
}

// The test double other tests use: answers by pattern, later rules first, a
// limited rule stops matching, unmatched calls fail visibly, calls recorded.
TEST(ScriptedProcess, AnswersByPatternAndRecords) {
  ScriptedProcessRunner r;
  r.on("", {.exit_code = 9});
  r.on("kubectl", {.out = "cm\n"});
  r.on("kubectl apply", {.exit_code = 1, .err = "denied\n"}, 1);
  auto req = ProcessRequest::shell("kubectl apply -f -");
  req.stdin_text = "manifest";
  std::string seen;
  req.on_output = [&](OutputStream, std::string_view c) { seen += c; };
  auto a = r.run(req);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->exit_code, 1);
  EXPECT_EQ(a->err, "denied\n");
  EXPECT_EQ(seen, "denied\n");
  auto b = r.run(ProcessRequest::shell("kubectl apply -f -"));  // the limited rule is used up
  EXPECT_EQ(b->exit_code, 0);
  EXPECT_EQ(b->out, "cm\n");
  auto c = r.run({.argv = {"other"}});
  EXPECT_EQ(c->exit_code, 9);
  ASSERT_EQ(r.calls().size(), 3u);
  EXPECT_EQ(r.calls()[0].stdin_text, "manifest");
  EXPECT_EQ(r.command_lines()[0], "/bin/sh -c kubectl apply -f -");
  EXPECT_EQ(r.max_in_flight(), 1);

  ScriptedProcessRunner none;
  auto u = none.run({.argv = {"x", "y"}});
  EXPECT_EQ(u->exit_code, 127);
  EXPECT_EQ(u->err, "no scripted answer for x y\n");
  none.on("x", {.cannot_start = true});
  EXPECT_FALSE(none.run({.argv = {"x"}}).ok());
}

}  // namespace
}  // namespace pai::util
