#pragma once
// What the use cases' unit tests share: a cluster directory of the test's own
// (an example copied to a temporary directory, with an azure: section when the
// test wants a hybrid cluster), its hosts read as a front end reads them, the
// scripted SSH transport and http::FakeClient as the use cases' deps, ARM's
// answers for a cluster whose Azure resources do not exist yet, and the events
// a use case reported.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "deploy/install.h"
#include "deploy/usecase.h"
#include "inventory/inventory.h"
#include "support/fake_client.h"
#include "support/scripted_transport.h"

namespace pai::deploy::usecase_test {

namespace fs = std::filesystem;

inline const std::string kSubscription = "00000000-0000-0000-0000-000000000001";
inline const std::string kArm = "https://arm.test";
inline const std::string kLogin = "https://login.test";
inline const std::string kResourceGroup =
    "/subscriptions/" + kSubscription + "/resourceGroups/pai-rg";

// A cluster directory of the test's own: examples/clusters/NAME copied into a
// temporary directory, removed with the object.
class TempCluster {
 public:
  explicit TempCluster(const std::string& example = "quickstart") {
    char tmpl[] = "/tmp/paictl-usecase-XXXXXX";
    root_ = ::mkdtemp(tmpl);
    dir_ = root_ + "/cluster";
    std::string src = PAI_SOURCE_DIR;
    src += "/examples/clusters/";
    src += example;
    fs::copy(src, dir_, fs::copy_options::recursive);
  }
  ~TempCluster() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  TempCluster(const TempCluster&) = delete;
  TempCluster& operator=(const TempCluster&) = delete;

