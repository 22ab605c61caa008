#include "scheduler/hived.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "config/hived_model.h"
#include "scheduler/node_index.h"

namespace pai::scheduler {

namespace {

constexpr int32_t kFreePriority = -2;

enum class CellState : uint8_t { Free, Used, Reserving, Reserved };
enum class GroupState : uint8_t { Allocated, Preempting, BeingPreempted };

struct PCell {
  int32_t chain = -1;
  int32_t level = 0;
  int32_t parent = -1;
  int32_t child_begin = 0;
  int32_t child_count = 0;
  int32_t node = -1;
  int32_t leaf_index = -1;
  int32_t leaves = 0;  // leaf cells below (1 for a leaf)
  int32_t nodes = 0;   // nodes below (1 at node level and below)
  bool is_node = false;
  bool pinned = false;
  // State.
  bool healthy = true;
  bool split = false;
  bool in_free = false;
  CellState state = CellState::Free;  // leaves
  int32_t priority = kFreePriority;   // leaves
  int32_t used_opp = 0;               // leaves below used at priority -1
  int32_t used_guar = 0;              // leaves below used at priority >= 0
  int32_t vcell = -1;                 // bound virtual cell
  int32_t using_group = -1;           // leaves
  int32_t reserving_group = -1;       // leaves
  int32_t view_pos = -1;  // node-level cells: position in the chain's opportunistic view
};

struct VCell {
  int32_t vc = -1;
  int32_t chain = -1;
  int32_t level = 0;
  int32_t parent = -1;
  int32_t child_begin = 0;
  int32_t child_count = 0;
  int32_t preassigned = -1;  // top ancestor within the VC
  int32_t pinned = -1;       // index into pinned_ for pinned trees
  int32_t leaves = 0;
  int32_t pcell = -1;
  int32_t priority = kFreePriority;  // leaves
  int32_t used = 0;                  // used leaves below
  int32_t view = -1;                 // view nodes: their view and position
  int32_t view_pos = -1;
};

// A cluster view: HiveD's clusterView for one topologyAwareScheduler.
struct View {
  bool is_virtual = false;
  int32_t vc = -1;
  std::vector<int32_t> nodes;       // cell ids
  std::vector<int32_t> node_class;  // bucket class of each node
  std::vector<int32_t> leaf_begin;  // nodes + 1 offsets into leaves
  std::vector<int32_t> leaves;      // DFS order
  std::vector<std::vector<std::pair<int32_t, int32_t>>>
      prio_counts;  // virtual views: priority -> used leaves
  BucketLayout layout;
  BucketedNodes index;
};

struct Pinned {
  std::string id;
  int32_t vc = -1;
  int32_t pcell = -1;
  int32_t vroot = -1;
  int32_t view = -1;
};

struct Group {
  bool alive = false;
  std::string name;
  uint64_t tag = 0;
  int32_t vc = -1;
  int32_t priority = 0;
  bool lazy_enable = false;
  bool lazy_preempted = false;
  GroupState state = GroupState::Allocated;
  int32_t chain = -1;
  std::vector<int32_t> pod_leaves;  // leaf cells per pod, ascending
  std::vector<int32_t> pod_offset;  // pods + 1
  std::vector<int32_t> pleaves;
  std::vector<int32_t> vleaves;     // empty when opportunistic or lazily preempted
  std::vector<uint8_t> pod_handed;  // pods handed out by schedule_pod
};

// A vertex of a binding path (HiveD's cellBindingPathVertex).
struct Vertex {
  int32_t vcell = -1;
  int32_t first_child = -1;
  int32_t last_child = -1;
  int32_t next = -1;
};

struct Request {
  int32_t vc = -1;
  int32_t priority = 0;
  int32_t pinned = -1;
  int32_t chain = -1;
  bool lazy = false;
  std::vector<int32_t> pods;  // leaf cells per pod, ascending
};

struct Placement {
  int32_t chain = -1;
  std::vector<int32_t> pleaves;
  std::vector<int32_t> vleaves;
  std::vector<std::pair<int32_t, std::vector<int32_t>>>
      lazy;  // lazily preempted groups and their virtual leaves
};

class Hived final : public Policy {
 public:
  Hived(const config::HivedModel& m, std::string& error);

  std::string_view name() const override { return "hived"; }
  const ClusterShape& cluster() const override { return shape_; }
  ScheduleResult schedule(const GroupRequest& r, bool allow_preemption) override;
  ScheduleResult schedule_pod(std::string_view group, int32_t leaf_cell_number) override;
  bool release(std::string_view group) override;
  void set_node_health(int32_t node, bool healthy) override;
  uint64_t release_epoch() const override { return epoch_; }
  UsageSummary usage() const override;
  bool has_group(std::string_view group) const override {
    return group_index_.count(std::string(group)) > 0;
  }
  std::string check_invariants() const override;

 private:
  // --- construction
  void build_physical(const config::HivedModel& m);
  int32_t build_virtual_tree(int32_t vc, int32_t chain, int32_t level, int32_t parent,
                             int32_t preassigned, int32_t pinned);
  void build_views();
  int32_t make_view(bool is_virtual, int32_t vc, std::vector<int32_t> nodes);
  void init_counters();

  // --- helpers
  size_t cl(int32_t chain, int32_t level) const {
    return static_cast<size_t>(chain_offset_[static_cast<size_t>(chain)] + level);
  }
  size_t vcl(int32_t vc, int32_t chain, int32_t level) const {
    return static_cast<size_t>(vc) * ncl_ + cl(chain, level);
  }
  std::span<const int32_t> pchildren(int32_t c) const {
    const PCell& p = pcells_[static_cast<size_t>(c)];
    return {pchild_.data() + p.child_begin, static_cast<size_t>(p.child_count)};
  }
  std::span<const int32_t> vchildren(int32_t c) const {
    const VCell& v = vcells_[static_cast<size_t>(c)];
    return {vchild_.data() + v.child_begin, static_cast<size_t>(v.child_count)};
  }
  PCell& P(int32_t c) { return pcells_[static_cast<size_t>(c)]; }
  const PCell& P(int32_t c) const { return pcells_[static_cast<size_t>(c)]; }
  VCell& V(int32_t c) { return vcells_[static_cast<size_t>(c)]; }
  const VCell& V(int32_t c) const { return vcells_[static_cast<size_t>(c)]; }
  Group& G(int32_t g) { return groups_[static_cast<size_t>(g)]; }
  const Group& G(int32_t g) const { return groups_[static_cast<size_t>(g)]; }

  // --- free lists and usage
  void free_insert(int32_t c);
  void free_erase(int32_t c);
  void touch_opp_view(int32_t c);
  void touch_vc_view(int32_t v);
  void add_physical_usage(int32_t leaf, int32_t priority, int32_t delta);
  void add_virtual_usage(int32_t leaf, int32_t priority, int32_t delta);
  void bind_pair(int32_t p, int32_t v);
  void unbind_pair(int32_t p, int32_t v);
  void bind_cell(int32_t p, int32_t v);
  void unbind_cell(int32_t p);
  bool in_free_cell_list(int32_t c) const;

  int32_t resolve_virtual_leaf(int32_t p, int32_t v) const;
  int32_t assign_leaf(int32_t p, int32_t& v, int32_t priority, bool may_downgrade = false);
  void finish_allocation(const std::vector<int32_t>& preassigned);
  void allocate_leaf(int32_t p, int32_t v, int32_t priority);
  void release_leaf(int32_t p, int32_t vc);
  bool allocate_preassigned(int32_t c, int32_t vc, bool doomed);
  void allocate_bad_cell(int32_t c);
  void release_preassigned(int32_t c, int32_t vc, bool doomed);
  void release_bad_cell(int32_t c);
  int32_t remove_from_free_list(int32_t c);
  int32_t add_to_free_list(int32_t c);

  // --- bad cells
  void set_bad_cell(int32_t c);
  void set_healthy_cell(int32_t c);
  void add_bad_free(int32_t c);
  void remove_bad_free(int32_t c);
  void try_bind_doomed(int32_t chain, int32_t level);
  void try_unbind_doomed(int32_t chain, int32_t level);
  int32_t unbound_preassigned(int32_t vc, int32_t chain, int32_t level) const;

  // --- scheduling
  bool schedule_new(const Request& req, Placement& out, std::string& reason);
  bool schedule_in_chain(const Request& req, int32_t chain, Placement& out, std::string& reason);
  bool schedule_guaranteed(const Request& req, int32_t chain, Placement& out, std::string& reason);
  bool schedule_opportunistic(const Request& req, int32_t chain, Placement& out,
                              std::string& reason);
  bool topology_schedule(int32_t view_id, const std::vector<int32_t>& pods, int32_t priority,
                         std::vector<int32_t>& leaves, std::string& reason);
  void pick_leaves(const View& view, int32_t pos, int32_t k, int32_t priority,
                   std::vector<int32_t>& out);
  std::vector<std::pair<int32_t, std::vector<int32_t>>> try_lazy_preempt(
      const std::vector<int32_t>& vleaves);
  void lazy_preempt(int32_t g);
  void revert_lazy_preempt(int32_t g, const std::vector<int32_t>& vleaves);
  bool map_to_physical(int32_t chain, const std::vector<int32_t>& vleaves,
                       std::vector<int32_t>& pleaves);

  // binding paths and the free-list overlay of one request
  int32_t new_vertex(int32_t vcell);
  void add_child_vertex(int32_t parent, int32_t child);
  bool usable(int32_t p) const { return P(p).vcell < 0 && !(P(p).nodes == 1 && !P(p).healthy); }
  void sort_by_opportunistic(std::vector<int32_t>& cells) const;
  bool map_cells(const std::vector<int32_t>& vertices, std::span<const int32_t> candidates,
                 std::vector<int32_t>* picked);
  bool try_candidate(int32_t vertex, int32_t pcell);
  bool buddy_alloc(int32_t vertex, int32_t level);
  bool safe_relaxed_buddy_alloc(int32_t vertex, std::vector<int32_t>& free_num);
  int32_t overlay_count(int32_t level) const;
  template <class F>
  bool overlay_each(int32_t level,
                    F f) const;  // in (opportunistic, cell) order until f returns true
  void overlay_remove(int32_t c);
  void overlay_add(int32_t c);
  void overlay_reset();

  // --- groups
  int32_t create_group(const GroupRequest& r, const Request& req, const Placement& pl,
                       GroupState state);
  void delete_allocated(int32_t g);
  void delete_preempting(int32_t g);
  void allocate_preempting(int32_t g);
  void collect_victims(const std::vector<int32_t>& pleaves, std::vector<int32_t>& victims,
                       std::vector<int32_t>& preemptors) const;
  ScheduleResult result_of(int32_t g, Outcome o) const;
  void free_group(int32_t g);

  ClusterShape shape_;
  std::vector<PCell> pcells_;
  std::vector<int32_t> pchild_;
  std::vector<VCell> vcells_;
  std::vector<int32_t> vchild_;
  std::vector<Pinned> pinned_;
  std::vector<View> views_;
  std::vector<int32_t> chain_offset_;  // chain -> offset of level 0 in (chain, level) arrays
  std::vector<int32_t> chain_top_;
  std::vector<std::vector<int32_t>> level_cells_;  // (chain, level) -> physical cells
  size_t ncl_ = 0;
  int32_t nvc_ = 0;
  int32_t nchain_ = 0;
  std::vector<int32_t> chain_opp_view_;
  std::vector<int32_t> vc_chain_view_;  // vc * chains + chain
  std::vector<std::vector<int32_t>>
      vc_preassigned_;  // (vc, chain, level) -> non-pinned preassigned cells
  std::vector<uint8_t> vc_has_chain_;

