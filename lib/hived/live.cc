#include "hived/live.h"

#include "scheduler/hived.h"

#include <algorithm>
#include <future>
#include <set>
#include <string_view>
#include <unordered_map>

namespace pai::hived {

namespace {

std::string vc_name(const config::HivedModel& m, int32_t vc) {
  return vc >= 0 && static_cast<size_t>(vc) < m.vcs.size() ? m.vcs[static_cast<size_t>(vc)].name
                                                           : std::string();
}

std::string leaf_type_of_chain(const config::HivedModel& m, int32_t chain) {
  if (chain < 0) return {};
  return m.type_name(m.chains[static_cast<size_t>(chain)].leaf_type);
}

std::string vtype(const config::HivedModel& m, int32_t chain, int32_t level) {
  const auto& ch = m.chains[static_cast<size_t>(chain)];
  if (level < 0 || static_cast<size_t>(level) >= ch.level_type.size()) return {};
  return m.type_name(ch.level_type[static_cast<size_t>(level)]);
}

bool virtual_is_node_level(const config::HivedModel& m, int32_t chain, int32_t level) {
  const auto& ch = m.chains[static_cast<size_t>(chain)];
  int32_t t = ch.level_type[static_cast<size_t>(level)];
  if (t < 0) return false;
  const auto& ti = m.types[static_cast<size_t>(t)];
  return ti.has_node && !ti.is_multi_nodes;
}

CellStatus physical_common(const config::HivedModel& m, const scheduler::HivedState& s, int32_t c) {
  const auto& mc = m.cells[static_cast<size_t>(c)];
  const auto& sc = s.cells[static_cast<size_t>(c)];
  CellStatus o;
  o.cell_type = m.type_name(mc.type);
  o.is_node_level = mc.is_node;
  o.cell_address = mc.address;
  o.cell_state = std::string(scheduler::to_string(sc.state));
  o.cell_healthiness = sc.healthy ? "Healthy" : "Bad";
  o.cell_priority = sc.priority;
  return o;
}

std::string physical_vc(const config::HivedModel& m, const scheduler::HivedState& s, int32_t c) {
  const auto& sc = s.cells[static_cast<size_t>(c)];
  if (sc.vcell >= 0) return vc_name(m, s.vcells[static_cast<size_t>(sc.vcell)].vc);
  if (sc.opp_vc >= 0) return vc_name(m, sc.opp_vc);
  return {};
}

CellStatus virtual_common(const config::HivedModel& m, const scheduler::HivedState& s, int32_t v) {
  const auto& vs = s.vcells[static_cast<size_t>(v)];
  CellStatus o;
  o.cell_type = vtype(m, vs.chain, vs.level);
  o.is_node_level = virtual_is_node_level(m, vs.chain, vs.level);
  o.cell_address = vs.address;
  if (vs.pcell >= 0) {
    const auto& pc = s.cells[static_cast<size_t>(vs.pcell)];
    o.cell_state = std::string(scheduler::to_string(pc.state));
    o.cell_healthiness = pc.healthy ? "Healthy" : "Bad";
  } else {
    o.cell_state = "Free";
    o.cell_healthiness = "Healthy";
  }
  o.cell_priority = vs.priority;
  return o;
}

PhysicalCellStatus physical_tree(const config::HivedModel& m, const scheduler::HivedState& s,
                                 int32_t c) {
  PhysicalCellStatus o;
  static_cast<CellStatus&>(o) = physical_common(m, s, c);
  for (int32_t ch : m.cells[static_cast<size_t>(c)].children)
    o.children.push_back(physical_tree(m, s, ch));
  o.vc = physical_vc(m, s, c);
  if (int32_t v = s.cells[static_cast<size_t>(c)].vcell; v >= 0) {
    auto vs = std::make_shared<VirtualCellStatus>();
    static_cast<CellStatus&>(*vs) = virtual_common(m, s, v);
    o.virtual_cell = vs;
  }
  return o;
}

VirtualCellStatus virtual_tree(const config::HivedModel& m, const scheduler::HivedState& s,
                               int32_t v) {
  VirtualCellStatus o;
  static_cast<CellStatus&>(o) = virtual_common(m, s, v);
  for (int32_t ch : s.vcells[static_cast<size_t>(v)].children)
    o.children.push_back(virtual_tree(m, s, ch));
  if (int32_t p = s.vcells[static_cast<size_t>(v)].pcell; p >= 0) {
    auto ps = std::make_shared<PhysicalCellStatus>();
    static_cast<CellStatus&>(*ps) = physical_common(m, s, p);
    ps->vc = physical_vc(m, s, p);
    o.physical_cell = ps;
  }
  return o;
}

// "VC/3/1/0" -> "VC/3"
std::string root_of(const std::string& vaddr) {
  size_t a = vaddr.find('/');
  if (a == std::string::npos) return vaddr;
  size_t b = vaddr.find('/', a + 1);
  return b == std::string::npos ? vaddr : vaddr.substr(0, b);
}

}  // namespace

ClusterStatus cluster_status_of(const config::HivedModel& m, const scheduler::HivedState& s) {
  ClusterStatus out;
  for (size_t ci = 0; ci < m.chains.size(); ++ci)
    for (int32_t top : m.chains[ci].top_cells) {
      PhysicalCellStatus t = physical_tree(m, s, top);
      t.leaf_cell_type = leaf_type_of_chain(m, static_cast<int32_t>(ci));
      out.physical_cluster.push_back(std::move(t));
    }
  for (size_t vc = 0; vc < m.vcs.size(); ++vc) {
    VirtualClusterStatus list;
    if (vc < s.vc_roots.size())
      for (int32_t root : s.vc_roots[vc]) {
        VirtualCellStatus t = virtual_tree(m, s, root);
        t.leaf_cell_type = leaf_type_of_chain(m, s.vcells[static_cast<size_t>(root)].chain);
        list.push_back(std::move(t));
      }
    // HiveD lists a VC's opportunistic leaves as fake virtual cells "<address>-opp".
    for (size_t c = 0; c < s.cells.size(); ++c) {
      const auto& sc = s.cells[c];
      if (sc.opp_vc != static_cast<int32_t>(vc) || sc.priority != -1) continue;
      VirtualCellStatus o;
      auto pc = std::make_shared<PhysicalCellStatus>();
      static_cast<CellStatus&>(*pc) = physical_common(m, s, static_cast<int32_t>(c));
      pc->vc = physical_vc(m, s, static_cast<int32_t>(c));
      o.cell_type = pc->cell_type;
      o.cell_address = pc->cell_address + "-opp";
      o.cell_state = "Used";
      o.cell_healthiness = pc->cell_healthiness;
      o.cell_priority = -1;
      o.physical_cell = pc;
      list.push_back(std::move(o));
    }
    out.virtual_clusters[m.vcs[vc].name] = std::move(list);
  }
  return out;
}

std::vector<AffinityGroup> affinity_groups_of(
    const config::HivedModel& m, const scheduler::HivedState& s,
    const std::map<std::string, LazyPreemptionStatus>& lazy) {
  std::vector<AffinityGroup> out;
  for (const auto& g : s.groups) {
    AffinityGroup a;
    a.name = g.name;
    a.vc = vc_name(m, g.vc);
    a.priority = g.priority;
    a.state = std::string(scheduler::to_string(g.phase));
    for (int32_t leaf : g.leaves) {
      const auto& mc = m.cells[static_cast<size_t>(leaf)];
      a.physical_placement[m.nodes[static_cast<size_t>(mc.node)].name].push_back(mc.leaf_index);
    }
    if (!g.lazy_preempted)
      for (int32_t v : g.vleaves) {
        if (v < 0) continue;
        const auto& vs = s.vcells[static_cast<size_t>(v)];
        a.virtual_placement[s.vcells[static_cast<size_t>(vs.preassigned)].address].push_back(
            vs.address);
      }
    // Pod UIDs: one pod per entry of pod_leaf_numbers, named after the group.
    auto& pods =
        g.phase == scheduler::GroupPhase::Preempting ? a.preempting_pods : a.allocated_pods;
    for (size_t i = 0; i < g.pod_leaf_numbers.size(); ++i)
      pods.push_back(g.name + "-pod-" + std::to_string(i));
    if (g.lazy_preempted) {
      auto it = lazy.find(g.name);
      a.lazy_preemption_status = it != lazy.end() ? it->second : LazyPreemptionStatus{};
    }
    out.push_back(std::move(a));
  }
  return out;
}

LiveState index_live(ClusterStatus status, std::vector<AffinityGroup> groups) {
  LiveState live;
  live.status = std::move(status);
  live.groups = std::move(groups);
  std::unordered_map<std::string, size_t> node_at;
  struct Walk {
    LiveState& live;
    std::unordered_map<std::string, size_t>& node_at;
    void operator()(const PhysicalCellStatus& c, const std::string& chain, const std::string& sku,
                    const std::string& node) {
      std::string named;
      if (c.is_node_level) named = last_segment(c.cell_address);
      const std::string& here = c.is_node_level ? named : node;
      if (c.is_node_level) {
        auto [it, fresh] = node_at.emplace(here, live.nodes.size());
        if (fresh) live.nodes.push_back({here, true, {}, {}});
        LiveNode& n = live.nodes[it->second];
        if (c.cell_healthiness == "Bad") n.healthy = false;
        if (std::find(n.chains.begin(), n.chains.end(), chain) == n.chains.end())
          n.chains.push_back(chain);
      }
      if (c.children.empty()) {
        LiveLeaf l;
        l.node = here;
        try {
          l.index = std::stoi(last_segment(c.cell_address));
        } catch (...) {
          l.index = -1;
        }
        l.chain = chain;
        l.leaf_type = sku;
        l.address = c.cell_address;
        l.state = c.cell_state;
        l.healthy = c.cell_healthiness == "Healthy";
        l.priority = c.cell_priority;
        l.vc = c.vc;
        if (c.virtual_cell) l.vaddress = c.virtual_cell->cell_address;
        size_t idx = live.leaves.size();
        live.leaf_index[here + ":" + std::to_string(l.index)] = idx;
        live.leaves.push_back(std::move(l));
        if (auto it = node_at.find(here); it != node_at.end())
          live.nodes[it->second].leaves.push_back(idx);
        return;
      }
      for (const auto& k : c.children) (*this)(k, chain, sku, here);
    }
  };
  Walk walk{live, node_at};
  size_t cells = 0;
  for (const auto& top : live.status.physical_cluster) {
    std::vector<const PhysicalCellStatus*> stack{&top};
    while (!stack.empty()) {
      const PhysicalCellStatus* c = stack.back();
      stack.pop_back();
      if (c->children.empty()) ++cells;
      for (const auto& k : c->children) stack.push_back(&k);
    }
  }
  live.leaves.reserve(cells);
  live.leaf_index.reserve(cells);
  for (const auto& top : live.status.physical_cluster)
    walk(top, top.cell_type, top.leaf_cell_type, "");
  for (const auto& [vc, cells] : live.status.virtual_clusters)
    for (const auto& c : cells)
      if (c.cell_priority != -1 || c.cell_address.size() < 4 ||
          c.cell_address.compare(c.cell_address.size() - 4, 4, "-opp") != 0)
        live.root_types[c.cell_address] = c.cell_type;
  for (const auto& g : live.groups)
    for (const auto& [node, idxs] : g.physical_placement)
      for (int32_t i : idxs) {
        auto it = live.leaf_index.find(node + ":" + std::to_string(i));
        if (it == live.leaf_index.end()) {
          live.warnings.push_back("group " + g.name + " is on " + node + " GPU " +
                                  std::to_string(i) + ", which the physical cluster does not list");
          continue;
        }
        LiveLeaf& leaf = live.leaves[it->second];
        // A preempting group lists the leaves it reserved, where its victims
        // may still run: they hold the leaf, it waits for them.
        if (g.state == "Preempting") {
          leaf.reserved_by = g.name;
          continue;
        }
        leaf.group = g.name;
        leaf.holder_priority = g.priority;
        leaf.holder_lazy = g.lazy_preemption_status.has_value();
      }
  // A reserved leaf whose victims are gone: the preemptor's, until it binds.
  for (auto& leaf : live.leaves)
    if (leaf.group.empty() && !leaf.reserved_by.empty()) {
      leaf.group = leaf.reserved_by;
      leaf.holder_priority = leaf.priority;
    }
  return live;
}

std::vector<scheduler::LiveGroup> live_groups(const LiveState& live,
                                              const config::HivedModel* config) {
  std::vector<scheduler::LiveGroup> out;
  for (const auto& g : live.groups) {
    // A preempting group has no pods bound yet: a restarted HiveD does not know it.
    if (g.state == "Preempting") continue;
    scheduler::LiveGroup lg;
    lg.name = g.name;
    lg.vc = g.vc;
    lg.priority = g.priority;
    lg.lazy_preempted = g.lazy_preemption_status.has_value();
    if (lg.lazy_preempted) lg.lazy_preemptor = g.lazy_preemption_status->preemptor;
    const bool guaranteed = g.priority >= 0 && !lg.lazy_preempted;
    // Pinned trees come after the VC's other virtual cells: the group's first
    // virtual root tells whether it runs in one (asked once per group).
    const config::VirtualClusterInfo* pin_vc = config ? config->find_vc(g.vc) : nullptr;
    bool pin_asked = pin_vc == nullptr;
    for (const auto& [node, idxs] : g.physical_placement) {
      scheduler::LiveGroup::Pod pod;
      pod.node = node;
      for (int32_t i : idxs) {
        pod.leaf_indices.push_back(i);
        std::string type;
        auto it = live.leaf_index.find(node + ":" + std::to_string(i));
        if (it != live.leaf_index.end()) {
          const LiveLeaf& leaf = live.leaves[it->second];
          if (lg.chain.empty()) lg.chain = leaf.chain;
          if (guaranteed && !leaf.vaddress.empty()) {
            std::string root = root_of(leaf.vaddress);
            if (auto rt = live.root_types.find(root); rt != live.root_types.end())
              type = rt->second;
            if (!pin_asked) {
              pin_asked = true;
              int64_t plain = 0;
              for (const auto& c : pin_vc->cells) plain += c.count;
              try {
                int64_t k = std::stoll(last_segment(root));
                if (k >= plain && static_cast<size_t>(k - plain) < pin_vc->pinned.size())
                  lg.pinned_cell_id = pin_vc->pinned[static_cast<size_t>(k - plain)].id;
              } catch (...) {
              }
            }
          }
        }
        pod.preassigned_cell_types.push_back(type);
      }
      lg.pods.push_back(std::move(pod));
    }
    out.push_back(std::move(lg));
  }
  return out;
}

std::vector<std::string> bad_nodes(const LiveState& live) {
  std::vector<std::string> out;
  for (const auto& n : live.nodes)
    if (!n.healthy) out.push_back(n.name);
  return out;
}

util::Result<std::unique_ptr<scheduler::Policy>> policy_now(
    const LiveState& live, const config::HivedModel& model,
    std::vector<scheduler::RestoredGroup>* restored) {
  auto made = scheduler::make_hived_policy(model);
  if (!made.ok()) return std::move(made).error();
  std::unique_ptr<scheduler::Policy> policy = std::move(*made);
  for (const auto& n : bad_nodes(live))
    if (int32_t i = policy->cluster().find_node(n); i >= 0) policy->set_node_health(i, false);
  auto r = scheduler::restore_hived_groups(*policy, live_groups(live, &model));
  if (restored && r) *restored = std::move(*r);
  return policy;
}

Summary summarize(const LiveState& live) {
  Summary s;
  std::map<std::pair<std::string, std::string>, size_t> level_at;
  struct Count {
    Summary& s;
    std::map<std::pair<std::string, std::string>, size_t>& at;
    int32_t operator()(const PhysicalCellStatus& c, const std::string& chain) {
      int32_t level = 1;
      for (const auto& k : c.children) level = std::max(level, (*this)(k, chain) + 1);
      auto key = std::make_pair(chain, c.cell_type);
      auto [it, fresh] = at.emplace(key, s.levels.size());
      if (fresh) s.levels.push_back({chain, level, c.cell_type});
      LevelCount& l = s.levels[it->second];
      l.total++;
      if (c.cell_state == "Used")
        l.used++;
      else if (c.cell_state == "Free")
        l.free++;
      else
        l.reserved++;
      if (c.cell_healthiness == "Bad") {
        l.bad++;
        if (c.virtual_cell) l.doomed++;
      }
      return level;
    }
  };
  Count count{s, level_at};
  for (const auto& top : live.status.physical_cluster) count(top, top.cell_type);
  // Chains in order of appearance, levels from the top down.
  std::vector<std::string> chain_order;
  for (const auto& l : s.levels)
    if (std::find(chain_order.begin(), chain_order.end(), l.chain) == chain_order.end())
      chain_order.push_back(l.chain);
  std::stable_sort(s.levels.begin(), s.levels.end(), [&](const LevelCount& a, const LevelCount& b) {
    auto ia = std::find(chain_order.begin(), chain_order.end(), a.chain) - chain_order.begin();
    auto ib = std::find(chain_order.begin(), chain_order.end(), b.chain) - chain_order.begin();
    if (ia != ib) return ia < ib;
    return a.level > b.level;
  });

  for (const auto& n : live.nodes) {
    NodeSummary ns;
    ns.name = n.name;
    ns.healthy = n.healthy;
    std::set<std::string> groups, skus;
    for (size_t i : n.leaves) {
      const LiveLeaf& l = live.leaves[i];
      ns.leaves++;
      if (!l.healthy) ns.bad++;
      if (l.state != "Free") ns.used++;
      if (l.priority == -1 || l.holder_priority == -1 || l.holder_lazy) ns.opportunistic++;
      if (!l.group.empty()) {
        groups.insert(l.group);
        auto u = std::find_if(ns.uses.begin(), ns.uses.end(),
                              [&](const NodeUse& x) { return x.group == l.group; });
        if (u == ns.uses.end()) {
          ns.uses.push_back({l.group, l.vc, l.priority, {}});
          u = ns.uses.end() - 1;
        }
        u->indices.push_back(l.index);
      }
      if (!l.reserved_by.empty() && l.reserved_by != l.group) {
        auto r = std::find_if(ns.reserved.begin(), ns.reserved.end(),
                              [&](const NodeUse& x) { return x.group == l.reserved_by; });
        if (r == ns.reserved.end()) {
          ns.reserved.push_back({l.reserved_by, {}, l.priority, {}});
          r = ns.reserved.end() - 1;
        }
        r->indices.push_back(l.index);
      }
      skus.insert(l.leaf_type);
    }
    for (auto& u : ns.uses) std::sort(u.indices.begin(), u.indices.end());
    for (auto& u : ns.reserved) std::sort(u.indices.begin(), u.indices.end());
    std::sort(ns.uses.begin(), ns.uses.end(), [](const NodeUse& a, const NodeUse& b) {
      return a.indices.front() != b.indices.front() ? a.indices.front() < b.indices.front()
                                                    : a.group < b.group;
    });
    ns.groups.assign(groups.begin(), groups.end());
    for (const auto& k : skus) ns.leaf_type += (ns.leaf_type.empty() ? "" : ",") + k;
    s.nodes.push_back(std::move(ns));
  }

  std::unordered_map<std::string_view, std::string_view> sku_of_address;
  sku_of_address.reserve(live.leaves.size());
  for (const auto& l : live.leaves) sku_of_address[l.address] = l.leaf_type;
  for (const auto& [vc, cells] : live.status.virtual_clusters) {
    std::map<std::string, VcSkuSummary> per;
    for (const auto& top : cells) {
      if (is_opportunistic_entry(top)) {
        std::string sku;
        if (top.physical_cell)
          if (auto it = sku_of_address.find(top.physical_cell->cell_address);
              it != sku_of_address.end())
            sku = it->second;
        auto& v = per[sku];
        v.opportunistic++;
        continue;
      }
      std::string sku = top.leaf_cell_type;
      auto& v = per[sku];
      std::vector<const VirtualCellStatus*> stack{&top};
      while (!stack.empty()) {
        const VirtualCellStatus* c = stack.back();
        stack.pop_back();
        if (c->children.empty()) {
          v.guaranteed++;
          if (c->cell_state == "Used" && c->cell_priority >= 0) v.used++;
          if (c->cell_healthiness == "Bad") v.bad++;
          continue;
        }
        for (const auto& k : c->children) stack.push_back(&k);
      }
    }
    // The leaves of its opportunistic groups that a preemptor has reserved are
    // not "-opp" entries any more, yet the groups still run on them.
    for (const auto& g : live.groups) {
      if (g.vc != vc || g.state == "Preempting") continue;
      if (g.priority != -1 && !g.lazy_preemption_status) continue;
      for (const auto& [node, idxs] : g.physical_placement)
        for (int32_t i : idxs) {
          auto it = live.leaf_index.find(node + ":" + std::to_string(i));
          if (it == live.leaf_index.end()) continue;
          const LiveLeaf& l = live.leaves[it->second];
          if (!l.reserved_by.empty() && l.group == g.name && l.priority != -1)
            per[l.leaf_type].opportunistic++;
        }
    }
    if (per.empty()) per[""];
    for (auto& [sku, v] : per) {
      v.vc = vc;
      v.sku = sku;
      s.vcs.push_back(v);
    }
  }
  for (const auto& g : live.groups) {
    s.groups++;
    if (g.state == "Preempting") s.preempting++;
    if (g.lazy_preemption_status) s.lazily_preempted++;
  }
  return s;
}

Result<LiveState> read_live(Client& client, const std::function<void(size_t)>& arrived) {
  auto st = std::async(std::launch::async, [&] { return client.get("/v1/inspect/clusterstatus"); });
  auto gr =
      std::async(std::launch::async, [&] { return client.get("/v1/inspect/affinitygroups/"); });
  auto s = st.get();
  auto g = gr.get();
  if (arrived) arrived((s.ok() ? s->size() : 0) + (g.ok() ? g->size() : 0));
  auto failed = [](Error e, const char* doing) {
    e.doing = doing;
    return e;
  };
  if (!s.ok()) return failed(std::move(s).error(), "reading the cluster status");
  if (!g.ok()) return failed(std::move(g).error(), "reading the affinity groups");
  auto ps = std::async(std::launch::async, [&] { return parse_cluster_status(*s); });
  auto pg = parse_affinity_groups(*g);
  auto pst = ps.get();
  auto decode_error = [](const std::string& message, const char* doing) {
    Error e;
    e.kind = Error::Kind::Decode;
    e.status = 200;
    e.message = message;
    e.doing = doing;
    return e;
  };
  if (!pst.ok()) return decode_error(pst.error().message, "reading the cluster status");
  if (!pg.ok()) return decode_error(pg.error().message, "reading the affinity groups");
  return index_live(std::move(pst).value(), std::move(pg).value());
}

// --- a group in words ----------------------------------------------------------------------

std::string leaves_text(const std::vector<int32_t>& indices) {
  std::vector<int32_t> s = indices;
  std::sort(s.begin(), s.end());
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t j = i;
    while (j + 1 < s.size() && s[j + 1] == s[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(s[i]);
    if (j > i) out += "-" + std::to_string(s[j]);
    i = j + 1;
  }
  return out;
}

std::string placement_text(const AffinityGroup& g) {
  std::string out;
  for (const auto& [node, leaves] : g.physical_placement) {
    if (!out.empty()) out += " ";
    out += node + "[" + leaves_text(leaves) + "]";
  }
  return out;
}

int64_t gpus_of(const AffinityGroup& g) {
  int64_t n = 0;
  for (const auto& [node, leaves] : g.physical_placement) n += static_cast<int64_t>(leaves.size());
  return n;
}

Json group_summary_json(const AffinityGroup& g) {
  Json j = {{"name", g.name},
            {"vc", g.vc},
            {"priority", g.priority},
            {"state", g.state},
            {"gpus", gpus_of(g)}};
  Json p = Json::object();
  for (const auto& [n, l] : g.physical_placement) p[n] = l;
  j["physicalPlacement"] = p;
  if (g.lazy_preemption_status)
    j["lazyPreemption"] = {{"preemptor", g.lazy_preemption_status->preemptor},
                           {"time", g.lazy_preemption_status->preemption_time}};
  else
    j["lazyPreemption"] = nullptr;
  return j;
}

}  // namespace pai::hived
