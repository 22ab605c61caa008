#include "remote/ssh_config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "remote/target.h"

using namespace pai::remote;

namespace {

SshConfigEnv env() {
  return {"/home/op", "op"};
}

SshConfig parse(const std::string& text) {
  return parse_ssh_config(text, "config", "/home/op/.ssh", env());
}

}  // namespace

TEST(SshPattern, Wildcards) {
  EXPECT_TRUE(ssh_pattern_match("*", "anything"));
  EXPECT_TRUE(ssh_pattern_match("gpu-*", "gpu-12"));
  EXPECT_FALSE(ssh_pattern_match("gpu-*", "cpu-12"));
  EXPECT_TRUE(ssh_pattern_match("10.0.?.5", "10.0.3.5"));
  EXPECT_FALSE(ssh_pattern_match("10.0.?.5", "10.0.33.5"));
  EXPECT_TRUE(ssh_pattern_match("GPU-*", "gpu-1"));  // host names are case-insensitive
  EXPECT_TRUE(ssh_pattern_match("*.internal.*", "a.internal.test"));
  EXPECT_FALSE(ssh_pattern_match("", "x"));
  EXPECT_TRUE(ssh_pattern_match("a*b*c", "aXXbYYc"));
  EXPECT_FALSE(ssh_pattern_match("a*b*c", "aXXbYY"));
}

TEST(SshConfig, FirstValueWinsAndIdentitiesAccumulate) {
  SshConfig c = parse(
      "Host gpu-*\n"
      "  User alice\n"
      "  Port 2222\n"
      "  IdentityFile ~/.ssh/gpu_key\n"
      "Host *\n"
      "  User nobody\n"
      "  Port 22\n"
      "  IdentityFile %d/.ssh/id_%u\n"
      "  ConnectTimeout 7\n");
  EXPECT_TRUE(c.diagnostics.empty());
  SshHostConfig h = resolve_ssh_config(c, {"gpu-3"}, env());
  EXPECT_EQ(h.user, "alice");
  EXPECT_EQ(h.port, 2222);
  ASSERT_EQ(h.identity_files.size(), 2u);
  EXPECT_EQ(h.identity_files[0], "~/.ssh/gpu_key");  // expanded when the target is resolved
  EXPECT_EQ(h.connect_timeout_s, 7);
  SshHostConfig other = resolve_ssh_config(c, {"cpu-1"}, env());
  EXPECT_EQ(other.user, "nobody");
  EXPECT_EQ(other.port, 22);
}

TEST(SshConfig, NegatedPatternsExclude) {
  SshConfig c = parse("Host * !bastion\n  ProxyJump bastion\n");
  EXPECT_EQ(resolve_ssh_config(c, {"gpu-1"}, env()).proxy_jump, "bastion");
  EXPECT_FALSE(resolve_ssh_config(c, {"bastion"}, env()).proxy_jump.has_value());
  // A host known by two names: the negation on either excludes it.
  EXPECT_FALSE(resolve_ssh_config(c, {"gpu-1", "bastion"}, env()).proxy_jump.has_value());
}

TEST(SshConfig, EqualsSignQuotesAndComments) {
  SshConfig c = parse(
      "# comment\n"
      "Host=db\n"
      "  User = \"bob smith\"\n"
      "  Hostname=10.1.2.3\n"
      "\n"
      "  IdentityFile \"/keys/with space\"\n");
  EXPECT_TRUE(c.diagnostics.empty());
  SshHostConfig h = resolve_ssh_config(c, {"db"}, env());
  EXPECT_EQ(h.user, "bob smith");
  EXPECT_EQ(h.hostname, "10.1.2.3");
  ASSERT_EQ(h.identity_files.size(), 1u);
  EXPECT_EQ(h.identity_files[0], "/keys/with space");
}

