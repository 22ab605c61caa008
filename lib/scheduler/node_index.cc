#include "scheduler/node_index.h"

#include <algorithm>
#include <climits>
#include <numeric>

namespace pai::scheduler {

void BucketedNodes::init(int32_t nodes, std::vector<int32_t> bucket_free,
                         const std::vector<std::vector<int32_t>>& groups, bool ranked) {
  ranked_ = ranked;
  bucket_free_ = std::move(bucket_free);
  groups_ = groups;
  const size_t nb = bucket_free_.size();
  const size_t nn = static_cast<size_t>(nodes);
  bucket_nodes_.assign(ranked ? 0 : nb, IndexSet());
  for (auto& s : bucket_nodes_) s.reset(nodes);
  bucket_group_.assign(nb, -1);
  for (size_t g = 0; g < groups_.size(); ++g)
    for (int32_t b : groups_[g]) bucket_group_[static_cast<size_t>(b)] = static_cast<int32_t>(g);
  group_count_.assign(groups_.size(), 0);
  nonempty_groups_.reset(static_cast<int32_t>(groups_.size()));
  node_bucket_.assign(nn, -1);
  key_bucket_.assign(nn, -1);
  healthy_.assign(nn, 1);
  suggested_.assign(nn, 1);
  if (!ranked) return;
  in_list_.assign(nn, -1);
  rank_.assign(nn, 0);
  prev_.assign(nn, -1);
  next_.assign(nn, -1);
  head_.assign(4 * nb, -1);
  tail_.assign(4 * nb, -1);
  is_dirty_.assign(nn, 0);
  dirty_.clear();
  sorted_ = false;
  lo_ = 0;
  hi_ = -1;
}

void BucketedNodes::set(int32_t node, int32_t bucket, bool healthy) {
  const size_t n = static_cast<size_t>(node);
  // Unchanged: nothing to move, and the next sort would leave the node in place.
  if (key_bucket_[n] == bucket && (healthy_[n] != 0) == healthy) return;
  key_bucket_[n] = bucket;
  healthy_[n] = healthy ? 1 : 0;
  if (ranked_ && sorted_ && !is_dirty_[n]) {
    is_dirty_[n] = 1;
    dirty_.push_back(node);
  }
  update_live(node);
}

void BucketedNodes::set_suggested(int32_t node, bool suggested) {
  const size_t n = static_cast<size_t>(node);
  if ((suggested_[n] != 0) == suggested) return;
  suggested_[n] = suggested ? 1 : 0;
  if (ranked_ && sorted_ && !is_dirty_[n]) {
    is_dirty_[n] = 1;
    dirty_.push_back(node);
  }
  update_live(node);
}

void BucketedNodes::update_live(int32_t node) {
  const size_t n = static_cast<size_t>(node);
  const int32_t live = healthy_[n] && suggested_[n] ? key_bucket_[n] : -1;
  int32_t& cur = node_bucket_[n];
  if (cur == live) return;
  if (cur >= 0) {
    if (!ranked_) bucket_nodes_[static_cast<size_t>(cur)].erase(node);
    int32_t g = bucket_group_[static_cast<size_t>(cur)];
    if (g >= 0 && --group_count_[static_cast<size_t>(g)] == 0) nonempty_groups_.erase(g);
  }
  cur = live;
  if (live >= 0) {
    if (!ranked_) bucket_nodes_[static_cast<size_t>(live)].insert(node);
    int32_t g = bucket_group_[static_cast<size_t>(live)];
    if (g >= 0 && group_count_[static_cast<size_t>(g)]++ == 0) nonempty_groups_.insert(g);
  }
}

int32_t BucketedNodes::list_of_state(int32_t node) const {
  const size_t n = static_cast<size_t>(node);
  int32_t b = key_bucket_[n];
  if (b < 0) return -1;
  const int32_t state = (healthy_[n] ? 0 : 2) + (suggested_[n] ? 0 : 1);
  return b + state * static_cast<int32_t>(bucket_free_.size());
}

// Position of a list's group in HiveD's order: healthy before unhealthy, then
// suggested before not suggested, then the bucket's group.
int32_t BucketedNodes::list_order(int32_t list) const {
  const int32_t nb = static_cast<int32_t>(bucket_free_.size());
  const int32_t ng = static_cast<int32_t>(groups_.size());
  int32_t g = bucket_group_[static_cast<size_t>(list % nb)];
  return g < 0 ? g : g + ng * (list / nb);
}

void BucketedNodes::unlink(int32_t node) {
  const size_t n = static_cast<size_t>(node);
  int32_t l = in_list_[n];
  if (l < 0) return;
  int32_t p = prev_[n], q = next_[n];
  (p >= 0 ? next_[static_cast<size_t>(p)] : head_[static_cast<size_t>(l)]) = q;
  (q >= 0 ? prev_[static_cast<size_t>(q)] : tail_[static_cast<size_t>(l)]) = p;
  prev_[n] = next_[n] = -1;
  in_list_[n] = -1;
}

void BucketedNodes::link_front(int32_t node, int32_t list) {
  const size_t n = static_cast<size_t>(node), l = static_cast<size_t>(list);
  prev_[n] = -1;
  next_[n] = head_[l];
  if (head_[l] >= 0)
    prev_[static_cast<size_t>(head_[l])] = node;
  else
    tail_[l] = node;
  head_[l] = node;
  in_list_[n] = list;
}

void BucketedNodes::link_back(int32_t node, int32_t list) {
  const size_t n = static_cast<size_t>(node), l = static_cast<size_t>(list);
  next_[n] = -1;
  prev_[n] = tail_[l];
  if (tail_[l] >= 0)
    next_[static_cast<size_t>(tail_[l])] = node;
  else
    head_[l] = node;
  tail_[l] = node;
  in_list_[n] = list;
}

void BucketedNodes::sort() {
  if (!ranked_) return;
  const int32_t nn = nodes();
  if (!sorted_) {
    // The first sort: stable from node position (newClusterView's order).
    sorted_ = true;
    for (int32_t n = 0; n < nn; ++n) {
      rank_[static_cast<size_t>(n)] = n;
      int32_t l = list_of_state(n);
      if (l >= 0) link_back(n, l);
    }
    lo_ = 0;
    hi_ = nn - 1;
    return;
  }
  if (dirty_.empty()) return;
  auto& front = front_;
  auto& back = back_;
  front.clear();
  back.clear();
  for (int32_t n : dirty_) {
    is_dirty_[static_cast<size_t>(n)] = 0;
    int32_t old_list = in_list_[static_cast<size_t>(n)];
    int32_t new_list = list_of_state(n);
    if (old_list == new_list) continue;
    Move m{old_list >= 0 ? list_order(old_list) : INT32_MAX, rank_[static_cast<size_t>(n)], n,
           new_list};
    unlink(n);
    if (new_list < 0) continue;
    (m.order < list_order(new_list) ? front : back).push_back(m);
  }
  dirty_.clear();
  auto before = [](const Move& a, const Move& b) {
    return a.order != b.order ? a.order < b.order : a.rank < b.rank;
  };
  std::sort(front.begin(), front.end(), before);
  std::sort(back.begin(), back.end(), before);
  const int64_t base = lo_ - static_cast<int64_t>(front.size());
  for (size_t i = front.size(); i-- > 0;) {
    rank_[static_cast<size_t>(front[i].node)] = base + static_cast<int64_t>(i);
    link_front(front[i].node, front[i].list);
  }
  lo_ = base;
  for (const Move& m : back) {
    rank_[static_cast<size_t>(m.node)] = ++hi_;
    link_back(m.node, m.list);
  }
}

int32_t BucketLayout::class_of(int32_t total) const {
  for (size_t i = 0; i < totals.size(); ++i)
    if (totals[i] == total) return static_cast<int32_t>(i);
  return -1;
}

namespace {

BucketLayout base_layout(const std::vector<int32_t>& totals, bool square) {
  BucketLayout l;
  l.totals = totals;
  int32_t off = 0;
  for (int32_t t : totals) {
    l.class_offset.push_back(off);
    int32_t n = square ? (t + 1) * (t + 1) : t + 1;
    for (int32_t i = 0; i < n; ++i) {
      int32_t free = 0;
      if (square) {
        int32_t opp = i / (t + 1), guar = i % (t + 1);
        free = t - opp - guar;
      } else {
        free = t - i;
      }
      l.bucket_free.push_back(free);
    }
    off += n;
  }
  return l;
}

}  // namespace

BucketLayout layout_most_used_first(const std::vector<int32_t>& totals) {
  BucketLayout l = base_layout(totals, false);
  int32_t max_t = totals.empty() ? 0 : *std::max_element(totals.begin(), totals.end());
  for (int32_t u = max_t; u >= 0; --u) {
    std::vector<int32_t> g;
    for (size_t c = 0; c < totals.size(); ++c)
      if (u <= totals[c]) g.push_back(l.class_offset[c] + u);
    if (!g.empty()) l.groups.push_back(std::move(g));
  }
  return l;
}

BucketLayout layout_least_allocated(const std::vector<int32_t>& totals) {
  BucketLayout l = base_layout(totals, false);
  struct Key {
    int32_t free, total, bucket;
  };
  std::vector<Key> keys;
  for (size_t c = 0; c < totals.size(); ++c)
    for (int32_t u = 0; u <= totals[c]; ++u)
      keys.push_back({totals[c] - u, totals[c], l.class_offset[c] + u});
  // Larger free fraction first; equal fractions share a group (then node position decides).
  auto frac_less = [](const Key& a, const Key& b) {
    return int64_t{a.free} * std::max(b.total, 1) > int64_t{b.free} * std::max(a.total, 1);
  };
  std::stable_sort(keys.begin(), keys.end(), frac_less);
  for (size_t i = 0; i < keys.size();) {
    std::vector<int32_t> g;
    size_t j = i;
    while (j < keys.size() && !frac_less(keys[i], keys[j]) && !frac_less(keys[j], keys[i]))
      g.push_back(keys[j++].bucket);
    l.groups.push_back(std::move(g));
    i = j;
  }
  return l;
}

BucketLayout layout_opportunistic(const std::vector<int32_t>& totals) {
  BucketLayout l = base_layout(totals, true);
  int32_t max_t = totals.empty() ? 0 : *std::max_element(totals.begin(), totals.end());
  for (int32_t opp = max_t; opp >= 0; --opp)
    for (int32_t guar = 0; guar + opp <= max_t; ++guar) {
      std::vector<int32_t> g;
      for (size_t c = 0; c < totals.size(); ++c)
        if (opp + guar <= totals[c])
          g.push_back(bucket_opportunistic(l, static_cast<int32_t>(c), opp, guar));
      if (!g.empty()) l.groups.push_back(std::move(g));
    }
  return l;
}

int32_t bucket_opportunistic(const BucketLayout& l, int32_t cls, int32_t opp, int32_t guar) {
  int32_t t = l.totals[static_cast<size_t>(cls)];
  return l.class_offset[static_cast<size_t>(cls)] + opp * (t + 1) + guar;
}

}  // namespace pai::scheduler
