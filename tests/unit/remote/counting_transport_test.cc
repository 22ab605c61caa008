// What a run costs each host, as CountingTransport counts it over the test
// transport (which logs in as SSH does: once per kept connection, once per
// command of its own).
#include "remote/counting_transport.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "support/scripted_transport.h"

using namespace pai::remote;
using pai::testing::ScriptedTransport;

namespace {

Target target(const std::string& name) {
  Target t;
  t.endpoint.name = name;
  t.endpoint.address = "192.0.2.1";
  return t;
}

ExecRequest request(std::string command, std::string input = {}) {
  ExecRequest r;
  r.command = std::move(command);
  r.input = std::move(input);
  return r;
}

}  // namespace

TEST(CountingTransport, AKeptConnectionIsOneSessionForManyCommands) {
  auto inner = std::make_unique<ScriptedTransport>();
  ScriptedTransport& scripted = *inner;
  CountingTransport t(std::move(inner));
  auto c = t.connect(target("w1"));
  EXPECT_TRUE(c->exec(request("true")).ok());
  EXPECT_TRUE(c->exec(request("sh -s", "echo hello\n")).ok());
  EXPECT_TRUE(c->exec(request("uname")).ok());
  HostCost w1 = t.cost_of("w1");
  EXPECT_EQ(w1.sessions, 1u);
  EXPECT_EQ(w1.commands, 3u);
  EXPECT_EQ(w1.bytes_sent, 4u + 5u + 11u + 5u);  // the commands and the stdin
  EXPECT_EQ(scripted.calls().size(), 3u);        // every command reached the host
}

TEST(CountingTransport, ACommandOfItsOwnOpensASessionOfItsOwn) {
  CountingTransport t(std::make_unique<ScriptedTransport>());
  t.exec(target("m"), request("a"));
  t.exec(target("m"), request("b"));
  EXPECT_EQ(t.cost_of("m").sessions, 2u);
  EXPECT_EQ(t.cost_of("m").commands, 2u);
}

TEST(CountingTransport, AFailedLoginIsCountedAndTheNextCommandLogsInAgain) {
  auto inner = std::make_unique<ScriptedTransport>();
  inner->unreachable("down");
  CountingTransport t(std::move(inner));
  auto c = t.connect(target("down"));
  EXPECT_FALSE(c->exec(request("true")).ok());
  EXPECT_FALSE(c->exec(request("true")).ok());
  EXPECT_EQ(t.cost_of("down").sessions, 2u);
}

TEST(CountingTransport, TheMostOnAnyHostIsTakenFigureByFigure) {
  CountingTransport t(std::make_unique<ScriptedTransport>());
  auto a = t.connect(target("a"));
  for (int i = 0; i < 5; ++i) a->exec(request("x"));     // 1 session, 5 commands, 5 bytes
  t.exec(target("b"), request("a-long-command-of-20"));  // 1 session, 1 command, 20 bytes
  t.exec(target("b"), request("y"));                     // 2 sessions, 2 commands, 21 bytes
  TransportCost c = t.cost();
  EXPECT_EQ(c.hosts, 2u);
  EXPECT_EQ(c.most.sessions, 2u);
  EXPECT_EQ(c.most.commands, 5u);
  EXPECT_EQ(c.most.bytes_sent, 21u);
  EXPECT_EQ(c.total.sessions, 3u);
  EXPECT_EQ(c.total.commands, 7u);
  EXPECT_EQ(c.total.bytes_sent, 26u);
  EXPECT_EQ(t.cost_of("nobody").commands, 0u);
}

TEST(CountingTransport, CountsFromManyThreads) {
  CountingTransport t(std::make_unique<ScriptedTransport>());
  std::vector<std::thread> threads;
  for (int h = 0; h < 8; ++h)
    threads.emplace_back([&t, h] {
      auto c = t.connect(target("h" + std::to_string(h)));
      for (int i = 0; i < 100; ++i) c->exec(request("cmd"));
    });
  for (auto& th : threads) th.join();
  TransportCost c = t.cost();
  EXPECT_EQ(c.hosts, 8u);
  EXPECT_EQ(c.total.commands, 800u);
  EXPECT_EQ(c.total.sessions, 8u);
  EXPECT_EQ(c.most.bytes_sent, 300u);
}

TEST(ProcessCpu, GrowsWithWork) {
  double before = process_cpu_seconds();
  volatile double x = 0;
  for (int i = 0; i < 20000000; ++i) x = x + i * 0.5;
  EXPECT_GT(process_cpu_seconds(), before);
}