TEST(SshConfig, BadLinesAreReportedWithTheirLine) {
  SshConfig c = parse("Host a\n  User \"unterminated\nPort\n");
  ASSERT_EQ(c.diagnostics.size(), 2u);
  EXPECT_EQ(c.diagnostics.items()[0].line, 2u);
  EXPECT_EQ(c.diagnostics.items()[0].severity, pai::diag::Severity::Error);
  EXPECT_EQ(c.diagnostics.items()[1].line, 3u);
}

// OpenSSH refuses a file with a keyword it does not know ("Bad configuration
// option"), unless IgnoreUnknown lists it first: so does paictl.
TEST(SshConfig, UnknownKeywordsAreErrorsWithASuggestion) {
  SshConfig c = parse("Host a\n  HostNmae 10.0.0.1\n  User op\n  ServerAliveInterval 5\n");
  ASSERT_EQ(c.diagnostics.size(), 1u);
  const auto& d = c.diagnostics.items()[0];
  EXPECT_EQ(d.severity, pai::diag::Severity::Error);
  EXPECT_EQ(d.line, 2u);
  EXPECT_NE(d.message.find("unknown keyword 'HostNmae'"), std::string::npos) << d.message;
  EXPECT_NE(d.hint.find("'hostname'"), std::string::npos) << d.hint;
}

TEST(SshConfig, IgnoreUnknownListsKeywordsThatAreThenAccepted) {
  SshConfig c = parse("IgnoreUnknown UseKeychain,Foo*\nHost a\n  UseKeychain yes\n  FooBar 1\n");
  EXPECT_TRUE(c.diagnostics.empty());
  // Only the lines after it: OpenSSH reads the file in order.
  SshConfig late = parse("Host a\n  FooBar 1\nIgnoreUnknown FooBar\n");
  EXPECT_EQ(late.diagnostics.size(), 1u);
  // Every keyword of ssh_config(5) that paictl does not use is still accepted.
  EXPECT_TRUE(
      parse("Host *\n  ControlMaster auto\n  ForwardAgent no\n  SetEnv A=1\n").diagnostics.empty());
}

TEST(SshConfig, MatchAllAndMatchHostApplyOtherMatchIsSkippedWithAWarning) {
  SshConfig c = parse(
      "Match host gpu-*,cpu-1\n  User m\n"
      "Match exec \"true\"\n  Port 99\n"
      "Match all\n  Port 2200\n");
  ASSERT_EQ(c.diagnostics.size(), 1u);
  EXPECT_EQ(c.diagnostics.items()[0].severity, pai::diag::Severity::Warning);
  EXPECT_EQ(resolve_ssh_config(c, {"cpu-1"}, env()).user, "m");
  EXPECT_EQ(resolve_ssh_config(c, {"cpu-1"}, env()).port, 2200);  // not 99
  EXPECT_FALSE(resolve_ssh_config(c, {"other"}, env()).user.has_value());
}

