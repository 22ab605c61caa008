#include "config/azure_config.h"

#include <cctype>

#include "util/strings.h"

namespace pai::config {

const std::vector<std::string>& azure_config_keys() {
  static const std::vector<std::string> keys = {"subscription",
                                                "tenant",
                                                "client-id",
                                                "client-secret-file",
                                                "location",
                                                "resource-group",
                                                "address-space",
                                                "subnet",
                                                "admin-user",
                                                "ssh-public-key-file",
                                                "image",
                                                "allowed-ssh-from",
                                                "onprem-address-space",
                                                "pools",
                                                "tunnel-mtu",
                                                "public-ip"};
  return keys;
}

std::optional<Cidr> parse_cidr(std::string_view s) {
  auto slash = s.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto ip = s.substr(0, slash);
  auto bits = util::parse_int(s.substr(slash + 1));
  if (!bits || *bits < 0 || *bits > 32 || !util::is_ipv4(ip)) return std::nullopt;
  uint32_t v = 0;
  for (auto part : util::split(ip, '.'))
    v = (v << 8) | static_cast<uint32_t>(*util::parse_int(part));
  Cidr c;
  c.bits = static_cast<int>(*bits);
  uint32_t mask = c.bits == 0 ? 0 : ~uint32_t{0} << (32 - c.bits);
  c.base = v & mask;
  return c;
}

bool Cidr::contains(const Cidr& o) const {
  if (o.bits < bits) return false;
  uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
  return (o.base & mask) == base;
}

bool Cidr::overlaps(const Cidr& o) const {
  return contains(o) || o.contains(*this);
}

std::string Cidr::str() const {
  return std::to_string(base >> 24) + "." + std::to_string((base >> 16) & 255) + "." +
         std::to_string((base >> 8) & 255) + "." + std::to_string(base & 255) + "/" +
         std::to_string(bits);
}

std::map<std::string, std::string> azure_pools_in_layout(std::string_view text) {
  std::map<std::string, std::string> out;
  for (auto line : util::split(text, '\n')) {
    auto t = util::trim(line);
    if (t.rfind("- hostname:", 0) != 0) continue;
    auto mark = t.find("# azure pool ");
    if (mark == std::string_view::npos) continue;
    std::string name(util::trim(t.substr(11, mark - 11)));
    if (name.size() >= 2 && (name[0] == '"' || name[0] == '\''))
      name = name.substr(1, name.size() - 2);
    std::string pool(util::trim(t.substr(mark + 13)));
    if (!name.empty() && !pool.empty()) out[name] = pool;
  }
  return out;
}

std::map<std::string, std::string> site_labels(
    const AzureConfig& azure, const std::map<std::string, std::string>& pools_in_layout,
    const std::string& hostname, const std::string& hostip) {
  std::map<std::string, std::string> out;
  auto it = pools_in_layout.find(hostname);
  bool on_azure = it != pools_in_layout.end();
  if (!on_azure) {
    auto space = parse_cidr(azure.address_space);
    auto ip = parse_cidr(hostip + "/32");
    on_azure = space && ip && space->contains(*ip);
  }
  out["paictl.io/site"] = on_azure ? "azure" : "onprem";
  if (on_azure) {
    if (!azure.location.empty()) out["topology.kubernetes.io/region"] = azure.location;
    if (it != pools_in_layout.end()) out["paictl.io/azure-pool"] = it->second;
  }
  return out;
}

const AzurePool* AzureConfig::master_pool() const {
  for (const auto& p : pools)
    if (p.master) return &p;
  return nullptr;
}

bool is_infiniband_sku(std::string_view sku) {
  std::string s = util::to_lower(sku);
  if (s.rfind("standard_", 0) == 0) s = s.substr(9);
  // family letters, the vCPU count, then the feature letters up to the first '_'
  size_t i = 0;
  while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
  size_t d = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == d) return false;
  for (; i < s.size() && s[i] != '_' && s[i] != '-'; ++i)
    if (s[i] == 'r') return true;
  return false;
}

namespace {

bool is_guid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-') return false;
    } else if (!std::isxdigit(static_cast<unsigned char>(s[i]))) {
      return false;
    }
  }
  return true;
}

