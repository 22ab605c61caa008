// The Azure resource model, plan/apply/reset and the layout update, against
// the ARM test server with a fake clock.

#include <mutex>

#include <gtest/gtest.h>

#include "../../integration/azure/arm_test_server.h"
#include "azure/provider.h"
#include "util/strings.h"

namespace {

using nlohmann::json;
using pai::azure::Action;
using pai::testing::ArmServer;

struct ProviderEnv {
  ArmServer srv{1, 1};
  std::mutex mu;
  double t = 0;
  std::unique_ptr<pai::http::CurlClient> http;
  std::unique_ptr<pai::azure::TokenSource> tokens;
  std::unique_ptr<pai::azure::ArmClient> arm;
  pai::azure::Spec spec;

  ProviderEnv() {
    if (!srv.ok()) return;
    pai::http::Options ho;
    ho.tls.ca_file = srv.ca_file();
    ho.retry.max_attempts = 1;
    http = std::make_unique<pai::http::CurlClient>(ho);
    pai::azure::Clock c;
    c.now = [this] {
      std::lock_guard<std::mutex> l(mu);
      return t;
    };
    c.sleep = [this](double s) {
      std::lock_guard<std::mutex> l(mu);
      t += s;
    };
    pai::azure::TokenOptions to;
    to.endpoints.arm = to.endpoints.authority = srv.base();
    to.clock = c;
    tokens = std::move(
        pai::azure::make_token_source({"t", ArmServer::kClientId, srv.secret_file()}, *http, to,
                                      [](const char*) -> const char* { return nullptr; })
            .value());
    pai::azure::ArmOptions o;
    o.endpoints = to.endpoints;
    o.clock = c;
    arm = std::make_unique<pai::azure::ArmClient>(*http, *tokens, o);
    auto& a = spec.azure;
    spec.cluster = "lab";
    a.subscription = "00000000-0000-0000-0000-000000000001";
    a.location = "eastus";
    a.resource_group = "lab-rg";
    a.address_space = "10.224.0.0/16";
    a.subnet = "10.224.1.0/24";
    a.allowed_ssh_from = {"203.0.113.10/32"};
    spec.onprem_prefixes = {"10.0.0.0/24"};
    spec.ssh_public_key = "ssh-ed25519 AAAAC3Nza test@example";
    a.pools.push_back({"gpu", "Standard_ND96asr_v4", 2, "nd96", {}, {}, {}});
    a.pools.push_back({"cpu", "Standard_D4s_v5", 1, "cpu-machine", {}, {}, {}});
  }
  int puts() {
    int n = 0;
    for (auto& r : srv.arm_requests()) n += r["method"] == "PUT" ? 1 : 0;
    return n;
  }
};

#define NEED(e) \
  if (!(e).srv.ok()) GTEST_SKIP() << "openssl is missing"

// A new plan of the same spec, expected to find every resource as wanted.
auto plan_again(ProviderEnv& e) {
  auto again = pai::azure::plan(*e.arm, e.spec);
  if (again.ok()) {
    for (auto& c : again->changes) {
      EXPECT_EQ(c.action, Action::None)
          << c.resource.name << ": " << pai::util::join(c.differences, "; ");
    }
  }
  return again;
}

TEST(AzureModel, ScaleSetBodies) {
  pai::azure::Spec s;
  s.cluster = "lab";
  s.azure.subscription = "sub";
  s.azure.resource_group = "rg";
  s.azure.location = "eastus";
  s.ssh_public_key = "ssh-ed25519 K";
  s.azure.pools.push_back({"ib", "Standard_ND96asr_v4", 4, "nd96", {}, {}, {}});
  s.azure.pools.push_back({"pcie", "Standard_NC24ads_A100_v4", 1, "nc24", {}, {}, {}});
  auto rs = pai::azure::desired_resources(s);
  ASSERT_EQ(rs.size(), 5u);
  const json& ib = rs[3].body;
  EXPECT_EQ(rs[3].path,
            "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Compute/"
            "virtualMachineScaleSets/lab-ib");
  EXPECT_EQ(ib["properties"]["singlePlacementGroup"], true);
  EXPECT_EQ(rs[4].body["properties"]["singlePlacementGroup"], false);
  const json& os = ib["properties"]["virtualMachineProfile"]["osProfile"];
  EXPECT_EQ(os["linuxConfiguration"]["disablePasswordAuthentication"], true);
  EXPECT_FALSE(os.contains("adminPassword"));
  EXPECT_EQ(ib["properties"]["virtualMachineProfile"]["networkProfile"]
              ["networkInterfaceConfigurations"][0]["properties"]["enableAcceleratedNetworking"],
            true);
  EXPECT_EQ(ib["tags"]["paictl.cluster"], "lab");
  EXPECT_EQ(rs[0].body["tags"]["paictl.cluster"], "lab");
  std::string ci = pai::azure::cloud_init();
  EXPECT_EQ(ci.rfind("#cloud-config\n", 0), 0u);
  EXPECT_LE(ci.size(), 65535u);
  // customData holds no secret: no password, token or key material in the file.
  for (const char* word : {"password", "token", "client_secret", "PRIVATE KEY", "kubeadm"})
    EXPECT_EQ(pai::util::to_lower(ci).find(pai::util::to_lower(word)), std::string::npos) << word;
  // The default image is an HPC image, which has the GPU driver: no extension,
  // no public address.
  const json& nic = ib["properties"]["virtualMachineProfile"]["networkProfile"]
                      ["networkInterfaceConfigurations"][0]["properties"];
  EXPECT_FALSE(ib["properties"]["virtualMachineProfile"].contains("extensionProfile"));
  EXPECT_FALSE(nic["ipConfigurations"][0]["properties"].contains("publicIPAddressConfiguration"));
  EXPECT_EQ(nic["networkSecurityGroup"]["id"],
            "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Network/"
            "networkSecurityGroups/lab-nsg");

  // A plain Ubuntu image: the GPU pools get NVIDIA's driver extension, a CPU pool none.
  s.azure.image = "Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2:latest";
  s.azure.public_ip = true;
  s.azure.pools.push_back({"cpu", "Standard_D8s_v5", 1, "cpu", {}, {}, {}});
  rs = pai::azure::desired_resources(s);
  ASSERT_EQ(rs.size(), 6u);
  const json& ext = rs[3].body["properties"]["virtualMachineProfile"]["extensionProfile"];
  ASSERT_TRUE(ext.is_object()) << rs[3].body.dump(1);
  EXPECT_EQ(ext["extensions"][0]["properties"]["publisher"], "Microsoft.HpcCompute");
  EXPECT_EQ(ext["extensions"][0]["properties"]["type"], "NvidiaGpuDriverLinux");
  EXPECT_TRUE(rs[4].body["properties"]["virtualMachineProfile"].contains("extensionProfile"));
  EXPECT_FALSE(rs[5].body["properties"]["virtualMachineProfile"].contains("extensionProfile"));
  const json& pip = rs[5].body["properties"]["virtualMachineProfile"]["networkProfile"]
                              ["networkInterfaceConfigurations"][0]["properties"]
                              ["ipConfigurations"][0]["properties"]["publicIPAddressConfiguration"];
  EXPECT_EQ(pip["sku"]["name"], "Standard");
  EXPECT_TRUE(
      pai::azure::needs_gpu_driver_extension("Standard_NC24ads_A100_v4", "Canonical:x:y:z"));
  EXPECT_FALSE(pai::azure::needs_gpu_driver_extension("Standard_ND96asr_v4",
                                                      "microsoft-dsvm:ubuntu-hpc:2204:latest"));
  EXPECT_FALSE(pai::azure::needs_gpu_driver_extension("Standard_D8s_v5", "Canonical:x:y:z"));
}

TEST(AzureProvider, PlanApplyIsIdempotentAndListsTheMachines) {
  ProviderEnv e;
  NEED(e);
  auto p = pai::azure::plan(*e.arm, e.spec);
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_EQ(p->changes.size(), 5u);
  for (auto& c : p->changes) EXPECT_EQ(c.action, Action::Create) << c.resource.name;
  e.srv.clear_requests();
  auto r = pai::azure::apply(*e.arm, *p, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->created, 5);
  EXPECT_EQ(e.puts(), 5);
  for (auto& q : e.srv.arm_requests())
    if (q["method"] == "PUT") {
      EXPECT_EQ(q["ifNoneMatch"], "*");
    }
  // NSG and VNet went out before either finished: they were created concurrently.
  auto reqs = e.srv.arm_requests();
  int nsg_put = -1, vnet_put = -1, first_level1_done = -1;
  for (size_t i = 0; i < reqs.size(); ++i) {
    std::string path = reqs[i]["path"];
    if (reqs[i]["method"] == "PUT" && path.ends_with("/lab-nsg")) nsg_put = static_cast<int>(i);
    if (reqs[i]["method"] == "PUT" && path.ends_with("/lab-vnet")) vnet_put = static_cast<int>(i);
    if (first_level1_done < 0 && reqs[i]["kind"] == "arm" && reqs[i]["method"] == "GET" &&
        (path.ends_with("/lab-nsg") || path.ends_with("/lab-vnet")))
      first_level1_done = static_cast<int>(i);
  }
  EXPECT_LT(nsg_put, first_level1_done);
  EXPECT_LT(vnet_put, first_level1_done);

  // Run again: nothing to do, no PUT.
  e.srv.clear_requests();
  auto again = plan_again(e);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_FALSE(again->has_changes());
  ASSERT_TRUE(pai::azure::apply(*e.arm, *again, {}).ok());
  EXPECT_EQ(e.puts(), 0);

  auto m = pai::azure::list_machines(*e.arm, e.spec);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->size(), 3u);
  int gpu = 0;
  for (auto& x : *m) {
    EXPECT_EQ(x.ip.rfind("10.224.1.", 0), 0u) << x.ip;
    EXPECT_EQ(x.hostname, pai::util::to_lower(x.hostname));
    if (x.pool == "gpu") {
      ++gpu;
      EXPECT_EQ(x.machine_type, "nd96");
    }
  }
  EXPECT_EQ(gpu, 2);

