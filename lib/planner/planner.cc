#include "planner/planner.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "util/strings.h"

namespace pai::planner {

using diag::Severity;

namespace {

std::string upper(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c >= 'a' && c <= 'z')
      out += static_cast<char>(c - 'a' + 'A');
    else if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
      out += c;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// A DNS-1123 label from any text: lower case, [a-z0-9-], no leading/trailing '-'.
std::string label_of(std::string_view s) {
  std::string out;
  for (char c : s) {
    char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9'))
      out += l;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "x" : out;
}

std::string gib_text(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f GiB",
                static_cast<double>(bytes) / static_cast<double>(kGiB));
  return buf;
}

struct Group {
  std::vector<size_t> hosts;  // indices into plan.hosts, natural order
  std::string family;         // GPU:<short> or CPU:<model>
  size_t rep = 0;
};

}  // namespace

std::string short_gpu_model(std::string_view name) {
  std::vector<std::string> words;
  for (auto w : util::split(name, ' ')) {
    std::string s(util::trim(w));
    if (s.empty()) continue;
    std::string l = util::to_lower(s);
    if (l == "nvidia" || l == "tesla" || l == "geforce" || l == "quadro") continue;
    words.push_back(s);
  }
  if (words.empty()) return "GPU";
  std::string first = words[0];
  std::string lf = util::to_lower(first);
  if ((lf == "rtx" || lf == "gtx" || lf == "titan") && words.size() > 1) first += words[1];
  size_t dash = first.find('-');
  if (dash != std::string::npos && dash > 0) first = first.substr(0, dash);
  std::string u = upper(first);
  return u.empty() ? "GPU" : u;
}

int default_reserve_cpu(int logical) {
  return 1 + static_cast<int>(std::ceil(0.02 * logical));
}

int64_t default_reserve_memory(int64_t total_bytes) {
  return 2 * kGiB + static_cast<int64_t>(std::ceil(0.03 * static_cast<double>(total_bytes)));
}

int Plan::master_host() const {
  for (size_t i = 0; i < hosts.size(); ++i)
    if (!hosts[i].excluded && hosts[i].facts.role == HostRole::Master) return static_cast<int>(i);
  return -1;
}

namespace {

class Planner {
 public:
  Planner(std::vector<Host> hosts, const PlanOptions& o, Plan& p) : o_(o), p_(p) {
    for (auto& h : hosts) {
      PlannedHost ph;
      ph.facts = std::move(h);
      p_.hosts.push_back(std::move(ph));
    }
  }

  void run() {
    validate_hosts();
    choose_master();
    if (p_.diagnostics.has_errors()) return;
    require_worker();
    if (p_.diagnostics.has_errors()) return;
    derive();
    group_workers();
    name_skus();
    size_skus();
    assign_leaf_types();
    build_chains();
    plan_vcs();
  }

 private:
  const PlanOptions& o_;
  Plan& p_;

  void error(std::string code, const std::string& file, std::string msg, std::string hint = {}) {
    p_.diagnostics.add(std::move(code), Severity::Error, file, 0, 0, std::move(msg),
                       std::move(hint));
  }
  void warning(std::string code, const std::string& file, std::string msg, std::string hint = {}) {
    p_.diagnostics.add(std::move(code), Severity::Warning, file, 0, 0, std::move(msg),
                       std::move(hint));
  }
  void info(std::string code, const std::string& file, std::string msg, std::string hint = {}) {
    p_.diagnostics.add(std::move(code), Severity::Info, file, 0, 0, std::move(msg),
                       std::move(hint));
  }

  // --- hosts -------------------------------------------------------------------------
  void validate_hosts() {
    std::unordered_map<std::string, size_t> names, ips;
    for (size_t i = 0; i < p_.hosts.size(); ++i) {
      Host& h = p_.hosts[i].facts;
      const std::string& where = h.origin;
      if (!util::is_dns1123_subdomain(h.hostname)) {
        error("P002", where, "host name \"" + h.hostname + "\" is not a valid Kubernetes node name",
              "name the facts directory after the host in lower case (letters, digits, '-', '.'), "
              "e.g. " +
                  label_of(h.hostname));
      }
      if (auto [it, fresh] = names.emplace(h.hostname, i); !fresh) {
        error("P008", where,
              "host \"" + h.hostname + "\" is planned twice (also from " +
                  p_.hosts[it->second].facts.origin + ")",
              "a host name may appear once across the facts directory and the profiles");
        continue;  // its IP and facts would only repeat the finding
      }
      if (h.hostip.empty()) {
        error("P004", where, "host \"" + h.hostname + "\" has no IP address",
              "add hostip: <IPv4> to " + h.hostname + "/host.yaml in the facts directory");
      } else if (auto [it, fresh] = ips.emplace(h.hostip, i); !fresh) {
        error("P008", where,
              "hosts \"" + p_.hosts[it->second].facts.hostname + "\" and \"" + h.hostname +
                  "\" have the same IP " + h.hostip,
              "every machine in layout.yaml needs its own hostip");
      }
      if (!h.cpu || !h.mem)
        error("P006", where,
              "host \"" + h.hostname + "\" has no " + std::string(!h.cpu ? "lscpu" : "meminfo") +
                  " facts, so its CPUs and memory are unknown",
              "save lscpu > lscpu.txt and cat /proc/meminfo > meminfo in its facts directory");
    }
  }

  // OpenPAI runs no jobs on the master: a plan needs at least one other host.
  void require_worker() {
    for (const auto& h : p_.hosts)
      if (h.facts.role != HostRole::Master) return;
    std::string master = p_.hosts.empty() ? std::string() : p_.hosts[0].facts.hostname;
    error("P114", p_.hosts.empty() ? std::string() : p_.hosts[0].facts.origin,
          "no worker to plan: the only host" + (master.empty() ? "" : " (" + master + ")") +
              " is the master, and OpenPAI runs no jobs there",
          "add the facts of the worker hosts (paictl facts collect), or --profile NAME --count N "
          "for hardware not yet bought");
  }

