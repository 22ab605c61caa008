#pragma once
// Indexes that replace the linear scans and per-request sorts of HiveD's
// cluster views. A view's node order is a list of bucket groups (e.g. "most
// leaf cells used first"); within a group nodes are ordered by position. Each
// bucket has a fixed number of free leaf cells, so a query skips whole buckets
// that cannot hold a pod and never sorts.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

namespace pai::scheduler {

// A set of integers in [0, n) with ordered iteration: a two-level bitset.
class IndexSet {
 public:
  void reset(int32_t n) {
    n_ = n;
    count_ = 0;
    bits_.assign(static_cast<size_t>((n + 63) / 64), 0);
    summary_.assign((bits_.size() + 63) / 64, 0);
  }
  int32_t capacity() const { return n_; }
  int32_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  bool contains(int32_t i) const { return (bits_[static_cast<size_t>(i) >> 6] >> (i & 63)) & 1u; }
  void insert(int32_t i) {
    uint64_t& w = bits_[static_cast<size_t>(i) >> 6];
    uint64_t bit = uint64_t{1} << (i & 63);
    if (w & bit) return;
    w |= bit;
    summary_[static_cast<size_t>(i) >> 12] |= uint64_t{1} << ((i >> 6) & 63);
    ++count_;
  }
  void erase(int32_t i) {
    uint64_t& w = bits_[static_cast<size_t>(i) >> 6];
    uint64_t bit = uint64_t{1} << (i & 63);
    if (!(w & bit)) return;
    w &= ~bit;
    if (w == 0) summary_[static_cast<size_t>(i) >> 12] &= ~(uint64_t{1} << ((i >> 6) & 63));
    --count_;
  }
  // Smallest element >= from, or -1.
  int32_t next(int32_t from) const {
    if (from < 0) from = 0;
    if (from >= n_) return -1;
    size_t w = static_cast<size_t>(from) >> 6;
    uint64_t word = bits_[w] & (~uint64_t{0} << (from & 63));
    if (word) return static_cast<int32_t>(w * 64 + static_cast<size_t>(std::countr_zero(word)));
    size_t k = w + 1;
    if (k >= bits_.size()) return -1;
    size_t s = k >> 6;
    uint64_t sword = summary_[s] & (~uint64_t{0} << (k & 63));
    while (sword == 0) {
      if (++s >= summary_.size()) return -1;
      sword = summary_[s];
    }
    size_t wk = s * 64 + static_cast<size_t>(std::countr_zero(sword));
    return static_cast<int32_t>(wk * 64 + static_cast<size_t>(std::countr_zero(bits_[wk])));
  }

 private:
  int32_t n_ = 0;
  int32_t count_ = 0;
  std::vector<uint64_t> bits_;
  std::vector<uint64_t> summary_;
};

// Nodes of one cluster view, each in at most one bucket (none when the node is
// unhealthy). Iteration order: bucket groups in order, then within a group
// either node position (configuration order) or, when `ranked`, the order
// HiveD's clusterView keeps: HiveD sorts its view stably, in place, on every
// call, so the tie order of a call is the order the previous call left. A
// node whose group changed since the last sort() moves to the front of its new
// group when it comes from an earlier group and to the back when it comes from
// a later one (several in the order they had); nodes that kept their group keep
// their places. Unhealthy nodes keep their groups too (after every healthy
// group), so their order is right when they come back. So do nodes that are
// not suggested (HiveD's clusterView sorts healthy before unhealthy, then
// suggested before non-suggested, then by usage): they are out of the
// iteration, ranked after the suggested nodes of their health.
class BucketedNodes {
 public:
  // bucket_free[b]: free leaf cells of a node in bucket b; groups: buckets in iteration order.
  void init(int32_t nodes, std::vector<int32_t> bucket_free,
            const std::vector<std::vector<int32_t>>& groups, bool ranked = false);
  // bucket -1 takes the node out; an unhealthy node is out of the iteration but,
  // when ranked, keeps its place among the unhealthy nodes of its bucket.
  void set(int32_t node, int32_t bucket, bool healthy = true);
  // A node that is not suggested (Kubernetes filtered it out for the current
  // request) is out of the iteration like an unhealthy one. Every node starts
  // suggested.
  void set_suggested(int32_t node, bool suggested);
  bool suggested(int32_t node) const { return suggested_[static_cast<size_t>(node)] != 0; }
  int32_t bucket_of(int32_t node) const { return node_bucket_[static_cast<size_t>(node)]; }
  int32_t nodes() const { return static_cast<int32_t>(node_bucket_.size()); }
  int32_t bucket_free(int32_t b) const { return bucket_free_[static_cast<size_t>(b)]; }
  bool ranked() const { return ranked_; }

  // HiveD's sort.Stable(clusterView) (ranked only; a no-op otherwise). The
  // first call sorts from node position.
  void sort();
  // The view order after the last sort (ranked), or node position order: the
  // order in which first_fit walks the nodes of one group.
  int64_t order_key(int32_t node) const {
    return ranked_ ? rank_[static_cast<size_t>(node)] : node;
  }

