#include "hived/health.h"

#include <dirent.h>

#include <algorithm>
#include <optional>

#include "util/fs.h"
#include "util/strings.h"

namespace pai::hived {

namespace {

bool health_gpu_sku(const config::MachineSku* s) {
  return s && s->device && s->device->count > 0 && s->device->type == "nvidia.com/gpu";
}

// "535.104.05" < "550.127.05", numerically part by part.
bool health_older(const std::string& a, const std::string& b) {
  auto pa = util::split(a, '.'), pb = util::split(b, '.');
  for (size_t i = 0; i < std::min(pa.size(), pb.size()); ++i) {
    auto x = util::parse_int(pa[i]), y = util::parse_int(pb[i]);
    if (x && y && *x != *y) return *x < *y;
    if (!(x && y) && pa[i] != pb[i]) return pa[i] < pb[i];
  }
  return pa.size() < pb.size();
}

// A host directory's facts (the planner's layout of a facts directory).
std::optional<facts::HostFacts> health_host_dir(const std::string& dir, const std::string& name,
                                                diag::List& out) {
  auto csv = util::read_file_if_present(dir + "/gpus.csv");
  if (!csv.ok() || !*csv) return std::nullopt;
  facts::HostFacts f;
  f.name = name;
  f.hostname = name;
  f.nvidia.smi_present = true;
  f.nvidia.smi_exit = 0;
  auto g = facts::parse_gpu_query(**csv, dir + "/gpus.csv");
  for (const auto& d : g.diagnostics.items()) out.add(d);
  for (const auto& x : g.value) f.gpus.push_back({x.index, x.name, x.memory_mib, x.bus_id, x.uuid});
  // The driver_version column, when the query asked for it.
  std::string_view text = **csv;
  size_t nl = text.find('\n');
  auto header = util::split(text.substr(0, nl), ',');
  for (size_t k = 0; k < header.size(); ++k) {
    if (util::trim(header[k]) != "driver_version" || nl == std::string_view::npos) continue;
    auto row = util::split(text.substr(nl + 1, text.find('\n', nl + 1) - nl - 1), ',');
    if (row.size() > k) f.nvidia.driver_version = std::string(util::trim(row[k]));
  }
  if (auto q = util::read_file_if_present(dir + "/nvidia-smi-q.txt"); q.ok() && *q) {
    auto h = facts::parse_gpu_health(**q, dir + "/nvidia-smi-q.txt");
    for (const auto& d : h.diagnostics.items()) out.add(d);
    f.nvidia.health_read = true;
    f.nvidia.health = std::move(h.value.gpus);
    if (f.nvidia.driver_version.empty()) f.nvidia.driver_version = h.value.driver_version;
  }
  if (auto k = util::read_file_if_present(dir + "/dmesg.txt"); k.ok() && *k) {
    f.nvidia.kernel_log = "dmesg.txt";
    f.nvidia.xids = facts::parse_xid_events(**k);
  }
  return f;
}

}  // namespace

std::map<std::string, facts::HostFacts> read_health_facts(const std::string& dir, diag::List& out,
                                                          size_t* files) {
  std::map<std::string, facts::HostFacts> facts;
  size_t n = 0;
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string x = e->d_name;
      if (x == "." || x == "..") continue;
      names.push_back(x);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  for (const auto& x : names) {
    std::string path = dir + "/" + x;
    if (x.size() > 5 && x.compare(x.size() - 5, 5, ".json") == 0) {
      auto text = util::read_file(path);
      if (!text.ok()) {
        out.add("P005", diag::Severity::Error, path, 0, 0, text.error().message);
        continue;
      }
      ++n;
      if (auto hf = facts::read_facts_json(path, *text, out)) {
        std::string name = hf->name.empty() ? hf->hostname : hf->name;
        facts[name] = std::move(*hf);
      }
    } else if (util::is_directory(path)) {
      if (auto hf = health_host_dir(path, x, out)) {
        ++n;
        facts[x] = std::move(*hf);
      }
    }
  }
  if (files) *files = n;
  return facts;
}

HealthReport health_candidates(const config::Layout& layout,
                               const std::map<std::string, facts::HostFacts>& facts,
                               const HealthOptions& options) {
  HealthReport r;
  // The facts of each GPU worker.
  std::vector<std::pair<const config::Machine*, const facts::HostFacts*>> hosts;
  for (const auto& m : layout.machines) {
    if (!m.worker) continue;
    const config::MachineSku* sku = layout.find_sku(m.machine_type);
    if (!health_gpu_sku(sku)) continue;
    ++r.gpu_hosts;
    auto it = facts.find(m.hostname);
    if (it == facts.end() && !m.hostip.empty()) it = facts.find(m.hostip);
    if (it == facts.end()) {
      r.without_facts.push_back(m.hostname);
      continue;
    }
    ++r.checked;
    hosts.emplace_back(&m, &it->second);
  }
  // Each SKU's driver: given, else its hosts' most common.
  std::map<std::string, std::map<std::string, int64_t>> seen;
  for (const auto& [m, f] : hosts)
    if (!f->nvidia.driver_version.empty()) seen[m->machine_type][f->nvidia.driver_version]++;
  for (const auto& [sku, counts] : seen) {
    std::string best;
    int64_t n = 0;
    for (const auto& [d, c] : counts)
      if (c > n || (c == n && health_older(best, d))) {
        best = d;
        n = c;
      }
    r.drivers[sku] = best;
  }
  for (const auto& [sku, d] : options.drivers) r.drivers[sku] = d;

  for (const auto& [m, f] : hosts) {
    const config::MachineSku* sku = layout.find_sku(m->machine_type);
    HealthCandidate c;
    c.node = m->hostname;
    c.sku = m->machine_type;
    auto add = [&c](std::vector<facts::GpuFinding> v) {
      for (auto& x : v) c.findings.push_back(std::move(x));
    };
    add(facts::gpu_count_findings(*f, sku->device->count));
    add(facts::gpu_health_findings(*f));
    auto d = r.drivers.find(m->machine_type);
    add(facts::gpu_driver_findings(*f, d == r.drivers.end() ? std::string() : d->second));
    if (c.findings.empty()) continue;
    std::sort(c.findings.begin(), c.findings.end(),
              [](const auto& a, const auto& b) { return a.code < b.code; });
    for (const auto& x : c.findings) r.kinds[x.kind]++;
    r.candidates.push_back(std::move(c));
  }
  return r;
}

}  // namespace pai::hived
