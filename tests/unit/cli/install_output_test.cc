// install's output (cli/install/install_out.h): the status line of the steps
// still running, and --register's usage errors.

#include <gtest/gtest.h>

#include <string>

#include "command.h"
#include "install/cmd_install.h"
#include "install/install_out.h"
#include "usage_matchers.h"

namespace paictl {
namespace {

const std::string kInstallOutputCluster =
    std::string(PAI_SOURCE_DIR) + "/examples/clusters/quickstart";

TEST(InstallStatusLine, TheLongestRunningStepsFirstWithTheirTime) {
  std::vector<RunningStep> steps = {{"tb-worker1", "packages", "applying", 21.4},
                                    {"tb-master", "control-plane", "applying", 63.9},
                                    {"tb-worker2", "packages", "applying", 3}};
  EXPECT_EQ(status_text(steps, 200),
            "3 running: tb-master control-plane applying 63s, tb-worker1 packages applying 21s, "
            "tb-worker2 packages applying 3s");
  // A narrow terminal: what fits, then how many more.
  EXPECT_EQ(status_text(steps, 60), "3 running: tb-master control-plane applying 63s, +2 more");
  EXPECT_LE(status_text(steps, 20).size(), 20u);
}

TEST(InstallRegister, ANameOfTheRegistryOnAnInstallOfTheWholeCluster) {
  InstallOptions o;
  o.hosts.paths = {kInstallOutputCluster};
  o.register_name = "lab";
  Usage ok;
  validate_register(o, ok);
  EXPECT_TRUE(ok.ok()) << ok.summary();
  o.register_name = "no spaces";
  o.hosts.dry_run = true;
  o.hosts.limit = {"gpu-1"};
  Usage u;
  validate_register(o, u);
  ASSERT_EQ(u.errors().size(), 3u) << u.summary();
  EXPECT_TRUE(usage_test::has(u, "--register: \"no spaces\" is not a cluster name"));
  EXPECT_TRUE(usage_test::has(u, "--register registers an installed cluster, not a dry run"));
  EXPECT_TRUE(usage_test::has(u, "--register needs the whole cluster, not --limit"));
}

}  // namespace
}  // namespace paictl
