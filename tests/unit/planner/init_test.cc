// paictl init's use case (lib/planner/init.h): facts collected by address and
// named by hostname, the master by name or address, the files a cluster
// directory needs and that check config and install accept, the admin password,
// a non-empty directory refused, and host.yaml overriding the host it names.

#include "planner/init.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config/cluster_files.h"
#include "facts/naming.h"
#include "planner/hosts.h"
#include "planner_fixtures.h"
#include "util/fs.h"

using namespace pai::planner;
namespace fs = std::filesystem;

namespace {

using pai::test::dump;
using pai::test::kLayouts;

// A host as facts collect --hosts reaches it: named by its address.
pai::facts::HostFacts init_test_host(const std::string& address, const std::string& hostname,
                                     bool gpus) {
  const std::string dir = kLayouts + "/dgx-a100/";
  pai::facts::HostFacts f;
  f.name = address;
  f.address = address;
  f.ssh_server_address = address;
  f.ip_addresses = {address, "10.9.9.9"};  // the machine's own interface, shared by test hosts
  f.roles = {"worker"};
  f.hostname = hostname;
  f.lscpu = pai::util::read_file(dir + "lscpu.txt").value();
  f.meminfo = pai::util::read_file(dir + "meminfo").value();
  if (gpus) {
    f.nvidia.smi_present = true;
    f.nvidia.smi_exit = 0;
    f.nvidia.topo_matrix = pai::util::read_file(dir + "topo.txt").value();
    auto list =
        pai::facts::parse_gpu_query(pai::util::read_file(dir + "gpus.csv").value(), "gpus.csv");
    for (const auto& g : list.value)
      f.gpus.push_back({g.index, g.name, g.memory_mib, g.bus_id, g.uuid});
  }
  return f;
}

std::vector<pai::facts::HostFacts> init_test_hosts() {
  return {init_test_host("127.0.31.2", "tb-master", false),
          init_test_host("127.0.31.3", "tb-worker1", true),
          init_test_host("127.0.31.4", "tb-worker2", true)};
}

struct InitTestDir {
  fs::path path = fs::temp_directory_path() / ("paictl-init-" + std::to_string(::getpid()));
  InitTestDir() { fs::remove_all(path); }
  ~InitTestDir() { fs::remove_all(path); }
};

unsigned init_test_mode(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? (st.st_mode & 0777) : 0;
}

}  // namespace

TEST(FactsNaming, HostsReachedByAddressAreNamedByTheirHostname) {
  auto hosts = init_test_hosts();
  hosts.push_back(init_test_host("127.0.31.5", "TB-Worker1", true));  // a second tb-worker1
  hosts.push_back(init_test_host("127.0.31.6", "bad_name", true));
  auto warnings = pai::facts::name_by_hostname(hosts);
  EXPECT_EQ(hosts[0].name, "tb-master");
  EXPECT_EQ(hosts[0].address, "127.0.31.2");  // the address stays
  EXPECT_EQ(hosts[2].name, "tb-worker2");
  EXPECT_EQ(hosts[1].name, "127.0.31.3");  // two hosts call themselves tb-worker1
  EXPECT_EQ(hosts[3].name, "127.0.31.5");
  EXPECT_EQ(hosts[4].name, "127.0.31.6");  // not a node name
  EXPECT_EQ(warnings.size(), 3u);

  auto named = init_test_hosts();
  pai::facts::name_by_hostname(named);
  ASSERT_TRUE(pai::facts::mark_master(named, "127.0.31.2").ok());  // by address
  EXPECT_EQ(named[0].roles, std::vector<std::string>{"master"});
  EXPECT_EQ(named[1].roles, std::vector<std::string>{"worker"});
  ASSERT_TRUE(pai::facts::mark_master(named, "tb-worker2").ok());  // by name
  EXPECT_EQ(named[0].roles, std::vector<std::string>{"worker"});
  EXPECT_EQ(named[2].roles, std::vector<std::string>{"master"});
  auto none = pai::facts::mark_master(named, "tb-mastr");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().hint.find("tb-master"), std::string::npos) << none.error().hint;
}