  // A bigger pool is an update of that scale set only; a removed pool is deleted.
  e.spec.azure.pools[0].count = 3;
  e.spec.azure.pools.pop_back();
  auto grow = pai::azure::plan(*e.arm, e.spec);
  ASSERT_TRUE(grow.ok());
  std::map<std::string, std::string> actions;
  for (auto& c : grow->changes)
    actions[c.resource.name] = std::string(pai::azure::to_string(c.action));
  EXPECT_EQ(actions["lab-gpu"], "update");
  EXPECT_EQ(actions["lab-cpu"], "delete");
  EXPECT_EQ(actions["lab-vnet"], "none");
  for (auto& c : grow->changes)
    if (c.resource.name == "lab-gpu") {
      EXPECT_EQ(pai::util::join(c.differences, ";"), "sku.capacity: 2 -> 3");
    }
  ASSERT_TRUE(pai::azure::apply(*e.arm, *grow, {}).ok());
  auto after = pai::azure::list_machines(*e.arm, e.spec);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->size(), 3u);
}

// A plain image (the driver extension) and public addresses: the server takes
// the bodies, and a second plan finds nothing to change.
TEST(AzureProvider, DriverExtensionAndPublicIpAreAppliedOnce) {
  ProviderEnv e;
  NEED(e);
  e.spec.azure.image = "Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2:latest";
  e.spec.azure.public_ip = true;
  auto p = pai::azure::plan(*e.arm, e.spec);
  ASSERT_TRUE(p.ok()) << p.error().message;
  auto r = pai::azure::apply(*e.arm, *p, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->created, 5);
  auto got = e.arm->get(
      "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/"
      "lab-rg/providers/Microsoft.Compute/virtualMachineScaleSets/lab-gpu",
      pai::azure::kComputeApi);
  ASSERT_TRUE(got.ok());
  const json& vmp = got->body["properties"]["virtualMachineProfile"];
  EXPECT_EQ(vmp["extensionProfile"]["extensions"][0]["properties"]["type"], "NvidiaGpuDriverLinux")
      << vmp.dump(1);
  EXPECT_TRUE(vmp["networkProfile"]["networkInterfaceConfigurations"][0]["properties"]
                 ["ipConfigurations"][0]["properties"]
                     .contains("publicIPAddressConfiguration"));
  e.srv.clear_requests();
  auto again = plan_again(e);
  ASSERT_TRUE(again.ok()) << again.error().message;
}