  void choose_master() {
    if (!o_.master.empty()) {
      bool found = false;
      std::vector<std::string> names;
      for (auto& h : p_.hosts) {
        names.push_back(h.facts.hostname);
        // --master names a host by its name or by its address.
        if (h.facts.hostname == o_.master || (!o_.master.empty() && h.facts.hostip == o_.master)) {
          h.facts.role = HostRole::Master;
          found = true;
        }
      }
      if (!found) {
        std::string guess = util::did_you_mean(o_.master, names);
        error("P101", "", "--master " + o_.master + " is not one of the planned hosts",
              guess.empty() ? "name a host of the facts directory"
                            : "did you mean \"" + guess + "\"?");
        return;
      }
    }
    std::vector<size_t> masters;
    bool all_profiles = !p_.hosts.empty();
    for (size_t i = 0; i < p_.hosts.size(); ++i) {
      if (p_.hosts[i].facts.role == HostRole::Master) masters.push_back(i);
      all_profiles &= !p_.hosts[i].facts.profile.empty();
    }
    if (masters.size() > 1) {
      std::vector<std::string> names;
      for (size_t i : masters) names.push_back(p_.hosts[i].facts.hostname);
      error("P102", p_.hosts[masters[1]].facts.origin,
            "more than one master: " + util::join(names, ", "),
            "OpenPAI has exactly one master; keep roles: [master] in one host.yaml");
      return;
    }
    if (masters.empty()) {
      if (!all_profiles) {
        error("P101", "", "no host is the master",
              "add roles: [master] to the host.yaml of the master in the facts directory, or pass "
              "--master HOST");
        return;
      }
      // Hardware not bought yet: a placeholder master completes the layout.
      Host m;
      m.hostname = "pai-master";
      m.hostip = "10.0.0.1";
      m.role = HostRole::Master;
      m.origin = "placeholder";
      facts::CpuInfo c;
      c.logical = 16;
      c.sockets = 1;
      m.cpu = c;
      facts::MemInfo mem;
      mem.total_bytes = 64 * kGiB;
      m.mem = mem;
      PlannedHost ph;
      ph.facts = std::move(m);
      p_.hosts.insert(p_.hosts.begin(), std::move(ph));
      warning("P111", "",
              "the plan has only profile hosts, so it adds a placeholder master \"pai-master\" "
              "(10.0.0.1, 16 CPUs, "
              "64 GiB); profile hosts get placeholder addresses too",
              "replace the host names and IP addresses in layout.yaml (and the HiveD cell "
              "addresses) with the real "
              "ones, or plan from facts");
    } else {
      size_t from_profiles = 0;
      for (const auto& h : p_.hosts) from_profiles += !h.facts.profile.empty();
      if (from_profiles > 0)
        warning("P111", "",
                std::to_string(from_profiles) + " host" + (from_profiles == 1 ? "" : "s") +
                    " planned from machine profiles have placeholder names and addresses (" +
                    p_.hosts[first_profile_host()].facts.hostname + ", 10.x.y.z)",
                "replace the host names and IP addresses in layout.yaml (and the HiveD cell "
                "addresses) with the real "
                "ones once the machines exist, or plan them from their facts");
    }
  }

  size_t first_profile_host() const {
    for (size_t i = 0; i < p_.hosts.size(); ++i)
      if (!p_.hosts[i].facts.profile.empty()) return i;
    return 0;
  }

  void derive() {
    // Profile hosts share their facts: derive once per profile.
    std::unordered_map<std::string, Hierarchy> by_profile;
    for (auto& h : p_.hosts) {
      if (h.facts.role == HostRole::Master) continue;
      if (!h.facts.profile.empty()) {
        auto it = by_profile.find(h.facts.profile);
        if (it == by_profile.end())
          it = by_profile.emplace(h.facts.profile, derive_hierarchy(h.facts)).first;
        h.hierarchy = it->second;
      } else {
        h.hierarchy = derive_hierarchy(h.facts);
      }
    }
  }

  std::string family(const PlannedHost& h) const {
    if (h.hierarchy.gpus > 0) return "GPU:" + short_gpu_model(h.facts.gpu_model());
    return "CPU:" + (h.facts.cpu ? h.facts.cpu->model_name : std::string());
  }

  std::string key(const PlannedHost& h) const {
    const Host& f = h.facts;
    std::string k = family(h) + "|" + f.gpu_model() + "|" + std::to_string(h.hierarchy.gpus) + "|" +
                    std::to_string((f.gpu_memory_mib() + 512) / 1024) + "|" +
                    h.hierarchy.signature() + "|";
    if (f.cpu) k += std::to_string(f.cpu->logical) + "|" + f.cpu->model_name;
    return k;
  }

  std::vector<Group> groups_;

  void group_workers() {
    std::map<std::string, std::vector<size_t>> by_key;
    std::vector<std::string> key_order;
    for (size_t i = 0; i < p_.hosts.size(); ++i) {
      if (p_.hosts[i].facts.role == HostRole::Master) continue;
      std::string k = key(p_.hosts[i]);
      auto [it, fresh] = by_key.emplace(k, std::vector<size_t>{});
      if (fresh) key_order.push_back(k);
      it->second.push_back(i);
    }
    for (const auto& k : key_order) {
      std::vector<size_t> hs = by_key[k];
      // Memory within 3% of the group's largest: MemTotal varies a little between identical
      // machines.
      std::stable_sort(hs.begin(), hs.end(), [&](size_t a, size_t b) {
        return p_.hosts[a].facts.mem->total_bytes > p_.hosts[b].facts.mem->total_bytes;
      });
      std::vector<std::vector<size_t>> subs;
      for (size_t i : hs) {
        int64_t m = p_.hosts[i].facts.mem->total_bytes;
        if (subs.empty() ||
            static_cast<double>(m) <
                0.97 * static_cast<double>(p_.hosts[subs.back().front()].facts.mem->total_bytes))
          subs.push_back({});
        subs.back().push_back(i);
      }
      for (auto& s : subs) {
        std::sort(s.begin(), s.end(), [&](size_t a, size_t b) {
          return natural_less(p_.hosts[a].facts.hostname, p_.hosts[b].facts.hostname);
        });
        Group g;
        g.hosts = s;
        g.rep = s.front();
        g.family = family(p_.hosts[g.rep]);
        groups_.push_back(std::move(g));
      }
    }
    std::stable_sort(groups_.begin(), groups_.end(), [&](const Group& a, const Group& b) {
      if (a.hosts.size() != b.hosts.size()) return a.hosts.size() > b.hosts.size();
      return natural_less(p_.hosts[a.rep].facts.hostname, p_.hosts[b.rep].facts.hostname);
    });
  }