TEST(SshConfig, IncludeReadsRelativeToTheBaseAndKeepsBlocks) {
  auto dir =
      std::filesystem::temp_directory_path() / ("paictl-sshcfg-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "conf.d");
  std::ofstream(dir / "conf.d" / "a.conf") << "Host inc\n  User included\n";
  std::ofstream(dir / "conf.d" / "b.conf")
      << "Include conf.d/b.conf\n";  // includes itself: bounded
  SshConfig c = parse_ssh_config("Include conf.d/*.conf\nHost *\n  User fallback\n", "config",
                                 dir.string(), env());
  EXPECT_EQ(resolve_ssh_config(c, {"inc"}, env()).user, "included");
  EXPECT_EQ(resolve_ssh_config(c, {"x"}, env()).user, "fallback");
  bool too_deep = false;
  for (const auto& d : c.diagnostics.items())
    too_deep |= d.message.find("nested too deeply") != std::string::npos;
  EXPECT_TRUE(too_deep);
  std::filesystem::remove_all(dir);
}

TEST(SshConfig, TheNameIndexResolvesAsMatchingEveryBlockDoes) {
  // A config with a block per host (as generated configs have), wildcard and
  // negated blocks between them, a block of two names, mixed case, Match host
  // and Match all: every host resolves the same with the index as by matching
  // every block, in file order.
  std::string text = "User everyone-default\n";
  for (int i = 0; i < 60; ++i) {
    text += "Host gpu-" + std::to_string(i) + (i % 7 == 0 ? " 10.0.0." + std::to_string(i) : "") +
            "\n  Port " + std::to_string(2000 + i) + "\n";
    if (i % 10 == 3) text += "Host gpu-1* !gpu-13\n  User ten\n  IdentityFile ~/.ssh/ten\n";
    if (i % 10 == 5) text += "Match host GPU-2?\n  User twenty\n";
    if (i == 30) text += "Host GPU-45\n  Hostname upper.example\n";
  }
  text += "Match all\n  IdentityFile ~/.ssh/last\nHost *\n  User star\n";
  SshConfig indexed = parse(text);
  ASSERT_TRUE(indexed.diagnostics.empty());
  ASSERT_NE(indexed.index, nullptr);
  SshConfig plain = indexed;
  plain.index = nullptr;
  auto same = [](const SshHostConfig& a, const SshHostConfig& b) {
    return a.hostname == b.hostname && a.user == b.user && a.port == b.port &&
           a.identity_files == b.identity_files;
  };
  int with_port = 0;
  for (int i = 0; i < 70; ++i) {
    std::vector<std::vector<std::string>> forms = {
        {"gpu-" + std::to_string(i)},
        {"Gpu-" + std::to_string(i), "10.0.0." + std::to_string(i)},
        {"10.0.0." + std::to_string(i)},
        {"", "gpu-" + std::to_string(i)}};
    for (const auto& names : forms) {
      SshHostConfig a = resolve_ssh_config(indexed, names, env());
      SshHostConfig b = resolve_ssh_config(plain, names, env());
      EXPECT_TRUE(same(a, b)) << names.back();
      with_port += a.port.has_value();
    }
  }
  EXPECT_GT(with_port, 100);
  // Spot checks against the file: its own Port, the negated pattern, case.
  SshHostConfig h = resolve_ssh_config(indexed, {"gpu-13"}, env());
  EXPECT_EQ(h.port, 2013);
  EXPECT_EQ(h.user, "everyone-default");
  EXPECT_EQ(resolve_ssh_config(indexed, {"gpu-45"}, env()).hostname, "upper.example");
  EXPECT_EQ(resolve_ssh_config(indexed, {"10.0.0.14"}, env()).port, 2014);
  // Blocks added after the index was made: it is not used for them.
  SshConfig grown = indexed;
  grown.blocks.insert(grown.blocks.begin() + 1, parse("Host gpu-3\n  Port 9\n").blocks.back());
  EXPECT_EQ(resolve_ssh_config(grown, {"gpu-3"}, env()).port, 9);
  // append_ssh_config indexes the whole: the first file's value wins.
  SshConfig both = parse("Host gpu-3\n  Port 7\n");
  append_ssh_config(both, parse(text));
  EXPECT_EQ(resolve_ssh_config(both, {"gpu-3"}, env()).port, 7);
  EXPECT_EQ(resolve_ssh_config(both, {"gpu-4"}, env()).port, 2004);
}

TEST(SshConfig, Expansion) {
  EXPECT_EQ(ssh_expand("~/.ssh/id", env()), "/home/op/.ssh/id");
  EXPECT_EQ(ssh_expand("%d/k_%h_%p_%r_%u%%", env(), "h1", 2222, "root"),
            "/home/op/k_h1_2222_root_op%");
  EXPECT_EQ(ssh_expand("a~b", env()), "a~b");
  EXPECT_EQ(ssh_expand("%x", env()), "%x");
  EXPECT_EQ(ssh_expand("trailing%", env()), "trailing%");
}

TEST(HostSpec, Forms) {
  auto s = parse_host_spec("10.0.0.5");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->host, "10.0.0.5");
  EXPECT_FALSE(s->port);
  s = parse_host_spec("root@gpu-1:2222");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->user, "root");
  EXPECT_EQ(s->host, "gpu-1");
  EXPECT_EQ(s->port, 2222);
  s = parse_host_spec("[fd00::5]:22");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->host, "fd00::5");
  EXPECT_EQ(s->port, 22);
  s = parse_host_spec("fd00::5");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->host, "fd00::5");
  s = parse_host_spec("ssh://u@h:1");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->user, "u");
  for (const char* bad : {"", "@h", "h:", "h:70000", "h:22x", "a b", "h'; rm -rf /", "[::1"}) {
    auto r = parse_host_spec(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_FALSE(r.error().message.empty()) << bad;
  }
  EXPECT_EQ(parse_host_spec("h:70000").error().message,
            "port '70000' is not a number from 1 to 65535");
}

