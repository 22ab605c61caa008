#include "azure/provider.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "util/strings.h"

namespace pai::azure {

namespace {

using nlohmann::json;
using util::Error;
using util::Result;

std::string base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += t[v & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

std::string lower_nospace(std::string s) {
  std::string out;
  for (char c : s)
    if (c != ' ') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string scalar_text(const json& j) {
  return j.is_string() ? j.get<std::string>() : j.dump();
}

// Differences where `want` (what paictl sends) is not what `have` (what ARM
// shows) holds: keys ARM never returns (customData, adminPassword) and keys
// ARM adds (ids, etags, defaults) are not differences.
void diff(const json& want, const json& have, const std::string& path,
          std::vector<std::string>& out) {
  if (want.is_object()) {
    if (!have.is_object()) {
      out.push_back(path + ": missing");
      return;
    }
    for (auto it = want.begin(); it != want.end(); ++it) {
      const std::string& k = it.key();
      if (k == "customData" || k == "adminPassword") continue;
      std::string p = path.empty() ? k : path + "." + k;
      if (!have.contains(k)) {
        out.push_back(p + ": " + (it->is_primitive() ? scalar_text(*it) : "set") + " (not set)");
        continue;
      }
      if (k == "location" && it->is_string() && have[k].is_string()) {
        if (lower_nospace(it->get<std::string>()) != lower_nospace(have[k].get<std::string>()))
          out.push_back(p + ": " + scalar_text(have[k]) + " -> " + scalar_text(*it));
        continue;
      }
      diff(*it, have[k], p, out);
    }
    return;
  }
  if (want.is_array()) {
    if (!have.is_array() || have.size() != want.size()) {
      out.push_back(path + ": " + std::to_string(have.is_array() ? have.size() : 0) + " -> " +
                    std::to_string(want.size()) + " entries");
      return;
    }
    for (size_t i = 0; i < want.size(); ++i)
      diff(want[i], have[i], path + "[" + std::to_string(i) + "]", out);
    return;
  }
  bool same = want == have;
  if (!same && want.is_number() && have.is_number())
    same = want.get<double>() == have.get<double>();
  if (!same) out.push_back(path + ": " + scalar_text(have) + " -> " + scalar_text(want));
}

json tags(const Spec& s, const std::string& pool = "") {
  json t = {{kClusterTag, s.cluster}};
  if (!pool.empty()) t["paictl.pool"] = pool;
  return t;
}

std::string rg_path(const Spec& s) {
  return "/subscriptions/" + s.azure.subscription + "/resourceGroups/" + s.azure.resource_group;
}

std::string vmss_name(const Spec& s, const std::string& pool) {
  return s.cluster + "-" + pool;
}

}  // namespace

bool needs_gpu_driver_extension(std::string_view sku, std::string_view image) {
  // GPU sizes are the N family: Standard_NC*, ND*, NV*, NG*.
  bool gpu = sku.rfind("Standard_N", 0) == 0;
  std::string img = util::to_lower(image);
  // Microsoft's HPC images (microsoft-dsvm:ubuntu-hpc, almalinux-hpc) carry the driver.
  bool hpc = img.find("-hpc") != std::string::npos || img.find(":hpc") != std::string::npos;
  return gpu && !hpc;
}

std::string_view to_string(Action a) {
  switch (a) {
    case Action::Create:
      return "create";
    case Action::Update:
      return "update";
    case Action::None:
      return "none";
    case Action::Delete:
      return "delete";
  }
  return "?";
}

bool Plan::has_changes() const {
  for (const auto& c : changes)
    if (c.action != Action::None) return true;
  return false;
}

std::string cloud_init() {
  return "#cloud-config\n"
         "# Written by paictl: prepares the host for paictl install. No secrets here:\n"
         "# customData is readable on the VM and cannot be changed after creation.\n"
         "write_files:\n"
         "  - path: /etc/modules-load.d/paictl.conf\n"
         "    content: |\n"
         "      overlay\n"
         "      br_netfilter\n"
         "  - path: /etc/sysctl.d/90-paictl.conf\n"
         "    content: |\n"
         "      net.bridge.bridge-nf-call-iptables = 1\n"
         "      net.bridge.bridge-nf-call-ip6tables = 1\n"
         "      net.ipv4.ip_forward = 1\n"
         "runcmd:\n"
         "  - [modprobe, overlay]\n"
         "  - [modprobe, br_netfilter]\n"
         "  - [sysctl, --system]\n"
         "  - [swapoff, -a]\n";
}

std::vector<Resource> desired_resources(const Spec& s) {
  const auto& a = s.azure;
  std::vector<Resource> out;
  std::string rg = rg_path(s);
  out.push_back({"resource group", a.resource_group, rg, kResourcesApi, 0, "",
                 json{{"location", a.location}, {"tags", tags(s)}}});

  std::string nsg_name = s.cluster + "-nsg";
  std::string nsg_id = rg + "/providers/Microsoft.Network/networkSecurityGroups/" + nsg_name;
  json rules = json::array();
  auto rule = [&](const std::string& name, int prio, const std::string& proto,
                  const std::vector<std::string>& from, const std::vector<std::string>& ports) {
    json p = {{"protocol", proto},
              {"sourcePortRange", "*"},
              {"destinationAddressPrefix", "VirtualNetwork"},
              {"access", "Allow"},
              {"priority", prio},
              {"direction", "Inbound"}};
    if (from.size() == 1)
      p["sourceAddressPrefix"] = from[0];
    else
      p["sourceAddressPrefixes"] = from;
    if (ports.size() == 1)
      p["destinationPortRange"] = ports[0];
    else
      p["destinationPortRanges"] = ports;
    rules.push_back({{"name", name}, {"properties", p}});
  };
  if (!a.allowed_ssh_from.empty())
    rule("ssh-from-operator", 100, "Tcp", a.allowed_ssh_from, {"22"});
  if (!s.onprem_prefixes.empty()) {
    // SSH for the installer, the API server, etcd, the kubelet, NodePorts; the
    // VXLAN overlay of Calico (4789) and flannel (8472).
    rule("cluster-tcp-from-onprem", 110, "Tcp", s.onprem_prefixes,
         {"22", "6443", "2379-2380", "10250", "30000-32767"});
    rule("cluster-udp-from-onprem", 120, "Udp", s.onprem_prefixes, {"4789", "8472"});
  }
  out.push_back({"network security group", nsg_name, nsg_id, kNetworkApi, 1, "",
                 json{{"location", a.location},
                      {"tags", tags(s)},
                      {"properties", {{"securityRules", rules}}}}});

  std::string vnet_name = s.cluster + "-vnet";
  std::string vnet_id = rg + "/providers/Microsoft.Network/virtualNetworks/" + vnet_name;
  std::string subnet_id = vnet_id + "/subnets/" + s.cluster;
  out.push_back(
      {"virtual network", vnet_name, vnet_id, kNetworkApi, 1, "",
       json{{"location", a.location},
            {"tags", tags(s)},
            {"properties",
             {{"addressSpace", {{"addressPrefixes", {a.address_space}}}},
              {"subnets",
               {{{"name", s.cluster}, {"properties", {{"addressPrefix", a.subnet}}}}}}}}}});

  json image;
  if (a.image.rfind("/subscriptions/", 0) == 0) {
    image = {{"id", a.image}};
  } else {
    auto parts = util::split(a.image, ':');
    if (parts.size() == 4)
      image = {{"publisher", std::string(parts[0])},
               {"offer", std::string(parts[1])},
               {"sku", std::string(parts[2])},
               {"version", std::string(parts[3])}};
  }
  std::string custom_data = base64(cloud_init());
  for (const auto& pool : a.pools) {
    std::string name = vmss_name(s, pool.name);
    bool ib = config::is_infiniband_sku(pool.sku);
    json props = {{"orchestrationMode", "Uniform"},
                  {"overprovision", false},
                  {"upgradePolicy", {{"mode", "Manual"}}},
                  {"singlePlacementGroup", ib},
                  {"virtualMachineProfile",
                   {{"osProfile",
                     {{"computerNamePrefix", name},
                      {"adminUsername", a.admin_user},
                      {"customData", custom_data},
                      {"linuxConfiguration",
                       {{"disablePasswordAuthentication", true},
                        {"ssh",
                         {{"publicKeys",
                           {{{"path", "/home/" + a.admin_user + "/.ssh/authorized_keys"},
                             {"keyData", s.ssh_public_key}}}}}}}}}},
                    {"storageProfile",
                     {{"imageReference", image},
                      {"osDisk",
                       {{"createOption", "FromImage"},
                        {"caching", "ReadWrite"},
                        {"managedDisk", {{"storageAccountType", "Premium_LRS"}}}}}}},
                    {"networkProfile",
                     {{"networkInterfaceConfigurations",
                       {{{"name", "nic0"},
                         {"properties",
                          {{"primary", true},
                           {"enableAcceleratedNetworking", true},
                           {"networkSecurityGroup", {{"id", nsg_id}}},
                           {"ipConfigurations",
                            {{{"name", "ip0"},
                              {"properties",
                               {{"primary", true}, {"subnet", {{"id", subnet_id}}}}}}}}}}}}}}}}}};
    if (ib) props["platformFaultDomainCount"] = 1;
    if (a.public_ip) {
      // One Standard public address per VM: closed inbound but for the NSG's
      // rules (SSH from allowed-ssh-from only).
      props["virtualMachineProfile"]["networkProfile"]["networkInterfaceConfigurations"][0]
           ["properties"]["ipConfigurations"][0]["properties"]["publicIPAddressConfiguration"] = {
               {"name", "pip0"},
               {"sku", {{"name", "Standard"}, {"tier", "Regional"}}},
               {"properties", {{"idleTimeoutInMinutes", 15}}}};
    }
    if (needs_gpu_driver_extension(pool.sku, a.image)) {
      // An image without NVIDIA's driver (not an HPC image): Microsoft's NVIDIA
      // GPU Driver Extension installs it when the VM is created.
      props["virtualMachineProfile"]["extensionProfile"] = {
          {"extensions",
           {{{"name", "NvidiaGpuDriverLinux"},
             {"properties",
              {{"publisher", "Microsoft.HpcCompute"},
               {"type", "NvidiaGpuDriverLinux"},
               {"typeHandlerVersion", "1.6"},
               {"autoUpgradeMinorVersion", true}}}}}}};
    }
    Resource r{"scale set",
               name,
               rg + "/providers/Microsoft.Compute/virtualMachineScaleSets/" + name,
               kComputeApi,
               2,
               pool.name,
               json{{"location", a.location},
                    {"tags", tags(s, pool.name)},
                    {"sku", {{"name", pool.sku}, {"tier", "Standard"}, {"capacity", pool.count}}},
                    {"properties", props}}};
    out.push_back(std::move(r));
  }
  return out;
}

Result<Plan> plan(ArmClient& arm, const Spec& s) {
  Plan p;
  auto desired = desired_resources(s);
  std::vector<Result<ArmResponse>> got(desired.size(), Error{"not read", ""});
  // Reads are independent: one thread per resource (there are a handful).
  std::vector<std::thread> threads;
  for (size_t i = 0; i < desired.size(); ++i)
    threads.emplace_back([&, i] { got[i] = arm.get(desired[i].path, desired[i].api_version); });
  for (auto& t : threads) t.join();
  bool rg_exists = false;
  for (size_t i = 0; i < desired.size(); ++i) {
    if (!got[i].ok()) return got[i].error();
    Change c;
    c.resource = desired[i];
    if (got[i]->status == 404) {
      c.action = Action::Create;
    } else {
      if (i == 0) rg_exists = true;
      diff(desired[i].body, got[i]->body, "", c.differences);
      c.action = c.differences.empty() ? Action::None : Action::Update;
    }
    p.changes.push_back(std::move(c));
  }
  if (rg_exists) {
    // Scale sets of this cluster that no pool names any more.
    std::set<std::string> wanted;
    for (const auto& r : desired) wanted.insert(util::to_lower(r.path));
    auto sets =
        arm.list(rg_path(s) + "/providers/Microsoft.Compute/virtualMachineScaleSets", kComputeApi);
    if (!sets.ok()) return sets.error();
    for (const auto& v : *sets) {
      if (!v.contains("id") || !v["id"].is_string()) continue;
      std::string id = v["id"].get<std::string>();
      bool ours = v.contains("tags") && v["tags"].is_object() && v["tags"].contains(kClusterTag) &&
                  v["tags"][kClusterTag] == s.cluster;
      if (!ours || wanted.count(util::to_lower(id))) continue;
      Change c;
      c.resource = {"scale set", v.value("name", std::string()), id, kComputeApi, 2, "", json()};
      c.action = Action::Delete;
      p.changes.push_back(std::move(c));
    }
  }
  return p;
}

json plan_json(const Plan& p, const Spec& s) {
  json items = json::array();
  for (const auto& c : p.changes)
    items.push_back({{"kind", c.resource.kind},
                     {"name", c.resource.name},
                     {"id", c.resource.path},
                     {"apiVersion", c.resource.api_version},
                     {"action", std::string(to_string(c.action))},
                     {"differences", c.differences}});
  return {{"apiVersion", "paictl.azurePlan/v1"},
          {"subscription", s.azure.subscription},
          {"resourceGroup", s.azure.resource_group},
          {"location", s.azure.location},
          {"changes", p.has_changes()},
          {"resources", items}};
}

Result<ApplyResult> apply(ArmClient& arm, const Plan& p, const Progress& progress) {
  ApplyResult out;
  std::mutex mu;
  std::vector<std::string> errors;
  auto say = [&](const std::string& line) {
    if (!progress) return;
    std::lock_guard<std::mutex> l(mu);
    progress(line);
  };
  auto run = [&](const Change& c) {
    std::string what = c.resource.kind + " " + c.resource.name;
    if (c.action == Action::None) {
      std::lock_guard<std::mutex> l(mu);
      out.unchanged++;
      return;
    }
    say(std::string(c.action == Action::Create   ? "creating "
                    : c.action == Action::Update ? "updating "
                                                 : "deleting ") +
        what);
    if (c.action == Action::Delete) {
      auto r = arm.remove(c.resource.path, c.resource.api_version);
      std::lock_guard<std::mutex> l(mu);
      if (!r.ok())
        errors.push_back(r.error().message);
      else
        out.deleted++;
      return;
    }
    std::vector<http::Header> extra;
    // Create-only: a resource that appeared since the plan is not overwritten.
    if (c.action == Action::Create) extra.push_back({"If-None-Match", "*"});
    auto r = arm.put(c.resource.path, c.resource.api_version, c.resource.body, extra);
    std::lock_guard<std::mutex> l(mu);
    if (!r.ok()) {
      errors.push_back(r.error().message);
      return;
    }
    (c.action == Action::Create ? out.created : out.updated)++;
    if (progress) progress(what + ": " + (c.action == Action::Create ? "created" : "updated"));
  };
  // Level by level; within a level concurrently. Deletions last, scale sets first.
  for (int level = 0; level <= 2; ++level) {
    std::vector<std::thread> threads;
    for (const auto& c : p.changes)
      if (c.resource.level == level && c.action != Action::Delete)
        threads.emplace_back([&, cp = &c] { run(*cp); });
    for (auto& t : threads) t.join();
    if (!errors.empty()) break;
  }
  if (errors.empty()) {
    std::vector<std::thread> threads;
    for (const auto& c : p.changes)
      if (c.action == Action::Delete) threads.emplace_back([&, cp = &c] { run(*cp); });
    for (auto& t : threads) t.join();
  }
  if (!errors.empty())
    return Error{util::join(errors, "; "),
                 "what succeeded stays; paictl install plans again from what Azure shows"};
  return out;
}

Result<std::vector<Machine>> list_machines(ArmClient& arm, const Spec& s) {
  std::vector<Machine> out;
  for (const auto& pool : s.azure.pools) {
    std::string base = rg_path(s) + "/providers/Microsoft.Compute/virtualMachineScaleSets/" +
                       vmss_name(s, pool.name);
    auto vms = arm.list(base + "/virtualMachines", kComputeApi);
    if (!vms.ok()) return vms.error();
    auto nics = arm.list(base + "/networkInterfaces", kNetworkApi);
    if (!nics.ok()) return nics.error();
    std::map<std::string, std::string> ip_of;  // lower-case VM id -> primary private IP
    for (const auto& n : *nics) {
      try {
        std::string vm =
            util::to_lower(n.at("properties").at("virtualMachine").at("id").get<std::string>());
        for (const auto& ipc : n.at("properties").at("ipConfigurations")) {
          const auto& p = ipc.at("properties");
          if (p.contains("privateIPAddress") && (ip_of.count(vm) == 0 || p.value("primary", false)))
            ip_of[vm] = p["privateIPAddress"].get<std::string>();
        }
      } catch (const json::exception&) {
        continue;  // a NIC without a VM or addresses (still being created)
      }
    }
    for (const auto& v : *vms) {
      Machine m;
      m.pool = pool.name;
      m.machine_type = pool.machine_type;
      m.master = pool.master;
      m.instance_id = v.value("instanceId", std::string());
      std::string id = util::to_lower(v.value("id", std::string()));
      if (v.contains("properties") && v["properties"].contains("osProfile"))
        m.hostname =
            util::to_lower(v["properties"]["osProfile"].value("computerName", std::string()));
      if (auto it = ip_of.find(id); it != ip_of.end()) m.ip = it->second;
      if (m.hostname.empty() || m.ip.empty()) continue;
      out.push_back(std::move(m));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Machine& a, const Machine& b) { return a.hostname < b.hostname; });
  return out;
}

util::Result<std::string> update_layout(const std::string& text,
                                        const std::vector<Machine>& machines) {
  std::vector<std::string> lines;
  {
    size_t start = 0;
    while (start <= text.size()) {
      size_t nl = text.find('\n', start);
      if (nl == std::string::npos) {
        if (start < text.size()) lines.push_back(text.substr(start));
        break;
      }
      lines.push_back(text.substr(start, nl - start));
      start = nl + 1;
    }
  }
  auto indent_of = [](const std::string& l) { return l.find_first_not_of(' '); };
  auto blank = [&](const std::string& l) {
    size_t i = indent_of(l);
    return i == std::string::npos || l[i] == '#';
  };
  size_t key = lines.size();
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].rfind("machine-list:", 0) == 0) key = i;
  if (key == lines.size()) return util::Error{"layout.yaml has no top-level machine-list", {}};
  size_t end = key + 1;  // one past the last line of the block
  size_t last = key;
  for (size_t i = key + 1; i < lines.size(); ++i) {
    if (blank(lines[i])) continue;
    size_t ind = indent_of(lines[i]);
    if (ind == 0 && lines[i][0] != '-') break;
    last = i;
  }
  end = last + 1;
  // The indentation of the list's items ("  - hostname:" or "- hostname:").
  std::string item_indent = "  ";
  for (size_t i = key + 1; i < end; ++i)
    if (!blank(lines[i]) && lines[i][indent_of(lines[i])] == '-') {
      item_indent = std::string(indent_of(lines[i]), ' ');
      break;
    }
  // Drop the items paictl wrote for Azure before.
  std::vector<std::string> kept;
  for (size_t i = key + 1; i < end;) {
    bool ours = !blank(lines[i]) && lines[i].find("# azure pool ") != std::string::npos &&
                lines[i][indent_of(lines[i])] == '-';
    if (!ours) {
      kept.push_back(lines[i]);
      ++i;
      continue;
    }
    size_t ind = indent_of(lines[i]);
    ++i;
    while (i < end && (blank(lines[i]) || indent_of(lines[i]) > ind)) ++i;
  }
  while (!kept.empty() && blank(kept.back()) && util::trim(kept.back()).empty()) kept.pop_back();
  std::string inner = item_indent + "  ";
  for (const auto& m : machines) {
    kept.push_back(item_indent + "- hostname: " + m.hostname + "  # azure pool " + m.pool);
    kept.push_back(inner + "hostip: " + m.ip);
    kept.push_back(inner + "machine-type: " + m.machine_type);
    kept.push_back(inner + (m.master ? "pai-master: \"true\"" : "pai-worker: \"true\""));
  }
  std::string out;
  for (size_t i = 0; i <= key; ++i) out += lines[i] + "\n";
  for (const auto& l : kept) out += l + "\n";
  for (size_t i = end; i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

Result<json> scale_pool(ArmClient& arm, const Spec& s, const std::string& pool, int64_t count) {
  Spec changed = s;
  bool found = false;
  for (auto& p : changed.azure.pools)
    if (p.name == pool) {
      p.count = count;
      found = true;
    }
  if (!found) return Error{"no pool named " + pool, "the pools are listed under azure.pools"};
  for (const auto& r : desired_resources(changed))
    if (r.kind == "scale set" && r.pool == pool) return arm.put(r.path, r.api_version, r.body);
  return Error{"no scale set for pool " + pool, ""};
}

std::string machine_path(const Spec& s, const Machine& m) {
  return rg_path(s) + "/providers/Microsoft.Compute/virtualMachineScaleSets/" +
         vmss_name(s, m.pool) + "/virtualMachines/" + m.instance_id;
}

Result<std::vector<std::string>> delete_machines(ArmClient& arm, const Spec& s,
                                                 const std::vector<Machine>& machines,
                                                 const Progress& progress) {
  std::mutex mu;
  std::vector<std::string> deleted, errors;
  std::vector<std::thread> threads;
  for (const auto& m : machines) {
    if (m.instance_id.empty()) {
      errors.push_back(m.hostname + ": no instance id");
      continue;
    }
    threads.emplace_back([&, m] {
      std::string path = machine_path(s, m);
      if (progress) {
        std::lock_guard<std::mutex> l(mu);
        progress("deleting VM " + m.hostname + " (" + vmss_name(s, m.pool) + ", instance " +
                 m.instance_id + ")");
      }
      auto r = arm.remove(path, kComputeApi);
      std::lock_guard<std::mutex> l(mu);
      if (!r.ok()) {
        errors.push_back(r.error().message);
        return;
      }
      deleted.push_back(path);
      if (progress) progress("VM " + m.hostname + ": deleted, with its NIC and OS disk");
    });
  }
  for (auto& t : threads) t.join();
  std::sort(deleted.begin(), deleted.end());
  if (!errors.empty())
    return Error{util::join(errors, "; ") +
                     (deleted.empty() ? "" : " (deleted: " + util::join(deleted, ", ") + ")"),
                 "paictl node remove --azure again deletes what is left"};
  return deleted;
}

util::Result<std::string> replace_integer_at(const std::string& text, uint32_t line,
                                             uint32_t column, int64_t value) {
  size_t pos = 0;
  for (uint32_t l = 1; l < line && pos != std::string::npos; ++l) {
    pos = text.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  if (pos == std::string::npos || line == 0 || column == 0)
    return util::Error{"no line " + std::to_string(line), {}};
  pos += column - 1;
  size_t end = pos;
  if (end < text.size() && (text[end] == '-' || text[end] == '+')) ++end;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  if (end == pos || pos >= text.size())
    return util::Error{
        "no integer at line " + std::to_string(line) + ", column " + std::to_string(column), {}};
  return text.substr(0, pos) + std::to_string(value) + text.substr(end);
}

Result<ResetResult> reset(ArmClient& arm, const Spec& s, const Progress& progress) {
  ResetResult out;
  std::string rg = rg_path(s);
  auto g = arm.get(rg, kResourcesApi);
  if (!g.ok()) return g.error();
  if (g->status == 404) return out;
  auto all = arm.list(rg + "/resources", kResourcesApi);
  if (!all.ok()) return all.error();
  auto ours = [&](const json& r) {
    return r.contains("tags") && r["tags"].is_object() && r["tags"].contains(kClusterTag) &&
           r["tags"][kClusterTag] == s.cluster;
  };
  // Dependents first: scale sets hold NICs in the VNet and the NSG.
  // Two rounds, each concurrently: the scale sets, then what only they used.
  const std::vector<std::pair<std::string, std::string>> order = {
      {"microsoft.compute/virtualmachinescalesets", kComputeApi},
      {"microsoft.network/publicipaddresses", kNetworkApi},
      {"microsoft.network/virtualnetworks", kNetworkApi},
      {"microsoft.network/networksecuritygroups", kNetworkApi}};
  auto api_of = [&](const std::string& t) {
    for (const auto& o : order)
      if (o.first == t) return o.second;
    return std::string();
  };
  std::vector<std::string> errors;
  size_t others = 0;
  for (int round = 0; round < 2; ++round) {
    std::vector<std::thread> threads;
    std::mutex mu;
    for (const auto& r : *all) {
      std::string t = util::to_lower(r.value("type", std::string()));
      std::string api = api_of(t);
      if (api.empty() || (round == 0) != (t == order[0].first)) continue;
      std::string id = r.value("id", std::string());
      if (!ours(r)) continue;
      threads.emplace_back([&, id, api] {
        if (progress) {
          std::lock_guard<std::mutex> l(mu);
          progress("deleting " + id);
        }
        auto d = arm.remove(id, api);
        std::lock_guard<std::mutex> l(mu);
        if (d.ok())
          out.deleted.push_back(id);
        else
          errors.push_back(d.error().message);
      });
    }
    for (auto& t : threads) t.join();
    if (!errors.empty()) break;
  }
  for (const auto& r : *all) {
    std::string t = util::to_lower(r.value("type", std::string()));
    bool known = std::any_of(order.begin(), order.end(), [&](auto& o) { return o.first == t; });
    if (!ours(r) || !known) {
      ++others;
      out.kept.push_back(r.value("id", std::string()) + ": not created by cluster " + s.cluster);
    }
  }
  if (!errors.empty()) return Error{util::join(errors, "; "), "run paictl reset --azure again"};
  bool rg_ours = g->body.is_object() && ours(g->body);
  if (rg_ours && others == 0) {
    if (progress) progress("deleting " + rg);
    auto d = arm.remove(rg, kResourcesApi);
    if (!d.ok()) return d.error();
    out.deleted.push_back(rg);
  } else {
    out.kept.push_back(rg + ": " +
                       (rg_ours ? "holds resources paictl did not create"
                                : "not created by cluster " + s.cluster));
  }
  return out;
}

}  // namespace pai::azure