  std::string differences(const PlannedHost& a, const PlannedHost& b) const {
    std::vector<std::string> d;
    const Host& x = a.facts;
    const Host& y = b.facts;
    if (a.hierarchy.gpus != b.hierarchy.gpus)
      d.push_back(std::to_string(a.hierarchy.gpus) + " GPUs instead of " +
                  std::to_string(b.hierarchy.gpus));
    else if (a.hierarchy.signature() != b.hierarchy.signature())
      d.push_back("another GPU topology (" + a.hierarchy.signature() + " instead of " +
                  b.hierarchy.signature() + ")");
    if (x.gpu_model() != y.gpu_model())
      d.push_back("GPU " + x.gpu_model() + " instead of " + y.gpu_model());
    if ((x.gpu_memory_mib() + 512) / 1024 != (y.gpu_memory_mib() + 512) / 1024)
      d.push_back(std::to_string((x.gpu_memory_mib() + 512) / 1024) +
                  " GiB GPU memory instead of " +
                  std::to_string((y.gpu_memory_mib() + 512) / 1024));
    if (x.cpu && y.cpu && x.cpu->logical != y.cpu->logical)
      d.push_back(std::to_string(x.cpu->logical) + " CPUs instead of " +
                  std::to_string(y.cpu->logical));
    if (x.cpu && y.cpu && x.cpu->model_name != y.cpu->model_name)
      d.push_back("CPU \"" + x.cpu->model_name + "\" instead of \"" + y.cpu->model_name + "\"");
    if (x.mem && y.mem &&
        std::llabs(x.mem->total_bytes - y.mem->total_bytes) > y.mem->total_bytes * 3 / 100)
      d.push_back(gib_text(x.mem->total_bytes) + " of memory instead of " +
                  gib_text(y.mem->total_bytes));
    return d.empty() ? "different hardware" : util::join(d, ", ");
  }

  // --- SKUs --------------------------------------------------------------------------
  std::vector<int> group_sku_;  // group -> sku

