#include "facts/host_facts.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "util/json.h"

namespace pai::facts {

using nlohmann::json;

bool HostFacts::has(const std::string& section) const {
  return std::find(sections.begin(), sections.end(), section) != sections.end() &&
         section != stuck_in;
}

const PathFacts* HostFacts::path(const std::string& p) const {
  for (const auto& x : paths)
    if (x.path == p) return &x;
  return nullptr;
}

bool HostFacts::running(const std::string& process) const {
  return std::find(processes.begin(), processes.end(), process) != processes.end();
}

bool HostFacts::is_gpu_host() const {
  return nvidia.smi_present || nvidia.pci_gpus > 0 || !gpus.empty();
}

json to_json(const HostFacts& f) {
  json gpus = json::array();
  for (const auto& g : f.gpus)
    gpus.push_back({{"index", g.index},
                    {"name", g.name},
                    {"memory_mib", g.memory_mib},
                    {"bus_id", g.bus_id},
                    {"uuid", g.uuid}});
  json ifaces = json::array();
  for (const auto& i : f.interfaces)
    ifaces.push_back(
        {{"interface", i.interface}, {"address", i.address}, {"prefix", i.prefix}, {"v6", i.v6}});
  json disks = json::array();
  for (const auto& d : f.disks)
    disks.push_back({{"path", d.path},
                     {"checked", d.checked},
                     {"mount_point", d.mount_point},
                     {"total_bytes", d.total_bytes},
                     {"available_bytes", d.available_bytes}});
  json listening = json::array();
  for (const auto& l : f.listening)
    listening.push_back({{"address", l.address}, {"port", l.port}, {"v6", l.v6}});
  json paths = json::array();
  for (const auto& p : f.paths)
    paths.push_back({{"path", p.path},
                     {"exists", p.exists},
                     {"directory", p.directory},
                     {"readable", p.readable},
                     {"entries", p.entries},
                     {"sample", p.sample}});
  json swapdev = json::array();
  for (const auto& d : f.swap.devices)
    swapdev.push_back({{"name", d.name}, {"type", d.type}, {"size_bytes", d.size_bytes}});
  json rtbin = json::array();
  for (const auto& r : f.runtime_binaries)
    rtbin.push_back({{"runtime", r.runtime}, {"path", r.path}, {"resolved", r.resolved}});
  json dns = json::array();
  for (const auto& d : f.dns) dns.push_back({{"name", d.name}, {"resolved", d.resolved}});
  json health = json::array();
  for (const auto& h : f.nvidia.health)
    health.push_back({{"bus_id", h.bus_id},
                      {"ecc_mode", h.ecc_mode},
                      {"volatile_uncorrectable", h.volatile_uncorrectable},
                      {"aggregate_uncorrectable", h.aggregate_uncorrectable},
                      {"volatile_correctable", h.volatile_correctable},
                      {"retired_single_bit", h.retired_single_bit},
                      {"retired_double_bit", h.retired_double_bit},
                      {"retirement_pending", h.retirement_pending},
                      {"remapped_uncorrectable", h.remapped_uncorrectable},
                      {"remap_pending", h.remap_pending},
                      {"remap_failed", h.remap_failed}});
  json xids = json::array();
  for (const auto& x : f.nvidia.xids)
    xids.push_back({{"bus_id", x.bus_id}, {"code", x.code}, {"text", x.text}, {"when", x.when}});

  json j = {
      {"schema", kFactsSchema},
      {"name", f.name},
      {"address", f.address},
      {"hostname", f.hostname},
      {"roles", f.roles},
      {"machine_type", f.machine_type},
      {"collected_at", f.collected_at},
      {"privilege", f.privilege},
      {"ssh_server_address", f.ssh_server_address},
      {"machine_id", f.machine_id},
      {"ip_addresses", f.ip_addresses},
      {"interfaces", ifaces},
      {"os",
       {{"id", f.os.id},
        {"id_like", f.os.id_like},
        {"version_id", f.os.version_id},
        {"pretty_name", f.os.pretty_name}}},
      {"kernel", f.kernel},
      {"cgroup", {{"version", f.cgroup_version}, {"controllers", f.cgroup_controllers}}},
      {"cpu",
       {{"logical", f.cpu.logical},
        {"sockets", f.cpu.sockets},
        {"cores_per_socket", f.cpu.cores_per_socket},
        {"threads_per_core", f.cpu.threads_per_core},
        {"numa_nodes", f.cpu.numa_nodes},
        {"model", f.cpu.model},
        {"architecture", f.cpu.architecture}}},
      {"memory",
       {{"total_bytes", f.memory.total_bytes}, {"available_bytes", f.memory.available_bytes}}},
      {"swap", {{"total_bytes", f.swap.total_bytes}, {"devices", swapdev}}},
      {"disks", disks},
      {"listening", listening},
      {"clock",
       {{"epoch", f.clock.epoch},
        {"skew_seconds", f.clock.skew_s},
        {"ntp_known", f.clock.ntp_known},
        {"ntp_synchronized", f.clock.ntp_synchronized},
        {"ntp_source", f.clock.ntp_source}}},
      {"docker",
       {{"client_present", f.docker.client_present},
        {"daemon_reachable", f.docker.daemon_reachable},
        {"error", f.docker.error},
        {"server_version", f.docker.server_version},
        {"default_runtime", f.docker.default_runtime},
        {"runtimes", f.docker.runtimes},
        {"containers_running", f.docker.containers_running},
        {"root_dir", f.docker.root_dir},
        {"cgroup_driver", f.docker.cgroup_driver}}},
      {"daemon_json",
       {{"present", f.daemon_json.present},
        {"valid", f.daemon_json.valid},
        {"error", f.daemon_json.error},
        {"default_runtime", f.daemon_json.default_runtime},
        {"runtimes", f.daemon_json.runtimes},
        {"data_root", f.daemon_json.data_root}}},
      {"runtime_binaries", rtbin},
      {"containerd",
       {{"present", f.containerd_present},
        {"version", f.containerd_version},
        {"active", f.containerd_active},
        {"default_runtime", f.containerd_default_runtime},
        {"cri", f.containerd_cri}}},
      {"nvidia",
       {{"smi_present", f.nvidia.smi_present},
        {"smi_exit", f.nvidia.smi_exit},
        {"smi_error", f.nvidia.smi_error},
        {"driver_version", f.nvidia.driver_version},
        {"topo_matrix", f.nvidia.topo_matrix},
        {"pci_gpus", f.nvidia.pci_gpus},
        {"container_runtime_present", f.nvidia.container_runtime_present},
        {"container_runtime_version", f.nvidia.container_runtime_version},
        {"toolkit_binaries", f.nvidia.toolkit_binaries},
        {"health_read", f.nvidia.health_read},
        {"health", health},
        {"kernel_log", f.nvidia.kernel_log},
        {"xids", xids}}},
      {"gpus", gpus},
      {"paths", paths},
      {"processes", f.processes},
      {"binaries", f.binaries},
      {"kernel_modules", f.kernel_modules},
      {"sysctl",
       {{"net.ipv4.ip_forward", f.ip_forward},
        {"net.bridge.bridge-nf-call-iptables", f.bridge_nf_call_iptables}}},
      {"dns", dns},
      {"hostname_resolves", f.hostname_resolves},
      {"lscpu", f.lscpu},
      {"meminfo", f.meminfo},
      {"collection",
       {{"complete", f.complete},
        {"stuck_in", f.stuck_in},
        {"sections", f.sections},
        {"notes", f.notes}}},
  };
  if (!f.rack.empty()) j["rack"] = f.rack;
  return j;
}

namespace {

// Integers are range-checked: a facts file may hold any number, and converting
// one that does not fit (1e30 into an int) is undefined behaviour.
template <class T>
bool fits(const json& v, T& dst) {
  if (v.is_number_unsigned()) {
    uint64_t x = v.get<uint64_t>();
    if (x > static_cast<uint64_t>(std::numeric_limits<T>::max())) return false;
    dst = static_cast<T>(x);
    return true;
  }
  if (v.is_number_integer()) {
    int64_t x = v.get<int64_t>();
    if (x < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
        x > static_cast<int64_t>(std::numeric_limits<T>::max()))
      return false;
    dst = static_cast<T>(x);
    return true;
  }
  if (v.is_number_float()) {
    double x = v.get<double>();
    // Both bounds are exact doubles for int and int64_t: min is -2^k, max + 1 is 2^k.
    if (!std::isfinite(x) || x < static_cast<double>(std::numeric_limits<T>::min()) ||
        x >= -static_cast<double>(std::numeric_limits<T>::min()))
      return false;
    dst = static_cast<T>(x);
    return true;
  }
  return false;
}

template <class T>
void get_to(const json& o, const char* k, T& dst) {
  auto it = o.find(k);
  if (it == o.end() || it->is_null()) return;
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    // A wrong type or a value out of range keeps the default: facts files are read leniently.
    (void)fits(*it, dst);
  } else {
    try {
      dst = it->get<T>();
    } catch (const json::exception&) {
      // A wrong type keeps the default: facts files are read leniently.
    }
  }
}

const json& sub(const json& o, const char* k) {
  static const json empty = json::object();
  auto it = o.find(k);
  return it != o.end() && it->is_object() ? *it : empty;
}

const json& arr(const json& o, const char* k) {
  static const json empty = json::array();
  auto it = o.find(k);
  return it != o.end() && it->is_array() ? *it : empty;
}

// The mapping of a document onto the model, shared by from_json and read_facts_json.
void fill(const json& j, HostFacts& f) {
  f = HostFacts{};
  get_to(j, "name", f.name);
  get_to(j, "address", f.address);
  get_to(j, "hostname", f.hostname);
  get_to(j, "roles", f.roles);
  get_to(j, "machine_type", f.machine_type);
  get_to(j, "rack", f.rack);
  get_to(j, "collected_at", f.collected_at);
  get_to(j, "privilege", f.privilege);
  get_to(j, "ssh_server_address", f.ssh_server_address);
  get_to(j, "machine_id", f.machine_id);
  get_to(j, "ip_addresses", f.ip_addresses);
  for (const auto& i : arr(j, "interfaces")) {
    if (!i.is_object()) continue;
    InterfaceAddress a;
    get_to(i, "interface", a.interface);
    get_to(i, "address", a.address);
    get_to(i, "prefix", a.prefix);
    get_to(i, "v6", a.v6);
    f.interfaces.push_back(a);
  }
  const json& os = sub(j, "os");
  get_to(os, "id", f.os.id);
  get_to(os, "id_like", f.os.id_like);
  get_to(os, "version_id", f.os.version_id);
  get_to(os, "pretty_name", f.os.pretty_name);
  get_to(j, "kernel", f.kernel);
  get_to(sub(j, "cgroup"), "version", f.cgroup_version);
  get_to(sub(j, "cgroup"), "controllers", f.cgroup_controllers);
  const json& cpu = sub(j, "cpu");
  get_to(cpu, "logical", f.cpu.logical);
  get_to(cpu, "sockets", f.cpu.sockets);
  get_to(cpu, "cores_per_socket", f.cpu.cores_per_socket);
  get_to(cpu, "threads_per_core", f.cpu.threads_per_core);
  get_to(cpu, "numa_nodes", f.cpu.numa_nodes);
  get_to(cpu, "model", f.cpu.model);
  get_to(cpu, "architecture", f.cpu.architecture);
  get_to(sub(j, "memory"), "total_bytes", f.memory.total_bytes);
  get_to(sub(j, "memory"), "available_bytes", f.memory.available_bytes);
  get_to(sub(j, "swap"), "total_bytes", f.swap.total_bytes);
  for (const auto& d : arr(sub(j, "swap"), "devices")) {
    if (!d.is_object()) continue;
    SwapDevice s;
    get_to(d, "name", s.name);
    get_to(d, "type", s.type);
    get_to(d, "size_bytes", s.size_bytes);
    f.swap.devices.push_back(s);
  }
  for (const auto& d : arr(j, "disks")) {
    if (!d.is_object()) continue;
    DiskFacts x;
    get_to(d, "path", x.path);
    get_to(d, "checked", x.checked);
    get_to(d, "mount_point", x.mount_point);
    get_to(d, "total_bytes", x.total_bytes);
    get_to(d, "available_bytes", x.available_bytes);
    f.disks.push_back(x);
  }
  for (const auto& l : arr(j, "listening")) {
    if (!l.is_object()) continue;
    Listener x;
    get_to(l, "address", x.address);
    get_to(l, "port", x.port);
    get_to(l, "v6", x.v6);
    f.listening.push_back(x);
  }
  const json& clock = sub(j, "clock");
  get_to(clock, "epoch", f.clock.epoch);
  get_to(clock, "skew_seconds", f.clock.skew_s);
  get_to(clock, "ntp_known", f.clock.ntp_known);
  get_to(clock, "ntp_synchronized", f.clock.ntp_synchronized);
  get_to(clock, "ntp_source", f.clock.ntp_source);
  const json& d = sub(j, "docker");
  get_to(d, "client_present", f.docker.client_present);
  get_to(d, "daemon_reachable", f.docker.daemon_reachable);
  get_to(d, "error", f.docker.error);
  get_to(d, "server_version", f.docker.server_version);
  get_to(d, "default_runtime", f.docker.default_runtime);
  get_to(d, "runtimes", f.docker.runtimes);
  get_to(d, "containers_running", f.docker.containers_running);
  get_to(d, "root_dir", f.docker.root_dir);
  get_to(d, "cgroup_driver", f.docker.cgroup_driver);
  const json& dj = sub(j, "daemon_json");
  get_to(dj, "present", f.daemon_json.present);
  get_to(dj, "valid", f.daemon_json.valid);
  get_to(dj, "error", f.daemon_json.error);
  get_to(dj, "default_runtime", f.daemon_json.default_runtime);
  get_to(dj, "runtimes", f.daemon_json.runtimes);
  get_to(dj, "data_root", f.daemon_json.data_root);
  for (const auto& r : arr(j, "runtime_binaries")) {
    if (!r.is_object()) continue;
    RuntimeBinary x;
    get_to(r, "runtime", x.runtime);
    get_to(r, "path", x.path);
    get_to(r, "resolved", x.resolved);
    f.runtime_binaries.push_back(x);
  }
  get_to(sub(j, "containerd"), "present", f.containerd_present);
  get_to(sub(j, "containerd"), "version", f.containerd_version);
  get_to(sub(j, "containerd"), "active", f.containerd_active);
  get_to(sub(j, "containerd"), "default_runtime", f.containerd_default_runtime);
  get_to(sub(j, "containerd"), "cri", f.containerd_cri);
  const json& nv = sub(j, "nvidia");
  get_to(nv, "smi_present", f.nvidia.smi_present);
  get_to(nv, "smi_exit", f.nvidia.smi_exit);
  get_to(nv, "smi_error", f.nvidia.smi_error);
  get_to(nv, "driver_version", f.nvidia.driver_version);
  get_to(nv, "topo_matrix", f.nvidia.topo_matrix);
  get_to(nv, "pci_gpus", f.nvidia.pci_gpus);
  get_to(nv, "container_runtime_present", f.nvidia.container_runtime_present);
  get_to(nv, "container_runtime_version", f.nvidia.container_runtime_version);
  get_to(nv, "toolkit_binaries", f.nvidia.toolkit_binaries);
  get_to(nv, "health_read", f.nvidia.health_read);
  for (const auto& h : arr(nv, "health")) {
    if (!h.is_object()) continue;
    GpuHealth x;
    get_to(h, "bus_id", x.bus_id);
    get_to(h, "ecc_mode", x.ecc_mode);
    get_to(h, "volatile_uncorrectable", x.volatile_uncorrectable);
    get_to(h, "aggregate_uncorrectable", x.aggregate_uncorrectable);
    get_to(h, "volatile_correctable", x.volatile_correctable);
    get_to(h, "retired_single_bit", x.retired_single_bit);
    get_to(h, "retired_double_bit", x.retired_double_bit);
    get_to(h, "retirement_pending", x.retirement_pending);
    get_to(h, "remapped_uncorrectable", x.remapped_uncorrectable);
    get_to(h, "remap_pending", x.remap_pending);
    get_to(h, "remap_failed", x.remap_failed);
    f.nvidia.health.push_back(std::move(x));
  }
  get_to(nv, "kernel_log", f.nvidia.kernel_log);
  for (const auto& x : arr(nv, "xids")) {
    if (!x.is_object()) continue;
    XidEvent e;
    get_to(x, "bus_id", e.bus_id);
    get_to(x, "code", e.code);
    get_to(x, "text", e.text);
    get_to(x, "when", e.when);
    f.nvidia.xids.push_back(std::move(e));
  }
  for (const auto& g : arr(j, "gpus")) {
    if (!g.is_object()) continue;
    GpuFacts x;
    get_to(g, "index", x.index);
    get_to(g, "name", x.name);
    get_to(g, "memory_mib", x.memory_mib);
    get_to(g, "bus_id", x.bus_id);
    get_to(g, "uuid", x.uuid);
    f.gpus.push_back(x);
  }
  for (const auto& p : arr(j, "paths")) {
    if (!p.is_object()) continue;
    PathFacts x;
    get_to(p, "path", x.path);
    get_to(p, "exists", x.exists);
    get_to(p, "directory", x.directory);
    get_to(p, "readable", x.readable);
    get_to(p, "entries", x.entries);
    get_to(p, "sample", x.sample);
    f.paths.push_back(x);
  }
  get_to(j, "processes", f.processes);
  get_to(j, "binaries", f.binaries);
  get_to(j, "kernel_modules", f.kernel_modules);
  get_to(sub(j, "sysctl"), "net.ipv4.ip_forward", f.ip_forward);
  get_to(sub(j, "sysctl"), "net.bridge.bridge-nf-call-iptables", f.bridge_nf_call_iptables);
  for (const auto& x : arr(j, "dns")) {
    if (!x.is_object()) continue;
    DnsFacts dn;
    get_to(x, "name", dn.name);
    get_to(x, "resolved", dn.resolved);
    f.dns.push_back(dn);
  }
  get_to(j, "hostname_resolves", f.hostname_resolves);
  get_to(j, "lscpu", f.lscpu);
  get_to(j, "meminfo", f.meminfo);
  const json& c = sub(j, "collection");
  get_to(c, "complete", f.complete);
  get_to(c, "stuck_in", f.stuck_in);
  get_to(c, "sections", f.sections);
  get_to(c, "notes", f.notes);
  if (f.hostname.empty()) f.hostname = f.name;
}

}  // namespace