TEST(Target, PrecedenceSpecThenDefaultsThenSshConfig) {
  SshConfig c = parse(
      "Host gpu-1 10.0.0.2\n  User cfguser\n  Port 2200\n  IdentityFile ~/.ssh/cfg_key\n"
      "Host *\n  UserKnownHostsFile ~/.ssh/kh_cfg\n  ServerAliveInterval 30\n");
  TargetDefaults d;
  d.user = "clusteruser";  // config.yaml
  d.identity_files = {"/keys/cluster"};
  Target t = resolve_target("gpu-1", "10.0.0.2", {"gpu-1", "10.0.0.2"}, nullptr, c, env(), d);
  EXPECT_EQ(t.endpoint.user, "clusteruser");
  EXPECT_EQ(t.endpoint.port, 2200);
  EXPECT_EQ(t.endpoint.address, "10.0.0.2");
  ASSERT_EQ(t.endpoint.identity_files.size(), 2u);
  EXPECT_EQ(t.endpoint.identity_files[0], "/keys/cluster");
  EXPECT_EQ(t.endpoint.identity_files[1], "/home/op/.ssh/cfg_key");
  EXPECT_EQ(t.known_hosts_file, "/home/op/.ssh/kh_cfg");
  EXPECT_EQ(t.keepalive_interval_s, 30);
  EXPECT_EQ(t.host_key_policy, HostKeyPolicy::Strict);

  auto parsed = parse_host_spec("other@10.0.0.2:22");
  ASSERT_TRUE(parsed.ok());
  HostSpec spec = *parsed;
  Target t2 = resolve_target("x", "10.0.0.2", {"10.0.0.2"}, &spec, c, env(), d);
  EXPECT_EQ(t2.endpoint.user, "other");
  EXPECT_EQ(t2.endpoint.port, 22);

  d.known_hosts_file = "/explicit/kh";
  EXPECT_EQ(resolve_target("gpu-1", "10.0.0.2", {"gpu-1"}, nullptr, c, env(), d).known_hosts_file,
            "/explicit/kh");
}

TEST(Target, DefaultIdentitiesOnlyWhenNoneGivenAndDuplicatesOfferedOnce) {
  SshConfig none;
  TargetDefaults d;
  Target t = resolve_target("h", "h", {"h"}, nullptr, none, env(), d);
  ASSERT_EQ(t.endpoint.identity_files.size(), 3u);
  EXPECT_EQ(t.endpoint.identity_files[0], "/home/op/.ssh/id_ed25519");
  EXPECT_EQ(t.endpoint.user, "op");
  SshConfig c = parse("Host *\n  IdentityFile /k/a\n");
  d.identity_files = {"/k/a"};
  Target t2 = resolve_target("h", "h", {"h"}, nullptr, c, env(), d);
  ASSERT_EQ(t2.endpoint.identity_files.size(), 1u);
}

