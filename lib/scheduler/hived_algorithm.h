#pragma once
// Internal to libpai (not installed): the state of the HiveD algorithm, shared by the
// files that implement it, split as HiveD's own pkg/algorithm is:
//
//   hived.cc             the driver: construction, schedule, groups, pod placement
//   hived_cells.cc       the cell model: trees, free lists, usage counters, bindings
//   hived_allocation.cc  cell allocation: leaf and preassigned cells, buddy split/merge
//   hived_buddy.cc       buddy allocation: mapping a virtual placement to physical cells
//   hived_placement.cc   topology-aware placement: cluster views, nodes and leaf cells
//   hived_intra_vc.cc    intra-VC scheduling: which view a request is placed in
//   hived_preemption.cc  preemption and lazy preemption
//   hived_health.cc      bad nodes and doomed bad cells
//   hived_invariants.cc  the invariants the randomized tests check
//
// The public entry point is scheduler/hived.h.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <deque>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "scheduler/hived.h"
#include "scheduler/hived_state.h"
#include "scheduler/node_index.h"
#include "scheduler/policy.h"
#include "util/result.h"

namespace pai::scheduler {

// Hidden: these are not part of libpai's interface (the pragma reads the same to
// GCC and clang, which spell the attribute on a namespace differently).
#pragma GCC visibility push(hidden)
namespace hived_detail {

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
  int32_t free_key = -1;  // in the free list: its position (HiveD order) or its id (config order)
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
  int32_t pre_pos = -1;  // non-pinned preassigned cells: position in the VC's list
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
  std::vector<int32_t> not_suggested;  // positions the last update marked not suggested
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

  // Back to a default group, keeping the buffers' capacity for the slot's next group.
  void reset() {
    alive = false;
    name.clear();
    tag = 0;
    vc = -1;
    priority = 0;
    lazy_enable = false;
    lazy_preempted = false;
    state = GroupState::Allocated;
    chain = -1;
    pod_leaves.clear();
    pod_offset.clear();
    pleaves.clear();
    vleaves.clear();
    pod_handed.clear();
  }
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

// Why a request found no placement in the chains tried so far, as codes: each
// failed chain overwrites it, and the text (HiveD's wording, for the last chain
// tried) is written once, by wait_reason(), when the caller wants it.
struct WaitWhy {
  enum class Kind : uint8_t {
    None,         // nothing tried
    VcNoCells,    // the VC has no cells of any chain
    ViewNoCells,  // the VC has no cells in this chain or pinned cell
    Capacity,     // insufficient capacity in the VC's view (or the physical one)
    BadNode,      // the virtual placement maps onto a bad node
  };
  Kind kind = Kind::None;
  bool physical = false;  // Capacity: in the physical cluster (opportunistic)
  int32_t vc = -1, chain = -1, pinned = -1;
  void set(Kind k, const Request& req, int32_t c, bool phys = false) {
    kind = k;
    physical = phys;
    vc = req.vc;
    chain = c;
    pinned = req.pinned;
  }
};

struct Placement {
  int32_t chain = -1;
  std::vector<int32_t> pleaves;
  std::vector<int32_t> vleaves;
  std::vector<std::pair<int32_t, std::vector<int32_t>>>
      lazy;  // lazily preempted groups and their virtual leaves

  // Empty, keeping the buffers' capacity for the next decision.
  void clear() {
    chain = -1;
    pleaves.clear();
    vleaves.clear();
    lazy.clear();
  }
};

// Vectors for the scratch work of one decision, reused from one decision to the
// next (the work nests: mapping a cell maps its children). A lease takes the
// next vector, empty, and gives it back when it goes out of scope; a deque keeps
// the vectors in place while more are added.
class ScratchPool {
 public:
  class Lease {
   public:
    explicit Lease(ScratchPool& pool) : pool_(pool) {
      if (pool.depth_ == pool.vectors_.size()) pool.vectors_.emplace_back();
      v_ = &pool.vectors_[pool.depth_++];
      v_->clear();
    }
    ~Lease() { --pool_.depth_; }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    std::vector<int32_t>& operator*() { return *v_; }
    std::vector<int32_t>* operator->() { return v_; }

   private:
    ScratchPool& pool_;
    std::vector<int32_t>* v_;
  };