TEST(PlannerInit, WritesEveryFileACheckedClusterDirectoryNeeds) {
  InitTestDir d;
  InitRequest r;
  r.cluster_dir = d.path.string() + "/";
  r.inputs.collected = init_test_hosts();
  pai::facts::name_by_hostname(r.inputs.collected);
  r.inputs.layouts_dir = kLayouts;
  r.inputs.options.master = "127.0.31.2";  // the master by its address
  r.settings.ssh_config = "ssh_config";
  r.settings.ssh_key_file_path = "/keys/id_ed25519";
  r.settings.known_hosts = "known_hosts";
  r.settings.ignore_check_errors = {"CPU", "DNS"};
  auto plan = plan_init(r);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_TRUE(plan->ok()) << dump(plan->run.diagnostics) << dump(plan->checks);
  EXPECT_EQ(plan->cluster_dir, d.path.string());
  // The hosts are named by hostname and keep their loopback addresses as hostip.
  const std::string* layout = nullptr;
  const InitFile* services = nullptr;
  for (const auto& f : plan->files) {
    if (f.name == "layout.yaml") layout = &f.content;
    if (f.name == "services-configuration.yaml") services = &f;
  }
  ASSERT_TRUE(layout && services);
  EXPECT_NE(layout->find("hostname: tb-worker1"), std::string::npos) << *layout;
  EXPECT_NE(layout->find("hostip: \"127.0.31.3\""), std::string::npos) << *layout;
  EXPECT_EQ(layout->find("10.9.9.9"), std::string::npos) << *layout;
  EXPECT_EQ(services->mode, 0600u);
  // The password is in the file, and not in what a dry run shows.
  const std::string key = "default-pai-admin-password: \"";
  auto at = services->content.find(key);
  ASSERT_NE(at, std::string::npos);
  std::string password = services->content.substr(at + key.size(), 24);
  EXPECT_EQ(services->content[at + key.size() + 24], '"');
  EXPECT_EQ(
      password.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
      std::string::npos);
  EXPECT_EQ(services->shown.find(password), std::string::npos);

  // The settings files must exist for check config: make them, then write.
  fs::create_directories(d.path);
  std::ofstream(d.path / "ssh_config") << "Host *\n  User root\n";
  std::ofstream(d.path / "known_hosts") << "";
  auto written = apply_init(*plan);
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(written->size(), 6u);  // 3 files and 3 facts
  EXPECT_EQ(init_test_mode(d.path / "services-configuration.yaml"), 0600u);
  EXPECT_TRUE(fs::exists(d.path / "facts" / "tb-worker2.json"));

  auto checked = pai::config::check_paths({d.path.string()});
  EXPECT_FALSE(checked.diagnostics.has_errors()) << dump(checked.diagnostics);
  ASSERT_EQ(checked.clusters.size(), 1u);
  const auto& cfg = *checked.clusters[0].config;
  EXPECT_EQ(cfg.ssh_config, "ssh_config");
  EXPECT_EQ(pai::config::resolve_setting_path(cfg.file, cfg.ssh_config),
            d.path.string() + "/ssh_config");
  EXPECT_EQ(cfg.ignore_check_errors, (std::vector<std::string>{"CPU", "DNS"}));
  EXPECT_TRUE(checked.clusters[0].layout->machines[0].master);
  EXPECT_TRUE(pai::config::install_readiness(checked, {d.path.string()}).empty());
  // The facts init saved plan the same cluster again.
  FactsSet again = load_facts_dir((d.path / "facts").string());
  EXPECT_FALSE(again.diagnostics.has_errors()) << dump(again.diagnostics);
  EXPECT_EQ(again.hosts.size(), 3u);

  // A second init into the directory is refused; --force keeps the admin password.
  auto refused = plan_init(r);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, pai::util::Error::Kind::Input);
  EXPECT_NE(refused.error().hint.find("--force"), std::string::npos);
  r.force = true;
  auto forced = plan_init(r);
  ASSERT_TRUE(forced.ok() && forced->ok());
  for (const auto& f : forced->files)
    if (f.name == "services-configuration.yaml") {
      EXPECT_NE(f.content.find(password), std::string::npos);
      EXPECT_TRUE(f.exists);
    }
}

TEST(PlannerInit, PlanErrorsWriteNothing) {
  InitTestDir d;
  InitRequest r;
  r.cluster_dir = d.path.string();
  r.inputs.collected = init_test_hosts();
  pai::facts::name_by_hostname(r.inputs.collected);
  r.inputs.options.master = "tb-mastr";
  auto plan = plan_init(r);
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->ok());
  EXPECT_TRUE(plan->files.empty());
  EXPECT_FALSE(apply_init(*plan).ok());
  EXPECT_FALSE(fs::exists(d.path));
}

TEST(PlannerInit, RandomPasswordsAreLongAndDiffer) {
  auto a = random_password(), b = random_password();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 24u);
  EXPECT_NE(*a, *b);
}

TEST(PlannerFacts, HostYamlOverridesTheHostItNames) {
  InitTestDir d;
  fs::create_directories(d.path / "tb-master");
  fs::create_directories(d.path / "127.0.31.4");
  // Facts files as an earlier facts collect --hosts wrote them: named by address.
  for (auto f : init_test_hosts()) {
    std::ofstream(d.path / (f.address + ".json")) << pai::facts::to_json(f).dump(2);
  }
  // Named by the host's own name, and by its address: each overrides that host.
  std::ofstream(d.path / "tb-master" / "host.yaml") << "roles: [master]\nrack: r1\n";
  std::ofstream(d.path / "127.0.31.4" / "host.yaml") << "rack: r2\n";
  FactsSet set = load_facts_dir(d.path.string());
  EXPECT_FALSE(set.diagnostics.has_errors()) << dump(set.diagnostics);
  ASSERT_EQ(set.hosts.size(), 3u);
  // Facts named by an address are read under the host's own name.
  EXPECT_EQ(set.hosts[0].hostname, "tb-master");
  EXPECT_EQ(set.hosts[2].hostname, "tb-worker2");
  int masters = 0;
  for (const auto& h : set.hosts) {
    masters += h.role == HostRole::Master;
    if (h.hostip == "127.0.31.2") {
      EXPECT_EQ(h.role, HostRole::Master);
      EXPECT_EQ(h.rack, "r1");
    }
    if (h.hostip == "127.0.31.4") {
      EXPECT_EQ(h.rack, "r2");
    }
  }
  EXPECT_EQ(masters, 1);

  // A host.yaml that names no host is an error, not a second host without facts.
  fs::create_directories(d.path / "tb-mastr");
  std::ofstream(d.path / "tb-mastr" / "host.yaml") << "roles: [master]\n";
  FactsSet typo = load_facts_dir(d.path.string());
  EXPECT_EQ(typo.hosts.size(), 3u);
  bool p012 = false;
  for (const auto& x : typo.diagnostics.items())
    if (x.code == "P012") {
      p012 = true;
      EXPECT_NE(x.hint.find("tb-master"), std::string::npos) << x.hint;
    }
  EXPECT_TRUE(p012) << dump(typo.diagnostics);
}