TEST(AzureProvider, ResetDeletesOnlyWhatCarriesTheClusterTag) {
  ProviderEnv e;
  NEED(e);
  auto p = pai::azure::plan(*e.arm, e.spec);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(pai::azure::apply(*e.arm, *p, {}).ok());
  // Someone else's address in the same group.
  auto foreign = e.arm->put(
      "/subscriptions/" + e.spec.azure.subscription +
          "/resourceGroups/lab-rg/providers/Microsoft.Network/publicIPAddresses/bastion",
      pai::azure::kNetworkApi, json{{"location", "eastus"}, {"tags", {{"owner", "ops"}}}});
  ASSERT_TRUE(foreign.ok()) << foreign.error().message;
  std::vector<std::string> lines;
  auto r = pai::azure::reset(*e.arm, e.spec, [&](const std::string& l) { lines.push_back(l); });
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->deleted.size(), 4u);  // two scale sets, the VNet, the NSG
  ASSERT_EQ(r->kept.size(), 2u);
  EXPECT_NE(r->kept[0].find("bastion: not created by cluster lab"), std::string::npos);
  EXPECT_NE(r->kept[1].find("holds resources paictl did not create"), std::string::npos);
  auto left = e.srv.resources();
  ASSERT_EQ(left.size(), 2u);  // the group and the foreign address
  // Every deletion was waited for: each DELETE's operation was polled to the end.
  int deletes = 0, done = 0;
  for (auto& q : e.srv.arm_requests()) {
    if (q["method"] == "DELETE") ++deletes;
    if (q["kind"] == "poll" && q["status"] == 200) ++done;
  }
  EXPECT_EQ(deletes, 4);
  EXPECT_GE(done, 4);
}