 private:
  std::deque<std::vector<int32_t>> vectors_;
  size_t depth_ = 0;
};

// The free list of one (chain, level) as ordered (opportunistic leaves, key)
// pairs, keys unique and below max_key, visited in ascending order. Flat: a
// bitset of keys for each count of opportunistic leaves, and a bitset of the
// counts in use, so that inserting, erasing and moving an entry (a usage
// change) allocate nothing and touch a word or two.
class FreeList {
 public:
  void init(int32_t max_key, int32_t max_opp) {
    words_ = (static_cast<size_t>(std::max(max_key, 0)) + 63) / 64;
    rows_ = static_cast<size_t>(std::max(max_opp, 0)) + 1;
    bits_.assign(words_ * rows_, 0);
    row_size_.assign(rows_, 0);
    used_rows_.assign((rows_ + 63) / 64, 0);
    size_ = 0;
  }
  size_t size() const { return size_; }
  bool contains(int32_t opp, int32_t key) const {
    if (opp < 0 || static_cast<size_t>(opp) >= rows_ || key < 0 ||
        static_cast<size_t>(key) >= words_ * 64)
      return false;
    return (word(opp, key) >> (key & 63)) & 1;
  }
  void insert(int32_t opp, int32_t key) {
    word(opp, key) |= uint64_t{1} << (key & 63);
    if (row_size_[static_cast<size_t>(opp)]++ == 0)
      used_rows_[static_cast<size_t>(opp) / 64] |= uint64_t{1} << (opp & 63);
    ++size_;
  }
  void erase(int32_t opp, int32_t key) {
    word(opp, key) &= ~(uint64_t{1} << (key & 63));
    if (--row_size_[static_cast<size_t>(opp)] == 0)
      used_rows_[static_cast<size_t>(opp) / 64] &= ~(uint64_t{1} << (opp & 63));
    --size_;
  }
  // An entry's count of opportunistic leaves changes.
  void move(int32_t from_opp, int32_t to_opp, int32_t key) {
    erase(from_opp, key);
    insert(to_opp, key);
  }

  class const_iterator {
   public:
    std::pair<int32_t, int32_t> operator*() const { return {opp_, key_}; }
    const_iterator& operator++() {
      list_->advance(opp_, key_);
      return *this;
    }
    bool operator==(const const_iterator& o) const { return opp_ == o.opp_ && key_ == o.key_; }

   private:
    friend class FreeList;
    const_iterator(const FreeList* list, int32_t opp, int32_t key)
        : list_(list), opp_(opp), key_(key) {}
    const FreeList* list_;
    int32_t opp_, key_;  // (-1, -1) at the end
  };
  const_iterator begin() const {
    int32_t opp = -1, key = -1;
    advance(opp, key);
    return {this, opp, key};
  }
  const_iterator end() const { return {this, -1, -1}; }

 private:
  uint64_t& word(int32_t opp, int32_t key) {
    return bits_[static_cast<size_t>(opp) * words_ + static_cast<size_t>(key) / 64];
  }
  uint64_t word(int32_t opp, int32_t key) const {
    return bits_[static_cast<size_t>(opp) * words_ + static_cast<size_t>(key) / 64];
  }
  // The next entry after (opp, key), or (-1, -1); (-1, -1) starts at the first.
  void advance(int32_t& opp, int32_t& key) const {
    if (opp >= 0) {  // the rest of this row
      size_t w = static_cast<size_t>(key + 1) / 64;
      const uint64_t* row = bits_.data() + static_cast<size_t>(opp) * words_;
      if (w < words_) {
        uint64_t bits = row[w] & (~uint64_t{0} << ((key + 1) & 63));
        for (;;) {
          if (bits) {
            key = static_cast<int32_t>(w * 64 + static_cast<size_t>(std::countr_zero(bits)));
            return;
          }
          if (++w == words_) break;
          bits = row[w];
        }
      }
    }
    // The first entry of the next row in use.
    size_t r = static_cast<size_t>(opp + 1);
    while (r < rows_) {
      uint64_t rows = used_rows_[r / 64] & (~uint64_t{0} << (r & 63));
      if (!rows) {
        r = (r / 64 + 1) * 64;
        continue;
      }
      r = (r / 64) * 64 + static_cast<size_t>(std::countr_zero(rows));
      if (r >= rows_) break;
      const uint64_t* row = bits_.data() + r * words_;
      for (size_t w = 0; w < words_; ++w)
        if (row[w]) {
          opp = static_cast<int32_t>(r);
          key = static_cast<int32_t>(w * 64 + static_cast<size_t>(std::countr_zero(row[w])));
          return;
        }
      ++r;  // not reached while the row counts are right
    }
    opp = key = -1;
  }

