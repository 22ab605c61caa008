// paictl init's validate step: every usage error at once, from the options
// alone, before any host is reached or file written.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "command.h"
#include "init/cmd_init.h"
#include "usage_matchers.h"

namespace paictl {
namespace {

using usage_test::has;
using usage_test::hint_of;

TEST(InitValidate, EveryErrorAtOnce) {
  InitCliOptions o;
  o.profiles = {"dgx-a100"};
  o.ssh_key = "/nonexistent/id";
  o.ssh_config = "none";  // "none" is no file, and allowed
  o.ignore = {"CPU,Nope"};
  o.hived_url = "10.0.0.1:30096";
  o.reserve_memory = "lots";
  Usage u;
  validate_init(o, u);
  EXPECT_TRUE(has(u, "init needs the cluster directory")) << u.summary();
  EXPECT_TRUE(has(u, "every --profile needs its --count N")) << u.summary();
  EXPECT_TRUE(has(u, "--ssh-key /nonexistent/id is not a file")) << u.summary();
  EXPECT_FALSE(has(u, "--ssh-config")) << u.summary();
  EXPECT_TRUE(has(u, "no check is named \"Nope\"")) << u.summary();
  EXPECT_FALSE(has(u, "\"CPU\"")) << u.summary();
  EXPECT_TRUE(has(u, "--hived-url 10.0.0.1:30096 is not an http")) << u.summary();
  EXPECT_TRUE(has(u, "--reserve-memory lots is not a memory quantity")) << u.summary();
  EXPECT_EQ(u.errors().size(), 6u) << u.summary();

  InitCliOptions nothing;
  nothing.cluster_dir = "/nonexistent/cluster";
  Usage n;
  validate_init(nothing, n);
  EXPECT_TRUE(has(n, "nothing to plan")) << n.summary();
  EXPECT_EQ(n.errors().size(), 1u) << n.summary();
}

TEST(InitValidate, AnExistingDirectoryNeedsForce) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("paictl-init-cli-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  InitCliOptions o;
  o.cluster_dir = dir.string();
  o.facts = {"facts"};
  Usage empty;
  validate_init(o, empty);
  EXPECT_TRUE(empty.ok()) << empty.summary();  // an empty directory is fine
  std::ofstream(dir / "layout.yaml") << "x\n";
  Usage full;
  validate_init(o, full);
  EXPECT_TRUE(has(full, "exists and is not empty")) << full.summary();
  EXPECT_NE(hint_of(full, "not empty").find("--force"), std::string::npos);
  o.force = true;
  Usage forced;
  validate_init(o, forced);
  EXPECT_TRUE(forced.ok()) << forced.summary();
  o.cluster_dir = (dir / "layout.yaml").string();
  Usage file;
  validate_init(o, file);
  EXPECT_TRUE(has(file, "exists and is not a directory")) << file.summary();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace paictl
