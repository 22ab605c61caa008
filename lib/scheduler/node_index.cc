#include "scheduler/node_index.h"

#include <algorithm>
#include <numeric>

namespace pai::scheduler {

void BucketedNodes::init(int32_t nodes, std::vector<int32_t> bucket_free,
                         const std::vector<std::vector<int32_t>>& groups) {
  bucket_free_ = std::move(bucket_free);
  groups_ = groups;
  bucket_nodes_.assign(bucket_free_.size(), IndexSet());
  for (auto& s : bucket_nodes_) s.reset(nodes);
  bucket_group_.assign(bucket_free_.size(), -1);
  for (size_t g = 0; g < groups_.size(); ++g)
    for (int32_t b : groups_[g]) bucket_group_[static_cast<size_t>(b)] = static_cast<int32_t>(g);
  group_count_.assign(groups_.size(), 0);
  nonempty_groups_.reset(static_cast<int32_t>(groups_.size()));
  node_bucket_.assign(static_cast<size_t>(nodes), -1);
}

void BucketedNodes::set(int32_t node, int32_t bucket) {
  int32_t& cur = node_bucket_[static_cast<size_t>(node)];
  if (cur == bucket) return;
  if (cur >= 0) {
    bucket_nodes_[static_cast<size_t>(cur)].erase(node);
    int32_t g = bucket_group_[static_cast<size_t>(cur)];
    if (g >= 0 && --group_count_[static_cast<size_t>(g)] == 0) nonempty_groups_.erase(g);
  }
  cur = bucket;
  if (bucket >= 0) {
    bucket_nodes_[static_cast<size_t>(bucket)].insert(node);
    int32_t g = bucket_group_[static_cast<size_t>(bucket)];
    if (g >= 0 && group_count_[static_cast<size_t>(g)]++ == 0) nonempty_groups_.insert(g);
  }
}

bool BucketedNodes::first_fit(std::span<const int32_t> pods, std::vector<int32_t>& out) const {
  out.assign(pods.size(), -1);
  if (pods.empty()) return true;
  size_t pi = 0;
  for (int32_t g = nonempty_groups_.next(0); g >= 0; g = nonempty_groups_.next(g + 1)) {
    const auto& bs = groups_[static_cast<size_t>(g)];
    cursor_.assign(bs.size(), -1);
    for (size_t i = 0; i < bs.size(); ++i)
      if (bucket_free_[static_cast<size_t>(bs[i])] >= pods[pi])
        cursor_[i] = bucket_nodes_[static_cast<size_t>(bs[i])].next(0);
    for (;;) {
      size_t best = SIZE_MAX;
      for (size_t i = 0; i < cursor_.size(); ++i) {
        if (cursor_[i] < 0) continue;
        if (bucket_free_[static_cast<size_t>(bs[i])] < pods[pi]) {
          cursor_[i] = -1;  // pods only grow: this bucket is done
          continue;
        }
        if (best == SIZE_MAX || cursor_[i] < cursor_[best]) best = i;
      }
      if (best == SIZE_MAX) break;
      int32_t n = cursor_[best];
      int32_t avail = bucket_free_[static_cast<size_t>(bs[best])];
      while (pi < pods.size() && avail >= pods[pi]) {
        out[pi] = n;
        avail -= pods[pi];
        ++pi;
      }
      if (pi == pods.size()) return true;
      cursor_[best] = bucket_nodes_[static_cast<size_t>(bs[best])].next(n + 1);
    }
  }
  return false;
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