  std::vector<std::set<std::pair<int32_t, int32_t>>>
      free_;  // (chain, level) -> (opportunistic leaves, cell)
  std::vector<int32_t> total_left_;
  std::vector<int32_t> all_vc_free_;
  std::vector<int32_t> all_vc_doomed_;
  std::vector<int32_t> vc_free_;
  std::vector<std::set<int32_t>> bad_free_;
  std::vector<std::set<int32_t>> vc_doomed_;
  std::vector<std::map<int32_t, int64_t>> vc_prio_used_;
  std::vector<uint8_t> bad_node_;
  int64_t safety_violations_ = 0;
  int32_t bad_nodes_ = 0;

  std::vector<Group> groups_;
  std::vector<int32_t> free_slots_;
  std::unordered_map<std::string, int32_t> group_index_;
  uint64_t epoch_ = 1;

  // Scratch state of one request.
  std::vector<Vertex> vertices_;
  std::vector<int32_t> vertex_of_;  // vcell -> vertex (-1)
  std::vector<int32_t> vbind_;      // virtual leaf -> physical leaf during mapping
  std::vector<uint8_t> taken_v_;    // virtual leaves picked in this request
  std::vector<uint8_t> taken_p_;
  std::vector<int32_t> taken_list_;
  int32_t ov_chain_ = -1;
  std::vector<uint8_t> ov_removed_;
  std::vector<int32_t> ov_removed_list_;
  std::vector<int32_t> ov_removed_count_;       // per level
  std::vector<std::vector<int32_t>> ov_extra_;  // per level, sorted by (opportunistic, cell)
};

// ---------------------------------------------------------------------------
// Construction
// ---------------------------------------------------------------------------

Hived::Hived(const config::HivedModel& m, std::string& error) {
  shape_ = describe_cluster(m);
  nvc_ = static_cast<int32_t>(m.vcs.size());
  nchain_ = static_cast<int32_t>(m.chains.size());
  build_physical(m);
  vcells_.reserve(pcells_.size());
  vc_chain_view_.assign(static_cast<size_t>(nvc_) * static_cast<size_t>(nchain_), -1);
  vc_has_chain_.assign(static_cast<size_t>(nvc_) * static_cast<size_t>(nchain_), 0);
  vc_preassigned_.assign(static_cast<size_t>(nvc_) * ncl_, {});
  vc_free_.assign(static_cast<size_t>(nvc_) * ncl_, 0);
  vc_doomed_.assign(static_cast<size_t>(nvc_) * ncl_, {});
  vc_prio_used_.assign(static_cast<size_t>(nvc_), {});
  // Virtual clusters, in configuration order.
  for (int32_t vi = 0; vi < nvc_; ++vi) {
    const config::VirtualClusterInfo& vc = m.vcs[static_cast<size_t>(vi)];
    for (const auto& cell : vc.cells) {
      if (cell.chain < 0 || cell.level < 1) continue;
      for (int64_t k = 0; k < cell.count; ++k) {
        int32_t root = build_virtual_tree(vi, cell.chain, cell.level, -1, -1, -1);
        vc_preassigned_[vcl(vi, cell.chain, cell.level)].push_back(root);
        vc_free_[vcl(vi, cell.chain, cell.level)]++;
      }
      vc_has_chain_[static_cast<size_t>(vi) * static_cast<size_t>(nchain_) +
                    static_cast<size_t>(cell.chain)] = 1;
    }
    for (const auto& p : vc.pinned) {
      if (p.cell < 0) continue;
      Pinned pin;
      pin.id = p.id;
      pin.vc = vi;
      pin.pcell = p.cell;
      int32_t idx = static_cast<int32_t>(pinned_.size());
      pinned_.push_back(pin);
      const PCell& pc = P(p.cell);
      pinned_[static_cast<size_t>(idx)].vroot =
          build_virtual_tree(vi, pc.chain, pc.level, -1, -1, idx);
      vc_free_[vcl(vi, pc.chain, pc.level)]++;
    }
  }
  vertex_of_.assign(vcells_.size(), -1);
  vbind_.assign(vcells_.size(), -1);
  taken_v_.assign(vcells_.size(), 0);
  taken_p_.assign(pcells_.size(), 0);
  ov_removed_.assign(pcells_.size(), 0);
  build_views();
  init_counters();
  // Capacity: HiveD's initCellNums refuses a VC assignment that does not fit.
  for (int32_t c = 0; c < nchain_; ++c)
    for (int32_t l = chain_top_[static_cast<size_t>(c)]; l >= 1; --l)
      if (all_vc_free_[cl(c, l)] > total_left_[cl(c, l)]) {
        error = "virtual clusters need " + std::to_string(all_vc_free_[cl(c, l)]) +
                " cells at level " + std::to_string(l) + " of chain " +
                shape_.chains[static_cast<size_t>(c)].name + " but only " +
                std::to_string(total_left_[cl(c, l)]) + " exist";
        return;
      }
  // Pinned cells are bound statically and leave the free lists (initPinnedCells).
  for (size_t i = 0; i < pinned_.size(); ++i) {
    Pinned& pin = pinned_[i];
    allocate_preassigned(pin.pcell, pin.vc, false);
    bind_pair(pin.pcell, pin.vroot);
  }
  for (int32_t c = 0; c < nchain_; ++c)
    for (int32_t l = 1; l <= chain_top_[static_cast<size_t>(c)]; ++l)
      if (total_left_[cl(c, l)] < all_vc_free_[cl(c, l)]) {
        error = "the pinned cells and virtual clusters do not fit in chain " +
                shape_.chains[static_cast<size_t>(c)].name + " at level " + std::to_string(l);
        return;
      }
}

void Hived::build_physical(const config::HivedModel& m) {
  const size_t n = m.cells.size();
  pcells_.resize(n);
  chain_offset_.assign(static_cast<size_t>(nchain_), 0);
  chain_top_.assign(static_cast<size_t>(nchain_), 0);
  int32_t off = 0;
  for (int32_t c = 0; c < nchain_; ++c) {
    chain_offset_[static_cast<size_t>(c)] = off;
    chain_top_[static_cast<size_t>(c)] = m.chains[static_cast<size_t>(c)].top_level;
    off += m.chains[static_cast<size_t>(c)].top_level + 1;
  }
  ncl_ = static_cast<size_t>(off);
  level_cells_.assign(ncl_, {});
  for (size_t i = 0; i < n; ++i) {
    const config::PhysicalCellInfo& mc = m.cells[i];
    PCell& p = pcells_[i];
    p.chain = mc.chain;
    p.level = mc.level;
    p.parent = mc.parent;
    p.node = mc.node;
    p.leaf_index = mc.leaf_index;
    p.is_node = mc.is_node;
    p.pinned = !mc.pinned_id.empty();
    p.child_begin = static_cast<int32_t>(pchild_.size());
    p.child_count = static_cast<int32_t>(mc.children.size());
    for (int32_t ch : mc.children) pchild_.push_back(ch);
    if (mc.chain >= 0) level_cells_[cl(mc.chain, mc.level)].push_back(static_cast<int32_t>(i));
  }
  for (size_t i = n; i-- > 0;) {
    PCell& p = pcells_[i];
    if (p.level == 1) p.leaves = 1;
    if (p.node >= 0) p.nodes = 1;
    if (p.parent >= 0) {
      P(p.parent).leaves += p.leaves;
      if (P(p.parent).node < 0) P(p.parent).nodes += p.nodes;
    }
  }
  bad_node_.assign(m.nodes.size(), 0);
}

int32_t Hived::build_virtual_tree(int32_t vc, int32_t chain, int32_t level, int32_t parent,
                                  int32_t preassigned, int32_t pinned) {
  int32_t self = static_cast<int32_t>(vcells_.size());
  VCell v;
  v.vc = vc;
  v.chain = chain;
  v.level = level;
  v.parent = parent;
  v.preassigned = preassigned < 0 ? self : preassigned;
  v.pinned = pinned;
  vcells_.push_back(v);
  const auto& ch = shape_.chains[static_cast<size_t>(chain)];
  int32_t leaves = static_cast<int32_t>(ch.level_leaves[static_cast<size_t>(level)]);
  vcells_[static_cast<size_t>(self)].leaves = leaves;
  if (level > 1) {
    int32_t kids =
        static_cast<int32_t>(ch.level_leaves[static_cast<size_t>(level)] /
                             std::max<int64_t>(ch.level_leaves[static_cast<size_t>(level - 1)], 1));
    std::vector<int32_t> ids;
    ids.reserve(static_cast<size_t>(kids));
    for (int32_t k = 0; k < kids; ++k)
      ids.push_back(build_virtual_tree(vc, chain, level - 1, self,
                                       vcells_[static_cast<size_t>(self)].preassigned, pinned));
    VCell& me = vcells_[static_cast<size_t>(self)];
    me.child_begin = static_cast<int32_t>(vchild_.size());
    me.child_count = kids;
    for (int32_t id : ids) vchild_.push_back(id);
  }
  return self;
}

int32_t Hived::make_view(bool is_virtual, int32_t vc, std::vector<int32_t> nodes) {
  View view;
  view.is_virtual = is_virtual;
  view.vc = vc;
  view.nodes = std::move(nodes);
  std::vector<int32_t> totals;
  for (int32_t cell : view.nodes) {
    view.leaf_begin.push_back(static_cast<int32_t>(view.leaves.size()));
    // DFS for the leaves, in child order.
    std::vector<int32_t> stack{cell};
    while (!stack.empty()) {
      int32_t c = stack.back();
      stack.pop_back();
      auto kids = is_virtual ? vchildren(c) : pchildren(c);
      int32_t level = is_virtual ? V(c).level : P(c).level;
      if (level == 1) {
        view.leaves.push_back(c);
        continue;
      }
      for (size_t k = kids.size(); k-- > 0;) stack.push_back(kids[k]);
    }
    int32_t total = static_cast<int32_t>(view.leaves.size()) - view.leaf_begin.back();
    if (std::find(totals.begin(), totals.end(), total) == totals.end()) totals.push_back(total);
  }
  view.leaf_begin.push_back(static_cast<int32_t>(view.leaves.size()));
  std::sort(totals.begin(), totals.end());
  view.layout = is_virtual ? layout_most_used_first(totals) : layout_opportunistic(totals);
  for (size_t i = 0; i < view.nodes.size(); ++i)
    view.node_class.push_back(view.layout.class_of(view.leaf_begin[i + 1] - view.leaf_begin[i]));
  view.index.init(static_cast<int32_t>(view.nodes.size()), view.layout.bucket_free,
                  view.layout.groups);
  if (is_virtual) view.prio_counts.assign(view.nodes.size(), {});
  int32_t id = static_cast<int32_t>(views_.size());
  for (size_t i = 0; i < view.nodes.size(); ++i) {
    if (is_virtual) {
      V(view.nodes[i]).view = id;
      V(view.nodes[i]).view_pos = static_cast<int32_t>(i);
    } else {
      P(view.nodes[i]).view_pos = static_cast<int32_t>(i);
    }
  }
  // Every node starts healthy and unused.
  for (size_t i = 0; i < view.nodes.size(); ++i) {
    int32_t cls = view.node_class[i];
    view.index.set(static_cast<int32_t>(i), is_virtual
                                                ? bucket_used(view.layout, cls, 0)
                                                : bucket_opportunistic(view.layout, cls, 0, 0));
  }
  views_.push_back(std::move(view));
  return id;
}

void Hived::build_views() {
  chain_opp_view_.assign(static_cast<size_t>(nchain_), -1);
  for (int32_t c = 0; c < nchain_; ++c) {
    std::vector<int32_t> nodes;
    for (int32_t l = 1; l <= chain_top_[static_cast<size_t>(c)]; ++l)
      for (int32_t cell : level_cells_[cl(c, l)])
        if (P(cell).is_node) nodes.push_back(cell);
    std::sort(nodes.begin(), nodes.end());
    chain_opp_view_[static_cast<size_t>(c)] = make_view(false, -1, std::move(nodes));
  }
  // A VC's view of a chain: its node-level virtual cells, and its preassigned
  // cells that are below node level (each is a "node" of its own).
  std::vector<std::vector<int32_t>> vc_chain_nodes(static_cast<size_t>(nvc_) *
                                                   static_cast<size_t>(nchain_));
  std::vector<std::vector<int32_t>> pinned_nodes(pinned_.size());
  for (size_t i = 0; i < vcells_.size(); ++i) {
    const VCell& v = vcells_[i];
    int32_t node_level = shape_.chains[static_cast<size_t>(v.chain)].node_level;
    bool is_view_node = v.level == node_level || (v.parent < 0 && v.level < node_level);
    if (!is_view_node) continue;
    if (v.pinned >= 0)
      pinned_nodes[static_cast<size_t>(v.pinned)].push_back(static_cast<int32_t>(i));
    else
      vc_chain_nodes[static_cast<size_t>(v.vc) * static_cast<size_t>(nchain_) +
                     static_cast<size_t>(v.chain)]
          .push_back(static_cast<int32_t>(i));
  }
  for (int32_t vc = 0; vc < nvc_; ++vc)
    for (int32_t c = 0; c < nchain_; ++c) {
      auto& nodes = vc_chain_nodes[static_cast<size_t>(vc) * static_cast<size_t>(nchain_) +
                                   static_cast<size_t>(c)];
      if (nodes.empty()) continue;
      vc_chain_view_[static_cast<size_t>(vc) * static_cast<size_t>(nchain_) +
                     static_cast<size_t>(c)] = make_view(true, vc, std::move(nodes));
    }
  for (size_t i = 0; i < pinned_.size(); ++i)
    pinned_[i].view = make_view(true, pinned_[i].vc, std::move(pinned_nodes[i]));
}

void Hived::init_counters() {
  free_.assign(ncl_, {});
  total_left_.assign(ncl_, 0);
  all_vc_free_.assign(ncl_, 0);
  all_vc_doomed_.assign(ncl_, 0);
  bad_free_.assign(ncl_, {});
  for (int32_t c = 0; c < nchain_; ++c) {
    int32_t top = chain_top_[static_cast<size_t>(c)];
    for (int32_t l = 1; l <= top; ++l)
      total_left_[cl(c, l)] = static_cast<int32_t>(level_cells_[cl(c, l)].size());
    for (int32_t cell : level_cells_[cl(c, top)])
      if (P(cell).parent < 0) free_insert(cell);
  }
  for (int32_t vc = 0; vc < nvc_; ++vc)
    for (size_t i = 0; i < ncl_; ++i)
      all_vc_free_[i] += vc_free_[static_cast<size_t>(vc) * ncl_ + i];
}

// ---------------------------------------------------------------------------
// Free lists, usage counters, bindings
// ---------------------------------------------------------------------------

void Hived::free_insert(int32_t c) {
  PCell& p = P(c);
  free_[cl(p.chain, p.level)].insert({p.used_opp, c});
  p.in_free = true;
}

void Hived::free_erase(int32_t c) {
  PCell& p = P(c);
  free_[cl(p.chain, p.level)].erase({p.used_opp, c});
  p.in_free = false;
}

void Hived::touch_opp_view(int32_t c) {
  const PCell& p = P(c);
  if (p.view_pos < 0) return;
  View& view = views_[static_cast<size_t>(chain_opp_view_[static_cast<size_t>(p.chain)])];
  int32_t cls = view.node_class[static_cast<size_t>(p.view_pos)];
  int32_t b = -1;
  if (p.healthy) b = bucket_opportunistic(view.layout, cls, p.used_opp, p.used_guar);
  view.index.set(p.view_pos, b);
}

void Hived::touch_vc_view(int32_t v) {
  const VCell& vc = V(v);
  if (vc.view < 0) return;
  View& view = views_[static_cast<size_t>(vc.view)];
  bool healthy = vc.pcell < 0 || P(vc.pcell).healthy;
  int32_t b = -1;
  if (healthy)
    b = bucket_used(view.layout, view.node_class[static_cast<size_t>(vc.view_pos)], vc.used);
  view.index.set(vc.view_pos, b);
}

void Hived::add_physical_usage(int32_t leaf, int32_t priority, int32_t delta) {
  if (priority == kFreePriority) return;
  for (int32_t c = leaf; c >= 0; c = P(c).parent) {
    PCell& p = P(c);
    if (priority < 0) {
      if (p.in_free) {
        free_[cl(p.chain, p.level)].erase({p.used_opp, c});
        p.used_opp += delta;
        free_[cl(p.chain, p.level)].insert({p.used_opp, c});
      } else {
        p.used_opp += delta;
      }
    } else {
      p.used_guar += delta;
    }
    if (p.is_node) touch_opp_view(c);
  }
}

void Hived::add_virtual_usage(int32_t leaf, int32_t priority, int32_t delta) {
  if (priority == kFreePriority) return;
  int32_t vc = V(leaf).vc;
  auto& m = vc_prio_used_[static_cast<size_t>(vc)];
  if ((m[priority] += delta) == 0) m.erase(priority);
  for (int32_t c = leaf; c >= 0; c = V(c).parent) {
    VCell& v = V(c);
    v.used += delta;
    if (v.view >= 0) {
      auto& counts =
          views_[static_cast<size_t>(v.view)].prio_counts[static_cast<size_t>(v.view_pos)];
      auto it = std::find_if(counts.begin(), counts.end(),
                             [&](const auto& e) { return e.first == priority; });
      if (it == counts.end()) {
        counts.push_back({priority, delta});
      } else if ((it->second += delta) == 0) {
        counts.erase(it);
      }
      touch_vc_view(c);
    }
  }
}

void Hived::bind_pair(int32_t p, int32_t v) {
  P(p).vcell = v;
  V(v).pcell = p;
  if (V(v).view >= 0) touch_vc_view(v);
}

void Hived::unbind_pair(int32_t p, int32_t v) {
  P(p).vcell = -1;
  V(v).pcell = -1;
  if (V(v).view >= 0) touch_vc_view(v);
}

// bindCell: binds a virtual leaf to a physical leaf and their ancestors, up to
// the first virtual cell that is already bound.
void Hived::bind_cell(int32_t p, int32_t v) {
  while (V(v).pcell < 0) {
    bind_pair(p, v);
    if (V(v).parent < 0) break;
    v = V(v).parent;
    p = P(p).parent;
  }
}

// unbindCell: unbinds a leaf and its ancestors while no sibling is bound; pinned cells stay bound.
void Hived::unbind_cell(int32_t p) {
  int32_t bv = P(p).vcell;
  while (bv >= 0 && V(bv).pcell >= 0 && !P(V(bv).pcell).pinned) {
    unbind_pair(V(bv).pcell, bv);
    int32_t parent = V(bv).parent;
    if (parent < 0) return;
    for (int32_t ch : vchildren(parent))
      if (V(ch).pcell >= 0) return;
    bv = parent;
  }
}

bool Hived::in_free_cell_list(int32_t c) const {
  for (;;) {
    const PCell& p = P(c);
    if (p.vcell >= 0 || p.split) return false;
    if (p.parent < 0 || P(p.parent).split) return true;
    c = p.parent;
  }
}

// HiveD binds a pod's cells from its physical placement (mapPhysicalCellToVirtual):
// the virtual leaf is found by walking up the physical tree to the lowest cell
// bound to this VC, then down through unbound virtual cells. The planned
// virtual leaf is kept when it still lines up; it may not, because releases in
// between can bind doomed bad cells to the planned virtual cells.
int32_t Hived::resolve_virtual_leaf(int32_t p, int32_t v) const {
  if (V(v).pcell == p) return v;
  {
    int32_t c = v, q = p;
    bool ok = true;
    while (c >= 0 && V(c).pcell < 0) {
      if (q < 0 || P(q).vcell >= 0) {
        ok = false;
        break;
      }
      c = V(c).parent;
      q = P(q).parent;
    }
    if (ok && (c < 0 || V(c).pcell == q)) return v;
  }
  const int32_t vc = V(v).vc, pac = V(v).preassigned, top = V(pac).level;
  std::vector<int32_t> path;  // path[k]: the ancestor of p at level k + 1
  for (int32_t q = p; q >= 0 && P(q).level <= top; q = P(q).parent) path.push_back(q);
  if (static_cast<int32_t>(path.size()) != top) return -1;
  int32_t cur = -1;
  size_t k = 0;
  for (; k < path.size(); ++k) {
    int32_t b = P(path[k]).vcell;
    if (b < 0) continue;
    if (V(b).vc != vc || V(V(b).preassigned).pinned != V(pac).pinned) return -1;
    cur = b;
    break;
  }
  if (cur < 0) {
    if (V(pac).pcell < 0) {
      cur = pac;
    } else if (V(pac).pinned < 0) {
      cur = unbound_preassigned(vc, V(pac).chain, top);
    }
    if (cur < 0) return -1;
  }
  std::vector<int32_t> vpath;  // the planned virtual path, by level
  for (int32_t c = v; c >= 0; c = V(c).parent) vpath.push_back(c);
  while (V(cur).level > 1) {
    const size_t below = static_cast<size_t>(V(cur).level - 2);
    const int32_t pref = below < vpath.size() ? vpath[below] : -1;
    int32_t next = -1;
    for (int32_t ch : vchildren(cur)) {
      if (V(ch).pcell >= 0) continue;
      if (ch == pref) {
        next = ch;
        break;
      }
      if (next < 0) next = ch;
    }
    if (next < 0) return -1;
    cur = next;
  }
  return cur;
}

// allocateLeafCell, first half: priorities, usage and bindings. Returns the
// preassigned virtual cell that this leaf bound, or -1. A group binds all its
// leaves before finish_allocation() allocates the newly bound preassigned
// cells: allocating a bad preassigned cell binds its bad children to unbound
// virtual cells, which must not be ones the group is about to use. `v` is the
// planned virtual leaf (-1: opportunistic); it is updated to the one bound.
int32_t Hived::assign_leaf(int32_t p, int32_t& v, int32_t priority, bool may_downgrade) {
  if (v >= 0) {
    v = resolve_virtual_leaf(p, v);
    // No virtual cell left for it: the group holds this leaf opportunistically.
    // Expected only when a cell goes back to a group being preempted (or a lazy
    // preemption is reverted) after its VC reused the virtual cells.
    if (v < 0 && !may_downgrade) ++safety_violations_;
  }
  if (v < 0) {
    P(p).priority = kOpportunisticPriority;
    add_physical_usage(p, kOpportunisticPriority, 1);
    return -1;
  }
  V(v).priority = priority;
  add_virtual_usage(v, priority, 1);
  P(p).priority = priority;
  add_physical_usage(p, priority, 1);
  int32_t pac = V(v).preassigned;
  bool newly_bound = V(pac).pcell < 0;
  if (P(p).vcell < 0) bind_cell(p, v);
  return newly_bound ? pac : -1;
}

void Hived::finish_allocation(const std::vector<int32_t>& preassigned) {
  for (int32_t pac : preassigned)
    if (pac >= 0 && V(pac).pcell >= 0) allocate_preassigned(V(pac).pcell, V(pac).vc, false);
}

void Hived::allocate_leaf(int32_t p, int32_t v, int32_t priority) {
  int32_t pac = assign_leaf(p, v, priority);
  if (pac >= 0) allocate_preassigned(V(pac).pcell, V(pac).vc, false);
}

// releaseLeafCell
void Hived::release_leaf(int32_t p, int32_t vc) {
  int32_t v = P(p).vcell;
  // An opportunistic leaf can carry a binding that only marks a doomed bad
  // cell; that binding is not the group's (HiveD would release the doomed
  // cell under the wrong VC here).
  if (v >= 0 && P(p).priority >= kMinGuaranteedPriority) {
    add_virtual_usage(v, V(v).priority, -1);
    V(v).priority = kFreePriority;
    int32_t pac = V(v).preassigned;
    int32_t pac_physical = V(pac).pcell;
    if (P(p).healthy) unbind_cell(p);
    if (pac_physical >= 0 && !P(pac_physical).pinned && V(pac).used == 0) {
      const PCell& pp = P(pac_physical);
      if (!vc_doomed_[vcl(vc, pp.chain, pp.level)].count(pac_physical))
        release_preassigned(pac_physical, vc, false);
    }
  }
  add_physical_usage(p, P(p).priority, -1);
  P(p).priority = kFreePriority;
}

// allocatePreassignedCell
bool Hived::allocate_preassigned(int32_t c, int32_t vc, bool doomed) {
  bool safety_ok = true;
  const int32_t chain = P(c).chain, level = P(c).level;
  vc_free_[vcl(vc, chain, level)]--;
  all_vc_free_[cl(chain, level)]--;
  total_left_[cl(chain, level)]--;
  int32_t split_up_to = remove_from_free_list(c);
  int32_t parent = P(c).parent;
  for (int32_t l = level + 1; l <= split_up_to; ++l) {
    total_left_[cl(chain, l)]--;
    if (total_left_[cl(chain, l)] < all_vc_free_[cl(chain, l)]) safety_ok = false;
    if (!P(parent).healthy) {
      bad_free_[cl(chain, l)].erase(parent);
    } else {
      try_bind_doomed(chain, l);
    }
    parent = P(parent).parent;
  }
  if (!P(c).healthy) {
    allocate_bad_cell(c);
    if (!doomed) try_unbind_doomed(chain, level);
  } else {
    try_bind_doomed(chain, level);
  }
  // Descendants at each lower level are no longer obtainable.
  std::vector<int32_t> frontier{c};
  for (int32_t l = level - 1; l >= 1; --l) {
    std::vector<int32_t> next;
    for (int32_t f : frontier)
      for (int32_t ch : pchildren(f)) next.push_back(ch);
    total_left_[cl(chain, l)] -= static_cast<int32_t>(next.size());
    if (total_left_[cl(chain, l)] < all_vc_free_[cl(chain, l)]) safety_ok = false;
    if (!doomed) try_bind_doomed(chain, l);
    frontier.swap(next);
  }
  // Buddy allocation keeps safety; bad cells may legitimately break it (HiveD
  // only reports it), so only count what happens on a healthy cluster.
  if (!safety_ok && !doomed && bad_nodes_ == 0) ++safety_violations_;
  return safety_ok;
}

void Hived::allocate_bad_cell(int32_t c) {
  bad_free_[cl(P(c).chain, P(c).level)].erase(c);
  if (P(c).vcell < 0) {
    int32_t parent = P(c).parent;
    int32_t pv = parent >= 0 ? P(parent).vcell : -1;
    if (pv >= 0) {
      for (int32_t ch : vchildren(pv))
        if (V(ch).pcell < 0) {
          bind_pair(c, ch);
          break;
        }
    }
  }
  for (int32_t ch : pchildren(c))
    if (!P(ch).healthy) allocate_bad_cell(ch);
}

// releasePreassignedCell
void Hived::release_preassigned(int32_t c, int32_t vc, bool doomed) {
  const int32_t chain = P(c).chain, level = P(c).level;
  vc_free_[vcl(vc, chain, level)]++;
  all_vc_free_[cl(chain, level)]++;
  total_left_[cl(chain, level)]++;
  int32_t merge_up_to = add_to_free_list(c);
  int32_t parent = P(c).parent;
  for (int32_t l = level + 1; l <= merge_up_to; ++l) {
    total_left_[cl(chain, l)]++;
    if (!P(parent).healthy) {
      bad_free_[cl(chain, l)].insert(parent);
    } else {
      try_unbind_doomed(chain, l);
    }
    parent = P(parent).parent;
  }
  if (!P(c).healthy) {
    release_bad_cell(c);
    if (!doomed) try_bind_doomed(chain, level);
  } else {
    try_unbind_doomed(chain, level);
  }
  std::vector<int32_t> frontier{c};
  for (int32_t l = level - 1; l >= 1; --l) {
    std::vector<int32_t> next;
    for (int32_t f : frontier)
      for (int32_t ch : pchildren(f)) next.push_back(ch);
    total_left_[cl(chain, l)] += static_cast<int32_t>(next.size());
    if (!doomed) try_unbind_doomed(chain, l);
    frontier.swap(next);
  }
}

void Hived::release_bad_cell(int32_t c) {
  bad_free_[cl(P(c).chain, P(c).level)].insert(c);
  if (P(c).vcell >= 0) unbind_pair(c, P(c).vcell);
  for (int32_t ch : pchildren(c))
    if (!P(ch).healthy) release_bad_cell(ch);
}

// removeCellFromFreeList: splits the ancestors that are still whole.
int32_t Hived::remove_from_free_list(int32_t c) {
  for (;;) {
    int32_t l = P(c).level;
    int32_t parent = P(c).parent;
    bool terminate = true;
    if (parent >= 0 && !P(parent).split) {
      for (int32_t ch : pchildren(parent)) free_insert(ch);
      P(parent).split = true;
      terminate = false;
    }
    free_erase(c);
    if (terminate) return l;
    c = parent;
  }
}

// addCellToFreeList: merges buddies while all of them are free.
int32_t Hived::add_to_free_list(int32_t c) {
  for (;;) {
    int32_t l = P(c).level;
    int32_t parent = P(c).parent;
    bool terminate = true;
    if (parent >= 0) {
      bool all_free = true;
      for (int32_t b : pchildren(parent))
        if (b != c && !P(b).in_free) {
          all_free = false;
          break;
        }
      if (all_free) {
        for (int32_t b : pchildren(parent))
          if (b != c) free_erase(b);
        P(parent).split = false;
        terminate = false;
      }
    }
    if (terminate) {
      free_insert(c);
      return l;
    }
    c = parent;
  }
}

// ---------------------------------------------------------------------------
// Bad nodes and doomed bad cells
// ---------------------------------------------------------------------------

void Hived::set_node_health(int32_t node, bool healthy) {
  if (node < 0 || static_cast<size_t>(node) >= bad_node_.size()) return;
  if (healthy == !bad_node_[static_cast<size_t>(node)]) return;
  bad_node_[static_cast<size_t>(node)] = healthy ? 0 : 1;
  bad_nodes_ += healthy ? -1 : 1;
  for (int32_t leaf : shape_.nodes[static_cast<size_t>(node)].leaf_cells) {
    if (healthy)
      set_healthy_cell(leaf);
    else
      set_bad_cell(leaf);
  }
  ++epoch_;
}

void Hived::set_bad_cell(int32_t c) {
  if (!P(c).healthy) return;
  P(c).healthy = false;
  if (P(c).is_node) touch_opp_view(c);
  if (P(c).vcell >= 0) touch_vc_view(P(c).vcell);
  if (P(c).parent >= 0) set_bad_cell(P(c).parent);
  if (in_free_cell_list(c)) {
    add_bad_free(c);
  } else if (P(c).vcell < 0 && !P(c).split) {
    // An ancestor is bound: bind this cell too so that the VC sees the failure.
    int32_t pv = P(c).parent >= 0 ? P(P(c).parent).vcell : -1;
    if (pv >= 0)
      for (int32_t ch : vchildren(pv))
        if (V(ch).pcell < 0) {
          bind_pair(c, ch);
          break;
        }
  }
}

void Hived::set_healthy_cell(int32_t c) {
  if (P(c).healthy) return;
  P(c).healthy = true;
  if (P(c).is_node) touch_opp_view(c);
  if (P(c).vcell >= 0) touch_vc_view(P(c).vcell);
  if (in_free_cell_list(c)) {
    remove_bad_free(c);
  } else if (int32_t v = P(c).vcell; v >= 0) {
    if (!P(c).pinned && P(c).used_guar == 0) {
      // Bound only because it was bad: unbind.
      unbind_pair(c, v);
      if (V(v).parent < 0) {
        int32_t vc = V(v).vc;
        vc_doomed_[vcl(vc, P(c).chain, P(c).level)].erase(c);
        all_vc_doomed_[cl(P(c).chain, P(c).level)]--;
        release_preassigned(c, vc, true);
      }
    } else if (V(v).parent < 0 && !P(c).pinned) {
      // A doomed cell that was put to use and is healthy again is an ordinary
      // allocation from now on (HiveD keeps it doomed, and later releases it
      // through a binding that is gone).
      int32_t vc = V(v).vc;
      if (vc_doomed_[vcl(vc, P(c).chain, P(c).level)].erase(c))
        all_vc_doomed_[cl(P(c).chain, P(c).level)]--;
    }
  }
  int32_t parent = P(c).parent;
  if (parent < 0) return;
  for (int32_t b : pchildren(parent))
    if (!P(b).healthy) return;
  set_healthy_cell(parent);
}

void Hived::add_bad_free(int32_t c) {
  const int32_t chain = P(c).chain, level = P(c).level;
  bad_free_[cl(chain, level)].insert(c);
  if (all_vc_free_[cl(chain, level)] >
      total_left_[cl(chain, level)] - static_cast<int32_t>(bad_free_[cl(chain, level)].size()))
    try_bind_doomed(chain, level);
}

void Hived::remove_bad_free(int32_t c) {
  const int32_t chain = P(c).chain, level = P(c).level;
  bad_free_[cl(chain, level)].erase(c);
  try_unbind_doomed(chain, level);
}

int32_t Hived::unbound_preassigned(int32_t vc, int32_t chain, int32_t level) const {
  for (int32_t v : vc_preassigned_[vcl(vc, chain, level)])
    if (V(v).pcell < 0) return v;
  return -1;
}

void Hived::try_bind_doomed(int32_t chain, int32_t level) {
  const size_t i = cl(chain, level);
  const int32_t healthy_left = total_left_[i] - static_cast<int32_t>(bad_free_[i].size());
  if (all_vc_free_[i] <= healthy_left) return;  // no VC can exceed it
  for (int32_t vc = 0; vc < nvc_; ++vc) {
    if (!vc_has_chain_[static_cast<size_t>(vc) * static_cast<size_t>(nchain_) +
                       static_cast<size_t>(chain)])
      continue;
    while (vc_free_[vcl(vc, chain, level)] >
               total_left_[i] - static_cast<int32_t>(bad_free_[i].size()) &&
           !bad_free_[i].empty()) {
      int32_t pc = *bad_free_[i].begin();
      int32_t v = unbound_preassigned(vc, chain, level);
      if (v < 0) break;
      bind_pair(pc, v);
      vc_doomed_[vcl(vc, chain, level)].insert(pc);
      all_vc_doomed_[i]++;
      allocate_preassigned(pc, vc, true);
    }
  }
}

void Hived::try_unbind_doomed(int32_t chain, int32_t level) {
  const size_t i = cl(chain, level);
  if (all_vc_doomed_[i] == 0) return;
  for (int32_t vc = 0; vc < nvc_; ++vc) {
    auto& doomed = vc_doomed_[vcl(vc, chain, level)];
    while (!doomed.empty() && vc_free_[vcl(vc, chain, level)] <
                                  total_left_[i] - static_cast<int32_t>(bad_free_[i].size())) {
      int32_t pc = *doomed.begin();
      doomed.erase(pc);
      all_vc_doomed_[i]--;
      // The VC may have put jobs in the healthy part of a doomed cell: such a
      // cell is an ordinary allocation now (HiveD would unbind it under the jobs).
      if (V(P(pc).vcell).used > 0) continue;
      unbind_pair(pc, P(pc).vcell);
      release_preassigned(pc, vc, true);
    }
  }
}

// ---------------------------------------------------------------------------
// Scheduling
// ---------------------------------------------------------------------------

ScheduleResult Hived::schedule(const GroupRequest& r, bool allow_preemption) {
  ScheduleResult res;
  if (std::string err = validate_request(r); !err.empty()) {
    res.outcome = Outcome::Rejected;
    res.reason = err;
    return res;
  }
  if (auto it = group_index_.find(r.affinity_group); it != group_index_.end()) {
    int32_t g = it->second;
    if (G(g).state != GroupState::Preempting) return result_of(g, Outcome::Bound);
    bool bad = false;
    for (int32_t p : G(g).pleaves) bad |= !P(p).healthy;
    if (allow_preemption && bad) {
      delete_preempting(g);  // its placement touches a bad node: schedule it again
    } else {
      std::vector<int32_t> victims, preemptors;
      collect_victims(G(g).pleaves, victims, preemptors);
      if (victims.empty()) {
        allocate_preempting(g);
        return result_of(g, Outcome::Bound);
      }
      ScheduleResult out = result_of(g, Outcome::Preempting);
      for (int32_t v : victims) out.victims.push_back({G(v).name, G(v).tag});
      return out;
    }
  }

  Request req;
  req.vc = shape_.find_vc(r.virtual_cluster);
  if (req.vc < 0) {
    res.outcome = Outcome::Rejected;
    res.reason = "VC " + r.virtual_cluster + " does not exists!";
    return res;
  }
  req.priority = r.priority;
  req.lazy = r.lazy_preemption_enable;
  if (!r.pinned_cell_id.empty()) {
    for (size_t i = 0; i < pinned_.size(); ++i)
      if (pinned_[i].vc == req.vc && pinned_[i].id == r.pinned_cell_id)
        req.pinned = static_cast<int32_t>(i);
    if (req.pinned < 0) {
      res.outcome = Outcome::Rejected;
      res.reason = "VC " + r.virtual_cluster + " does not have pinned cell " + r.pinned_cell_id;
      return res;
    }
    if (req.priority == kOpportunisticPriority) {
      res.outcome = Outcome::Rejected;
      res.reason = "opportunistic pod not supported to use pinned cell " + r.pinned_cell_id;
      return res;
    }
  }
  for (const auto& m : r.members)
    for (int32_t k = 0; k < m.pod_number; ++k) req.pods.push_back(m.leaf_cell_number);
  std::sort(req.pods.begin(), req.pods.end());

  Placement pl;
  std::string reason;
  bool found = false;
  if (req.pinned >= 0) {
    found =
        schedule_in_chain(req, P(pinned_[static_cast<size_t>(req.pinned)].pcell).chain, pl, reason);
  } else if (!r.leaf_cell_type.empty()) {
    int32_t lt = shape_.find_leaf_type(r.leaf_cell_type);
    if (lt < 0) {
      res.outcome = Outcome::Rejected;
      res.reason = "affinity group " + r.affinity_group + " requests leaf cell type " +
                   r.leaf_cell_type + ", which the whole cluster does not have";
      return res;
    }
    bool vc_has_type = false;
    for (int32_t chain : shape_.leaf_types[static_cast<size_t>(lt)].chains) {
      if (req.priority >= kMinGuaranteedPriority &&
          !vc_has_chain_[static_cast<size_t>(req.vc) * static_cast<size_t>(nchain_) +
                         static_cast<size_t>(chain)])
        continue;
      vc_has_type = true;
      if (schedule_in_chain(req, chain, pl, reason)) {
        found = true;
        break;
      }
    }
    if (!found && req.priority >= kMinGuaranteedPriority && !vc_has_type) {
      res.outcome = Outcome::Rejected;
      res.reason = "affinity group " + r.affinity_group + " requests leaf cell type " +
                   r.leaf_cell_type + ", which VC " + r.virtual_cluster + " does not have";
      return res;
    }
  } else {
    for (const auto& lt : shape_.leaf_types) {
      for (int32_t chain : lt.chains) {
        if (req.priority >= kMinGuaranteedPriority &&
            !vc_has_chain_[static_cast<size_t>(req.vc) * static_cast<size_t>(nchain_) +
                           static_cast<size_t>(chain)])
          continue;
        if (schedule_in_chain(req, chain, pl, reason)) {
          found = true;
          break;
        }
      }
      if (found) break;
    }
    if (!found && reason.empty()) reason = "VC " + r.virtual_cluster + " has no cells";
  }
  for (const auto& [g, vleaves] : pl.lazy) res.downgraded.push_back({G(g).name, G(g).tag});
  if (!found) {
    res.outcome = Outcome::Waiting;
    res.reason = reason;
    return res;
  }

  std::vector<int32_t> victims, preemptors;
  collect_victims(pl.pleaves, victims, preemptors);
  if ((!victims.empty() || !preemptors.empty()) && !allow_preemption) {
    // HiveD's filtering phase reports the victims without reserving anything.
    // (HiveD would also bind over cells another group has reserved; that waits here.)
    res.outcome = Outcome::Waiting;
    res.reason = victims.empty() ? "the placement overlaps a preemption in progress"
                                 : "the placement needs preemption";
    return res;
  }
  if (allow_preemption && !preemptors.empty()) {
    // Cancel the lower-priority preemptions this placement overlaps, then plan
    // again: cancelling moves bindings (HiveD keeps the stale plan).
    for (int32_t pg : preemptors) delete_preempting(pg);
    ScheduleResult again = schedule(r, allow_preemption);
    again.downgraded.insert(again.downgraded.begin(), res.downgraded.begin(), res.downgraded.end());
    return again;
  }
  int32_t g =
      create_group(r, req, pl, victims.empty() ? GroupState::Allocated : GroupState::Preempting);
  ScheduleResult out = result_of(g, victims.empty() ? Outcome::Bound : Outcome::Preempting);
  for (int32_t v : victims) out.victims.push_back({G(v).name, G(v).tag});
  out.downgraded = std::move(res.downgraded);
  return out;
}

bool Hived::schedule_in_chain(const Request& req, int32_t chain, Placement& out,
                              std::string& reason) {
  out = Placement();
  out.chain = chain;
  if (req.priority >= kMinGuaranteedPriority) return schedule_guaranteed(req, chain, out, reason);
  return schedule_opportunistic(req, chain, out, reason);
}

bool Hived::schedule_guaranteed(const Request& req, int32_t chain, Placement& out,
                                std::string& reason) {
  int32_t view = req.pinned >= 0
                     ? pinned_[static_cast<size_t>(req.pinned)].view
                     : vc_chain_view_[static_cast<size_t>(req.vc) * static_cast<size_t>(nchain_) +
                                      static_cast<size_t>(chain)];
  const std::string where = req.pinned >= 0
                                ? "pinned cell " + pinned_[static_cast<size_t>(req.pinned)].id
                                : "chain " + shape_.chains[static_cast<size_t>(chain)].name;
  if (view < 0) {
    reason = "VC " + shape_.vcs[static_cast<size_t>(req.vc)].name + " has no cells in " + where;
    return false;
  }
  if (!topology_schedule(view, req.pods, req.priority, out.vleaves, reason)) {
    reason += " when scheduling in VC " + shape_.vcs[static_cast<size_t>(req.vc)].name + " (" +
              where + ")";
    return false;
  }
  out.lazy = try_lazy_preempt(out.vleaves);
  if (map_to_physical(chain, out.vleaves, out.pleaves)) {
    // Lazy preemption can release cells and so bind doomed bad cells to the very
    // virtual cells just picked; such a placement would run on a bad node.
    bool bad = false;
    for (int32_t p : out.pleaves) bad |= !P(p).healthy;
    if (!bad) return true;
  }
  for (const auto& [g, vleaves] : out.lazy) revert_lazy_preempt(g, vleaves);
  out.lazy.clear();
  reason = "mapping the virtual placement would need at least one bad node (" + where + ")";
  return false;
}

bool Hived::schedule_opportunistic(const Request& req, int32_t chain, Placement& out,
                                   std::string& reason) {
  int32_t view = chain_opp_view_[static_cast<size_t>(chain)];
  if (!topology_schedule(view, req.pods, kOpportunisticPriority, out.pleaves, reason)) {
    reason += " when scheduling in the physical cluster (chain " +
              shape_.chains[static_cast<size_t>(chain)].name + ")";
    return false;
  }
  return true;
}

// topologyAwareScheduler.Schedule: first without preemption, then at the request's priority.
bool Hived::topology_schedule(int32_t view_id, const std::vector<int32_t>& pods, int32_t priority,
                              std::vector<int32_t>& leaves, std::string& reason) {
  View& view = views_[static_cast<size_t>(view_id)];
  std::vector<int32_t> nodes;
  int32_t used_priority = kOpportunisticPriority;
  bool ok = view.index.first_fit(pods, nodes);
  if (!ok && priority > kOpportunisticPriority && view.is_virtual) {
    // Preemption inside the VC pays only when the VC runs something of lower priority.
    const auto& used = vc_prio_used_[static_cast<size_t>(view.vc)];
    if (!used.empty() && used.begin()->first < priority) {
      used_priority = priority;
      auto free_at = [&](int32_t pos) {
        int32_t total = view.leaf_begin[static_cast<size_t>(pos) + 1] -
                        view.leaf_begin[static_cast<size_t>(pos)];
        for (const auto& [p, n] : view.prio_counts[static_cast<size_t>(pos)])
          if (p >= priority) total -= n;
        return total;
      };
      ok = view.index.first_fit_with(pods, free_at, nodes);
    }
  }
  if (!ok) {
    reason = "insufficient capacity";
    return false;
  }
  leaves.clear();
  for (size_t i = 0; i < pods.size(); ++i)
    pick_leaves(view, nodes[i], pods[i], used_priority, leaves);
  for (int32_t c : taken_list_) (view.is_virtual ? taken_v_ : taken_p_)[static_cast<size_t>(c)] = 0;
  taken_list_.clear();
  return true;
}

// findLeafCellsInNode (see pick_lowest_ancestor).
void Hived::pick_leaves(const View& view, int32_t pos, int32_t k, int32_t priority,
                        std::vector<int32_t>& out) {
  const bool virt = view.is_virtual;
  auto& taken = virt ? taken_v_ : taken_p_;
  const int32_t b = view.leaf_begin[static_cast<size_t>(pos)],
                e = view.leaf_begin[static_cast<size_t>(pos) + 1];
  std::span<const int32_t> leaves(view.leaves.data() + b, static_cast<size_t>(e - b));
  std::vector<int32_t> rank(leaves.size(), -1);
  int32_t next = 0;
  for (size_t i = 0; i < leaves.size(); ++i) {
    int32_t c = leaves[i];
    if (!taken[static_cast<size_t>(c)] && (virt ? V(c).priority : P(c).priority) == kFreePriority)
      rank[i] = next++;
  }
  for (size_t i = 0; i < leaves.size(); ++i) {
    int32_t c = leaves[i];
    int32_t pr = virt ? V(c).priority : P(c).priority;
    if (!taken[static_cast<size_t>(c)] && pr != kFreePriority && pr < priority) rank[i] = next++;
  }
  int32_t node_cell = view.nodes[static_cast<size_t>(pos)];
  int32_t node_level = virt ? V(node_cell).level : P(node_cell).level;
  size_t before = out.size();
  auto parent_of = [&](int32_t c) { return virt ? V(c).parent : P(c).parent; };
  pick_lowest_ancestor(leaves, rank, k, node_level, parent_of, out);
  for (size_t i = before; i < out.size(); ++i) {
    taken[static_cast<size_t>(out[i])] = 1;
    taken_list_.push_back(out[i]);
  }
}

std::vector<std::pair<int32_t, std::vector<int32_t>>> Hived::try_lazy_preempt(
    const std::vector<int32_t>& vleaves) {
  std::vector<std::pair<int32_t, std::vector<int32_t>>> done;
  for (int32_t v : vleaves) {
    int32_t p = V(v).pcell;
    if (p < 0 || P(p).state != CellState::Used) continue;
    int32_t g = P(p).using_group;
    if (g < 0 || !G(g).lazy_enable || G(g).lazy_preempted) continue;
    done.push_back({g, G(g).vleaves});
    lazy_preempt(g);
  }
  return done;
}

// lazyPreemptAffinityGroup: the group leaves its VC and keeps running as opportunistic.
void Hived::lazy_preempt(int32_t g) {
  Group& grp = G(g);
  for (size_t i = 0; i < grp.vleaves.size(); ++i) {
    int32_t p = grp.pleaves[i];
    if (grp.vleaves[i] < 0 || P(p).state != CellState::Used || P(p).using_group != g) continue;
    release_leaf(p, grp.vc);
    allocate_leaf(p, -1, kOpportunisticPriority);
  }
  grp.vleaves.clear();
  grp.lazy_preempted = true;
  ++epoch_;
}

void Hived::revert_lazy_preempt(int32_t g, const std::vector<int32_t>& vleaves) {
  Group& grp = G(g);
  std::vector<int32_t> pacs;
  std::vector<int32_t> bound = vleaves;
  for (size_t i = 0; i < grp.pleaves.size() && i < bound.size(); ++i) {
    int32_t p = grp.pleaves[i];
    if (P(p).state != CellState::Used || P(p).using_group != g) continue;
    release_leaf(p, grp.vc);
    pacs.push_back(assign_leaf(p, bound[i], grp.priority, true));
  }
  finish_allocation(pacs);
  grp.vleaves = std::move(bound);
  grp.lazy_preempted = false;
}

// ---------------------------------------------------------------------------
// Virtual to physical mapping (cell_allocation.go)
// ---------------------------------------------------------------------------

int32_t Hived::new_vertex(int32_t vcell) {
  int32_t id = static_cast<int32_t>(vertices_.size());
  vertices_.push_back({vcell, -1, -1, -1});
  vertex_of_[static_cast<size_t>(vcell)] = id;
  return id;
}

void Hived::add_child_vertex(int32_t parent, int32_t child) {
  Vertex& p = vertices_[static_cast<size_t>(parent)];
  if (p.last_child < 0) {
    p.first_child = p.last_child = child;
  } else {
    vertices_[static_cast<size_t>(p.last_child)].next = child;
    p.last_child = child;
  }
}

void Hived::sort_by_opportunistic(std::vector<int32_t>& cells) const {
  std::stable_sort(cells.begin(), cells.end(),
                   [&](int32_t a, int32_t b) { return P(a).used_opp < P(b).used_opp; });
}

bool Hived::try_candidate(int32_t vertex, int32_t pcell) {
  if (P(pcell).level == 1) {
    vbind_[static_cast<size_t>(vertices_[static_cast<size_t>(vertex)].vcell)] = pcell;
    return true;
  }
  std::vector<int32_t> kids;
  for (int32_t c = vertices_[static_cast<size_t>(vertex)].first_child; c >= 0;
       c = vertices_[static_cast<size_t>(c)].next)
    kids.push_back(c);
  return map_cells(kids, pchildren(pcell), nullptr);
}

// mapVirtualCellsToPhysical: each vertex gets a distinct usable candidate whose
// subtree can host the vertex's children; backtracking.
bool Hived::map_cells(const std::vector<int32_t>& vs, std::span<const int32_t> candidates,
                      std::vector<int32_t>* picked) {
  std::vector<int32_t> cands;
  for (int32_t c : candidates)
    if (usable(c)) cands.push_back(c);
  if (cands.size() < vs.size()) return false;
  sort_by_opportunistic(cands);
  const int32_t n = static_cast<int32_t>(vs.size());
  if (n == 0) return true;
  std::vector<int32_t> pick(static_cast<size_t>(n), 0);
  std::vector<uint8_t> used(cands.size(), 0);
  int32_t ci = 0;
  while (ci >= 0) {
    int32_t j = pick[static_cast<size_t>(ci)];
    bool placed = false;
    for (; j < static_cast<int32_t>(cands.size()); ++j) {
      if (used[static_cast<size_t>(j)]) continue;
      if (try_candidate(vs[static_cast<size_t>(ci)], cands[static_cast<size_t>(j)])) {
        placed = true;
        break;
      }
    }
    if (placed) {
      pick[static_cast<size_t>(ci)] = j;
      used[static_cast<size_t>(j)] = 1;
      if (ci == n - 1) {
        if (picked)
          for (int32_t k : pick) picked->push_back(cands[static_cast<size_t>(k)]);
        return true;
      }
      ++ci;
      pick[static_cast<size_t>(ci)] = 0;
    } else {
      --ci;
      if (ci >= 0) {
        used[static_cast<size_t>(pick[static_cast<size_t>(ci)])] = 0;
        pick[static_cast<size_t>(ci)]++;
      }
    }
  }
  return false;
}

int32_t Hived::overlay_count(int32_t level) const {
  return static_cast<int32_t>(free_[cl(ov_chain_, level)].size()) -
         ov_removed_count_[static_cast<size_t>(level)] +
         static_cast<int32_t>(ov_extra_[static_cast<size_t>(level)].size());
}

template <class F>
bool Hived::overlay_each(int32_t level, F f) const {
  const auto& real = free_[cl(ov_chain_, level)];
  const auto& extra = ov_extra_[static_cast<size_t>(level)];
  auto it = real.begin();
  size_t xi = 0;
  for (;;) {
    while (it != real.end() && ov_removed_[static_cast<size_t>(it->second)]) ++it;
    bool have_real = it != real.end(), have_extra = xi < extra.size();
    if (!have_real && !have_extra) return false;
    int32_t c;
    if (have_real && have_extra) {
      int32_t x = extra[xi];
      std::pair<int32_t, int32_t> kx{P(x).used_opp, x};
      if (*it < kx) {
        c = it->second;
        ++it;
      } else {
        c = x;
        ++xi;
      }
    } else if (have_real) {
      c = it->second;
      ++it;
    } else {
      c = extra[xi++];
    }
    if (f(c)) return true;
  }
}

void Hived::overlay_add(int32_t c) {
  auto& extra = ov_extra_[static_cast<size_t>(P(c).level)];
  std::pair<int32_t, int32_t> key{P(c).used_opp, c};
  auto it = std::lower_bound(extra.begin(), extra.end(), key,
                             [&](int32_t a, const std::pair<int32_t, int32_t>& k) {
                               return std::pair<int32_t, int32_t>{P(a).used_opp, a} < k;
                             });
  extra.insert(it, c);
}

void Hived::overlay_remove(int32_t c) {
  auto& extra = ov_extra_[static_cast<size_t>(P(c).level)];
  auto it = std::find(extra.begin(), extra.end(), c);
  if (it != extra.end()) {
    extra.erase(it);
    return;
  }
  if (!ov_removed_[static_cast<size_t>(c)]) {
    ov_removed_[static_cast<size_t>(c)] = 1;
    ov_removed_list_.push_back(c);
    ov_removed_count_[static_cast<size_t>(P(c).level)]++;
  }
}

void Hived::overlay_reset() {
  for (int32_t c : ov_removed_list_) ov_removed_[static_cast<size_t>(c)] = 0;
  ov_removed_list_.clear();
  for (auto& e : ov_extra_) e.clear();
  std::fill(ov_removed_count_.begin(), ov_removed_count_.end(), 0);
}

// buddyAlloc on the request's view of the free lists.
bool Hived::buddy_alloc(int32_t vertex, int32_t level) {
  const int32_t target = V(vertices_[static_cast<size_t>(vertex)].vcell).level;
  if (level == target) {
    int32_t chosen = -1;
    overlay_each(level, [&](int32_t c) {
      if (!usable(c)) return false;
      if (try_candidate(vertex, c)) {
        chosen = c;
        return true;
      }
      return false;
    });
    if (chosen < 0) return false;
    overlay_remove(chosen);
    return true;
  }
  int32_t chosen = -1;
  overlay_each(level, [&](int32_t c) {
    if (!usable(c)) return false;
    for (int32_t ch : pchildren(c)) overlay_add(ch);
    if (buddy_alloc(vertex, level - 1)) {
      chosen = c;
      return true;
    }
    ov_extra_[static_cast<size_t>(level - 1)].clear();
    return false;
  });
  if (chosen < 0) return false;
  overlay_remove(chosen);
  return true;
}

// safeRelaxedBuddyAlloc: split higher cells, as long as every level keeps
// enough free cells for the VCs' unbound cells.
bool Hived::safe_relaxed_buddy_alloc(int32_t vertex, std::vector<int32_t>& free_num) {
  const int32_t level = V(vertices_[static_cast<size_t>(vertex)].vcell).level;
  const int32_t top = chain_top_[static_cast<size_t>(ov_chain_)];
  std::vector<int32_t> splittable(static_cast<size_t>(top + 2), 0);
  int32_t splittable_cell = -1;
  for (int32_t i = top; i > level; --i) {
    splittable[static_cast<size_t>(i)] = overlay_count(i) - free_num[static_cast<size_t>(i)];
    if (i < top && splittable_cell >= 0)
      splittable[static_cast<size_t>(i)] +=
          splittable[static_cast<size_t>(i + 1)] * P(splittable_cell).child_count;
    if (splittable_cell < 0 && overlay_count(i) > 0) {
      overlay_each(i, [&](int32_t c) {
        splittable_cell = c;
        return true;
      });
    } else if (splittable_cell >= 0) {
      splittable_cell = P(splittable_cell).child_count > 0 ? pchildren(splittable_cell)[0] : -1;
    }
    if (splittable[static_cast<size_t>(i)] < 0) return false;  // VC safety broken
  }
  for (int32_t l = level + 1; l <= top; ++l) {
    int32_t n = std::min(overlay_count(l), splittable[static_cast<size_t>(l)]);
    if (n <= 0) continue;
    std::vector<int32_t> split;
    overlay_each(l, [&](int32_t c) {
      split.push_back(c);
      return static_cast<int32_t>(split.size()) >= n;
    });
    for (int32_t c : split) overlay_remove(c);
    splittable[static_cast<size_t>(l)] -= n;
    for (int32_t sl = l; sl > level; --sl) {
      std::vector<int32_t> kids;
      for (int32_t c : split)
        for (int32_t ch : pchildren(c)) kids.push_back(ch);
      split.swap(kids);
    }
    for (int32_t c : split) overlay_add(c);
    int32_t chosen = -1;
    overlay_each(level, [&](int32_t c) {
      if (!usable(c)) return false;
      if (try_candidate(vertex, c)) {
        chosen = c;
        return true;
      }
      return false;
    });
    if (chosen >= 0) {
      overlay_remove(chosen);
      return true;
    }
  }
  return false;
}

// toBindingPaths + mapVirtualPlacementToPhysical.
bool Hived::map_to_physical(int32_t chain, const std::vector<int32_t>& vleaves,
                            std::vector<int32_t>& pleaves) {
  vertices_.clear();
  std::vector<int32_t> preassigned;
  std::vector<std::pair<int32_t, std::vector<int32_t>>>
      non_preassigned;  // bound parent vcell -> vertices
  std::vector<int32_t> path;
  for (int32_t leaf : vleaves) {
    if (V(leaf).pcell >= 0) continue;
    path.clear();
    for (int32_t c = leaf; c >= 0; c = V(c).parent) {
      if (V(c).pcell >= 0 || vertex_of_[static_cast<size_t>(c)] >= 0) break;
      path.push_back(c);
    }
    int32_t root = path.back();
    int32_t rv = new_vertex(root);
    int32_t parent = V(root).parent;
    if (parent < 0) {
      preassigned.push_back(rv);
    } else if (V(parent).pcell >= 0) {
      bool found = false;
      for (auto& [pv, list] : non_preassigned)
        if (pv == parent) {
          list.push_back(rv);
          found = true;
          break;
        }
      if (!found) non_preassigned.push_back({parent, {rv}});
    } else {
      add_child_vertex(vertex_of_[static_cast<size_t>(parent)], rv);
    }
    for (size_t i = path.size() - 1; i-- > 0;) {
      int32_t v = new_vertex(path[i]);
      add_child_vertex(vertex_of_[static_cast<size_t>(V(path[i]).parent)], v);
    }
  }
  ov_chain_ = chain;
  const int32_t top = chain_top_[static_cast<size_t>(chain)];
  ov_removed_count_.assign(static_cast<size_t>(top + 1), 0);
  ov_extra_.resize(static_cast<size_t>(top + 1));
  for (auto& e : ov_extra_) e.clear();
  std::vector<int32_t> free_num(static_cast<size_t>(top + 2), 0);
  for (int32_t l = 1; l <= top; ++l) free_num[static_cast<size_t>(l)] = all_vc_free_[cl(chain, l)];

  bool ok = true;
  for (int32_t vx : preassigned) {
    int32_t level = V(vertices_[static_cast<size_t>(vx)].vcell).level;
    int32_t lowest = -1;
    for (int32_t l = level; l <= top; ++l)
      if (overlay_count(l) > 0) {
        lowest = l;
        break;
      }
    if (lowest >= 0 && buddy_alloc(vx, lowest)) {
      free_num[static_cast<size_t>(level)]--;
      continue;
    }
    if (!safe_relaxed_buddy_alloc(vx, free_num)) {
      ok = false;
      break;
    }
  }
  if (ok) {
    for (auto& [parent, list] : non_preassigned)
      if (!map_cells(list, pchildren(V(parent).pcell), nullptr)) {
        ok = false;
        break;
      }
  }
  if (ok) {
    pleaves.clear();
    for (int32_t leaf : vleaves)
      pleaves.push_back(V(leaf).pcell >= 0 ? V(leaf).pcell : vbind_[static_cast<size_t>(leaf)]);
  }
  for (const Vertex& v : vertices_) {
    vertex_of_[static_cast<size_t>(v.vcell)] = -1;
    vbind_[static_cast<size_t>(v.vcell)] = -1;
  }
  vertices_.clear();
  overlay_reset();
  return ok;
}

// ---------------------------------------------------------------------------
// Groups
// ---------------------------------------------------------------------------

void Hived::collect_victims(const std::vector<int32_t>& pleaves, std::vector<int32_t>& victims,
                            std::vector<int32_t>& preemptors) const {
  for (int32_t p : pleaves) {
    const PCell& c = P(p);
    if ((c.state == CellState::Used || c.state == CellState::Reserving) && c.using_group >= 0 &&
        std::find(victims.begin(), victims.end(), c.using_group) == victims.end())
      victims.push_back(c.using_group);
    if ((c.state == CellState::Reserving || c.state == CellState::Reserved) &&
        c.reserving_group >= 0 &&
        std::find(preemptors.begin(), preemptors.end(), c.reserving_group) == preemptors.end())
      preemptors.push_back(c.reserving_group);
  }
}

int32_t Hived::create_group(const GroupRequest& r, const Request& req, const Placement& pl,
                            GroupState state) {
  int32_t g;
  if (!free_slots_.empty()) {
    g = free_slots_.back();
    free_slots_.pop_back();
  } else {
    g = static_cast<int32_t>(groups_.size());
    groups_.emplace_back();
  }
  Group& grp = G(g);
  grp = Group();
  grp.alive = true;
  grp.name = r.affinity_group;
  grp.tag = r.tag;
  grp.vc = req.vc;
  grp.priority = req.priority;
  grp.lazy_enable = req.lazy;
  grp.state = state;
  grp.chain = pl.chain;
  grp.pod_leaves = req.pods;
  grp.pod_offset.push_back(0);
  for (int32_t k : req.pods) grp.pod_offset.push_back(grp.pod_offset.back() + k);
  grp.pleaves = pl.pleaves;
  grp.vleaves = pl.vleaves;
  grp.pod_handed.assign(req.pods.size(), 0);
  group_index_[grp.name] = g;
  std::vector<int32_t> pacs;
  for (size_t i = 0; i < grp.pleaves.size(); ++i) {
    int32_t p = grp.pleaves[i];
    int32_t no_virtual = -1;
    int32_t& v = grp.vleaves.empty() ? no_virtual : grp.vleaves[i];
    if (state == GroupState::Allocated) {
      pacs.push_back(assign_leaf(p, v, grp.priority));
      P(p).using_group = g;
      P(p).state = CellState::Used;
    } else {
      bool was_used = P(p).state == CellState::Used;
      if (was_used) {
        int32_t ug = P(p).using_group;
        release_leaf(p, G(ug).vc);
        G(ug).state = GroupState::BeingPreempted;
      }
      pacs.push_back(assign_leaf(p, v, grp.priority));
      P(p).reserving_group = g;
      P(p).state = was_used ? CellState::Reserving : CellState::Reserved;
    }
  }
  finish_allocation(pacs);
  if (state == GroupState::Preempting) ++epoch_;
  return g;
}

void Hived::free_group(int32_t g) {
  group_index_.erase(G(g).name);
  G(g) = Group();
  free_slots_.push_back(g);
}

// deleteAllocatedAffinityGroup
void Hived::delete_allocated(int32_t g) {
  Group& grp = G(g);
  for (int32_t p : grp.pleaves) {
    if (P(p).using_group == g) P(p).using_group = -1;
    if (P(p).state == CellState::Used) {
      release_leaf(p, grp.vc);
      P(p).state = CellState::Free;
    } else if (P(p).state == CellState::Reserving) {
      P(p).state = CellState::Reserved;
    }
  }
  free_group(g);
  ++epoch_;
}

// deletePreemptingAffinityGroup: the cells go back to the groups being preempted.
void Hived::delete_preempting(int32_t g) {
  Group& grp = G(g);
  std::vector<int32_t> pacs;
  for (int32_t p : grp.pleaves) {
    release_leaf(p, grp.vc);
    P(p).reserving_group = -1;
    if (P(p).state == CellState::Reserving) {
      P(p).state = CellState::Used;
      int32_t bg = P(p).using_group;
      int32_t no_virtual = -1;
      int32_t* bv = &no_virtual;
      if (bg >= 0 && !G(bg).vleaves.empty()) {
        const auto& pl = G(bg).pleaves;
        auto it = std::find(pl.begin(), pl.end(), p);
        if (it != pl.end()) bv = &G(bg).vleaves[static_cast<size_t>(it - pl.begin())];
      }
      if (bg >= 0) pacs.push_back(assign_leaf(p, *bv, G(bg).priority, true));
    } else {
      P(p).state = CellState::Free;
    }
  }
  finish_allocation(pacs);
  free_group(g);
  ++epoch_;
}

void Hived::allocate_preempting(int32_t g) {
  for (int32_t p : G(g).pleaves) {
    P(p).reserving_group = -1;
    P(p).using_group = g;
    P(p).state = CellState::Used;
  }
  G(g).state = GroupState::Allocated;
}

bool Hived::release(std::string_view group) {
  auto it = group_index_.find(std::string(group));
  if (it == group_index_.end()) return false;
  if (G(it->second).state == GroupState::Preempting)
    delete_preempting(it->second);
  else
    delete_allocated(it->second);
  return true;
}

ScheduleResult Hived::result_of(int32_t g, Outcome o) const {
  const Group& grp = G(g);
  ScheduleResult r;
  r.outcome = o;
  r.cell_chain = grp.chain >= 0 ? shape_.chains[static_cast<size_t>(grp.chain)].name : "";
  const auto& chain = shape_.chains[static_cast<size_t>(grp.chain)];
  for (size_t i = 0; i < grp.pod_leaves.size(); ++i) {
    PodPlacement pod;
    pod.leaf_cell_number = grp.pod_leaves[i];
    for (int32_t k = grp.pod_offset[i]; k < grp.pod_offset[i + 1]; ++k) {
      int32_t p = grp.pleaves[static_cast<size_t>(k)];
      if (pod.node < 0) pod.node = P(p).node;
      pod.physical_leaf_cell_indices.push_back(P(p).leaf_index);
      if (grp.vleaves.empty() || grp.vleaves[static_cast<size_t>(k)] < 0) {
        pod.preassigned_cell_types.emplace_back();
      } else {
        int32_t pac = V(grp.vleaves[static_cast<size_t>(k)]).preassigned;
        pod.preassigned_cell_types.push_back(chain.level_type[static_cast<size_t>(V(pac).level)]);
      }
    }
    r.pods.push_back(std::move(pod));
  }
  return r;
}

ScheduleResult Hived::schedule_pod(std::string_view group, int32_t leaf_cell_number) {
  ScheduleResult r;
  auto it = group_index_.find(std::string(group));
  if (it == group_index_.end()) {
    r.outcome = Outcome::Rejected;
    r.reason = "affinity group " + std::string(group) + " is not allocated";
    return r;
  }
  Group& grp = G(it->second);
  int32_t declared = 0;
  for (size_t i = 0; i < grp.pod_leaves.size(); ++i) {
    if (grp.pod_leaves[i] != leaf_cell_number) continue;
    ++declared;
    if (grp.pod_handed[i]) continue;
    if (grp.state == GroupState::Preempting) {
      r.outcome = Outcome::Waiting;
      r.reason = "affinity group " + grp.name + " is preempting others";
      return r;
    }
    grp.pod_handed[i] = 1;
    ScheduleResult all = result_of(it->second, Outcome::Bound);
    r.outcome = Outcome::Bound;
    r.cell_chain = all.cell_chain;
    r.pods.push_back(all.pods[i]);
    return r;
  }
  r.outcome = Outcome::Rejected;
  r.reason = "Requesting more pods than the configured number for " +
             std::to_string(leaf_cell_number) + " leaf cells (" + std::to_string(declared) +
             " pods) in affinity group " + grp.name;
  return r;
}

UsageSummary Hived::usage() const {
  UsageSummary u;
  for (const PCell& p : pcells_) {
    if (p.level != 1) continue;
    if (p.priority != kFreePriority) ++u.used_leaf_cells;
    if (p.priority == kOpportunisticPriority) ++u.opportunistic_leaf_cells;
    if (!p.healthy) ++u.bad_leaf_cells;
  }
  return u;
}

// ---------------------------------------------------------------------------
// Invariants
// ---------------------------------------------------------------------------

std::string Hived::check_invariants() const {
  auto fail = [](const std::string& s) { return s; };
  // Leaf ownership: every used or reserved leaf belongs to live groups that list it.
  auto lists = [&](int32_t g, int32_t p) {
    if (g < 0 || static_cast<size_t>(g) >= groups_.size() || !groups_[static_cast<size_t>(g)].alive)
      return false;
    const auto& pl = groups_[static_cast<size_t>(g)].pleaves;
    return std::find(pl.begin(), pl.end(), p) != pl.end();
  };
  std::vector<int32_t> opp(pcells_.size(), 0), guar(pcells_.size(), 0);
  for (size_t i = 0; i < pcells_.size(); ++i) {
    const PCell& c = pcells_[i];
    if (c.level != 1) continue;
    const int32_t p = static_cast<int32_t>(i);
    switch (c.state) {
      case CellState::Free:
        if (c.using_group >= 0 || c.reserving_group >= 0 || c.priority != kFreePriority)
          return fail("free leaf " + std::to_string(i) + " has an owner or a priority");
        break;
      case CellState::Used:
        if (!lists(c.using_group, p) || c.reserving_group >= 0 || c.priority == kFreePriority)
          return fail("used leaf " + std::to_string(i) + " is not held by its group");
        break;
      case CellState::Reserving:
        if (!lists(c.using_group, p) || !lists(c.reserving_group, p))
          return fail("reserving leaf " + std::to_string(i) + " lacks its groups");
        break;
      case CellState::Reserved:
        if (c.using_group >= 0 || !lists(c.reserving_group, p))
          return fail("reserved leaf " + std::to_string(i) + " is inconsistent");
        break;
    }
    for (int32_t a = p; a >= 0; a = P(a).parent) {
      if (c.priority == kOpportunisticPriority) opp[static_cast<size_t>(a)]++;
      if (c.priority >= 0) guar[static_cast<size_t>(a)]++;
    }
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    const Group& grp = groups_[g];
    if (!grp.alive) continue;
    for (int32_t p : grp.pleaves) {
      const PCell& c = P(p);
      bool ok = grp.state == GroupState::Preempting
                    ? c.reserving_group == static_cast<int32_t>(g)
                    : c.using_group == static_cast<int32_t>(g) || c.state == CellState::Reserved;
      if (!ok)
        return fail("group " + grp.name + " lists leaf " + std::to_string(p) + " it does not hold");
    }
    auto it = group_index_.find(grp.name);
    if (it == group_index_.end() || it->second != static_cast<int32_t>(g))
      return fail("group index is stale");
  }
  for (size_t i = 0; i < pcells_.size(); ++i) {
    if (pcells_[i].used_opp != opp[i] || pcells_[i].used_guar != guar[i])
      return fail("usage counters of cell " + std::to_string(i) + " are off");
    // Free list membership: free iff whole, unbound, and its parent is split (or it is a top cell).
    const PCell& c = pcells_[i];
    bool expect = !c.split && c.vcell < 0 && (c.parent < 0 || P(c.parent).split);
    if (c.in_free != expect)
      return fail("cell " + std::to_string(i) + " free-list flag is inconsistent");
    if (c.in_free && !free_[cl(c.chain, c.level)].count({c.used_opp, static_cast<int32_t>(i)}))
      return fail("cell " + std::to_string(i) + " is missing from its free list");
    if (c.vcell >= 0 && V(c.vcell).pcell != static_cast<int32_t>(i))
      return fail("binding of cell " + std::to_string(i) + " is one-sided");
    // A split cell has no binding and is not free; its children are free, split or bound.
    if (c.split && c.vcell >= 0) return fail("split cell " + std::to_string(i) + " is bound");
  }
  for (size_t k = 0; k < ncl_; ++k)
    for (const auto& [o, cell] : free_[k])
      if (!P(cell).in_free || P(cell).used_opp != o)
        return fail("free list holds a stale entry for cell " + std::to_string(cell));
  // totalLeftCellNum: cells obtainable from the free lists.
  std::vector<int32_t> left(ncl_, 0);
  for (size_t i = 0; i < pcells_.size(); ++i) {
    if (!pcells_[i].in_free) continue;
    std::vector<int32_t> stack{static_cast<int32_t>(i)};
    while (!stack.empty()) {
      int32_t c = stack.back();
      stack.pop_back();
      left[cl(P(c).chain, P(c).level)]++;
      for (int32_t ch : pchildren(c)) stack.push_back(ch);
    }
  }
  for (size_t k = 0; k < ncl_; ++k)
    if (left[k] != total_left_[k])
      return fail("totalLeftCellNum is off at (chain, level) slot " + std::to_string(k));
  // vcFreeCellNum: unbound non-pinned preassigned cells of each VC.
  std::vector<int32_t> all_free(ncl_, 0);
  for (int32_t vc = 0; vc < nvc_; ++vc)
    for (int32_t ch = 0; ch < nchain_; ++ch)
      for (int32_t l = 1; l <= chain_top_[static_cast<size_t>(ch)]; ++l) {
        int32_t n = 0;
        for (int32_t v : vc_preassigned_[vcl(vc, ch, l)])
          if (V(v).pcell < 0) ++n;
        if (n != vc_free_[vcl(vc, ch, l)])
          return fail("vcFreeCellNum of " + shape_.vcs[static_cast<size_t>(vc)].name +
                      " at chain " + shape_.chains[static_cast<size_t>(ch)].name + " level " +
                      std::to_string(l) + " is " + std::to_string(vc_free_[vcl(vc, ch, l)]) +
                      ", recount " + std::to_string(n));
        all_free[cl(ch, l)] += n;
      }
  for (size_t k = 0; k < ncl_; ++k)
    if (all_free[k] != all_vc_free_[k]) return fail("allVCFreeCellNum is off");
  // Safety: with no bad cells, every level keeps enough cells for the VCs' unbound cells.
  bool any_bad = false;
  for (uint8_t b : bad_node_) any_bad |= b != 0;
  if (!any_bad)
    for (size_t k = 0; k < ncl_; ++k)
      if (total_left_[k] < all_vc_free_[k])
        return fail("VC safety is broken at (chain, level) slot " + std::to_string(k));
  // Bindings of virtual cells; virtual usage counters.
  std::vector<int32_t> vused(vcells_.size(), 0);
  for (size_t i = 0; i < vcells_.size(); ++i) {
    const VCell& v = vcells_[i];
    if (v.pcell >= 0 && P(v.pcell).vcell != static_cast<int32_t>(i))
      return fail("binding of virtual cell is one-sided");
    if (v.pcell >= 0 && P(v.pcell).level != v.level)
      return fail("virtual cell bound across levels");
    // Bindings are connected from the preassigned cell down, and follow the physical tree.
    if (v.pcell >= 0 && v.parent >= 0 &&
        (V(v.parent).pcell < 0 || P(v.pcell).parent != V(v.parent).pcell))
      return fail("virtual cell " + std::to_string(i) + " of VC " +
                  shape_.vcs[static_cast<size_t>(v.vc)].name +
                  " is bound but its parent is not bound to its physical parent");
    if (v.level == 1 && v.priority != kFreePriority)
      for (int32_t a = static_cast<int32_t>(i); a >= 0; a = V(a).parent)
        vused[static_cast<size_t>(a)]++;
    if (v.level == 1 && v.priority != kFreePriority && v.pcell < 0)
      return fail("used virtual leaf " + std::to_string(i) + " of VC " +
                  shape_.vcs[static_cast<size_t>(v.vc)].name + " is unbound");
  }
  for (size_t i = 0; i < vcells_.size(); ++i)
    if (vused[i] != vcells_[i].used) return fail("virtual usage counter is off");
  // View indexes.
  for (const View& view : views_) {
    for (size_t pos = 0; pos < view.nodes.size(); ++pos) {
      int32_t c = view.nodes[pos];
      int32_t cls = view.node_class[pos];
      int32_t expect;
      if (view.is_virtual) {
        bool healthy = V(c).pcell < 0 || P(V(c).pcell).healthy;
        expect = healthy ? bucket_used(view.layout, cls, V(c).used) : -1;
      } else {
        expect = P(c).healthy
                     ? bucket_opportunistic(view.layout, cls, P(c).used_opp, P(c).used_guar)
                     : -1;
      }
      if (view.index.bucket_of(static_cast<int32_t>(pos)) != expect)
        return fail("cluster view index is stale");
    }
  }
  if (safety_violations_ > 0) return fail("a preassigned allocation broke VC safety");
  return {};
}

}  // namespace

std::unique_ptr<Policy> make_hived_policy(const config::HivedModel& model, std::string& error) {
  auto h = std::make_unique<Hived>(model, error);
  if (!error.empty()) return nullptr;
  return h;
}

}  // namespace pai::scheduler