  void name_skus() {
    // Odd groups first, so that their peers are known.
    std::vector<int> odd_peer(groups_.size(), -1);
    for (size_t g = 0; g < groups_.size(); ++g) {
      int best = -1;
      for (size_t b = 0; b < groups_.size(); ++b) {
        if (b == g || groups_[b].family != groups_[g].family) continue;
        if (groups_[b].hosts.size() <= groups_[g].hosts.size()) continue;
        if (best < 0 || groups_[b].hosts.size() > groups_[static_cast<size_t>(best)].hosts.size())
          best = static_cast<int>(b);
      }
      if (best < 0) continue;
      size_t n = groups_[g].hosts.size(), big = groups_[static_cast<size_t>(best)].hosts.size();
      if (n == 1 || n * 10 < big) odd_peer[g] = best;
    }
    // Master SKU.
    int master = p_.master_host();
    if (master >= 0) {
      Sku s;
      s.name = "master";
      s.prefix = "MASTER";
      s.master = true;
      s.hosts.push_back(static_cast<size_t>(master));
      p_.hosts[static_cast<size_t>(master)].sku = 0;
      p_.skus.push_back(std::move(s));
    }
    // Base names, then disambiguation rounds.
    group_sku_.assign(groups_.size(), -1);
    std::vector<std::vector<std::string>> candidates(groups_.size());
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (odd_peer[g] >= 0) continue;
      const PlannedHost& r = p_.hosts[groups_[g].rep];
      std::vector<std::string>& c = candidates[g];
      if (r.hierarchy.gpus > 0) {
        std::string base = !r.facts.sku_name.empty()
                               ? label_of(r.facts.sku_name)
                               : label_of(short_gpu_model(r.facts.gpu_model()));
        c.push_back(base);
        c.push_back(base + "x" + std::to_string(r.hierarchy.gpus));
        c.push_back(base + "x" + std::to_string(r.hierarchy.gpus) + "-" +
                    std::to_string((r.facts.gpu_memory_mib() + 512) / 1024) + "g");
      } else {
        c.push_back("cpu");
        c.push_back("cpu-" + std::to_string(r.facts.cpu ? r.facts.cpu->logical : 0) + "c");
      }
    }
    std::vector<size_t> level(groups_.size(), 0);
    std::vector<std::string> names(groups_.size());
    for (int round = 0; round < 4; ++round) {
      std::map<std::string, std::vector<size_t>> users;
      for (size_t g = 0; g < groups_.size(); ++g) {
        if (candidates[g].empty()) continue;
        names[g] = level[g] < candidates[g].size()
                       ? candidates[g][level[g]]
                       : candidates[g].back() + "-" + std::to_string(g + 1);
        users[names[g]].push_back(g);
      }
      bool clash = false;
      for (auto& [n, gs] : users)
        if (gs.size() > 1 || n == "master") {
          clash = true;
          for (size_t g : gs) ++level[g];
        }
      if (!clash) break;
    }
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (odd_peer[g] >= 0) continue;
      group_sku_[g] = add_sku(g, names[g]);
    }
    // Odd groups.
    std::set<std::string> taken;
    for (const auto& s : p_.skus) taken.insert(s.name);
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (odd_peer[g] < 0) continue;
      const Group& peer = groups_[static_cast<size_t>(odd_peer[g])];
      int peer_sku = group_sku_[static_cast<size_t>(odd_peer[g])];
      std::string why = differences(p_.hosts[groups_[g].rep], p_.hosts[peer.rep]);
      const std::string peer_name =
          p_.skus[static_cast<size_t>(peer_sku)].name;  // a copy: add_sku grows skus
      if (o_.odd_hosts == OddHosts::Exclude) {
        for (size_t h : groups_[g].hosts) {
          PlannedHost& ph = p_.hosts[h];
          ph.excluded = true;
          ph.reason = why;
          warning("P103", ph.facts.origin,
                  "host \"" + ph.facts.hostname + "\" differs from the " +
                      std::to_string(peer.hosts.size()) + " hosts of SKU " + peer_name + " (" +
                      why + "); it is left out of the plan (--odd-hosts exclude)",
                  "repair it and plan again, or use --odd-hosts split to give it its own SKU");
        }
        continue;
      }
      // A one-host SKU is named after its host ("t4-04", or "v100-gpu7" for host gpu7 next to SKU
      // v100).
      std::string suffix =
          groups_[g].hosts.size() == 1
              ? label_of(util::split(p_.hosts[groups_[g].rep].facts.hostname, '.')[0])
              : "odd" + std::to_string(g + 1);
      std::string base = suffix.rfind(peer_name + "-", 0) == 0 ? suffix : peer_name + "-" + suffix;
      std::string name = base;
      for (int k = 2; taken.count(name); ++k) name = base + "-" + std::to_string(k);
      taken.insert(name);
      int s = add_sku(g, name);
      p_.skus[static_cast<size_t>(s)].odd = true;
      p_.skus[static_cast<size_t>(s)].peer = peer_name;
      group_sku_[g] = s;
      for (size_t h : groups_[g].hosts) {
        PlannedHost& ph = p_.hosts[h];
        ph.reason = why;
        warning("P103", ph.facts.origin,
                "host \"" + ph.facts.hostname + "\" differs from the " +
                    std::to_string(peer.hosts.size()) + " hosts of SKU " + peer_name + " (" + why +
                    "); it becomes its own SKU " + name + " (--odd-hosts split)",
                "repair it, or use --odd-hosts exclude to leave it out");
      }
    }
  }

  int add_sku(size_t g, const std::string& name) {
    const Group& grp = groups_[g];
    const PlannedHost& r = p_.hosts[grp.rep];
    Sku s;
    s.name = name;
    s.prefix = upper(name);
    s.has_gpu = r.hierarchy.gpus > 0;
    s.gpu_model = r.facts.gpu_model();
    s.gpu_short = s.has_gpu ? short_gpu_model(s.gpu_model) : "";
    s.gpu_memory_mib = r.facts.gpu_memory_mib();
    s.gpus = r.hierarchy.gpus;
    s.cpu_model = r.facts.cpu ? r.facts.cpu->model_name : "";
    s.hierarchy = r.hierarchy;
    s.profile = r.facts.profile;
    s.hosts = grp.hosts;
    int idx = static_cast<int>(p_.skus.size());
    for (size_t h : grp.hosts) p_.hosts[h].sku = idx;
    p_.skus.push_back(std::move(s));
    return idx;
  }

  void size_skus() {
    for (auto& s : p_.skus) {
      s.vcore = 0;
      s.mem_bytes = 0;
      for (size_t h : s.hosts) {
        const Host& f = p_.hosts[h].facts;
        int cpus = f.cpu ? f.cpu->logical : 0;
        int64_t mem = f.mem ? f.mem->total_bytes : 0;
        if (s.vcore == 0 || cpus < s.vcore) s.vcore = cpus;
        if (s.mem_bytes == 0 || mem < s.mem_bytes) s.mem_bytes = mem;
      }
      if (s.master) continue;
      s.reserve_cpu = o_.reserve_cpu >= 0 ? o_.reserve_cpu : default_reserve_cpu(s.vcore);
      s.reserve_memory =
          o_.reserve_memory >= 0 ? o_.reserve_memory : default_reserve_memory(s.mem_bytes);
      int cpu_left = s.vcore - s.reserve_cpu;
      int64_t mem_left = s.mem_bytes - s.reserve_memory;
      if (cpu_left < 1 || mem_left < kGiB) {
        error("P112", p_.hosts[s.hosts.front()].facts.origin,
              "SKU " + s.name + " has " + std::to_string(s.vcore) + " CPUs and " +
                  gib_text(s.mem_bytes) + ", nothing left after the reserve of " +
                  std::to_string(s.reserve_cpu) + " CPUs and " + gib_text(s.reserve_memory) +
                  " for system daemons",
              "check its lscpu and meminfo facts, or lower --reserve-cpu / --reserve-memory");
        cpu_left = std::max(cpu_left, 1);
        mem_left = std::max<int64_t>(mem_left, kGiB);
      }
      if (s.has_gpu) {
        s.leaves = s.gpus;
        double per = std::floor(static_cast<double>(cpu_left) / s.leaves);
        if (per < 1) {
          per = std::floor(100.0 * cpu_left / s.leaves) / 100.0;
          warning("P112", p_.hosts[s.hosts.front()].facts.origin,
                  "SKU " + s.name + " has fewer free CPUs (" + std::to_string(cpu_left) +
                      ") than GPUs (" + std::to_string(s.leaves) +
                      "); each GPU gets a fraction of a CPU");
        }
        s.cpu_per_leaf = per;
      } else {
        s.leaves = cpu_left;
        s.cpu_per_leaf = 1;
      }
      int64_t per_mem = mem_left / s.leaves;
      s.memory_per_leaf = per_mem >= kGiB ? per_mem / kGiB * kGiB : per_mem / kMiB * kMiB;
      s.level_types.clear();
      for (const auto& l : s.hierarchy.levels) s.level_types.push_back(s.prefix + "-" + l.kind);
      s.level_types.push_back(s.prefix + "-NODE");
      for (const auto& note : s.hierarchy.notes)
        info("P104", p_.hosts[s.hosts.front()].facts.origin, "SKU " + s.name + ": " + note);
    }
  }

  void assign_leaf_types() {
    std::set<std::string> defined;
    for (const auto& s : p_.skus)
      for (const auto& t : s.level_types) defined.insert(t);
    // Memory variants of one GPU model get the size in their leaf name.
    std::map<std::string, std::set<int64_t>> mems;
    for (const auto& s : p_.skus)
      if (s.has_gpu) mems[s.gpu_short].insert((s.gpu_memory_mib + 512) / 1024);
    std::map<std::string, int> primary;            // leaf name -> SKU that sets its skuTypes
    for (size_t i = 0; i < p_.skus.size(); ++i) {  // SKUs are ordered by host count, odd ones last
      Sku& s = p_.skus[i];
      if (s.master) continue;
      std::string base;
      if (s.has_gpu) {
        base = s.gpu_short;
        if (mems[s.gpu_short].size() > 1)
          base += "-" + std::to_string((s.gpu_memory_mib + 512) / 1024) + "G";
      } else {
        base = "CPU";
      }
      if (defined.count(base)) base += "-LEAF";
      auto it = primary.find(base);
      if (it == primary.end()) {
        primary[base] = static_cast<int>(i);
        s.leaf_type = base;
        continue;
      }
      const Sku& p = p_.skus[static_cast<size_t>(it->second)];
      if (s.cpu_per_leaf >= p.cpu_per_leaf && s.memory_per_leaf >= p.memory_per_leaf) {
        // It can honour the shared leaf type's sizes: jobs asking for this GPU type can run on it
        // too.
        s.leaf_type = base;
        s.cpu_per_leaf = p.cpu_per_leaf;
        s.memory_per_leaf = p.memory_per_leaf;
      } else {
        s.leaf_type = defined.count(s.prefix) ? s.prefix + "-LEAF" : s.prefix;
        info("P113", p_.hosts[s.hosts.front()].facts.origin,
             "SKU " + s.name + " gets its own leaf cell type " + s.leaf_type +
                 ": its hosts cannot give each " + base + " the " +
                 std::to_string(static_cast<int>(p.cpu_per_leaf)) + " CPUs and " +
                 gib_text(p.memory_per_leaf) + " of SKU " + p.name);
      }
    }
  }

  // --- cells -------------------------------------------------------------------------
  void build_chains() {
    for (size_t si = 0; si < p_.skus.size(); ++si) {
      const Sku& s = p_.skus[si];
      if (s.master || s.hosts.empty()) continue;
      std::map<std::string, std::vector<size_t>, bool (*)(const std::string&, const std::string&)>
          racks([](const std::string& a, const std::string& b) { return natural_less(a, b); });
      std::vector<size_t> loose;
      for (size_t h : s.hosts) {
        if (p_.hosts[h].excluded) continue;
        if (p_.hosts[h].facts.rack.empty())
          loose.push_back(h);
        else
          racks[p_.hosts[h].facts.rack].push_back(h);
      }
      // Types from the node down (shared by every chain of the SKU).
      std::vector<std::string> below;  // node -> leaf
      std::vector<int64_t> below_leaves;
      for (auto it = s.level_types.rbegin(); it != s.level_types.rend(); ++it) below.push_back(*it);
      below.push_back(s.leaf_type);
      below_leaves.push_back(s.leaves);
      for (auto it = s.hierarchy.levels.rbegin(); it != s.hierarchy.levels.rend(); ++it)
        below_leaves.push_back(it->gpus);
      below_leaves.push_back(1);

      std::set<size_t> sizes;
      for (const auto& [name, hs] : racks) sizes.insert(hs.size());
      std::map<size_t, int> chain_of_size;
      for (auto it = sizes.rbegin(); it != sizes.rend(); ++it) {
        Chain c;
        c.sku = static_cast<int>(si);
        c.name = sizes.size() == 1 ? s.prefix + "-RACK"
                                   : s.prefix + "-" + std::to_string(*it) + "NODE-RACK";
        c.types.push_back(c.name);
        c.leaves_per_cell.push_back(static_cast<int64_t>(*it) * s.leaves);
        c.types.insert(c.types.end(), below.begin(), below.end());
        c.leaves_per_cell.insert(c.leaves_per_cell.end(), below_leaves.begin(), below_leaves.end());
        chain_of_size[*it] = static_cast<int>(p_.chains.size());
        p_.chains.push_back(std::move(c));
      }
      for (const auto& [name, hs] : racks) {
        Chain& c = p_.chains[static_cast<size_t>(chain_of_size[hs.size()])];
        c.cells.push_back({label_of(s.name + "-" + name), hs});
      }
      if (!loose.empty()) {
        Chain c;
        c.sku = static_cast<int>(si);
        c.name = below.front();
        c.types = below;
        c.leaves_per_cell = below_leaves;
        for (size_t h : loose) c.cells.push_back({p_.hosts[h].facts.hostname, {h}});
        p_.chains.push_back(std::move(c));
      }
    }
  }

  // --- virtual clusters -------------------------------------------------------------
  enum class Unit : uint8_t { Percent, Leaves, Nodes };
  struct Share {
    int sku = -1;  // -1: every SKU
    Unit unit = Unit::Percent;
    double value = 0;
    std::string text;
  };
  struct Request {
    std::string name;
    std::vector<Share> shares;
  };

  std::vector<int> worker_skus() const {
    std::vector<int> out;
    for (size_t i = 0; i < p_.skus.size(); ++i) {
      const Sku& s = p_.skus[i];
      if (s.master) continue;
      bool any = false;
      for (size_t h : s.hosts) any |= !p_.hosts[h].excluded;
      if (any) out.push_back(static_cast<int>(i));
    }
    return out;
  }

  int64_t sku_capacity(int sku) const {
    int64_t n = 0;
    for (const auto& c : p_.chains)
      if (c.sku == sku) n += c.leaves();
    return n;
  }

  int sku_hosts(int sku) const {
    int n = 0;
    for (size_t h : p_.skus[static_cast<size_t>(sku)].hosts) n += !p_.hosts[h].excluded;
    return n;
  }

  std::string leaf_words(int sku, int64_t n) const {
    const Sku& s = p_.skus[static_cast<size_t>(sku)];
    return std::to_string(n) + " " + s.leaf_type + (s.has_gpu ? " GPU" : " cell") +
           (n == 1 ? "" : "s");
  }

  bool parse_requests(std::vector<Request>& out) {
    std::vector<int> skus = worker_skus();
    std::vector<std::string> sku_names;
    for (int s : skus) sku_names.push_back(p_.skus[static_cast<size_t>(s)].name);
    std::set<std::string> seen;
    bool ok = true;
    for (const auto& spec : o_.vcs) {
      auto bad = [&](const std::string& msg, const std::string& hint) {
        error("P105", "", "--vc " + spec + ": " + msg, hint);
        ok = false;
      };
      size_t eq = spec.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 >= spec.size()) {
        bad("expected NAME=SHARE", "e.g. --vc research=50% or --vc prod=dgx-a100:16,t4:2nodes");
        continue;
      }
      Request r;
      r.name = spec.substr(0, eq);
      if (!util::is_dns1123_label(r.name)) {
        bad("\"" + r.name + "\" is not a valid virtual cluster name",
            "use lower-case letters, digits and '-' (OpenPAI uses VC names in Kubernetes objects), "
            "e.g. " +
                label_of(r.name));
        continue;
      }
      if (!seen.insert(r.name).second) {
        bad("virtual cluster \"" + r.name + "\" is given twice",
            "give all its shares in one --vc, separated by commas");
        continue;
      }
      std::set<int> sku_seen;
      bool all_seen = false;
      for (auto part : util::split(std::string_view(spec).substr(eq + 1), ',')) {
        std::string_view t = util::trim(part);
        Share sh;
        sh.text = std::string(t);
        size_t colon = t.find(':');
        if (colon != std::string_view::npos) {
          std::string want = util::to_lower(util::trim(t.substr(0, colon)));
          for (int s : skus)
            if (p_.skus[static_cast<size_t>(s)].name == want ||
                util::to_lower(p_.skus[static_cast<size_t>(s)].prefix) == want ||
                (!p_.skus[static_cast<size_t>(s)].odd &&
                 p_.skus[static_cast<size_t>(s)].profile == want))
              sh.sku = s;
          if (sh.sku < 0) {
            std::string guess = util::did_you_mean(want, sku_names);
            bad("unknown SKU \"" + want + "\"",
                guess.empty() ? "the SKUs of this plan are: " + util::join(sku_names, ", ")
                              : "did you mean \"" + guess + "\"?");
            continue;
          }
          t = util::trim(t.substr(colon + 1));
        }
        std::string_view num = t;
        if (!num.empty() && num.back() == '%') {
          sh.unit = Unit::Percent;
          num.remove_suffix(1);
        } else if (num.size() > 5 && num.substr(num.size() - 5) == "nodes") {
          sh.unit = Unit::Nodes;
          num.remove_suffix(5);
        } else if (num.size() > 4 && num.substr(num.size() - 4) == "node") {
          sh.unit = Unit::Nodes;
          num.remove_suffix(4);
        } else if (num.size() > 1 && num.back() == 'n') {
          sh.unit = Unit::Nodes;
          num.remove_suffix(1);
        } else {
          sh.unit = Unit::Leaves;
        }
        std::optional<double> v;
        if (sh.unit == Unit::Percent)
          v = util::parse_double(util::trim(num));
        else if (auto i = util::parse_int(util::trim(num)))
          v = static_cast<double>(*i);
        if (!v || *v < 0 || (sh.unit == Unit::Percent && *v > 100) || *v > 1e9) {
          bad("\"" + sh.text + "\" is not a share",
              "a share is N% (of a SKU's GPUs), N (GPUs), or Nnodes, optionally after SKU: (e.g. "
              "dgx-a100:50%)");
          continue;
        }
        sh.value = static_cast<double>(*v);
        if (sh.sku < 0 && sh.unit != Unit::Percent) {
          if (skus.size() == 1) {
            sh.sku = skus.front();
          } else {
            bad("\"" + sh.text + "\" is a count, but the plan has " + std::to_string(skus.size()) +
                    " SKUs (" + util::join(sku_names, ", ") + ")",
                "say which SKU, e.g. " + r.name + "=" +
                    (sku_names.empty() ? "SKU" : sku_names.front()) + ":" + sh.text);
            continue;
          }
        }
        if (sh.sku < 0) {
          if (all_seen || !sku_seen.empty()) {
            bad("a share for every SKU (" + sh.text + ") cannot be combined with other shares",
                "give one share per SKU instead");
            continue;
          }
          all_seen = true;
        } else if (all_seen || !sku_seen.insert(sh.sku).second) {
          bad("SKU " + p_.skus[static_cast<size_t>(sh.sku)].name + " has two shares",
              "give one share per SKU");
          continue;
        }
        r.shares.push_back(sh);
      }
      out.push_back(std::move(r));
    }
    return ok;
  }

  std::string cells_words(const Chain& c, const VcChainCells& v) const {
    std::vector<std::string> parts;
    for (size_t l = 0; l < v.count.size(); ++l)
      if (v.count[l] > 0) parts.push_back(std::to_string(v.count[l]) + " " + c.types[l]);
    return parts.empty() ? "nothing" : util::join(parts, " + ");
  }

  VcChainCells decompose(int chain, int64_t leaves) const {
    const Chain& c = p_.chains[static_cast<size_t>(chain)];
    VcChainCells v;
    v.chain = chain;
    v.leaves = leaves;
    v.count.assign(c.types.size(), 0);
    int64_t rest = leaves;
    for (size_t l = 0; l < c.types.size(); ++l) {
      v.count[l] = rest / c.leaves_per_cell[l];
      rest -= v.count[l] * c.leaves_per_cell[l];
    }
    return v;
  }

  int node_level(int chain) const {
    const Chain& c = p_.chains[static_cast<size_t>(chain)];
    const Sku& s = p_.skus[static_cast<size_t>(c.sku)];
    return static_cast<int>(c.types.size()) - static_cast<int>(s.level_types.size()) - 1;
  }

  // A share of a chain as cells: one level (--vc-cells node) or the largest that fit.
  VcChainCells cells_of(int chain, int64_t leaves) const {
    if (o_.vc_cells == VcCells::Any) return decompose(chain, leaves);
    const Chain& c = p_.chains[static_cast<size_t>(chain)];
    OneLevelCells one = one_level_cells(c.leaves_per_cell, node_level(chain), leaves);
    VcChainCells v;
    v.chain = chain;
    v.count.assign(c.types.size(), 0);
    if (one.level >= 0) v.count[static_cast<size_t>(one.level)] = one.count;
    v.leaves = one.leaves;
    return v;
  }

  // P115: a VC with a large cell beside smaller ones in one chain.
  void warn_blockable(const VirtualCluster& vc) {
    for (const auto& cc : vc.chains) {
      const Chain& c = p_.chains[static_cast<size_t>(cc.chain)];
      auto sizes = blockable_sizes(c.leaves_per_cell, cc.count);
      if (sizes.empty()) continue;
      const Sku& sku = p_.skus[static_cast<size_t>(c.sku)];
      int64_t smallest = 0;
      for (size_t l = 0; l < cc.count.size(); ++l)
        if (cc.count[l] > 0) smallest = c.leaves_per_cell[l];
      std::vector<std::string> jobs, big;
      for (size_t l = 0; l < cc.count.size(); ++l)
        if (cc.count[l] > 0 && c.leaves_per_cell[l] > smallest)
          big.push_back(std::to_string(cc.count[l]) + " " + c.types[l]);
      for (int64_t n : sizes) jobs.push_back(std::to_string(n));
      warning("P115", "",
              "virtual cluster " + vc.name + " holds " + util::join(big, " + ") +
                  " beside smaller cells in chain " + c.name + " (" + cells_words(c, cc) +
                  "): a job of " + util::join(jobs, " or ") + " " + sku.leaf_type +
                  " can wait although the VC has that many free, when a smaller job arrived "
                  "first and HiveD placed it in the larger cell",
              "plan with --vc-cells node (the default) to give each VC whole cells of one level");
    }
  }

  void plan_vcs() {
    std::vector<Request> reqs;
    if (!parse_requests(reqs)) return;
    std::vector<int> skus = worker_skus();
    // Amount per VC per SKU.
    struct Want {
      size_t vc;
      int sku;
      int64_t leaves;
      bool nodes;
      std::string why;
    };
    std::vector<Want> wants;
    for (size_t v = 0; v < reqs.size(); ++v)
      for (const Share& sh : reqs[v].shares) {
        std::vector<int> targets = sh.sku >= 0 ? std::vector<int>{sh.sku} : skus;
        for (int s : targets) {
          const Sku& sku = p_.skus[static_cast<size_t>(s)];
          int64_t cap = sku_capacity(s);
          Want w{v, s, 0, false, ""};
          char buf[256];
          if (sh.unit == Unit::Percent) {
            double exact = sh.value * static_cast<double>(cap) / 100.0;
            w.leaves = static_cast<int64_t>(std::floor(exact + 1e-9));
            std::snprintf(buf, sizeof buf, "%g%% of %lld = %.2f, rounded down to %lld", sh.value,
                          static_cast<long long>(cap), exact, static_cast<long long>(w.leaves));
            w.why = std::string(buf);
          } else if (sh.unit == Unit::Nodes) {
            int n = static_cast<int>(sh.value);
            if (n > sku_hosts(s)) {
              error("P106", "",
                    "--vc " + reqs[v].name + " asks for " + std::to_string(n) + " nodes of SKU " +
                        sku.name + ", which has " + std::to_string(sku_hosts(s)),
                    "lower the node count");
              continue;
            }
            w.leaves = static_cast<int64_t>(n) * sku.leaves;
            w.nodes = true;
            w.why = std::to_string(n) + " node" + (n == 1 ? "" : "s") + " x " +
                    std::to_string(sku.leaves);
          } else {
            w.leaves = static_cast<int64_t>(sh.value);
            w.why = "asked for " + std::to_string(w.leaves);
          }
          wants.push_back(w);
        }
      }
    // Feasibility per SKU: the sum must fit (see the header for why that is enough).
    for (int s : skus) {
      int64_t cap = sku_capacity(s), sum = 0;
      std::vector<std::string> who;
      for (const auto& w : wants)
        if (w.sku == s && w.leaves > 0) {
          sum += w.leaves;
          who.push_back(reqs[w.vc].name + ": " + std::to_string(w.leaves));
        }
      if (sum > cap)
        error("P106", "",
              "the virtual clusters ask for " + leaf_words(s, sum) + " of SKU " +
                  p_.skus[static_cast<size_t>(s)].name + ", which has " + std::to_string(cap) +
                  " (" + util::join(who, ", ") + ")",
              "lower the shares; HiveD refuses to start when virtual clusters do not fit "
              "(Insufficient physical cells)");
    }
    if (p_.diagnostics.has_errors()) return;

    // Node requests first, so that they get whole nodes; then in command-line order.
    std::stable_sort(wants.begin(), wants.end(),
                     [](const Want& a, const Want& b) { return a.nodes > b.nodes; });
    std::vector<int64_t> left(p_.chains.size());
    for (size_t c = 0; c < p_.chains.size(); ++c) left[c] = p_.chains[c].leaves();
    p_.vcs.resize(reqs.size());
    for (size_t v = 0; v < reqs.size(); ++v) p_.vcs[v].name = reqs[v].name;
    for (const auto& w : wants) {
      VirtualCluster& vc = p_.vcs[w.vc];
      vc.leaves_by_sku[w.sku] += w.leaves;
      int64_t rest = w.leaves, cost = 0;
      std::vector<std::string> parts;
      // A job's pods must fit in one chain, so a request stays in one chain when one
      // can hold it all: the chain with the least room that does (best fit). Otherwise
      // it is spread over as few chains as possible, the roomiest first.
      std::vector<size_t> order;
      for (size_t c = 0; c < p_.chains.size(); ++c)
        if (p_.chains[c].sku == w.sku && left[c] > 0) order.push_back(c);
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        bool fa = left[a] >= rest, fb = left[b] >= rest;
        if (fa != fb) return fa;
        return fa ? left[a] < left[b] : left[a] > left[b];
      });
      for (size_t c : order) {
        if (rest == 0) break;
        int64_t take = std::min(rest, left[c]);
        rest -= take;
        VcChainCells cells = cells_of(static_cast<int>(c), take);
        left[c] -= cells.leaves;
        cost += take - cells.leaves;
        if (cells.leaves == 0) continue;
        parts.push_back(cells_words(p_.chains[c], cells));
        vc.chains.push_back(std::move(cells));
      }
      const Sku& sku = p_.skus[static_cast<size_t>(w.sku)];
      vc.leaves_by_sku[w.sku] -= cost;
      vc.rounding_cost += cost;
      vc.explanations.push_back(
          sku.name + ": " + w.why + " " + sku.leaf_type + " -> " +
          (parts.empty() ? "nothing" : util::join(parts, " + ")) +
          (cost > 0 ? " (whole cells of one level: " + leaf_words(w.sku, cost) + " fewer)" : ""));
      if (w.leaves - cost == 0)
        warning("P108", "",
                "virtual cluster " + vc.name + " gets no " + sku.leaf_type + " of SKU " + sku.name +
                    " (" + w.why + ")",
                "raise its share");
    }
    // The rest goes to default.
    std::map<int, int64_t> unassigned;  // per SKU: what whole cells of one level left over
    int def = -1;
    for (size_t v = 0; v < p_.vcs.size(); ++v)
      if (p_.vcs[v].name == "default") def = static_cast<int>(v);
    for (size_t c = 0; c < p_.chains.size(); ++c) {
      if (left[c] == 0) continue;
      if (def < 0) {
        VirtualCluster d;
        d.name = "default";
        d.is_default = true;
        p_.vcs.push_back(std::move(d));
        def = static_cast<int>(p_.vcs.size() - 1);
      }
      VirtualCluster& d = p_.vcs[static_cast<size_t>(def)];
      VcChainCells cells = cells_of(static_cast<int>(c), left[c]);
      int s = p_.chains[c].sku;
      const int64_t cost = left[c] - cells.leaves;
      d.leaves_by_sku[s] += cells.leaves;
      d.rounding_cost += cost;
      d.explanations.push_back(
          p_.skus[static_cast<size_t>(s)].name + ": the rest of chain " + p_.chains[c].name + ", " +
          std::to_string(left[c]) + " " + p_.skus[static_cast<size_t>(s)].leaf_type + " -> " +
          cells_words(p_.chains[c], cells) +
          (cost > 0 ? " (whole cells of one level: " + leaf_words(s, cost) + " in no VC)" : ""));
      if (cost > 0) unassigned[s] += cost;
      if (cells.leaves > 0) d.chains.push_back(std::move(cells));
    }
    if (!reqs.empty()) {
      std::vector<std::string> rests;
      for (int s : skus) {
        int64_t rest = 0;
        for (size_t c = 0; c < p_.chains.size(); ++c)
          if (p_.chains[c].sku == s) rest += left[c];
        if (auto u = unassigned.find(s); u != unassigned.end()) rest -= u->second;
        if (rest > 0)
          rests.push_back(leaf_words(s, rest) + " of " + p_.skus[static_cast<size_t>(s)].name);
      }
      if (!rests.empty())
        warning("P107", "",
                "what no requested virtual cluster gets goes to virtual cluster default: " +
                    util::join(rests, ", "),
                "that is the rounding down of percentages and what the shares leave; give it to a "
                "VC with --vc "
                "NAME=SKU:N, or keep default for shared use");
    }
    if (!unassigned.empty()) {
      std::vector<std::string> parts;
      for (const auto& [s, n] : unassigned)
        parts.push_back(leaf_words(s, n) + " of " + p_.skus[static_cast<size_t>(s)].name);
      warning("P116", "",
              "what is left after whole cells of one level is in no virtual cluster: " +
                  util::join(parts, ", "),
              "opportunistic jobs (priority -1) still use it; --vc-cells any gives it to default "
              "as smaller cells, which can block jobs of default (warning P115)");
    }
    // A VC that got nothing at all is left out (HiveD needs cells to guarantee).
    for (size_t v = 0; v < p_.vcs.size();) {
      int64_t total = 0;
      for (const auto& c : p_.vcs[v].chains) total += c.leaves;
      if (total == 0) {
        warning("P108", "",
                "virtual cluster " + p_.vcs[v].name + " gets no cells, so it is left out",
                "raise its share");
        p_.vcs.erase(p_.vcs.begin() + static_cast<long>(v));
      } else {
        // Cells of one chain and level merged, in chain order.
        std::map<int, VcChainCells> merged;
        for (auto& c : p_.vcs[v].chains) {
          auto [it, fresh] = merged.emplace(c.chain, c);
          if (!fresh) {
            for (size_t l = 0; l < c.count.size(); ++l) it->second.count[l] += c.count[l];
            it->second.leaves += c.leaves;
          }
        }
        // Pieces of one chain (a share and the rest for default) become the largest cells
        // again; of one level when that loses nothing.
        p_.vcs[v].chains.clear();
        for (auto& [k, c] : merged) {
          VcChainCells one = cells_of(k, c.leaves);
          p_.vcs[v].chains.push_back(one.leaves == c.leaves ? one : decompose(k, c.leaves));
        }
        warn_blockable(p_.vcs[v]);
        ++v;
      }
    }
  }
};

}  // namespace

Plan make_plan(std::vector<Host> hosts, const PlanOptions& options) {
  Plan plan;
  Planner p(std::move(hosts), options, plan);
  p.run();
  return plan;
}

}  // namespace pai::planner