  size_t words_ = 0, rows_ = 0, size_ = 0;
  std::vector<uint64_t> bits_;       // rows_ x words_: keys by count of opportunistic leaves
  std::vector<int32_t> row_size_;    // entries per row
  std::vector<uint64_t> used_rows_;  // rows with entries
};

class Hived final : public Policy {
 public:
  explicit Hived(const config::HivedModel& m, bool hived_order = true);
  // Why the model cannot be scheduled on (virtual clusters larger than the
  // physical cells, pinned cells that do not fit), or "" when it can.
  const std::string& setup_error() const { return setup_error_; }

  std::string_view name() const override { return "hived"; }
  const ClusterShape& cluster() const override { return shape_; }
  ScheduleResult schedule(const GroupRequest& r, bool allow_preemption) override;
  void schedule_into(const GroupRequest& r, bool allow_preemption, ScheduleResult& out) override;
  ScheduleResult schedule_pod(std::string_view group, int32_t leaf_cell_number) override;
  bool release(std::string_view group) override;
  bool release_group(int32_t group_id, std::string_view group) override;
  void set_node_health(int32_t node, bool healthy) override;
  uint64_t release_epoch() const override { return epoch_; }
  UsageSummary usage() const override;
  bool has_group(std::string_view group) const override;
  std::string check_invariants() const override;

  // State as values and restoring groups from bind info (hived_state.cc, hived_restore.cc).
  HivedState snapshot() const;
  // Doomed bad cells per VC, chain and level (scheduler::doomed_cells).
  std::vector<DoomedCount> doomed_counts() const;
  std::vector<std::vector<int64_t>> doomed_headroom() const;  // scheduler::doomed_headroom
  RestoredGroup restore_group(const LiveGroup& in,
                              const std::unordered_map<std::string, int32_t>& node_index,
                              std::vector<RestoredGroup>& done,
                              std::unordered_map<std::string, size_t>& done_index);

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
  void add_vc_priority_use(int32_t vc, int32_t priority, int32_t delta);
  void add_cell_priority_use(int32_t vcell, int32_t priority, int32_t delta,
                             bool used_done = false);
  void add_physical_usage(int32_t leaf, int32_t priority, int32_t delta);
  void add_virtual_usage(int32_t leaf, int32_t priority, int32_t delta);
  // While batching (a group's leaves being assigned, see create_group), the
  // two above only note the leaf; apply_usage_batch() then changes every
  // ancestor's counters once for the whole group. Nothing reads the counters
  // in between, and what they feed (free lists, views) depends only on their
  // final values, so the state is the one leaf-by-leaf changes give.
  void begin_usage_batch() { batching_ = 1; }
  // Releasing a group (see delete_allocated): only the physical counters
  // that leaves of an opportunistic group, or guaranteed leaves, give back;
  // of the virtual ones only the used leaves change leaf by leaf, as a
  // release reads them (is the preassigned cell unused now?), the counts by
  // priority and the views once per cell; the opportunistic leaves of a
  // group with guaranteed ones stay leaf by leaf (a release in between can move their
  // ancestors in the free lists, whose order follows opportunistic use).
  void begin_release_batch(bool opportunistic_too) {
    batching_ = opportunistic_too ? -1 : 0;
    batching_releases_ = true;
  }
  void apply_usage_batch();
  void apply_virtual_batch();  // the virtual part of apply_usage_batch
  void bind_pair(int32_t p, int32_t v);
  void unbind_pair(int32_t p, int32_t v);
  void bind_cell(int32_t p, int32_t v);
  void unbind_cell(int32_t p);
  bool in_free_cell_list(int32_t c) const;