  // HiveD's findNodesForPods: pods sorted ascending by leaf cells; walk the
  // nodes in order and give each node as many pods as fit, in order. Fills
  // `out` (one node per pod) and returns true when every pod has a node.
  // When ranked, sort() must have been called since the last set().
  bool first_fit(std::span<const int32_t> pods, std::vector<int32_t>& out) const {
    return walk(
        pods, true, [&](int32_t, int32_t b) { return bucket_free_[static_cast<size_t>(b)]; }, out);
  }

  // The same walk with the free leaf cells of each node given by `free_of`
  // (for preemption, where "free" depends on the request's priority).
  template <class FreeOf>
  bool first_fit_with(std::span<const int32_t> pods, FreeOf free_of,
                      std::vector<int32_t>& out) const {
    return walk(
        pods, false, [&](int32_t n, int32_t) { return free_of(n); }, out);
  }

  // Visits nodes in view order until `visit(node)` returns true.
  template <class Visit>
  bool for_each(Visit visit) const {
    for (int32_t g = nonempty_groups_.next(0); g >= 0; g = nonempty_groups_.next(g + 1)) {
      const auto& bs = groups_[static_cast<size_t>(g)];
      std::vector<int32_t> cur;
      for (int32_t b : bs) cur.push_back(head(b));
      for (;;) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < cur.size(); ++i)
          if (cur[i] >= 0 && (best == SIZE_MAX || order_key(cur[i]) < order_key(cur[best])))
            best = i;
        if (best == SIZE_MAX) break;
        int32_t n = cur[best];
        if (visit(n)) return true;
        cur[best] = after(bs[best], n);
      }
    }
    return false;
  }

 private:
  int32_t head(int32_t b) const {
    return ranked_ ? head_[static_cast<size_t>(b)] : bucket_nodes_[static_cast<size_t>(b)].next(0);
  }
  int32_t after(int32_t b, int32_t n) const {
    return ranked_ ? next_[static_cast<size_t>(n)]
                   : bucket_nodes_[static_cast<size_t>(b)].next(n + 1);
  }
  // skip_small: a bucket whose nodes cannot hold the current pod is skipped
  // (its free count is exact); otherwise avail(node, bucket) decides.
  template <class Avail>
  bool walk(std::span<const int32_t> pods, bool skip_small, Avail avail_of,
            std::vector<int32_t>& out) const {
    // Written element by element: assign() is an out-of-line call per group.
    out.resize(pods.size());
    for (int32_t& o : out) o = -1;
    if (pods.empty()) return true;
    size_t pi = 0;
    for (int32_t g = nonempty_groups_.next(0); g >= 0; g = nonempty_groups_.next(g + 1)) {
      const auto& bs = groups_[static_cast<size_t>(g)];
      const size_t nb = bs.size();
      if (cursor_.size() < nb) cursor_.resize(nb);
      for (size_t i = 0; i < nb; ++i)
        cursor_[i] =
            !skip_small || bucket_free_[static_cast<size_t>(bs[i])] >= pods[pi] ? head(bs[i]) : -1;
      for (;;) {
        size_t best = SIZE_MAX;
        int64_t best_key = 0;
        for (size_t i = 0; i < nb; ++i) {
          if (cursor_[i] < 0) continue;
          if (skip_small && bucket_free_[static_cast<size_t>(bs[i])] < pods[pi]) {
            cursor_[i] = -1;  // pods only grow: this bucket is done
            continue;
          }
          int64_t k = order_key(cursor_[i]);
          if (best == SIZE_MAX || k < best_key) {
            best = i;
            best_key = k;
          }
        }
        if (best == SIZE_MAX) break;
        int32_t n = cursor_[best];
        int32_t avail = avail_of(n, bs[best]);
        while (pi < pods.size() && avail >= pods[pi]) {
          out[pi] = n;
          avail -= pods[pi];
          ++pi;
        }
        if (pi == pods.size()) return true;
        cursor_[best] = after(bs[best], n);
      }
    }
    return false;
  }

  // Ranked lists: list b + buckets * s holds the nodes of bucket b in state s
  // (0 healthy and suggested, 1 healthy and not suggested, 2 unhealthy and
  // suggested, 3 unhealthy and not suggested); each is ordered by rank.
  int32_t list_of_state(int32_t node) const;
  void update_live(int32_t node);
  int32_t list_order(int32_t list) const;
  void unlink(int32_t node);
  void link_front(int32_t node, int32_t list);
  void link_back(int32_t node, int32_t list);

  bool ranked_ = false;
  std::vector<IndexSet> bucket_nodes_;
  std::vector<int32_t> bucket_free_;
  std::vector<int32_t> bucket_group_;
  std::vector<std::vector<int32_t>> groups_;
  std::vector<int32_t> group_count_;
  IndexSet nonempty_groups_;
  std::vector<int32_t> node_bucket_;  // -1: out of the iteration
  std::vector<int32_t> key_bucket_;   // the bucket, whether the node is live or not
  std::vector<uint8_t> healthy_;
  std::vector<uint8_t> suggested_;
  std::vector<int32_t> in_list_;  // ranked: the list a node sits in (-1 none)
  std::vector<int64_t> rank_;
  std::vector<int32_t> prev_, next_, head_, tail_;
  std::vector<int32_t> dirty_;
  std::vector<uint8_t> is_dirty_;
  bool sorted_ = false;
  int64_t lo_ = 0, hi_ = -1;
  struct Move {
    int32_t order;  // the group the node had at the last sort
    int64_t rank;   // its place there
    int32_t node;
    int32_t list;
  };
  std::vector<Move> front_, back_;  // scratch of sort()
  mutable std::vector<int32_t> cursor_;
};