util::Result<HostFacts> from_json(const json& j) {
  if (!j.is_object()) return util::Error{"a facts document must be a JSON object", ""};
  std::string schema;
  get_to(j, "schema", schema);
  if (schema != kFactsSchema)
    return util::Error{schema.empty() ? "no \"schema\" key (expected \"paictl.facts/v1\")"
                                      : "schema \"" + schema + "\" is not \"paictl.facts/v1\"",
                       "this paictl reads paictl.facts/v1"};
  HostFacts f;
  fill(j, f);
  if (f.hostname.empty()) return util::Error{"no \"hostname\"", ""};
  return f;
}

std::optional<HostFacts> read_facts_json(const std::string& path, std::string_view text,
                                         diag::List& out) {
  using diag::Severity;
  auto add = [&](Severity sev, std::string message, std::string hint = {}, uint32_t line = 0,
                 uint32_t column = 0) {
    out.add("P005", sev, path, line, column, std::move(message), std::move(hint));
  };
  auto parsed = util::parse_json(text);
  if (!parsed) {
    const util::JsonError& err = parsed.error();
    add(Severity::Error, "facts file is not valid JSON: " + err.message,
        "collect it again with paictl facts collect", err.line, err.column);
    return std::nullopt;
  }
  if (auto dup = util::json_duplicate_key(text)) {
    // Which of the two values would be meant is anybody's guess.
    add(Severity::Error, "facts file has a " + dup->message,
        "each key appears once in an object; collect it again with paictl facts collect", dup->line,
        dup->column);
    return std::nullopt;
  }
  const json& j = *parsed;
  if (!j.is_object()) {
    add(Severity::Error, "facts file must hold a JSON object");
    return std::nullopt;
  }
  std::string schema;
  get_to(j, "schema", schema);
  if (schema.empty()) {
    add(Severity::Warning, "facts file has no \"schema\"; reading it as paictl.facts/v1");
  } else if (schema != kFactsSchema) {
    add(Severity::Error, "facts schema \"" + schema + "\" is not supported",
        "this paictl reads paictl.facts/v1");
    return std::nullopt;
  }
  HostFacts f;
  fill(j, f);
  if (f.hostname.empty()) {
    add(Severity::Error, "facts file has no \"name\" or \"hostname\"");
    return std::nullopt;
  }
  if (auto it = j.find("gpus"); it != j.end() && !it->is_array()) {
    add(Severity::Error, "\"gpus\" must be a list");
  } else if (it != j.end()) {
    // fill() kept the objects of the list, in order; match them to their positions.
    std::vector<GpuFacts> valid;
    size_t kept = 0;
    for (size_t k = 0; k < it->size(); ++k) {
      if (!(*it)[k].is_object()) continue;
      const GpuFacts& g = f.gpus[kept++];
      if (g.index < 0 || g.index > 65535) {
        add(Severity::Error, "gpus[" + std::to_string(k) + "] has no valid index");
        continue;
      }
      valid.push_back(g);
    }
    f.gpus = std::move(valid);
  }
  return f;
}

}  // namespace pai::facts