  int32_t resolve_virtual_leaf(int32_t p, int32_t v) const;
  int32_t derive_virtual_leaf(int32_t p, int32_t v) const;
  int32_t assign_leaf(int32_t p, int32_t& v, int32_t priority, bool may_downgrade = false,
                      bool derive = false);
  void finish_allocation(const std::vector<int32_t>& preassigned);
  // HiveD allocates a newly bound preassigned cell as soon as its leaf is bound;
  // where a release of the same group can free a preassigned cell in between,
  // that order shows in the free lists. The port waits for the whole group
  // while a node is bad (a doomed binding made in between could take a virtual
  // cell the group is about to use).
  bool allocate_now() const { return hived_order_ && bad_nodes_ == 0; }
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

  // --- restoring (hived_restore.cc)
  int32_t vcell_priority(int32_t v) const;
  int32_t lowest_priority_vcell(std::span<const int32_t> cells, int32_t priority) const;
  util::Result<int32_t> map_physical_to_virtual(int32_t c, int32_t vc, int32_t level,
                                                int32_t priority, int32_t pinned) const;
  std::vector<int32_t> groups_in_vcell(int32_t v) const;

  // --- scheduling
  bool schedule_in_chain(const Request& req, int32_t chain, Placement& out, WaitWhy& why);
  bool schedule_guaranteed(const Request& req, int32_t chain, Placement& out, WaitWhy& why);
  bool schedule_opportunistic(const Request& req, int32_t chain, Placement& out, WaitWhy& why);
  void wait_reason(const WaitWhy& why, std::string& out) const;
  bool topology_schedule(int32_t view_id, const std::vector<int32_t>& pods, int32_t priority,
                         std::vector<int32_t>& leaves);
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
  // getUsablePhysicalCells: not bound, not a bad node, and (when the request
  // avoids non-suggested nodes) with at least one suggested node below.
  bool usable(int32_t p) const {
    return P(p).vcell < 0 && !(P(p).nodes == 1 && !P(p).healthy) &&
           (!sugg_filter_ || cell_sugg_[static_cast<size_t>(p)] == sugg_stamp_);
  }
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
  void overlay_prepend(int32_t level, const std::vector<int32_t>& front);
  void overlay_remove(int32_t c);
  void overlay_add(int32_t c);
  void overlay_reset();

  // --- suggested nodes of the current request
  void begin_suggested(const GroupRequest& r);
  void end_suggested() { sugg_given_ = sugg_filter_ = false; }
  // In the request's set (absent = every node).
  bool node_in_suggested_set(int32_t node) const {
    return !sugg_given_ || node_sugg_[static_cast<size_t>(node)] == sugg_stamp_;
  }
  // As a cluster view sees it: ignoreSuggestedNodes || suggestedNodes.Contains(node).
  bool view_node_suggested(const View& view, int32_t pos) const;
  void update_view_suggested(View& view);

  // --- groups
  int32_t new_group_slot();
  int32_t create_group(const GroupRequest& r, const Request& req, const Placement& pl,
                       GroupState state);
  bool stale_plan_holds(const Placement& pl, const std::vector<int32_t>& victims) const;
  void delete_allocated(int32_t g);
  void delete_preempting(int32_t g);
  void allocate_preempting(int32_t g);
  void collect_victims(const std::vector<int32_t>& pleaves, std::vector<int32_t>& victims,
                       std::vector<int32_t>& preemptors) const;
  ScheduleResult result_of(int32_t g, Outcome o) const;
  void result_into(int32_t g, Outcome o, ScheduleResult& r) const;
  void free_group(int32_t g);
  // The slot of the alive group of this name, or -1 (builds the name index on first use).
  int32_t find_group(std::string_view name) const;
  // The slot `id` names if it holds the group `name`, else -1.
  int32_t group_at(int32_t id, std::string_view name) const {
    if (id < 0 || static_cast<size_t>(id) >= groups_.size()) return -1;
    const Group& grp = G(id);
    return grp.alive && grp.name == name ? id : -1;
  }

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
  // (vc, chain, level) -> the positions in vc_preassigned_ of the unbound cells
  // (bind_pair and unbind_pair keep it).
  std::vector<IndexSet> vc_pre_unbound_;
  std::vector<uint8_t> vc_has_chain_;