// Bucket layouts for the three node orders in use. `totals` are the distinct
// leaf cell counts of the view's nodes (a view may mix node sizes);
// class_of_total maps a node's total to its class.
struct BucketLayout {
  std::vector<int32_t> totals;        // per class
  std::vector<int32_t> class_offset;  // first bucket of each class
  std::vector<int32_t> bucket_free;
  std::vector<std::vector<int32_t>> groups;
  int32_t class_of(int32_t total) const;
};

// Most used first (HiveD's intra-VC packing across priorities): bucket (class, used).
BucketLayout layout_most_used_first(const std::vector<int32_t>& totals);
// Least used fraction first (the Kubernetes LeastAllocated score): bucket (class, used).
BucketLayout layout_least_allocated(const std::vector<int32_t>& totals);
// HiveD's opportunistic order: most opportunistic cells first, then fewest
// guaranteed cells: bucket (class, opportunistic, guaranteed).
BucketLayout layout_opportunistic(const std::vector<int32_t>& totals);

inline int32_t bucket_used(const BucketLayout& l, int32_t cls, int32_t used) {
  return l.class_offset[static_cast<size_t>(cls)] + used;
}
int32_t bucket_opportunistic(const BucketLayout& l, int32_t cls, int32_t opp, int32_t guar);

// HiveD's findLeafCellsInNode. HiveD searches combinations of a node's
// available leaf cells (free ones first, then preemptible ones) in
// lexicographic order and keeps the first combination whose lowest common
// ancestor is lowest. That is the same as: the lowest level at which one cell
// holds k available leaves, and among that level's cells the one whose k
// best-ranked leaves come first. `leaves` is the node's leaves in DFS order,
// rank[i] the position of leaves[i] among the available ones (-1: not
// available), parent_of walks up the tree. Appends the picked leaves in rank
// order; returns false when fewer than k are available.
template <class ParentOf>
bool pick_lowest_ancestor(std::span<const int32_t> leaves, std::span<const int32_t> rank, int32_t k,
                          int32_t node_level, ParentOf parent_of, std::vector<int32_t>& out) {
  const size_t m = leaves.size();
  if (k <= 0 || static_cast<size_t>(k) > m) return false;
  // Called for every pod placed: no allocation for nodes of up to 64 leaves.
  constexpr size_t kInline = 64;
  int32_t inline_buf[3 * kInline];
  std::vector<int32_t> heap;
  int32_t* buf = inline_buf;
  if (m > kInline) {
    heap.resize(3 * m);
    buf = heap.data();
  }
  int32_t* anc = buf;
  int32_t* best = buf + m;
  int32_t* cur = buf + 2 * m;
  const size_t kk = static_cast<size_t>(k);
  std::copy(leaves.begin(), leaves.end(), anc);
  bool found = false;
  for (int32_t level = 1; level <= node_level && !found; ++level) {
    if (level > 1)
      for (size_t i = 0; i < m; ++i) anc[i] = parent_of(anc[i]);
    for (size_t i = 0; i < m;) {
      size_t j = i, n = 0;
      while (j < m && anc[j] == anc[i]) {
        if (rank[j] >= 0) cur[n++] = rank[j];
        ++j;
      }
      if (n >= kk) {
        if (n <= 16) {  // a handful of ranks (distinct): an insertion sort beats the heap
          for (size_t a = 1; a < n; ++a) {
            const int32_t x = cur[a];
            size_t b = a;
            for (; b > 0 && cur[b - 1] > x; --b) cur[b] = cur[b - 1];
            cur[b] = x;
          }
        } else {
          std::partial_sort(cur, cur + kk, cur + n);
        }
        if (!found || std::lexicographical_compare(cur, cur + kk, best, best + kk)) {
          std::copy(cur, cur + kk, best);
          found = true;
        }
      }
      i = j;
    }
  }
  if (!found) return false;
  for (size_t b = 0; b < kk; ++b)
    for (size_t i = 0; i < m; ++i)
      if (rank[i] == best[b]) {
        out.push_back(leaves[i]);
        break;
      }
  return true;
}

}  // namespace pai::scheduler
