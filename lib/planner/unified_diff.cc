#include "planner/unified_diff.h"

#include <algorithm>
#include <vector>

namespace pai::planner {

namespace {

std::vector<std::string_view> lines_of(std::string_view t) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < t.size()) {
    size_t e = t.find('\n', pos);
    if (e == std::string_view::npos) e = t.size();
    out.push_back(t.substr(pos, e - pos));
    pos = e + 1;
  }
  return out;
}

enum class Op : uint8_t { Keep, Del, Add };

// Myers' greedy algorithm. The trace keeps, for each d, the slice k in [-d, d]
// of V (O(D^2) memory); past kMaxD edits the middle is replaced as a whole.
constexpr int kMaxD = 4000;

std::vector<Op> myers(const std::vector<std::string_view>& a,
                      const std::vector<std::string_view>& b) {
  const int n = static_cast<int>(a.size()), m = static_cast<int>(b.size());
  const int max = std::min(n + m, kMaxD);
  const int off = n + m + 1;
  std::vector<int> v(static_cast<size_t>(2 * (n + m) + 3), 0);
  std::vector<std::vector<int>> trace;
  auto V = [&](int k) -> int& { return v[static_cast<size_t>(off + k)]; };
  for (int d = 0; d <= max; ++d) {
    std::vector<int> slice(static_cast<size_t>(2 * d + 1));
    for (int k = -d; k <= d; ++k) slice[static_cast<size_t>(k + d)] = V(k);
    trace.push_back(std::move(slice));
    for (int k = -d; k <= d; k += 2) {
      int x = (k == -d || (k != d && V(k - 1) < V(k + 1))) ? V(k + 1) : V(k - 1) + 1;
      int y = x - k;
      while (x < n && y < m && a[static_cast<size_t>(x)] == b[static_cast<size_t>(y)]) ++x, ++y;
      V(k) = x;
      if (x < n || y < m) continue;
      std::vector<Op> ops;
      int cx = n, cy = m;
      for (int dd = d; dd > 0; --dd) {
        const std::vector<int>& pv = trace[static_cast<size_t>(dd)];
        auto P = [&](int kk) { return pv[static_cast<size_t>(kk + dd)]; };
        int ck = cx - cy;
        int pk = (ck == -dd || (ck != dd && P(ck - 1) < P(ck + 1))) ? ck + 1 : ck - 1;
        int px = P(pk);
        int py = px - pk;
        while (cx > px && cy > py) {
          ops.push_back(Op::Keep);
          --cx, --cy;
        }
        if (cx == px) {
          ops.push_back(Op::Add);
          --cy;
        } else {
          ops.push_back(Op::Del);
          --cx;
        }
      }
      while (cx > 0 && cy > 0) {
        ops.push_back(Op::Keep);
        --cx, --cy;
      }
      std::reverse(ops.begin(), ops.end());
      return ops;
    }
  }
  std::vector<Op> ops(static_cast<size_t>(n), Op::Del);
  ops.insert(ops.end(), static_cast<size_t>(m), Op::Add);
  return ops;
}

}  // namespace

std::string unified_diff(std::string_view old_text, std::string_view new_text,
                         std::string_view old_name, std::string_view new_name, int context) {
  if (old_text == new_text) return {};
  std::vector<std::string_view> a = lines_of(old_text), b = lines_of(new_text);
  size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) ++pre;
  size_t suf = 0;
  while (suf < a.size() - pre && suf < b.size() - pre &&
         a[a.size() - 1 - suf] == b[b.size() - 1 - suf])
    ++suf;
  std::vector<std::string_view> ma(a.begin() + static_cast<long>(pre),
                                   a.end() - static_cast<long>(suf));
  std::vector<std::string_view> mb(b.begin() + static_cast<long>(pre),
                                   b.end() - static_cast<long>(suf));
  std::vector<Op> ops(pre, Op::Keep);
  std::vector<Op> mid = myers(ma, mb);
  ops.insert(ops.end(), mid.begin(), mid.end());
  ops.insert(ops.end(), suf, Op::Keep);
  if (old_text.size() != new_text.size() && ops.size() == a.size() &&
      std::all_of(ops.begin(), ops.end(), [](Op o) { return o == Op::Keep; })) {
    // Only a trailing newline differs.
    return std::string("--- ") + std::string(old_name) + "\n+++ " + std::string(new_name) +
           "\n@@ the files differ in their final newline @@\n";
  }

  // Positions of each op in a and b.
  struct Row {
    Op op;
    size_t ai, bi;
  };
  std::vector<Row> rows;
  size_t ai = 0, bi = 0;
  for (Op o : ops) {
    rows.push_back({o, ai, bi});
    if (o != Op::Add) ++ai;
    if (o != Op::Del) ++bi;
  }
  std::string out = "--- " + std::string(old_name) + "\n+++ " + std::string(new_name) + "\n";
  size_t i = 0;
  const size_t ctx = static_cast<size_t>(std::max(context, 0));
  while (i < rows.size()) {
    while (i < rows.size() && rows[i].op == Op::Keep) ++i;
    if (i == rows.size()) break;
    size_t start = i >= ctx ? i - ctx : 0;
    size_t end = i;
    // Extend the hunk while changes are within 2*ctx of each other.
    while (end < rows.size()) {
      size_t j = end;
      while (j < rows.size() && rows[j].op != Op::Keep) ++j;
      size_t k = j;
      while (k < rows.size() && rows[k].op == Op::Keep && k - j < 2 * ctx) ++k;
      if (k < rows.size() && rows[k].op != Op::Keep) {
        end = k;
        continue;
      }
      end = std::min(rows.size(), j + ctx);
      break;
    }
    size_t a_start = rows[start].ai, b_start = rows[start].bi, a_len = 0, b_len = 0;
    std::string body;
    for (size_t r = start; r < end; ++r) {
      const Row& row = rows[r];
      if (row.op == Op::Keep) {
        body += " " + std::string(a[row.ai]) + "\n";
        ++a_len, ++b_len;
      } else if (row.op == Op::Del) {
        body += "-" + std::string(a[row.ai]) + "\n";
        ++a_len;
      } else {
        body += "+" + std::string(b[row.bi]) + "\n";
        ++b_len;
      }
    }
    out += "@@ -" + std::to_string(a_len ? a_start + 1 : a_start) + "," + std::to_string(a_len) +
           " +" + std::to_string(b_len ? b_start + 1 : b_start) + "," + std::to_string(b_len) +
           " @@\n" + body;
    i = end;
  }
  return out;
}

}  // namespace pai::planner
