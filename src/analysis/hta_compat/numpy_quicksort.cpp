#include "analysis/hta_compat/numpy_quicksort.h"

#include <utility>

namespace stepscope::analysis::hta {
namespace {

constexpr int64_t kSmallQuicksort = 15;  // numpy's SMALL_QUICKSORT (npysort_common.h)
constexpr int kStackSize = 128;          // numpy's PYA_QS_STACK (2 * 64 bits)

int floor_log2(uint64_t n) {
  int depth = 0;
  while (n > 1) {
    n >>= 1;
    ++depth;
  }
  return depth;
}

// numpy's aheapsort_: heapsort of idx[0..n-1] by v, written with numpy's
// 1-based heap positions (position k is idx[k - 1]).
void heapsort_indices(const double* v, uint32_t* idx, int64_t n) {
  auto a = [idx](int64_t k) -> uint32_t& { return idx[k - 1]; };
  // Sinks `tmp` from position i of the heap of the first `size` positions.
  auto sift_down = [&](uint32_t tmp, int64_t i, int64_t size) {
    for (int64_t j = i << 1; j <= size;) {
      if (j < size && v[a(j)] < v[a(j + 1)]) ++j;
      if (v[tmp] < v[a(j)]) {
        a(i) = a(j);
        i = j;
        j += j;
      } else {
        break;
      }
    }
    a(i) = tmp;
  };
  for (int64_t l = n >> 1; l > 0; --l) sift_down(a(l), l, n);
  for (; n > 1;) {
    uint32_t tmp = a(n);
    a(n) = a(1);
    --n;
    sift_down(tmp, 1, n);
  }
}

}  // namespace

std::vector<uint32_t> numpy_argsort(std::span<const double> keys) {
  const int64_t num = static_cast<int64_t>(keys.size());
  std::vector<uint32_t> order(keys.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  if (num <= 1) return order;

  const double* v = keys.data();
  uint32_t* a = order.data();
  int64_t pl = 0;
  int64_t pr = num - 1;
  // Pending partitions (pl, pr) with the depth budget they were pushed with.
  struct Pending {
    int64_t pl, pr;
    int depth;
  };
  Pending stack[kStackSize];
  int top = 0;
  int cdepth = floor_log2(static_cast<uint64_t>(num)) * 2;

  for (;;) {
    if (cdepth < 0) {
      heapsort_indices(v, a + pl, pr - pl + 1);
    } else {
      while (pr - pl > kSmallQuicksort) {
        const int64_t pm = pl + ((pr - pl) >> 1);
        if (v[a[pm]] < v[a[pl]]) std::swap(a[pm], a[pl]);
        if (v[a[pr]] < v[a[pm]]) std::swap(a[pr], a[pm]);
        if (v[a[pm]] < v[a[pl]]) std::swap(a[pm], a[pl]);
        const double vp = v[a[pm]];
        int64_t pi = pl;
        int64_t pj = pr - 1;
        std::swap(a[pm], a[pj]);
        for (;;) {
          do ++pi; while (v[a[pi]] < vp);
          do --pj; while (vp < v[a[pj]]);
          if (pi >= pj) break;
          std::swap(a[pi], a[pj]);
        }
        const int64_t pk = pr - 1;
        std::swap(a[pi], a[pk]);
        // Push the larger side, keep sorting the smaller one.
        --cdepth;
        if (pi - pl < pr - pi) {
          stack[top++] = {pi + 1, pr, cdepth};
          pr = pi - 1;
        } else {
          stack[top++] = {pl, pi - 1, cdepth};
          pl = pi + 1;
        }
      }
      // Insertion sort of the small partition.
      for (int64_t pi = pl + 1; pi <= pr; ++pi) {
        const uint32_t vi = a[pi];
        const double vv = v[vi];
        int64_t pj = pi;
        while (pj > pl && vv < v[a[pj - 1]]) {
          a[pj] = a[pj - 1];
          --pj;
        }
        a[pj] = vi;
      }
    }
    if (top == 0) break;
    --top;
    pl = stack[top].pl;
    pr = stack[top].pr;
    cdepth = stack[top].depth;
  }
  return order;
}

}  // namespace stepscope::analysis::hta