  // Free lists: (chain, level) -> (opportunistic leaves, key), in HiveD's candidate
  // order (getUsablePhysicalCells sorts the list stably by opportunistic leaves).
  // With HiveD's tie order the key is the position in HiveD's list (flist_: cells
  // appended on insertion, the last one swapped into the hole on removal); with
  // configuration order it is the cell id.
  bool hived_order_ = true;
  std::string setup_error_;
  std::vector<FreeList> free_;
  std::vector<std::vector<int32_t>> flist_;
  int32_t free_cell(size_t k, int32_t key) const {
    return hived_order_ ? flist_[k][static_cast<size_t>(key)] : key;
  }
  std::vector<int32_t> total_left_;
  std::vector<int32_t> all_vc_free_;
  std::vector<int32_t> all_vc_doomed_;
  std::vector<int32_t> vc_free_;
  std::vector<std::set<int32_t>> bad_free_;
  std::vector<std::set<int32_t>> vc_doomed_;
  // VC -> (priority, used leaves), ascending by priority, only priorities in use
  // (a handful: a sorted vector instead of a map's node per change).
  std::vector<std::vector<std::pair<int32_t, int64_t>>> vc_prio_used_;
  // The usage batch: the cells noted (leaves and ancestors), their deltas by
  // cell id (zero outside a batch), the virtual leaves' priority and count.
  int32_t batching_ = 0;            // the delta batched for every leaf (1, -1), or 0
  bool batching_releases_ = false;  // guaranteed physical releases are batched too
  bool batch_used_done_ = false;    // the noted virtual cells' used leaves are changed already
  int32_t batch_priority_ = 0, batch_leaves_ = 0;
  std::vector<int32_t> batch_pcells_, batch_vcells_;
  struct PhysicalDelta {
    int32_t opp = 0, guar = 0;  // leaves used at priority -1, at priorities >= 0
  };
  std::vector<PhysicalDelta> batch_pdelta_;  // by cell id
  std::vector<int32_t> batch_used_;          // by cell id
  std::vector<uint8_t> bad_node_;
  int64_t safety_violations_ = 0;
  int32_t bad_nodes_ = 0;

  std::vector<Group> groups_;
  std::vector<int32_t> free_slots_;
  // Looked up by string_view (the engine's and Policy's names) without a copy.
  // Kept only once a name has been looked up (index_live_): callers that name
  // groups by id (GroupRequest::group_id, release_group) never hash a name.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  mutable std::unordered_map<std::string, int32_t, NameHash, std::equal_to<>> group_index_;
  mutable bool index_live_ = false;
  uint64_t epoch_ = 1;

  // Scratch state of one request.
  Request req_;
  Placement pl_;
  WaitWhy why_;
  // Its suggested nodes: node_sugg_[node] and cell_sugg_[cell] (a suggested
  // node below) equal sugg_stamp_ when suggested.
  bool sugg_given_ = false;   // the request carries a set
  bool sugg_filter_ = false;  // and avoids the nodes outside it
  uint32_t sugg_stamp_ = 0;
  std::vector<uint32_t> node_sugg_;
  std::vector<uint32_t> cell_sugg_;
  mutable ScratchPool scratch_;  // const searches (overlay_each) lease too
  std::vector<int32_t> victims_, preemptors_;
  std::vector<PodPlacement> spare_pods_;
  std::vector<Vertex> vertices_;
  std::vector<std::pair<int32_t, std::vector<int32_t>>> non_preassigned_;  // map_to_physical
  std::vector<int32_t> vertex_of_;                                         // vcell -> vertex (-1)
  std::vector<int32_t> vbind_;    // virtual leaf -> physical leaf during mapping
  std::vector<uint8_t> taken_v_;  // virtual leaves picked in this request
  std::vector<uint8_t> taken_p_;
  std::vector<int32_t> taken_list_;
  int32_t ov_chain_ = -1;
  std::vector<uint8_t> ov_removed_;
  std::vector<int32_t> ov_removed_list_;
  std::vector<int32_t> ov_removed_count_;       // per level
  std::vector<std::vector<int32_t>> ov_extra_;  // per level (configuration order)
  // HiveD order: the request's copy of a level is positions [0, ov_size_) of the
  // real list, with the positions in ov_over_ holding other cells (swap-removal
  // and appends in the copy).
  std::vector<int32_t> ov_size_;
  std::vector<std::vector<std::pair<int32_t, int32_t>>> ov_over_;  // per level: (position, cell)
  int32_t ov_value(int32_t level, int32_t pos) const;
  int32_t ov_pos_of(int32_t c) const;
};

}  // namespace hived_detail
#pragma GCC visibility pop

}  // namespace pai::scheduler
