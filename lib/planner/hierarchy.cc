#include "planner/hierarchy.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace pai::planner {

std::string Hierarchy::signature() const {
  std::string s = std::to_string(gpus) + ":";
  for (const auto& l : levels) s += l.kind + std::to_string(l.children) + "/";
  s += "NODE" + std::to_string(node_children);
  return s;
}

bool Hierarchy::identity_order() const {
  for (size_t i = 0; i < leaf_order.size(); ++i)
    if (leaf_order[i] != static_cast<int>(i)) return false;
  return true;
}

namespace {

constexpr int kMaxGroupedGpus = 32;

struct Dist {
  int link = 0;    // facts::link_rank of the GPU-GPU link (every NV# is NVLink)
  int numa = 0;    // 0 same NUMA node (or unknown), 1 same socket, 2 different sockets
  int nv = 0;      // -bonded NVLinks (more is closer)
  int shared = 0;  // NVLink peers: PCIe rank of the path to the closest common NIC
  auto key() const { return std::tie(link, numa, nv, shared); }
  bool operator<(const Dist& o) const { return key() < o.key(); }
  bool operator==(const Dist& o) const { return key() == o.key(); }
  bool operator<=(const Dist& o) const { return !(o < *this); }
};

const char* kind_of_rank(int rank) {
  switch (rank) {
    case 1:
      return "NVLINK";
    case 2:
      return "SWITCH";
    case 3:
      return "PCIE";
    case 4:
      return "HOSTBRIDGE";
    case 5:
      return "NUMA";
    default:
      return "GROUP";
  }
}

const char* link_words(int rank) {
  switch (rank) {
    case 2:
      return "one PCIe switch (PIX/PSB)";
    case 3:
      return "PCIe switches below one host bridge (PXB)";
    case 4:
      return "one PCIe host bridge (PHB)";
    case 5:
      return "one NUMA node (NODE)";
    default:
      return "the system interconnect (SYS)";
  }
}

}  // namespace

