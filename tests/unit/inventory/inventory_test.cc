#include "inventory/inventory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace pai::inventory;

namespace {

InventoryOptions no_ssh_config() {
  InventoryOptions o;
  o.ssh_config = "none";  // the test must not depend on the user's ~/.ssh/config
  return o;
}

}  // namespace

TEST(Inventory, FromAClusterDirectory) {
  InventoryOptions o = no_ssh_config();
  o.paths = {std::string(PAI_SOURCE_DIR) + "/examples/clusters/quickstart"};
  o.user = "ops";
  Inventory inv = build_inventory(o);
  ASSERT_FALSE(inv.input_error) << (inv.diagnostics.empty() ? ""
                                                            : inv.diagnostics.items()[0].message);
  ASSERT_EQ(inv.hosts.size(), 3u);
  const HostPlan& master = inv.hosts[0];
  EXPECT_EQ(master.name, "pai-master");
  EXPECT_EQ(master.address, "10.0.0.1");
  EXPECT_TRUE(master.master);
  EXPECT_FALSE(master.worker);
  EXPECT_TRUE(master.from_layout);
  const HostPlan& worker = inv.hosts[1];
  EXPECT_EQ(worker.name, "pai-worker1");
  EXPECT_TRUE(worker.worker);
  ASSERT_TRUE(worker.sku.has_value());
  EXPECT_EQ(worker.sku->name, "k80-machine");
  EXPECT_EQ(worker.target.endpoint.user, "ops");
  EXPECT_EQ(inv.layout_lines.at("pai-worker1"), 21u);
}

TEST(Inventory, LimitNamesHostsOfTheLayout) {
  InventoryOptions o = no_ssh_config();
  o.paths = {std::string(PAI_SOURCE_DIR) + "/examples/clusters/quickstart"};
  o.limit = {"pai-worker2"};
  Inventory inv = build_inventory(o);
  ASSERT_EQ(inv.hosts.size(), 1u);
  EXPECT_EQ(inv.hosts[0].name, "pai-worker2");
  o.limit = {"pai-workr2"};
  Inventory bad = build_inventory(o);
  EXPECT_TRUE(bad.input_error);
}

TEST(Inventory, FromAHostList) {
  InventoryOptions o = no_ssh_config();
  o.hosts = {"root@10.1.0.5:2222", "gpu-2"};
  Inventory inv = build_inventory(o);
  ASSERT_FALSE(inv.input_error);
  ASSERT_EQ(inv.hosts.size(), 2u);
  EXPECT_EQ(inv.hosts[0].target.endpoint.user, "root");
  EXPECT_EQ(inv.hosts[0].target.endpoint.port, 2222);
  EXPECT_FALSE(inv.hosts[1].from_layout);
  // Cluster files and a host list together are refused.
  o.paths = {std::string(PAI_SOURCE_DIR) + "/examples/clusters/quickstart"};
  EXPECT_TRUE(build_inventory(o).input_error);
}

TEST(Inventory, HostsFileErrorsNameTheLine) {
  pai::diag::List d;
  auto hosts = parse_hosts_file("# comment\na, b\n\nroot@:22\nc  # trailing\n", "hosts.txt", d);
  EXPECT_EQ(hosts, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d.items()[0].file, "hosts.txt");
  EXPECT_EQ(d.items()[0].line, 4u);
}

TEST(Inventory, TheClusterDirectorysSettingsAreDefaultsThatFlagsOverride) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("paictl-inv-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(std::string(PAI_SOURCE_DIR) + "/examples/clusters/quickstart", dir);
  std::ofstream(dir / "ssh_config") << "Host pai-worker1\n  Port 2222\n";
  std::ofstream(dir / "known") << "";
  std::ofstream(dir / "id") << "";
  std::ofstream(dir / "config.yaml", std::ios::app)
      << "ssh_config: ssh_config\nssh_user: ops\nknown_hosts: known\nssh_key_file_path: id\n";
  InventoryOptions o;  // no --ssh-config: config.yaml's
  o.paths = {dir.string()};
  Inventory inv = build_inventory(o);
  ASSERT_FALSE(inv.input_error) << (inv.diagnostics.empty() ? ""
                                                            : inv.diagnostics.items()[0].message);
  ASSERT_EQ(inv.hosts.size(), 3u);
  const auto& w = inv.hosts[1].target;
  EXPECT_EQ(w.endpoint.port, 2222);
  EXPECT_EQ(w.endpoint.user, "ops");
  EXPECT_EQ(w.known_hosts_file, (dir / "known").string());
  const auto& ids = w.endpoint.identity_files;
  EXPECT_NE(std::find(ids.begin(), ids.end(), (dir / "id").string()), ids.end());
  // The flags win.
  o.ssh_config = "none";
  o.user = "root";
  o.known_hosts = "/elsewhere";
  Inventory flags = build_inventory(o);
  ASSERT_FALSE(flags.input_error);
  EXPECT_EQ(flags.hosts[1].target.endpoint.port, 22);
  EXPECT_EQ(flags.hosts[1].target.endpoint.user, "root");
  EXPECT_EQ(flags.hosts[1].target.known_hosts_file, "/elsewhere");
  fs::remove_all(dir);
}