  const std::string& dir() const { return dir_; }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string read(const std::string& name) const {
    std::ifstream in(path(name), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
  }
  void append(const std::string& name, const std::string& text) const {
    write(name, read(name) + text);
  }
  // config.yaml's azure: section (one pool "gpu" of `count` VMs of the
  // layout's k80-machine), with its secret and SSH key files: a hybrid cluster.
  void make_hybrid(int count = 2) const {
    write("azure-secret", "sp-secret\n");
    ::chmod(path("azure-secret").c_str(), 0600);
    write("id.pub", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample paictl-test\n");
    append("config.yaml",
           "azure:\n"
           "  subscription: " +
               kSubscription +
               "\n"
               "  tenant: contoso.onmicrosoft.com\n"
               "  client-id: 11111111-2222-3333-4444-555555555555\n"
               "  client-secret-file: azure-secret\n"
               "  location: eastus\n"
               "  resource-group: pai-rg\n"
               "  address-space: 10.224.0.0/16\n"
               "  ssh-public-key-file: id.pub\n"
               "  allowed-ssh-from: [203.0.113.10/32]\n"
               "  pools:\n"
               "    - name: gpu\n"
               "      sku: Standard_ND96asr_v4\n"
               "      count: " +
               std::to_string(count) +
               "\n"
               "      machine-type: k80-machine\n");
  }

 private:
  std::string root_, dir_;
};

// The hosts of a cluster directory as a front end reads them (no SSH config
// of the machine's).
inline HostsLoader loader_of(const std::string& dir) {
  return [dir]() -> util::Result<ClusterHosts> {
    inventory::InventoryOptions io;
    io.paths = {dir};
    io.ssh_config = "none";
    ClusterHosts h;
    h.inventory = inventory::build_inventory(io);
    if (h.inventory.input_error)
      return util::Error{"the inventory has errors", {}, util::Error::Kind::Input};
    return h;
  };
}

// The use cases own their transport; this one hands the test's scripted one on.
class SharedTransport : public remote::Transport {
 public:
  explicit SharedTransport(remote::Transport& t) : t_(t) {}
  remote::ExecResult exec(const remote::Target& target, const remote::ExecRequest& r) override {
    return t_.exec(target, r);
  }
  std::unique_ptr<remote::Connection> connect(const remote::Target& target) override {
    return t_.connect(target);
  }

 private:
  remote::Transport& t_;
};

inline InstallDeps deps_of(const std::string& dir, testing::ScriptedTransport& ssh,
                           http::Client* arm = nullptr) {
  InstallDeps d;
  d.load_hosts = loader_of(dir);
  d.transport = [&ssh](const remote::Secret&) -> std::unique_ptr<remote::Transport> {
    return std::make_unique<SharedTransport>(ssh);
  };
  d.azure.http = arm;
  d.azure.clock.now = [] { return 0.0; };
  d.azure.clock.sleep = [](double) {};
  d.azure.getenv = [](const char*) -> const char* { return nullptr; };
  return d;
}

inline AzureAccess test_azure_access() {
  return {kArm, kLogin, ""};
}

// ARM as it answers for a cluster none of whose resources exist yet: a token,
// and 404 for the resource group, the NSG, the VNet and the pool's scale set.
inline void arm_has_nothing(http::FakeClient& arm) {
  arm.add("POST", "/contoso.onmicrosoft.com/oauth2/v2.0/token", 200,
          R"({"access_token": "arm-token", "token_type": "Bearer", "expires_in": 3600})");
  const std::string missing = R"({"error": {"code": "ResourceNotFound", "message": "not found"}})";
  for (const std::string& p :
       {kResourceGroup,
        kResourceGroup + "/providers/Microsoft.Network/networkSecurityGroups/pai-nsg",
        kResourceGroup + "/providers/Microsoft.Network/virtualNetworks/pai-vnet",
        kResourceGroup + "/providers/Microsoft.Compute/virtualMachineScaleSets/pai-gpu"})
    arm.add("GET", p, 404, missing);
}

// ARM's VMs of the pool "gpu" (pai-gpu000000, ...) with their addresses
// 10.224.1.4, ...: the VMs of an applied cluster.
inline void arm_has_vms(http::FakeClient& arm, int count) {
  std::string vmss =
      kResourceGroup + "/providers/Microsoft.Compute/virtualMachineScaleSets/pai-gpu";
  nlohmann::json vms = nlohmann::json::array(), nics = nlohmann::json::array();
  for (int i = 0; i < count; ++i) {
    std::string id = vmss + "/virtualMachines/" + std::to_string(i);
    char name[32];
    std::snprintf(name, sizeof name, "pai-gpu%06d", i);
    vms.push_back({{"id", id},
                   {"instanceId", std::to_string(i)},
                   {"properties", {{"osProfile", {{"computerName", name}}}}}});
    nics.push_back({{"properties",
                     {{"virtualMachine", {{"id", id}}},
                      {"ipConfigurations",
                       {{{"properties",
                          {{"primary", true},
                           {"privateIPAddress", "10.224.1." + std::to_string(4 + i)}}}}}}}}});
  }
  arm.add("GET", vmss + "/virtualMachines", 200, nlohmann::json{{"value", vms}}.dump());
  arm.add("GET", vmss + "/networkInterfaces", 200, nlohmann::json{{"value", nics}}.dump());
}

// Requests that change something in Azure.
inline size_t arm_writes(const http::FakeClient& arm) {
  size_t n = 0;
  for (const auto& r : arm.requests()) n += r.method == "PUT" || r.method == "DELETE";
  return n;
}

// The events a use case reported, and the questions it asked (answered `answer`).
struct Recorder {
  std::vector<UseCaseEvent::Kind> kinds;
  std::vector<Question::Kind> questions;
  std::vector<size_t> counts;         // UseCaseEvent::count, in order
  std::vector<std::string> warnings;  // the messages of Warning events
  Answer answer = Answer::No;
  Callbacks callbacks() {
    Callbacks cb;
    cb.on_event = [this](const UseCaseEvent& e) {
      kinds.push_back(e.kind);
      counts.push_back(e.count);
      if (e.kind == UseCaseEvent::Kind::Warning) warnings.push_back(e.message);
    };
    cb.confirm = [this](const Question& q) {
      questions.push_back(q.kind);
      return answer;
    };
    return cb;
  }
  bool saw(UseCaseEvent::Kind k) const {
    for (auto x : kinds)
      if (x == k) return true;
    return false;
  }
};

}  // namespace pai::deploy::usecase_test