Hierarchy derive_hierarchy(const Host& host) {
  Hierarchy h;
  if (!host.topo) {
    for (const auto& g : host.gpus) h.leaf_order.push_back(g.index);
    h.gpus = static_cast<int>(h.leaf_order.size());
    h.node_children = h.gpus;
    if (h.gpus > 1)
      h.notes.push_back("no topology matrix (topo.txt), so the node is one flat cell of GPUs");
    return h;
  }
  const facts::TopoMatrix& m = *host.topo;
  const std::vector<size_t> gpu = m.gpu_positions();
  std::vector<size_t> nic;
  for (size_t i = 0; i < m.devices.size(); ++i)
    if (m.devices[i].kind == facts::TopoDevice::Kind::Nic) nic.push_back(i);
  const int g = static_cast<int>(gpu.size());
  h.gpus = g;
  if (g == 0) return h;
  if (g > kMaxGroupedGpus) {
    // No machine has that many GPUs under one OS; keep the work bounded on odd input.
    for (size_t p : gpu) h.leaf_order.push_back(m.devices[p].index);
    h.node_children = g;
    h.notes.push_back(std::to_string(g) + " GPUs in one matrix is more than " +
                      std::to_string(kMaxGroupedGpus) + ", so the node is one flat cell");
    return h;
  }

  // NUMA node and socket of each GPU.
  std::vector<int> numa(g, -1), socket(g, -1);
  bool real_numa = true;
  std::map<std::string, int> pseudo;
  for (int i = 0; i < g; ++i) {
    const facts::TopoDevice& d = m.devices[gpu[i]];
    if (d.numa_affinity >= 0) {
      numa[i] = d.numa_affinity;
    } else if (!d.cpus.empty() && host.cpu && !host.cpu->numa_cpus.empty()) {
      numa[i] = host.cpu->numa_of_cpu(d.cpus.front());
    }
    if (numa[i] < 0 && !d.cpu_affinity.empty()) {
      auto [it, fresh] = pseudo.emplace(d.cpu_affinity, static_cast<int>(pseudo.size()));
      numa[i] = it->second;
      real_numa = false;
    }
  }
  if (host.cpu && host.cpu->sockets > 0) {
    const facts::CpuInfo& c = *host.cpu;
    for (int i = 0; i < g; ++i) {
      if (numa[i] < 0) continue;
      if (c.sockets == 1)
        socket[i] = 0;
      else if (real_numa && c.numa_nodes >= c.sockets && c.numa_nodes % c.sockets == 0)
        socket[i] = numa[i] / (c.numa_nodes / c.sockets);
    }
  }

  auto link_between = [&](size_t a, size_t b) -> const facts::Link& {
    const facts::Link& x = m.link(a, b);
    const facts::Link& y = m.link(b, a);
    if (x.kind == facts::LinkKind::Unknown) return y;
    if (y.kind == facts::LinkKind::Unknown) return x;
    if (facts::link_rank(y.kind) < facts::link_rank(x.kind) ||
        (y.kind == x.kind && y.nvlinks > x.nvlinks))
      return y;
    return x;
  };
  std::vector<std::vector<Dist>> dist(g, std::vector<Dist>(g));
  for (int a = 0; a < g; ++a)
    for (int b = 0; b < g; ++b) {
      if (a == b) continue;
      Dist d;
      const facts::Link& l = link_between(gpu[a], gpu[b]);
      d.link = facts::link_rank(l.kind);
      if (l.kind == facts::LinkKind::NVLink) {
        d.nv = -l.nvlinks;
        int best = 0;
        for (size_t n : nic) {
          int r = std::max(facts::link_rank(link_between(gpu[a], n).kind),
                           facts::link_rank(link_between(gpu[b], n).kind));
          if (best == 0 || r < best) best = r;
        }
        d.shared = best;
      }
      if (numa[a] >= 0 && numa[b] >= 0 && numa[a] != numa[b])
        d.numa = (socket[a] >= 0 && socket[a] == socket[b]) ? 1 : 2;
      dist[a][b] = d;
    }

  // Complete-linkage agglomeration, one candidate level per threshold.
  std::vector<Dist> thresholds;
  for (int a = 0; a < g; ++a)
    for (int b = a + 1; b < g; ++b) thresholds.push_back(dist[a][b]);
  std::sort(thresholds.begin(), thresholds.end());
  thresholds.erase(std::unique(thresholds.begin(), thresholds.end()), thresholds.end());

  std::vector<std::vector<int>> clusters;
  for (int i = 0; i < g; ++i) clusters.push_back({i});
  auto max_dist = [&](const std::vector<int>& x, const std::vector<int>& y) {
    Dist worst;
    for (int a : x)
      for (int b : y)
        if (worst < dist[a][b]) worst = dist[a][b];
    return worst;
  };
  struct Candidate {
    std::vector<std::vector<int>> clusters;
    Dist threshold;
  };
  std::vector<Candidate> candidates;
  for (const Dist& t : thresholds) {
    bool changed = false;
    for (size_t a = 0; a < clusters.size(); ++a) {
      for (size_t b = a + 1; b < clusters.size();) {
        if (max_dist(clusters[a], clusters[b]) <= t) {
          clusters[a].insert(clusters[a].end(), clusters[b].begin(), clusters[b].end());
          clusters.erase(clusters.begin() + static_cast<long>(b));
          changed = true;
        } else {
          ++b;
        }
      }
    }
    if (changed && clusters.size() > 1) candidates.push_back({clusters, t});
  }

  // Keep the levels HiveD can express: equal group sizes.
  std::vector<Candidate> kept;
  for (auto& c : candidates) {
    size_t size = c.clusters.front().size();
    bool uniform = true;
    for (const auto& cl : c.clusters) uniform &= cl.size() == size;
    if (!uniform) {
      std::string sizes;
      for (const auto& cl : c.clusters)
        sizes += (sizes.empty() ? "" : "+") + std::to_string(cl.size());
      h.notes.push_back("GPUs group as " + sizes +
                        " at one level; HiveD needs equal groups, so that level is left out");
      continue;
    }
    for (auto& cl : c.clusters) std::sort(cl.begin(), cl.end());
    std::sort(c.clusters.begin(), c.clusters.end());
    kept.push_back(std::move(c));
  }

  // Names and child counts.
  auto all_of_group = [&](const std::vector<int>& cl, const std::vector<int>& key) {
    int k = key[cl.front()];
    if (k < 0) return false;
    for (int i : cl)
      if (key[i] != k) return false;
    int members = 0;
    for (int i = 0; i < g; ++i) members += key[i] == k;
    return members == static_cast<int>(cl.size());
  };
  auto distinct = [&](const std::vector<int>& key) {
    std::vector<int> v;
    for (int k : key)
      if (k >= 0 && std::find(v.begin(), v.end(), k) == v.end()) v.push_back(k);
    return v.size();
  };
  // The PCIe closeness of a pair: its link, or for NVLink peers the path they share to a NIC (0:
  // unknown).
  auto pcie = [&](int a, int b) {
    return dist[a][b].link == 1 ? dist[a][b].shared : dist[a][b].link;
  };
  int prev = 1;
  for (size_t ki = 0; ki < kept.size(); ++ki) {
    const Candidate& c = kept[ki];
    HierarchyLevel lvl;
    lvl.gpus = static_cast<int>(c.clusters.front().size());
    lvl.children = lvl.gpus / prev;
    prev = lvl.gpus;
    bool is_socket = distinct(socket) >= 2, is_numa = distinct(numa) >= 2;
    for (const auto& cl : c.clusters) {
      is_socket &= all_of_group(cl, socket);
      is_numa &= all_of_group(cl, numa);
    }
    // What the groups share inside, against the other groups of the same parent cell.
    std::vector<int> parent(g, 0);
    if (ki + 1 < kept.size())
      for (size_t k = 0; k < kept[ki + 1].clusters.size(); ++k)
        for (int i : kept[ki + 1].clusters[k]) parent[i] = static_cast<int>(k);
    std::vector<int> group(g, 0);
    for (size_t k = 0; k < c.clusters.size(); ++k)
      for (int i : c.clusters[k]) group[i] = static_cast<int>(k);
    bool in_nv = true, out_nv = true, any_out = false;
    int in_pcie = 0, out_pcie = 99, in_nv_min = 1 << 20, out_nv_max = 0, in_numa = 0, out_numa = 99;
    for (int a = 0; a < g; ++a)
      for (int b = a + 1; b < g; ++b) {
        if (parent[a] != parent[b]) continue;
        const Dist& d = dist[a][b];
        if (group[a] == group[b]) {
          in_nv &= d.link == 1;
          in_pcie = std::max(in_pcie, pcie(a, b));
          in_nv_min = std::min(in_nv_min, d.link == 1 ? -d.nv : 0);
          in_numa = std::max(in_numa, d.numa);
        } else {
          any_out = true;
          out_nv &= d.link == 1;
          out_pcie = std::min(out_pcie, pcie(a, b));
          out_nv_max = std::max(out_nv_max, d.link == 1 ? -d.nv : 0);
          out_numa = std::min(out_numa, d.numa);
        }
      }
    if (is_socket) {
      lvl.kind = "SOCKET";
      lvl.reason = "the GPUs of one CPU socket";
    } else if (is_numa) {
      lvl.kind = "NUMA";
      lvl.reason = "the GPUs of one NUMA node";
    } else if (any_out && in_nv && !out_nv) {
      lvl.kind = "NVLINK";
      lvl.reason = "GPUs joined by NVLink";
    } else if (any_out && in_pcie > 0 && in_pcie < out_pcie) {
      lvl.kind = kind_of_rank(in_pcie);
      lvl.reason = std::string(in_nv ? "NVLink peers that also share " : "GPUs on ") +
                   link_words(in_pcie) + (in_nv ? " towards a NIC" : "");
    } else if (any_out && in_numa < out_numa && in_numa <= 1) {
      lvl.kind = in_numa == 0 ? "NUMA" : "SOCKET";
      lvl.reason = in_numa == 0 ? "GPUs of one NUMA node" : "GPUs of one CPU socket";
    } else if (any_out && in_nv && in_nv_min > out_nv_max) {
      lvl.kind = "NVLINK";
      lvl.reason = "GPUs joined by NV" + std::to_string(in_nv_min) + " links or more";
    } else {
      lvl.kind = "GROUP";
      lvl.reason = "GPUs closer to each other than to the rest";
    }
    h.levels.push_back(std::move(lvl));
  }
  // Unique names: a repeated kind gets the size of its cells.
  std::map<std::string, int> uses;
  for (const auto& l : h.levels) ++uses[l.kind];
  for (auto& l : h.levels)
    if (uses[l.kind] > 1) l.kind += "-" + std::to_string(l.gpus) + "GPU";
  h.node_children = g / prev;

  // Leaf order: by group at each kept level from the top, then by column.
  std::vector<std::vector<int>> key(g);
  for (int i = 0; i < g; ++i) {
    for (auto it = kept.rbegin(); it != kept.rend(); ++it)
      for (size_t k = 0; k < it->clusters.size(); ++k)
        if (std::find(it->clusters[k].begin(), it->clusters[k].end(), i) != it->clusters[k].end())
          key[i].push_back(it->clusters[k].front());
    key[i].push_back(i);
  }
  std::vector<int> order(g);
  for (int i = 0; i < g; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](int a, int b) { return key[a] < key[b]; });
  for (int i : order) h.leaf_order.push_back(m.devices[gpu[i]].index);
  return h;
}

}  // namespace pai::planner
