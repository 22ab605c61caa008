#include "planner/hosts.h"

#include <algorithm>
#include <filesystem>
#include <unordered_map>

#include "facts/text_lines.h"
#include "util/fs.h"
#include "util/strings.h"
#include "yaml/yaml.h"

namespace pai::planner {

using diag::Severity;
namespace fs = std::filesystem;

size_t Host::gpu_count() const {
  if (!gpus.empty()) return gpus.size();
  return topo ? topo->gpu_count() : 0;
}

std::string Host::gpu_model() const {
  for (const auto& g : gpus)
    if (!g.name.empty()) return g.name;
  return {};
}

int64_t Host::gpu_memory_mib() const {
  int64_t m = 0;
  for (const auto& g : gpus)
    if (g.memory_mib > 0 && (m == 0 || g.memory_mib < m)) m = g.memory_mib;
  return m;
}

bool natural_less(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    bool da = a[i] >= '0' && a[i] <= '9';
    bool db = b[j] >= '0' && b[j] <= '9';
    if (da && db) {
      size_t ie = i, je = j;
      while (ie < a.size() && a[ie] >= '0' && a[ie] <= '9') ++ie;
      while (je < b.size() && b[je] >= '0' && b[je] <= '9') ++je;
      std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      while (na.size() > 1 && na[0] == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb[0] == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  if ((a.size() - i) != (b.size() - j)) return (a.size() - i) < (b.size() - j);
  return a < b;
}

namespace {

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

void add(diag::List& out, std::string code, Severity sev, std::string file, std::string message,
         std::string hint = {}, uint32_t line = 0, uint32_t column = 0) {
  out.add(std::move(code), sev, std::move(file), line, column, std::move(message), std::move(hint));
}

// Reads `name` in `dir` when it exists; false when absent, error when unreadable.
bool read_optional(const std::string& dir, const std::string& name, std::string& content,
                   diag::List& out, std::vector<std::string>* files) {
  std::string p = join_path(dir, name);
  if (!util::path_entry_exists(p)) return false;  // a dangling link is an error, not "absent"
  auto r = util::read_file(p, 16u << 20);
  if (!r.ok()) {
    add(out, "P001", Severity::Error, p, "cannot read " + p + ": " + r.error().message,
        "check the file and its permissions");
    return false;
  }
  if (files) files->push_back(p);
  if (facts::detail::is_binary(*r)) {
    add(out, "P001", Severity::Error, p, p + " holds binary data, not command output",
        "save the text output of the command (docs/plan.md lists what each file holds)");
    return false;
  }
  content = std::move(*r);
  return true;
}

// A parser's findings on one file, at most kPerFile of them: a file of the wrong
// kind would otherwise give one finding per line.
void append_capped(diag::List& out, const diag::List& found, const std::string& file) {
  constexpr size_t kPerFile = 20;
  size_t kept = 0, dropped_warnings = 0;
  for (const auto& d : found.items()) {
    if (kept < kPerFile || d.severity == Severity::Error) {
      out.add(d);
      ++kept;
    } else {
      ++dropped_warnings;
    }
  }
  if (dropped_warnings)
    add(out, "P011", Severity::Warning, file,
        std::to_string(dropped_warnings) + " more findings in this file are not shown",
        "is it the output of the right command?");
}

void load_host_yaml(const std::string& path, const std::string& text, Host& h, diag::List& out) {
  yaml::Stream s = yaml::load(text);
  if (s.error) {
    add(out, "P003", Severity::Error, path, "host.yaml is not valid YAML: " + s.error->message,
        s.error->hint, s.error->mark.line, s.error->mark.column);
    return;
  }
  for (const auto& w : s.warnings)
    add(out, "P003", Severity::Error, path, w.message, w.hint, w.mark.line, w.mark.column);
  if (s.documents.empty() || s.documents[0]->is_null()) return;
  const yaml::Node* root = s.documents[0];
  if (!root->is_mapping()) {
    add(out, "P003", Severity::Error, path,
        "host.yaml must be a mapping, found " + root->describe(),
        "write e.g.\n  hostip: 10.0.1.11\n  rack: r1\n  roles: [worker]", root->mark().line,
        root->mark().column);
    return;
  }
  static const std::vector<std::string> kKeys = {"hostip", "rack", "roles"};
  for (const auto& p : root->pairs()) {
    const std::string& key = p.key->scalar();
    const yaml::Node* v = p.value;
    if (key == "hostip") {
      if (!v->is_scalar() || !util::is_ipv4(v->scalar())) {
        add(out, "P003", Severity::Error, path,
            "hostip must be an IPv4 address, found " + v->describe(),
            "write e.g. hostip: 10.0.1.11", v->mark().line, v->mark().column);
        continue;
      }
      h.hostip = v->scalar();
    } else if (key == "rack") {
      if (!v->is_scalar() || v->scalar().empty()) {
        add(out, "P003", Severity::Error, path, "rack must be a name, found " + v->describe(),
            "write e.g. rack: r1", v->mark().line, v->mark().column);
        continue;
      }
      h.rack = v->scalar();
    } else if (key == "roles") {
      std::vector<const yaml::Node*> items;
      if (v->is_sequence())
        items.assign(v->items().begin(), v->items().end());
      else if (v->is_scalar())
        items.push_back(v);
      bool master = false, worker = false, bad = items.empty();
      for (const auto* it : items) {
        if (it->is_scalar() && it->scalar() == "master")
          master = true;
        else if (it->is_scalar() && it->scalar() == "worker")
          worker = true;
        else {
          bad = true;
          add(out, "P003", Severity::Error, path, "unknown role " + it->describe(),
              "roles is [master] or [worker]; a host is a worker by default", it->mark().line,
              it->mark().column);
        }
      }
      if (master && worker)
        add(out, "P003", Severity::Error, path,
            "a host cannot be both master and worker in OpenPAI",
            "the master runs the services and no jobs; use roles: [master] or roles: [worker]",
            v->mark().line, v->mark().column);
      if (bad && items.empty())
        add(out, "P003", Severity::Error, path, "roles is empty",
            "write roles: [master] or roles: [worker]", v->mark().line, v->mark().column);
      if (master && !worker) h.role = HostRole::Master;
    } else {
      std::string guess = util::did_you_mean(key, kKeys);
      add(out, "P003", Severity::Warning, path,
          "unknown key \"" + key + "\" in host.yaml; it is ignored",
          guess.empty() ? "host.yaml knows hostip, rack and roles"
                        : "did you mean \"" + guess + "\"?",
          p.key->mark().line, p.key->mark().column);
    }
  }
}

// Keeps the GPU list and the matrix consistent: the list names the GPUs; the
// matrix says how they connect.
void reconcile(Host& h, diag::List& out) {
  if (!h.topo || h.gpus.empty()) return;
  std::vector<int> in_matrix;
  for (size_t p : h.topo->gpu_positions()) in_matrix.push_back(h.topo->devices[p].index);
  std::vector<int> in_list;
  for (const auto& g : h.gpus) in_list.push_back(g.index);
  std::sort(in_matrix.begin(), in_matrix.end());
  if (in_matrix != in_list)
    add(out, "P007", Severity::Warning, h.origin,
        "the GPU list of " + h.hostname + " has " + std::to_string(in_list.size()) +
            " GPUs but the topology matrix has " + std::to_string(in_matrix.size()),
        "capture both at the same time; the matrix is used for the cell hierarchy, the list for "
        "the GPU model");
}

}  // namespace

Host load_host_dir(const std::string& dir, const std::string& hostname, diag::List& out,
                   std::vector<std::string>* files) {
  Host h;
  h.hostname = hostname;
  h.origin = dir;
  std::string text;
  if (read_optional(dir, "host.yaml", text, out, files))
    load_host_yaml(join_path(dir, "host.yaml"), text, h, out);
  if (read_optional(dir, "topo.txt", text, out, files)) {
    auto r = facts::parse_topo_matrix(text, join_path(dir, "topo.txt"));
    append_capped(out, r.diagnostics, join_path(dir, "topo.txt"));
    if (r.value.gpu_count() > 0) h.topo = std::move(r.value);
  }
  if (read_optional(dir, "gpus.csv", text, out, files)) {
    auto r = facts::parse_gpu_query(text, join_path(dir, "gpus.csv"));
    append_capped(out, r.diagnostics, join_path(dir, "gpus.csv"));
    h.gpus = std::move(r.value);
    h.has_gpu_list = true;
  }
  if (read_optional(dir, "lscpu.txt", text, out, files)) {
    auto r = facts::parse_lscpu(text, join_path(dir, "lscpu.txt"));
    append_capped(out, r.diagnostics, join_path(dir, "lscpu.txt"));
    if (r.value.logical > 0) h.cpu = std::move(r.value);
  }
  if (read_optional(dir, "meminfo", text, out, files)) {
    auto r = facts::parse_meminfo(text, join_path(dir, "meminfo"));
    append_capped(out, r.diagnostics, join_path(dir, "meminfo"));
    if (r.value.total_bytes > 0) h.mem = r.value;
  }
  reconcile(h, out);
  return h;
}

void read_host_yaml(const std::string& path, const std::string& text, Host& h, diag::List& out) {
  load_host_yaml(path, text, h, out);
}

Host host_from_facts(const facts::HostFacts& f, const std::string& origin, diag::List& out) {
  Host h;
  h.origin = origin;
  // "name" is the host's name in the cluster files; "hostname" what the host calls itself.
  h.hostname = f.name.empty() ? f.hostname : f.name;
  // Facts that an earlier facts collect --hosts named by the address it reached
  // (10.0.0.5, 10.0.0.5:2222): the host is named by what it calls itself.
  std::string self = util::to_lower(f.hostname);
  std::string bare = f.name.substr(0, f.name.find(':'));
  if (util::is_ipv4(bare) && !self.empty() && util::is_dns1123_subdomain(self) &&
      !util::is_ipv4(self))
    h.hostname = self;
  // The address paictl reached the host at is its hostip, unless it is this
  // machine's own loopback (127.0.0.1: a tunnel or a port forward); a host on
  // another loopback address (127.0.31.2, a test host) is reached there. Else
  // the first address of an interface that is not loopback.
  auto reached_at = [](const std::string& a) {
    return util::is_ipv4(a) && a != "127.0.0.1" && a != "127.0.1.1" && a != "0.0.0.0";
  };
  auto usable_ip = [](const std::string& a) { return util::is_ipv4(a) && a.rfind("127.", 0) != 0; };
  if (reached_at(f.address))
    h.hostip = f.address;
  else if (!util::is_ipv4(f.address) && reached_at(f.ssh_server_address))
    h.hostip = f.ssh_server_address;
  for (size_t i = 0; h.hostip.empty() && i < f.ip_addresses.size(); ++i)
    if (usable_ip(f.ip_addresses[i])) h.hostip = f.ip_addresses[i];
  h.rack = f.rack;
  if (std::find(f.roles.begin(), f.roles.end(), "master") != f.roles.end())
    h.role = HostRole::Master;

  const std::string src = origin + "#";
  // Raw texts first; the structured fields fill what they leave out.
  h.driver_version = f.nvidia.driver_version;
  if (!util::trim(f.nvidia.topo_matrix).empty()) {
    auto r = facts::parse_topo_matrix(f.nvidia.topo_matrix, src + "nvidia.topo_matrix");
    out.append(r.diagnostics);
    if (r.value.gpu_count() > 0) h.topo = std::move(r.value);
  }
  h.has_gpu_list = true;
  for (const auto& g : f.gpus) {
    if (g.index < 0 || g.index > 65535) continue;
    facts::GpuInfo info;
    info.index = g.index;
    info.name = g.name;
    if (g.memory_mib >= 0 && g.memory_mib < 1000000000) info.memory_mib = g.memory_mib;
    info.bus_id = g.bus_id;
    info.uuid = g.uuid;
    h.gpus.push_back(std::move(info));
  }
  std::sort(h.gpus.begin(), h.gpus.end(),
            [](const facts::GpuInfo& a, const facts::GpuInfo& b) { return a.index < b.index; });
  if (!util::trim(f.lscpu).empty()) {
    auto r = facts::parse_lscpu(f.lscpu, src + "lscpu");
    out.append(r.diagnostics);
    if (r.value.logical > 0) h.cpu = std::move(r.value);
  }
  if (!h.cpu && f.cpu.logical > 0 && f.cpu.logical < (1 << 20)) {
    facts::CpuInfo c;
    c.logical = f.cpu.logical;
    if (f.cpu.sockets > 0 && f.cpu.sockets < 4096) c.sockets = f.cpu.sockets;
    if (f.cpu.cores_per_socket > 0 && f.cpu.cores_per_socket < (1 << 20))
      c.cores_per_socket = f.cpu.cores_per_socket;
    if (f.cpu.threads_per_core > 0 && f.cpu.threads_per_core < 1024)
      c.threads_per_core = f.cpu.threads_per_core;
    if (f.cpu.numa_nodes > 0 && f.cpu.numa_nodes < 4096) c.numa_nodes = f.cpu.numa_nodes;
    c.architecture = f.cpu.architecture;
    c.model_name = f.cpu.model;
    h.cpu = std::move(c);
  }
  if (!util::trim(f.meminfo).empty()) {
    auto r = facts::parse_meminfo(f.meminfo, src + "meminfo");
    out.append(r.diagnostics);
    if (r.value.total_bytes > 0) h.mem = r.value;
  }
  constexpr int64_t kMaxBytes = 9000000000000000000;
  if (!h.mem && f.memory.total_bytes > 0 && f.memory.total_bytes < kMaxBytes) {
    facts::MemInfo m;
    m.total_bytes = f.memory.total_bytes;
    if (f.memory.available_bytes >= 0 && f.memory.available_bytes < kMaxBytes)
      m.available_bytes = f.memory.available_bytes;
    h.mem = m;
  }
  reconcile(h, out);
  return h;
}

std::optional<Host> load_host_json(const std::string& path, const std::string& text,
                                   diag::List& out) {
  std::optional<facts::HostFacts> f = facts::read_facts_json(path, text, out);
  if (!f) return std::nullopt;
  return host_from_facts(*f, path, out);
}

FactsSet load_facts_dir(const std::string& dir) {
  FactsSet set;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    add(set.diagnostics, "P001", Severity::Error, dir,
        fs::exists(dir, ec) ? dir + " is not a directory"
                            : "facts directory " + dir + " does not exist",
        "pass a directory with one subdirectory (or one <hostname>.json) per host");
    return set;
  }
  std::vector<std::string> subdirs, jsons;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::error_code e2;
    if (it->is_directory(e2))
      subdirs.push_back(name);
    else if (name.size() > 5 && name.substr(name.size() - 5) == ".json")
      jsons.push_back(name);
  }
  if (ec) {
    add(set.diagnostics, "P001", Severity::Error, dir, "cannot list " + dir + ": " + ec.message());
    return set;
  }
  std::unordered_map<std::string, size_t> by_name;
  // What else names a host of a facts file, for a host.yaml directory that
  // overrides it: the file's name, what the host calls itself, its address.
  std::unordered_map<std::string, size_t> by_alias;
  std::sort(jsons.begin(), jsons.end());
  std::sort(subdirs.begin(), subdirs.end());
  for (const auto& name : jsons) {
    std::string p = join_path(dir, name);
    auto r = util::read_file(p, 64u << 20);
    if (!r.ok()) {
      add(set.diagnostics, "P001", Severity::Error, p,
          "cannot read " + p + ": " + r.error().message);
      continue;
    }
    set.files.push_back(p);
    std::optional<facts::HostFacts> f = facts::read_facts_json(p, *r, set.diagnostics);
    if (!f) continue;
    std::optional<Host> h = host_from_facts(*f, p, set.diagnostics);
    std::string stem = name.substr(0, name.size() - 5);
    if (stem != h->hostname)
      add(set.diagnostics, "P005", Severity::Warning, p,
          "file " + name + " holds the facts of host \"" + h->hostname +
              "\"; the host is named after its facts");
    if (by_name.count(h->hostname)) {
      add(set.diagnostics, "P008", Severity::Error, p,
          "a second facts file for host \"" + h->hostname + "\"");
      continue;
    }
    by_name[h->hostname] = set.hosts.size();
    for (const std::string& alias :
         {stem, util::to_lower(f->hostname), f->address, f->ssh_server_address, h->hostip})
      if (!alias.empty()) by_alias.emplace(alias, set.hosts.size());
    set.hosts.push_back(std::move(*h));
  }
  for (const auto& name : subdirs) {
    std::string p = join_path(dir, name);
    Host h = load_host_dir(p, name, set.diagnostics, &set.files);
    // The host it overrides: by its name, else by another name or address of it.
    std::optional<size_t> target;
    if (auto n = by_name.find(name); n != by_name.end())
      target = n->second;
    else if (auto a = by_alias.find(name); a != by_alias.end())
      target = a->second;
    bool hardware = h.topo || h.has_gpu_list || h.cpu || h.mem;
    if (!target && !hardware && !jsons.empty() &&
        util::is_regular_file(join_path(p, "host.yaml"))) {
      // Every name a host goes by, for the did-you-mean; the hint lists the hosts.
      std::vector<std::string> names, known;
      for (const auto& x : set.hosts) names.push_back(x.hostname);
      for (const auto& [alias, index] : by_alias) known.push_back(alias);
      for (const auto& [n, index] : by_name) known.push_back(n);
      std::sort(known.begin(), known.end());
      std::string guess = util::did_you_mean(name, known);
      add(set.diagnostics, "P012", Severity::Error, join_path(p, "host.yaml"),
          "host.yaml of \"" + name + "\" overrides no host: no facts file of " + dir +
              " is named so, and no host calls itself so or has that address",
          guess.empty() ? "name the directory after a host of the facts: " + util::join(names, ", ")
                        : "did you mean \"" + guess + "\"?");
      continue;
    }
    if (!target) {
      by_name[name] = set.hosts.size();
      set.hosts.push_back(std::move(h));
      continue;
    }
    // Overlay a directory on the JSON facts of the same host.
    Host& base = set.hosts[*target];
    if (!h.hostip.empty()) base.hostip = h.hostip;
    if (!h.rack.empty()) base.rack = h.rack;
    if (h.role == HostRole::Master) base.role = HostRole::Master;
    if (h.topo) base.topo = std::move(h.topo);
    if (h.has_gpu_list) {
      base.gpus = std::move(h.gpus);
      base.has_gpu_list = true;
    }
    if (h.cpu) base.cpu = std::move(h.cpu);
    if (h.mem) base.mem = h.mem;
    base.origin += " + " + p;
  }
  if (set.hosts.empty())
    add(set.diagnostics, "P009", Severity::Error, dir, "no host facts in " + dir,
        "each host is a subdirectory named by its hostname (topo.txt, gpus.csv, lscpu.txt, "
        "meminfo, host.yaml) or a "
        "<hostname>.json from paictl facts collect");
  std::sort(set.hosts.begin(), set.hosts.end(),
            [](const Host& a, const Host& b) { return natural_less(a.hostname, b.hostname); });
  return set;
}

}  // namespace pai::planner
