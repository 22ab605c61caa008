// The validate steps of install, reset, node add|remove and config pull: every
// usage error of a command line at once, each with its hint, from the options
// alone (no cluster file read, no host or Azure endpoint reached).

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "command.h"
#include "install/cmd_install.h"
#include "usage_matchers.h"

namespace paictl {
namespace {

const std::string kCluster = std::string(PAI_SOURCE_DIR) + "/examples/clusters/quickstart";

using usage_test::has;
using usage_test::hint_of;

TEST(InstallValidate, AGoodCommandLineHasNoError) {
  InstallOptions o;
  o.hosts.paths = {kCluster};
  o.ignore = {"CPU,DNS"};
  o.azure.arm_endpoint = "https://127.0.0.1:9";
  Usage u;
  validate_install(o, "install", u);
  EXPECT_TRUE(u.ok()) << u.summary();
}

TEST(InstallValidate, EveryErrorAtOnceWithItsHint) {
  InstallOptions o;
  o.hosts.paths = {kCluster, "gpu-1"};
  o.hosts.hosts = {"10.0.0.1"};
  o.ignore = {"Swapp,CPU", "Nope"};
  o.hosts.hosts_file = "-";
  o.hosts.password_stdin = true;
  o.azure.arm_endpoint = "management.azure.com";
  o.azure.ca_file = kCluster;  // a directory, not a PEM file
  Usage u;
  validate_install(o, "install", u);
  ASSERT_EQ(u.errors().size(), 7u) << u.summary();
  EXPECT_TRUE(has(u, "install takes one cluster directory, not 2 paths"));
  EXPECT_EQ(hint_of(u, "takes one cluster directory"),
            "hosts of the cluster are chosen with --limit HOST,...");
  EXPECT_TRUE(has(u, "--hosts and --hosts-file are for check hosts and facts collect"));
  EXPECT_TRUE(has(u, "no check is named \"Swapp\""));
  EXPECT_TRUE(has(u, "no check is named \"Nope\""));
  EXPECT_FALSE(has(u, "\"CPU\"")) << "CPU is a check";
  EXPECT_EQ(hint_of(u, "\"Nope\""), "paictl check hosts --list-checks lists them");
  EXPECT_TRUE(has(u, "--hosts-file - and --password-stdin both want stdin"));
  EXPECT_TRUE(has(u, "--arm-endpoint management.azure.com is not an http:// or https:// URL"));
  EXPECT_EQ(hint_of(u, "--arm-endpoint"), "e.g. --arm-endpoint https://management.azure.com");
  EXPECT_TRUE(has(u, "--ca-file " + kCluster + " is not a file"));
}

TEST(InstallValidate, TheClusterDirectory) {
  for (const char* verb : {"install", "reset", "config push", "config diff"}) {
    InstallOptions o;
    Usage none;
    validate_install(o, verb, none);
    EXPECT_EQ(none.summary(), std::string(verb) + " needs the cluster directory");
    EXPECT_EQ(hint_of(none, "needs"), "paictl " + std::string(verb) +
                                          " CLUSTER_DIR (layout.yaml, config.yaml, "
                                          "services-configuration.yaml)");
    o.hosts.paths = {kCluster + "/layout.yaml"};
    Usage file;
    validate_install(o, verb, file);
    EXPECT_EQ(file.summary(), kCluster + "/layout.yaml is not a directory");
  }
}

TEST(InstallValidate, ConfigPullOut) {
  PullOptions o;
  o.install.hosts.paths = {kCluster};
  o.out = kCluster + "/layout.yaml";
  Usage u;
  validate_config_pull(o, u);
  EXPECT_EQ(u.summary(), "--out " + o.out + " exists and is not a directory");
  o.out = kCluster;
  Usage dir;
  validate_config_pull(o, dir);
  EXPECT_TRUE(dir.ok()) << dir.summary();
  o.out = kCluster + "/not-there-yet";
  Usage fresh;
  validate_config_pull(o, fresh);
  EXPECT_TRUE(fresh.ok()) << fresh.summary();
}

TEST(NodeValidate, CompleteTakesTheHostsAfterTheDirectory) {
  NodeOptions o;
  o.install.hosts.paths = {kCluster, "gpu-1", "gpu-2"};
  complete_node(o);
  EXPECT_EQ(o.install.hosts.paths, std::vector<std::string>{kCluster});
  EXPECT_EQ(o.nodes, (std::vector<std::string>{"gpu-1", "gpu-2"}));
}

TEST(NodeValidate, AddOnPremNeedsHostsAndNoCount) {
  NodeOptions o;
  o.install.hosts.paths = {kCluster};
  o.count = 2;
  o.install.ignore = {"Nope"};
  Usage u;
  validate_node_add(o, u);
  ASSERT_EQ(u.errors().size(), 3u) << u.summary();
  EXPECT_TRUE(has(u, "--count goes with --azure POOL"));
  EXPECT_EQ(hint_of(u, "--count"), "on-prem hosts are named: paictl node add CLUSTER_DIR HOST...");
  EXPECT_TRUE(has(u, "node add needs at least one host"));
  EXPECT_TRUE(has(u, "no check is named \"Nope\""));

  o.count = 0;
  o.install.ignore.clear();
  o.nodes = {"gpu-1"};
  Usage ok;
  validate_node_add(o, ok);
  EXPECT_TRUE(ok.ok()) << ok.summary();
}

TEST(NodeValidate, AddAzureTakesNoHosts) {
  NodeOptions o;
  o.install.hosts.paths = {kCluster};
  o.azure_pool = "gpu";
  o.count = 3;
  Usage ok;
  validate_node_add(o, ok);
  EXPECT_TRUE(ok.ok()) << ok.summary();
  o.nodes = {"gpu-1"};
  o.install.azure.authority_host = "login.example";
  Usage u;
  validate_node_add(o, u);
  ASSERT_EQ(u.errors().size(), 2u) << u.summary();
  EXPECT_TRUE(has(u, "node add --azure POOL takes the cluster directory only"));
  EXPECT_EQ(hint_of(u, "takes the cluster directory only"),
            "paictl node add CLUSTER_DIR --azure POOL --count N");
  EXPECT_TRUE(has(u, "--authority-host login.example is not an http:// or https:// URL"));
}

TEST(NodeValidate, RemoveWithoutATerminal) {
  NodeOptions o;
  o.install.hosts.paths = {kCluster};
  o.hived = "10.0.0.1:30096";
  o.interactive = false;
  Usage u;
  validate_node_remove(o, u);
  ASSERT_EQ(u.errors().size(), 3u) << u.summary();
  EXPECT_TRUE(has(u, "node remove needs at least one host"));
  EXPECT_TRUE(has(u, "--hived 10.0.0.1:30096 is not an http:// or https:// URL"));
  EXPECT_TRUE(has(u, "not a terminal: pass --yes to remove nodes without a confirmation"));
  EXPECT_EQ(hint_of(u, "not a terminal"), "or --dry-run to see what would be removed");

  // A confirmation can be asked, or is not needed: --yes, --dry-run.
  o.nodes = {"gpu-1"};
  o.hived = "http://10.0.0.1:30096";
  for (int i = 0; i < 3; ++i) {
    o.interactive = i == 0;
    o.install.yes = i == 1;
    o.install.hosts.dry_run = i == 2;
    Usage ok;
    validate_node_remove(o, ok);
    EXPECT_TRUE(ok.ok()) << i << ": " << ok.summary();
  }
}

}  // namespace
}  // namespace paictl