TEST(Target, HostnameAndTokens) {
  SshConfig c = parse("Host gpu-*\n  Hostname %h.example.org\n");
  Target t = resolve_target("gpu-1", "gpu-1", {"gpu-1"}, nullptr, c, env(), {});
  EXPECT_EQ(t.endpoint.address, "gpu-1.example.org");
}

TEST(Target, ProxyJumpChainResolvesEachHopFromTheConfig) {
  SshConfig c = parse(
      "Host bastion\n  Hostname 192.0.2.1\n  User jumper\n  Port 2022\n"
      "Host inner\n  User innerjump\n"
      "Host gpu-*\n  ProxyJump bastion,admin@inner:2200\n");
  TargetDefaults d;
  d.user = "clusteruser";
  Target t = resolve_target("gpu-1", "10.0.0.2", {"gpu-1"}, nullptr, c, env(), d);
  ASSERT_EQ(t.jumps.size(), 2u);
  EXPECT_EQ(t.jumps[0].address, "192.0.2.1");
  EXPECT_EQ(t.jumps[0].user, "jumper");  // the bastion's user, not the cluster's
  EXPECT_EQ(t.jumps[0].port, 2022);
  EXPECT_EQ(t.jumps[1].address, "inner");
  EXPECT_EQ(t.jumps[1].user, "admin");
  EXPECT_EQ(t.jumps[1].port, 2200);
  EXPECT_EQ(t.endpoint.user, "clusteruser");
  EXPECT_TRUE(t.unsupported.empty());
}

TEST(Target, ProxyCommandIsRefusedNotIgnored) {
  SshConfig c = parse("Host *\n  ProxyCommand nc -X 5 -x proxy:1080 %h %p\n");
  Target t = resolve_target("h", "h", {"h"}, nullptr, c, env(), {});
  EXPECT_NE(t.unsupported.find("ProxyCommand"), std::string::npos);
  SshConfig c2 = parse("Host *\n  ProxyJump none\n  ProxyCommand none\n");
  EXPECT_TRUE(resolve_target("h", "h", {"h"}, nullptr, c2, env(), {}).unsupported.empty());
}

TEST(Target, AgentFollowsIdentityAgentAndIdentitiesOnly) {
  ::setenv("SSH_AUTH_SOCK", "/tmp/agent.sock", 1);
  SshConfig none;
  TargetDefaults d;
  EXPECT_EQ(resolve_target("h", "h", {"h"}, nullptr, none, env(), d).endpoint.agent_socket,
            "/tmp/agent.sock");
  EXPECT_EQ(
      resolve_target("h", "h", {"h"}, nullptr, parse("Host *\n IdentityAgent none\n"), env(), d)
          .endpoint.agent_socket,
      "");
  EXPECT_EQ(
      resolve_target("h", "h", {"h"}, nullptr, parse("Host *\n IdentitiesOnly yes\n"), env(), d)
          .endpoint.agent_socket,
      "");
  EXPECT_EQ(
      resolve_target("h", "h", {"h"}, nullptr, parse("Host *\n IdentityAgent ~/a.sock\n"), env(), d)
          .endpoint.agent_socket,
      "/home/op/a.sock");
  d.use_agent = false;
  EXPECT_EQ(resolve_target("h", "h", {"h"}, nullptr, none, env(), d).endpoint.agent_socket, "");
  ::unsetenv("SSH_AUTH_SOCK");
}

TEST(HostKeyPolicy, Names) {
  EXPECT_EQ(parse_host_key_policy("strict"), HostKeyPolicy::Strict);
  EXPECT_EQ(parse_host_key_policy("accept-new"), HostKeyPolicy::AcceptNew);
  EXPECT_EQ(parse_host_key_policy("off"), HostKeyPolicy::Off);
  EXPECT_FALSE(parse_host_key_policy("yes"));
  EXPECT_EQ(to_string(HostKeyPolicy::AcceptNew), "accept-new");
}