// Resource group names: 1-90 of letters, digits, '_', '-', '.', '(' and ')', not ending in '.'.
bool valid_resource_group(std::string_view s) {
  if (s.empty() || s.size() > 90 || s.back() == '.') return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.' &&
        c != '(' && c != ')')
      return false;
  return true;
}

// A pool name becomes part of the scale set's name and its VMs' computer names
// (Linux computer names: letters, digits and '-'); keep it short and plain.
bool valid_pool_name(std::string_view s) {
  if (s.empty() || s.size() > 15) return false;
  if (!std::islower(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::islower(static_cast<unsigned char>(c)) &&
        !std::isdigit(static_cast<unsigned char>(c)) && c != '-')
      return false;
  return s.back() != '-';
}

}  // namespace

AzureConfig load_azure_config(const Node* section, Context& ctx, const std::string& pods_subnet,
                              const std::string& service_subnet,
                              const std::string& ssh_key_file_path) {
  AzureConfig a;
  a.mark = ctx.at(section);
  if (!ctx.is_mapping(section, "azure")) return a;
  if (const Node* n = section->get("client-secret")) {
    // The value is a secret: point at it, never repeat it.
    ctx.error("A001", ctx.key_at(section, "client-secret"),
              "azure.client-secret holds a secret in config.yaml; paictl never reads it from there",
              "put the secret in a file (mode 0600) and name it with client-secret-file, or set "
              "AZURE_CLIENT_SECRET");
    (void)n;
  }
  for (const auto& p : section->pairs()) {
    const std::string& k = p.key->scalar();
    if (k == "client-secret") continue;
    bool ok = false;
    for (const auto& kk : azure_config_keys()) ok |= kk == k;
    if (!ok) {
      std::string guess = util::did_you_mean(k, azure_config_keys());
      ctx.warning("F006", ctx.at(p.key), "unknown key \"" + k + "\" in azure; paictl ignores it",
                  guess.empty() ? "the keys are listed in docs/azure.md"
                                : "did you mean \"" + guess + "\"?");
    }
  }
  auto text = [&](const char* key, std::string& field, bool required) {
    const Node* n = required ? ctx.required(section, key, "azure") : section->get(key);
    if (n)
      if (auto v = ctx.string_value(n, std::string("azure.") + key)) field = *v;
    return n;
  };
  const Node* sub = text("subscription", a.subscription, true);
  if (sub && !a.subscription.empty() && !is_guid(a.subscription))
    ctx.error(
        "A002", ctx.at(sub),
        "azure.subscription must be a subscription id (a GUID), found \"" + a.subscription + "\"",
        "az account list -o table shows the ids of your subscriptions");
  const Node* tenant = text("tenant", a.tenant, true);
  if (tenant && !a.tenant.empty() && !is_guid(a.tenant) &&
      (a.tenant.find('.') == std::string::npos || a.tenant.find('/') != std::string::npos))
    ctx.error("A002", ctx.at(tenant),
              "azure.tenant must be a tenant id (a GUID) or a domain such as "
              "contoso.onmicrosoft.com, found \"" +
                  a.tenant + "\"",
              "the tenant of the service principal");
  const Node* cid = text("client-id", a.client_id, true);
  if (cid && !a.client_id.empty() && !is_guid(a.client_id))
    ctx.error("A002", ctx.at(cid),
              "azure.client-id must be the application (client) id of a service principal, a "
              "GUID; found \"" +
                  a.client_id + "\"",
              "az ad sp list --display-name NAME --query [].appId");
  text("client-secret-file", a.client_secret_file, false);
  const Node* loc = text("location", a.location, true);
  if (loc && !a.location.empty()) {
    bool ok = true;
    for (char c : a.location)
      ok &= std::islower(static_cast<unsigned char>(c)) ||
            std::isdigit(static_cast<unsigned char>(c));
    if (!ok)
      ctx.error("A002", ctx.at(loc),
                "azure.location must be a region name such as eastus or westeurope, found \"" +
                    a.location + "\"",
                "az account list-locations --query [].name");
  }
  const Node* rg = text("resource-group", a.resource_group, true);
  if (rg && !a.resource_group.empty() && !valid_resource_group(a.resource_group))
    ctx.error(
        "A002", ctx.at(rg),
        "azure.resource-group \"" + a.resource_group + "\" is not a valid resource group name",
        "1-90 letters, digits, '_', '-', '.', '(' or ')', not ending in '.'");
  text("admin-user", a.admin_user, false);
  // Without it, the public key beside ssh_key_file_path (KEY.pub) is used.
  text("ssh-public-key-file", a.ssh_public_key_file, ssh_key_file_path.empty());
  text("image", a.image, false);
  if (const Node* n = section->get("image"); n && !a.image.empty() &&
                                             a.image.rfind("/subscriptions/", 0) != 0 &&
                                             util::split(a.image, ':').size() != 4)
    ctx.error("A002", ctx.at(n),
              "azure.image must be publisher:offer:sku:version or an image resource id, found \"" +
                  a.image + "\"",
              "e.g. microsoft-dsvm:ubuntu-hpc:2204:latest or "
              "Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2:latest");

  // Address ranges.
  const Node* as = text("address-space", a.address_space, false);
  auto space = parse_cidr(a.address_space);
  if (!space || space->bits < 8 || space->bits > 29) {
    ctx.error("A003", as ? ctx.at(as) : ctx.at(section),
              "azure.address-space must be an IPv4 CIDR between /8 and /29, found \"" +
                  a.address_space + "\"",
              "e.g. address-space: 10.224.0.0/16, a range no on-prem network uses");
    space.reset();
  }
  const Node* sn = text("subnet", a.subnet, false);
  if (a.subnet.empty() && space) {
    Cidr first = *space;
    if (first.bits < 24) first.bits = 24;
    a.subnet = first.str();
  }
  auto subnet = parse_cidr(a.subnet);
  if (sn && (!subnet || subnet->bits > 29)) {
    ctx.error("A003", ctx.at(sn),
              "azure.subnet must be an IPv4 CIDR of at most /29, found \"" + a.subnet + "\"",
              "e.g. subnet: 10.224.1.0/24 inside address-space");
  } else if (sn && space && subnet && !space->contains(*subnet)) {
    ctx.error("A003", ctx.at(sn),
              "azure.subnet " + a.subnet + " is not inside address-space " + a.address_space,
              "pick a subnet inside the virtual network's range");
  }
  for (auto [what, range] : {std::pair{"kube_pods_subnet", pods_subnet},
                             std::pair{"kube_service_addresses", service_subnet}}) {
    auto r = parse_cidr(range);
    if (space && r && space->overlaps(*r))
      ctx.error("A003", as ? ctx.at(as) : ctx.at(section),
                "azure.address-space " + a.address_space + " overlaps " + what + " " + range,
                "the VMs' addresses must not overlap the pods' or the services' ranges");
  }
  auto cidr_list = [&](const char* key, std::vector<std::string>& out) {
    const Node* n = section->get(key);
    if (!n || !ctx.is_sequence(n, std::string("azure.") + key)) return;
    size_t i = 0;
    for (const Node* item : n->items()) {
      std::string what = std::string("azure.") + key + "[" + std::to_string(i++) + "]";
      auto v = ctx.string_value(item, what);
      if (!v) continue;
      std::string c = *v;
      if (util::is_ipv4(c)) c += "/32";
      auto parsed = parse_cidr(c);
      if (!parsed) {
        ctx.error("A003", ctx.at(item),
                  what + " must be an IPv4 address or CIDR, found \"" + *v + "\"",
                  "e.g. 203.0.113.10/32");
        continue;
      }
      if (std::string(key) == "allowed-ssh-from" && parsed->bits == 0)
        ctx.warning("A004", ctx.at(item),
                    "azure.allowed-ssh-from admits SSH from the whole internet (" + c + ")",
                    "admit only the operator's address, e.g. 203.0.113.10/32");
      if (std::string(key) == "onprem-address-space" && space && space->overlaps(*parsed))
        ctx.error("A003", ctx.at(item),
                  what + " " + c + " overlaps azure.address-space " + a.address_space,
                  "the two sites' networks must not overlap: routed between them, one address "
                  "would mean two hosts");
      out.push_back(c);
    }
  };
  cidr_list("allowed-ssh-from", a.allowed_ssh_from);
  cidr_list("onprem-address-space", a.onprem_address_space);

  // The link between the sites: the pods' VXLAN MTU is this less 50.
  if (const Node* n = section->get("tunnel-mtu"))
    if (auto v = ctx.int_value(n, "azure.tunnel-mtu")) {
      if (*v < 1280 || *v > 9000)
        ctx.error("A003", ctx.at(n),
                  "azure.tunnel-mtu must be 1280..9000, found " + std::to_string(*v),
                  "the MTU of the link between the sites: 1400 for an Azure VPN Gateway "
                  "(Microsoft's guidance), 1500 for ExpressRoute");
      else
        a.tunnel_mtu = static_cast<int>(*v);
    }
  if (const Node* n = section->get("public-ip"))
    if (auto v = ctx.bool_value(n, "azure.public-ip")) a.public_ip = *v;

  // Pools.
  const Node* pools = ctx.required(section, "pools", "azure");
  if (pools && ctx.is_sequence(pools, "azure.pools")) {
    size_t i = 0;
    for (const Node* item : pools->items()) {
      std::string where = "azure.pools[" + std::to_string(i++) + "]";
      if (!ctx.is_mapping(item, where)) continue;
      ctx.unknown_keys(item, {"name", "role", "sku", "count", "machine-type"}, where);
      AzurePool pool;
      pool.mark = ctx.at(item);
      if (const Node* n = ctx.required(item, "name", where))
        if (auto v = ctx.string_value(n, where + ".name")) {
          pool.name = *v;
          if (!valid_pool_name(pool.name))
            ctx.error("A005", ctx.at(n),
                      where + ".name \"" + pool.name + "\" is not a valid pool name",
                      "1-15 lower-case letters, digits or '-', starting with a letter: it names "
                      "the scale set and its VMs");
          for (const auto& other : a.pools)
            if (other.name == pool.name)
              ctx.error("A005", ctx.at(n), "two pools are named \"" + pool.name + "\"",
                        "each pool is one scale set; give each its own name");
        }
      if (const Node* n = ctx.required(item, "sku", where))
        if (auto v = ctx.string_value(n, where + ".sku")) {
          pool.sku = *v;
          if (pool.sku.rfind("Standard_", 0) != 0)
            ctx.error("A005", ctx.at(n),
                      where +
                          ".sku must be an Azure VM size such as Standard_ND96asr_v4, found \"" +
                          pool.sku + "\"",
                      "az vm list-skus --location LOCATION --resource-type virtualMachines");
        }
      if (const Node* n = ctx.required(item, "count", where))
        if (pool.count_mark = ctx.at(n); auto v = ctx.int_value(n, where + ".count")) {
          pool.count = *v;
          if (*v < 0 || *v > 1000)
            ctx.error("A005", ctx.at(n),
                      where + ".count must be 0..1000, found " + std::to_string(*v),
                      "a scale set holds at most 1000 VMs");
          else if (*v > 100 && is_infiniband_sku(pool.sku))
            ctx.error("A005", ctx.at(n),
                      where + ".count " + std::to_string(*v) +
                          " exceeds 100, the size of one "
                          "placement group, which InfiniBand between the VMs needs",
                      "split the pool into several pools of at most 100 VMs");
        }
      if (const Node* n = ctx.required(item, "machine-type", where)) {
        pool.machine_type_mark = ctx.at(n);
        if (auto v = ctx.string_value(n, where + ".machine-type")) pool.machine_type = *v;
      }
      if (const Node* n = item->get("role"))
        if (auto v = ctx.string_value(n, where + ".role")) {
          if (*v == "master") {
            pool.master = true;
            if (const AzurePool* other = a.master_pool())
              ctx.error("A005", ctx.at(n),
                        where + " is a second master pool (\"" + other->name + "\" is one)",
                        "a cluster has one master: give role: master to one pool only");
            if (pool.count != 1)
              ctx.error("A005", ctx.at(n),
                        where + " has role: master but count " + std::to_string(pool.count) +
                            "; the master pool is one VM",
                        "set count: 1 (paictl installs one control-plane node)");
          } else if (*v != "worker") {
            ctx.error("A005", ctx.at(n),
                      where + ".role must be worker or master, found \"" + *v + "\"",
                      "role: master puts the cluster's master on this pool's one VM");
          }
        }
      a.pools.push_back(std::move(pool));
    }
  }
  return a;
}

}  // namespace pai::config
