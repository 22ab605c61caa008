// The hybrid cluster's config logic: address ranges, the master on Azure
// (role: master), the VMs paictl wrote into layout.yaml and the sites' labels.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "config/azure_config.h"
#include "config/cluster_files.h"

namespace fs = std::filesystem;

namespace pai::config {
namespace {

Cidr cidr(const char* s) {
  auto c = parse_cidr(s);
  EXPECT_TRUE(c) << s;
  return c.value_or(Cidr{});
}

TEST(AzureCidr, OverlapIsContainmentEitherWay) {
  EXPECT_TRUE(cidr("10.224.0.0/16").overlaps(cidr("10.224.3.0/24")));
  EXPECT_TRUE(cidr("10.224.3.0/24").overlaps(cidr("10.224.0.0/16")));
  EXPECT_TRUE(cidr("10.0.0.0/8").overlaps(cidr("10.244.0.0/16")));
  EXPECT_FALSE(cidr("10.224.0.0/16").overlaps(cidr("10.225.0.0/16")));
  EXPECT_FALSE(cidr("192.168.1.0/24").overlaps(cidr("192.168.2.0/24")));
  EXPECT_TRUE(cidr("0.0.0.0/0").overlaps(cidr("172.16.0.0/12")));
  // The host bits are dropped: 10.224.7.9/16 is 10.224.0.0/16.
  EXPECT_EQ(cidr("10.224.7.9/16").str(), "10.224.0.0/16");
  EXPECT_FALSE(parse_cidr("10.224.0.0"));
  EXPECT_FALSE(parse_cidr("10.224.0.0/33"));
  EXPECT_FALSE(parse_cidr("10.224.0/16"));
}

TEST(AzureLayoutMarks, FindsTheVmsPaictlWrote) {
  auto pools = azure_pools_in_layout(
      "machine-list:\n"
      "  - hostname: pai-master\n    hostip: 10.0.0.1\n"
      "  - hostname: lab-cp000000  # azure pool cp\n    hostip: 10.224.0.4\n"
      "  - hostname: \"lab-gpu000003\"  # azure pool gpu\n"
      "  # - hostname: old  # azure pool gone\n");
  // A commented-out entry is no machine of layout.yaml.
  EXPECT_EQ(pools.size(), 2u);
  EXPECT_EQ(pools["lab-cp000000"], "cp");
  EXPECT_EQ(pools["lab-gpu000003"], "gpu");
  EXPECT_FALSE(pools.count("pai-master"));
}

TEST(AzureSiteLabels, SiteRegionAndPool) {
  AzureConfig az;
  az.location = "westeurope";
  az.address_space = "10.224.0.0/16";
  std::map<std::string, std::string> vms = {{"lab-gpu000000", "gpu"}};
  EXPECT_EQ(site_labels(az, vms, "pai-master", "10.0.0.1"),
            (std::map<std::string, std::string>{{"paictl.io/site", "onprem"}}));
  EXPECT_EQ(site_labels(az, vms, "lab-gpu000000", "127.0.43.4"),
            (std::map<std::string, std::string>{{"paictl.io/site", "azure"},
                                                {"paictl.io/azure-pool", "gpu"},
                                                {"topology.kubernetes.io/region", "westeurope"}}));
  // Not written by paictl but inside the VNet: on Azure, pool unknown.
  EXPECT_EQ(site_labels(az, vms, "byo-vm", "10.224.5.6"),
            (std::map<std::string, std::string>{{"paictl.io/site", "azure"},
                                                {"topology.kubernetes.io/region", "westeurope"}}));
}

class AzureMasterPool : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("paictl-azure-master-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const char* name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  std::vector<std::string> codes() {
    std::vector<std::string> out;
    CheckOutcome got = check_paths({dir_.string()});
    for (const auto& d : got.diagnostics.items())
      if (d.severity == diag::Severity::Error) out.push_back(d.code + ":" + std::to_string(d.line));
    return out;
  }
  std::string config(const std::string& pools) {
    return "user: openpai\ndocker_image_tag: v1.8.0\nazure:\n"
           "  subscription: 00000000-0000-0000-0000-000000000001\n"
           "  tenant: contoso.onmicrosoft.com\n"
           "  client-id: 11111111-2222-3333-4444-555555555555\n"
           "  location: eastus\n  resource-group: pai-rg\n  ssh-public-key-file: k.pub\n"
           "  pools:\n" +
           pools;
  }
  fs::path dir_;
};

const char* kSkus =
    "machine-sku:\n  cpu:\n    mem: 32Gi\n    cpu:\n      vcore: 8\n"
    "  gpu:\n    mem: 220Gi\n    cpu:\n      vcore: 24\n    computing-device:\n"
    "      type: nvidia.com/gpu\n      model: V100\n      count: 4\n";

TEST_F(AzureMasterPool, NoOnPremMasterNeededWhenAPoolIsTheMaster) {
  write("layout.yaml", std::string(kSkus) +
                           "machine-list:\n  - hostname: w1\n    hostip: 10.0.0.2\n"
                           "    machine-type: gpu\n    pai-worker: \"true\"\n");
  write("config.yaml", config("    - name: cp\n      role: master\n      sku: Standard_D8s_v5\n"
                              "      count: 1\n      machine-type: cpu\n"));
  EXPECT_EQ(codes(), std::vector<std::string>{}) << "L006 does not apply";
  // Without role: master the layout needs its master.
  write("config.yaml", config("    - name: cp\n      sku: Standard_D8s_v5\n"
                              "      count: 1\n      machine-type: cpu\n"));
  EXPECT_EQ(codes(), std::vector<std::string>{"L006:15"});
}

TEST_F(AzureMasterPool, OneVmOneMasterPoolAndAKnownRole) {
  write("layout.yaml", std::string(kSkus) +
                           "machine-list:\n  - hostname: w1\n    hostip: 10.0.0.2\n"
                           "    machine-type: gpu\n    pai-worker: \"true\"\n");
  write("config.yaml", config("    - name: cp\n      sku: Standard_D8s_v5\n      count: 2\n"
                              "      machine-type: cpu\n      role: master\n"
                              "    - name: cp2\n      sku: Standard_D8s_v5\n      count: 1\n"
                              "      machine-type: cpu\n      role: master\n"
                              "    - name: gpu\n      sku: Standard_NC24s_v3\n      count: 1\n"
                              "      machine-type: gpu\n      role: boss\n"));
  EXPECT_EQ(codes(), (std::vector<std::string>{"A005:15", "A005:20", "A005:25"}));
}

TEST_F(AzureMasterPool, TheMasterVmInLayoutIsNoSecondMaster) {
  std::string cfg = config(
      "    - name: cp\n      role: master\n      sku: Standard_D8s_v5\n"
      "      count: 1\n      machine-type: cpu\n");
  write("config.yaml", cfg);
  write("layout.yaml", std::string(kSkus) +
                           "machine-list:\n  - hostname: w1\n    hostip: 10.0.0.2\n"
                           "    machine-type: gpu\n    pai-worker: \"true\"\n"
                           "  - hostname: pai-cp000000  # azure pool cp\n    hostip: 10.224.0.4\n"
                           "    machine-type: cpu\n    pai-master: \"true\"\n");
  EXPECT_EQ(codes(), std::vector<std::string>{});
  write("layout.yaml", std::string(kSkus) +
                           "machine-list:\n  - hostname: m\n    hostip: 10.0.0.1\n"
                           "    machine-type: cpu\n    pai-master: \"true\"\n"
                           "  - hostname: w1\n    hostip: 10.0.0.2\n"
                           "    machine-type: gpu\n    pai-worker: \"true\"\n");
  EXPECT_EQ(codes(), std::vector<std::string>{"A006:15"});
}

TEST_F(AzureMasterPool, TunnelMtuAndPublicIp) {
  write("layout.yaml", std::string(kSkus) +
                           "machine-list:\n  - hostname: m\n    hostip: 10.0.0.1\n"
                           "    machine-type: cpu\n    pai-master: \"true\"\n"
                           "  - hostname: w1\n    hostip: 10.0.0.2\n"
                           "    machine-type: gpu\n    pai-worker: \"true\"\n");
  std::string pools =
      "    - name: gpu\n      sku: Standard_NC24s_v3\n      count: 1\n"
      "      machine-type: gpu\n";
  auto azure = [&] {
    CheckOutcome got = check_paths({dir_.string()});
    EXPECT_FALSE(got.clusters.empty());
    return got.clusters.empty() || !got.clusters[0].config || !got.clusters[0].config->azure
               ? AzureConfig{}
               : *got.clusters[0].config->azure;
  };
  write("config.yaml", config(pools));
  EXPECT_EQ(azure().tunnel_mtu, 1400) << "a site-to-site VPN by default";
  EXPECT_FALSE(azure().public_ip);
  write("config.yaml", config(pools) + "  tunnel-mtu: 1500\n  public-ip: true\n");
  EXPECT_EQ(codes(), std::vector<std::string>{});
  EXPECT_EQ(azure().tunnel_mtu, 1500);
  EXPECT_TRUE(azure().public_ip);
  write("config.yaml", config(pools) + "  tunnel-mtu: 100\n");
  EXPECT_EQ(codes(), std::vector<std::string>{"A003:15"});
}

// ssh-public-key-file is required only without ssh_key_file_path, whose KEY.pub
// is then the VMs' key.
TEST_F(AzureMasterPool, TheVmsKeyMayComeFromSshKeyFilePath) {
  write("layout.yaml", std::string(kSkus) +
                           "machine-list:\n  - hostname: w1\n    hostip: 10.0.0.2\n"
                           "    machine-type: gpu\n    pai-worker: \"true\"\n");
  std::string pools =
      "    - name: cp\n      role: master\n      sku: Standard_D8s_v5\n"
      "      count: 1\n      machine-type: cpu\n";
  std::string without = config(pools);
  without.erase(without.find("  ssh-public-key-file: k.pub\n"),
                std::string("  ssh-public-key-file: k.pub\n").size());
  write("config.yaml", without);
  auto missing = codes();
  ASSERT_EQ(missing.size(), 1u) << "the key is required without ssh_key_file_path";
  write("id", "a private key\n");
  write("id.pub", "ssh-ed25519 AAAA test\n");
  write("config.yaml", "ssh_key_file_path: id\n" + without);
  EXPECT_EQ(codes(), std::vector<std::string>{});
}

}  // namespace

}  // namespace pai::config