TEST(AzureLayout, MachinesReplaceTheirOldEntriesAndKeepTheRest) {
  std::string text =
      "# the lab\nmachine-sku:\n  nd96:\n    mem: 900Gi\nmachine-list:\n  - hostname: pai-master  "
      "# the master\n"
      "    hostip: 10.0.0.1\n    machine-type: master\n    pai-master: \"true\"\n"
      "  - hostname: old000000  # azure pool gpu\n    hostip: 10.224.1.9\n    machine-type: nd96\n"
      "    pai-worker: \"true\"\n\n# trailing comment\n";
  std::vector<pai::azure::Machine> ms = {{"gpu", "nd96", "lab-gpu000000", "10.224.1.4", "0"},
                                         {"gpu", "nd96", "lab-gpu000001", "10.224.1.5", "1"}};
  auto updated = pai::azure::update_layout(text, ms);
  ASSERT_TRUE(updated.ok());
  std::string out = *updated;
  EXPECT_EQ(out,
            "# the lab\nmachine-sku:\n  nd96:\n    mem: 900Gi\nmachine-list:\n  - hostname: "
            "pai-master  # the master\n"
            "    hostip: 10.0.0.1\n    machine-type: master\n    pai-master: \"true\"\n"
            "  - hostname: lab-gpu000000  # azure pool gpu\n    hostip: 10.224.1.4\n    "
            "machine-type: nd96\n"
            "    pai-worker: \"true\"\n"
            "  - hostname: lab-gpu000001  # azure pool gpu\n    hostip: 10.224.1.5\n    "
            "machine-type: nd96\n"
            "    pai-worker: \"true\"\n\n# trailing comment\n");
  EXPECT_EQ(pai::azure::update_layout(out, ms).value_or(""), out)
      << "applying twice changes nothing";
  auto none = pai::azure::update_layout("machine-sku: {}\n", ms);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "layout.yaml has no top-level machine-list");
}

}  // namespace

namespace {

TEST(AzureConfigEdit, ReplacesOnlyTheCount) {
  std::string text = "azure:\n  pools:\n    - name: gpu\n      count: 12   # two racks\n";
  auto replaced = pai::azure::replace_integer_at(text, 4, 14, 14);
  ASSERT_TRUE(replaced.ok());
  EXPECT_EQ(*replaced, "azure:\n  pools:\n    - name: gpu\n      count: 14   # two racks\n");
  auto not_an_integer = pai::azure::replace_integer_at(text, 3, 14, 1);
  ASSERT_FALSE(not_an_integer.ok());
  EXPECT_EQ(not_an_integer.error().message, "no integer at line 3, column 14");
  auto no_line = pai::azure::replace_integer_at(text, 9, 1, 1);
  ASSERT_FALSE(no_line.ok());
  EXPECT_EQ(no_line.error().message, "no line 9");
}

}  // namespace
